//! The environment a `shell_exec` command gets: the server's, less its own secrets and — by
//! default — anything that looks like a credential of the user, as `[shell.env]` says.
//!
//! In order:
//!
//! 1. **The server's own secrets are never passed**, whatever the configuration says: every
//!    variable [`crate::env::VARIABLES`] declares secret (`TEAAGENT_REDIS_PASSWORD`, the
//!    request-state keys, the HTTP tokens, the Redis URL, which may hold a password), and the
//!    variables the configuration names as holding one ([`ShellEnvironment::secret`]:
//!    `[state] password_env`).
//! 2. **Names that look like credentials are left out** unless `inherit_secrets = true`:
//!    `*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, `*AUTH*`,
//!    `*SESSION*`, `*COOKIE*`, compared case-insensitively (`AWS_SECRET_ACCESS_KEY`,
//!    `GITHUB_TOKEN`, `NPM_AUTH`...). The `*KEY*` family keeps `KEYBOARD`-like names out too; add
//!    what a build needs back with `include`.
//! 3. `exclude` (globs) removes more; `include` (globs) brings back names step 2 left out;
//!    `include_only`, when given, keeps only the names it matches.
//! 4. `set` sets variables (it cannot set one of step 1's).
//!
//! ```toml
//! [shell.env]
//! inherit_secrets = false         # step 2 (default false)
//! exclude = ["AWS_*"]             # more names to leave out
//! include = ["CARGO_REGISTRY_TOKEN"]  # names step 2 would leave out, kept
//! include_only = []               # when not empty: nothing else is passed
//! set = { CI = "1" }              # set for every command
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;

use globset::{GlobSet, GlobSetBuilder};

/// The patterns of names that look like credentials (step 2 of the module docs).
pub const CREDENTIAL_PATTERNS: [&str; 9] = [
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*AUTH*",
    "*SESSION*",
    "*COOKIE*",
];

/// The environment policy of `shell_exec` commands (module docs). Give it to the server with
/// [`crate::Server::state`]; a server without one uses [`ShellEnvironment::default`].
#[derive(Debug, Clone)]
pub struct ShellEnvironment {
    inherit_secrets: bool,
    exclude: Vec<String>,
    include: Vec<String>,
    include_only: Vec<String>,
    set: BTreeMap<String, String>,
    secrets: Vec<String>,
    compiled: Compiled,
}

#[derive(Debug, Clone)]
struct Compiled {
    exclude: GlobSet,
    include: GlobSet,
    include_only: Option<GlobSet>,
}

impl Default for ShellEnvironment {
    fn default() -> Self {
        ShellEnvironment::new(false, Vec::new(), Vec::new(), Vec::new(), BTreeMap::new())
            .expect("the built-in patterns are valid globs")
    }
}

/// [`CREDENTIAL_PATTERNS`], compiled once, when a command's environment is first filtered (not
/// while the server starts: compiling globs is a good part of a start's own work).
fn credentials() -> &'static GlobSet {
    static SET: std::sync::OnceLock<GlobSet> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        let patterns: Vec<String> = CREDENTIAL_PATTERNS.iter().map(|p| (*p).to_owned()).collect();
        globs(&patterns).expect("the built-in patterns are valid globs")
    })
}

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::GlobBuilder::new(pattern)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
            .map_err(|e| format!("`{}` is not a valid pattern: {e}", crate::visible::escape(pattern)))?;
        set.add(glob);
    }
    set.build().map_err(|e| e.to_string())
}

impl ShellEnvironment {
    /// A policy: whether names that look like credentials are passed, and the `exclude`,
    /// `include`, `include_only` globs and `set` values of `[shell.env]`. A pattern that is not
    /// a valid glob is an error naming it.
    pub fn new(
        inherit_secrets: bool,
        exclude: Vec<String>,
        include: Vec<String>,
        include_only: Vec<String>,
        set: BTreeMap<String, String>,
    ) -> Result<Self, String> {
        let compiled = Compiled {
            exclude: globs(&exclude)?,
            include: globs(&include)?,
            include_only: if include_only.is_empty() { None } else { Some(globs(&include_only)?) },
        };
        Ok(ShellEnvironment {
            inherit_secrets,
            exclude,
            include,
            include_only,
            set,
            secrets: Vec::new(),
            compiled,
        })
    }

