//! What `shell_exec` commands may reach and see, as the command configures it: the OS sandbox of
//! the mode with `[shell]`'s settings ([`teaagent_core::sandbox`]), the environment policy of
//! `[shell.env]`, and what is said about them at start and in `mcp tools`.

use teaagent_core::builtin_tools::shell_exec::ShellEnvironment;
use teaagent_core::sandbox::{Sandbox, Support, WhenUnavailable};

use crate::cli::CallFlags;
use crate::config;
use crate::setup::{registry, workspace};

/// The sandbox `shell_exec` commands run in: the mode's, with `[shell]`'s network and
/// directories; teaagent's home is hidden from commands (neither read nor written).
pub(crate) fn command_sandbox(settings: &teaagent_core::config::Settings) -> Sandbox {
    let mut sandbox = Sandbox::for_mode(settings.mode)
        .network(settings.shell.network)
        .writable(settings.shell.writable.iter().cloned())
        .when_unavailable(if settings.shell.warn_unsandboxed {
            WhenUnavailable::Warn
        } else {
            WhenUnavailable::Refuse
        });
    if let Ok(home) = teaagent_core::home::dir() {
        sandbox = sandbox.hide(home);
    }
    sandbox
}

/// The environment `shell_exec` commands get (`[shell.env]`): never teaagent's own secrets, and
/// by default no name that looks like a credential.
pub(crate) fn shell_environment(
    settings: &teaagent_core::config::Settings,
) -> anyhow::Result<ShellEnvironment> {
    let shell = &settings.shell;
    let mut env = ShellEnvironment::new(
        shell.env_inherit_secrets,
        shell.env_exclude.clone(),
        shell.env_include.clone(),
        shell.env_include_only.clone(),
        shell.env_set.clone(),
    )
    .map_err(|why| anyhow::anyhow!("`[shell.env]` in {}: {why}", settings.user_file.display()))?;
    for name in &shell.env_secrets {
        env = env.secret(name.clone());
    }
    Ok(env)
}

/// Says on stderr what commands can reach, and what of it this machine cannot enforce.
pub(crate) fn announce(sandbox: &Sandbox) {
    let missing = sandbox.missing();
    if missing.is_empty() {
        tracing::info!("shell_exec commands run {} ({})", sandbox.summary(), Support::probe().summary());
        return;
    }
    let then = match sandbox.unavailable() == WhenUnavailable::Warn {
        true => {
            "they run with what can be enforced, and each result says so (`[shell] unsandboxed = \"warn\"`)"
        }
        false => "they are refused (`[shell] unsandboxed = \"warn\"` runs them with a warning instead)",
    };
    crate::say::warning(&format!(
        "warning: this machine cannot enforce the command sandbox ({}): {then}",
        missing.join("; ")
    ));
}

/// The command sandbox of the configuration in force here (the user's file, this directory's
/// workspace file, the environment), and what this machine enforces of it.
pub(crate) fn in_force() -> anyhow::Result<String> {
    use clap::{Args, FromArgMatches};
    let matches = CallFlags::augment_args(clap::Command::new("tools")).try_get_matches_from(["tools"])?;
    let flags = CallFlags::from_arg_matches(&matches)?;
    let workspace = workspace(&flags)?;
    let settings = config::load(&flags, &config::read_user(&flags)?, &workspace, &registry()?)?;
    let sandbox = command_sandbox(&settings);
    let missing = sandbox.missing();
    let enforced = if missing.is_empty() {
        format!("enforced by {}", Support::probe().summary())
    } else {
        format!("NOT fully enforced here ({})", missing.join("; "))
    };
    Ok(format!("{} [mode {}; {enforced}]", sandbox.summary(), settings.mode))
}
