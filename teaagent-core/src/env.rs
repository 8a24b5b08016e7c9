//! Every `TEAAGENT_*` variable teaagent reads, declared once with whether it holds a secret of
//! the server ([`VARIABLES`]). Code reads a variable through its constant here, never by a
//! literal name.

/// The home directory (default `~/.teaagent`).
pub const ENV_HOME: &str = "TEAAGENT_HOME";
/// The permission mode (`config`'s module docs).
pub const ENV_PERMISSION_MODE: &str = "TEAAGENT_PERMISSION_MODE";
/// Grants, one per line (`config`'s module docs).
pub const ENV_GRANTS: &str = "TEAAGENT_GRANTS";
/// Deny rules, one per line (`config`'s module docs).
pub const ENV_DENY: &str = "TEAAGENT_DENY";
/// Preapproved payload digests (`config`'s module docs).
pub const ENV_PREAPPROVE: &str = "TEAAGENT_PREAPPROVE";
/// The key that seals the modern era's approval round trips (`config`'s module docs).
pub const ENV_REQUEST_STATE_KEY: &str = "TEAAGENT_REQUEST_STATE_KEY";
/// The previous such key, still accepted while rotating (`config`'s module docs).
pub const ENV_REQUEST_STATE_PREVIOUS_KEY: &str = "TEAAGENT_REQUEST_STATE_PREVIOUS_KEY";
/// The Redis URL of a fleet's shared state.
pub const ENV_REDIS_URL: &str = "TEAAGENT_REDIS_URL";
/// The variable that holds the Redis password, unless `[state] password_env` names another.
pub const ENV_REDIS_PASSWORD: &str = "TEAAGENT_REDIS_PASSWORD";
/// The bearer tokens of Streamable HTTP (`NAME=TOKEN` lines).
pub const ENV_HTTP_TOKENS: &str = "TEAAGENT_HTTP_TOKENS";
/// The token a contained process carries (the subreaper containment's scope).
pub const ENV_CONTAINED: &str = "TEAAGENT_CONTAINED";
/// Forces a containment mechanism for commands (`auto`, `cgroup`, `subreaper`).
pub const ENV_SHELL_CONTAINMENT: &str = "TEAAGENT_SHELL_CONTAINMENT";
/// Uses fewer sandbox means than the machine has (`landlock`, `none`, `auto`).
pub const ENV_SHELL_SANDBOX: &str = "TEAAGENT_SHELL_SANDBOX";
/// How long a lock file in the home held by another process is waited for (`home::lock_wait`).
pub const ENV_LOCK_WAIT: &str = "TEAAGENT_LOCK_WAIT";

/// One environment variable teaagent reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: &'static str,
    /// Whether it holds a secret of the server: never passed to a command a tool runs.
    pub secret: bool,
}

const fn var(name: &'static str, secret: bool) -> Variable {
    Variable { name, secret }
}

/// Every `TEAAGENT_*` variable teaagent reads, declared in this one place with whether it holds
/// a secret of the server. `shell_exec` never passes a secret one to a command
/// (the built-in `shell_exec`'s environment policy reads this table), and a test fails when the code
/// reads a `TEAAGENT_*` variable this table does not declare, so a new secret cannot be
/// forgotten. (A variable named by the configuration, `[state] password_env`, is a secret too.)
pub const VARIABLES: [Variable; 14] = [
    var(ENV_HOME, false),
    var(ENV_PERMISSION_MODE, false),
    var(ENV_GRANTS, false),
    var(ENV_DENY, false),
    var(ENV_PREAPPROVE, false),
    var(ENV_REQUEST_STATE_KEY, true),
    var(ENV_REQUEST_STATE_PREVIOUS_KEY, true),
    // The URL may carry the password (`redis://:PASSWORD@host`).
    var(ENV_REDIS_URL, true),
    var(ENV_REDIS_PASSWORD, true),
    var(ENV_HTTP_TOKENS, true),
    var(ENV_CONTAINED, false),
    var(ENV_SHELL_CONTAINMENT, false),
    var(ENV_SHELL_SANDBOX, false),
    var(ENV_LOCK_WAIT, false),
];

/// Whether `name` is a variable [`VARIABLES`] declares secret.
pub fn is_secret_variable(name: &str) -> bool {
    VARIABLES.iter().any(|v| v.secret && v.name == name)
}