    /// One more variable that holds a secret of the server (the one `[state] password_env`
    /// names): never passed.
    pub fn secret(mut self, name: impl Into<String>) -> Self {
        self.secrets.push(name.into());
        self
    }

    /// Whether a command gets the variable `name` (before `set`).
    pub fn passes(&self, name: &str) -> bool {
        if self.is_server_secret(name) {
            return false;
        }
        let c = &self.compiled;
        if let Some(only) = &c.include_only {
            return only.is_match(name);
        }
        if c.exclude.is_match(name) {
            return false;
        }
        self.inherit_secrets || !credentials().is_match(name) || c.include.is_match(name)
    }

    fn is_server_secret(&self, name: &str) -> bool {
        crate::env::is_secret_variable(name) || self.secrets.iter().any(|s| s == name)
    }

    /// The environment of a command: `from` (the server's), filtered, then `set` applied.
    pub fn apply(&self, from: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> =
            from.into_iter().filter(|(name, _)| name.to_str().is_some_and(|n| self.passes(n))).collect();
        for (name, value) in &self.set {
            if self.is_server_secret(name) {
                continue;
            }
            env.retain(|(n, _)| n.to_str() != Some(name.as_str()));
            env.push((name.into(), value.into()));
        }
        env
    }

    /// One line for people: what a command's environment leaves out.
    pub fn summary(&self) -> String {
        let mut parts = vec!["teaagent's own secrets".to_owned()];
        if !self.inherit_secrets {
            parts.push(format!("names like {}", CREDENTIAL_PATTERNS.join(", ")));
        }
        if !self.exclude.is_empty() {
            parts.push(self.exclude.join(", "));
        }
        let mut text = format!("the environment without {}", parts.join("; "));
        if !self.include.is_empty() {
            text.push_str(&format!(" (but with {})", self.include.join(", ")));
        }
        if !self.include_only.is_empty() {
            text = format!(
                "only {} of the environment, never teaagent's own secrets",
                self.include_only.join(", ")
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn the_servers_secrets_and_credential_names_stay_out_by_default() {
        let from = env(&[
            ("PATH", "/bin"),
            ("TEAAGENT_REDIS_PASSWORD", "x"),
            ("TEAAGENT_REDIS_URL", "redis://:pw@h"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("GITHUB_TOKEN", "x"),
            ("db_password", "x"),
            ("HOME", "/root"),
        ]);
        assert_eq!(names(&ShellEnvironment::default().apply(from)), ["PATH", "HOME"]);
    }

    #[test]
    fn include_exclude_include_only_and_set() {
        let policy = ShellEnvironment::new(
            false,
            vec!["HOME".into()],
            vec!["CARGO_REGISTRY_TOKEN".into()],
            vec![],
            [("CI".to_owned(), "1".to_owned()), ("TEAAGENT_HTTP_TOKENS".to_owned(), "x".to_owned())].into(),
        )
        .expect("valid");
        let from =
            env(&[("PATH", "/bin"), ("HOME", "/root"), ("CARGO_REGISTRY_TOKEN", "t"), ("NPM_TOKEN", "n")]);
        assert_eq!(names(&policy.apply(from)), ["PATH", "CARGO_REGISTRY_TOKEN", "CI"]);
        let only = ShellEnvironment::new(
            true,
            vec![],
            vec![],
            vec!["PATH".into(), "TEAAGENT_*".into()],
            BTreeMap::new(),
        )
        .expect("valid")
        .secret("MY_REDIS_PASS");
        let from = env(&[
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("TEAAGENT_REQUEST_STATE_KEY", "k"),
            ("MY_REDIS_PASS", "p"),
        ]);
        assert_eq!(names(&only.apply(from)), ["PATH"]);
        assert!(ShellEnvironment::new(false, vec!["[".into()], vec![], vec![], BTreeMap::new()).is_err());
    }
}
