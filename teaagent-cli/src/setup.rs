//! What the subcommands that serve or call tools share: the shipped tools, the workspace, the
//! server with its configuration, policy and gateway, and the process's hardening.

use std::path::PathBuf;

use anyhow::Context;
use teaagent_core::gateway::{Gateway, SEPARATOR};
use teaagent_core::policy::Advice;
use teaagent_core::policy::audit::AuditLog;
use teaagent_core::workspace::lock::LockRegistry;
use teaagent_core::workspace::resources::WorkspaceResources;
use teaagent_core::{Registry, Server, ServerConfig, Skills, Workspace, visible};

use crate::cli::CallFlags;
use crate::{config, external, sandbox};

/// The shipped tools.
pub(crate) fn registry() -> anyhow::Result<Registry> {
    Registry::builder()
        .tools(teaagent_core::builtin_tools::builtin())
        .build()
        .context("the built-in tools are invalid")
}

/// The workspace of `--root` (default: the current directory), opened: from here on the server
/// works through this handle, whatever happens to the path.
pub(crate) fn workspace(flags: &CallFlags) -> anyhow::Result<Workspace> {
    let root = flags.root.clone().unwrap_or_else(|| PathBuf::from("."));
    Ok(Workspace::open(&root)?)
}

/// How long a server waits before it finds what the command sandbox enforces here
/// ([`server`]'s `probe`).
pub(crate) const PROBE_AFTER_START: std::time::Duration = std::time::Duration::from_millis(100);

/// Everything `mcp serve` and `run` share: the configuration, the policy, the gateway, on
/// `workspace`; and the thread that says on stderr what the command sandbox enforces here, once
/// known (join it to have it said before going on), found `probe` after start.
pub(crate) fn server(
    flags: &CallFlags,
    workspace: Workspace,
    wanted: impl Fn(&str) -> bool,
    probe: std::time::Duration,
) -> anyhow::Result<(Server, Workspace, Gateway, std::thread::JoinHandle<()>)> {
    // What this machine's sandbox enforces is found by running `/bin/true` in one (a fork of
    // this process, new namespaces, an exec and a wait: a few milliseconds of mostly the
    // kernel's work), on a thread of its own: nothing the server settles before its first answer
    // depends on it (a command's call that comes first finds it itself, and waits for it). A
    // server finds it `PROBE_AFTER_START` after start, when a client's first requests (its
    // handshake, the tool list, a first call) are answered, rather than sharing the machine with
    // them; `run`, which needs it at once, finds it now.
    if probe.is_zero() {
        std::thread::spawn(teaagent_core::sandbox::Support::probe);
    }
    for id in &flags.approve_call_id {
        crate::say::warning(&format!(
            "warning: --approve-call-id {id} is deprecated and approves nothing; use --grant or --preapprove"
        ));
    }
    let user = config::read_user(flags)?;
    let (registry, gateway) = external::registry_with_gateway(flags, &user, wanted)?;
    let settings = match config::load(flags, &user, &workspace, &registry) {
        Ok(settings) => settings,
        Err(e) => {
            gateway.shutdown();
            return Err(e.into());
        }
    };
    for warning in &settings.warnings {
        crate::say::warning(&format!("warning: {}", visible::escape(warning)));
    }
    let sandbox = sandbox::command_sandbox(&settings);
    let policy = settings
        .policy()?
        .advice(Advice::Flags)
        .audit(AuditLog::in_home().context("cannot use $TEAAGENT_HOME")?.rotation(settings.audit))
        .command_sandbox(sandbox.summary());
    let announced = {
        let sandbox = sandbox.clone();
        std::thread::spawn(move || {
            std::thread::sleep(probe);
            sandbox::announce(&sandbox)
        })
    };
    // A rule that names no tool is a typo that leaves calls refused (or allowed) against what was
    // meant: refused, as an unknown key is; one naming an external server's tools only warns
    // (that server may be withheld or not allowed right now).
    for rule in policy.rules_naming_no_tool(&registry) {
        if rule.rule.contains(SEPARATOR) {
            crate::say::warning(&format!("warning: {}", visible::escape(&rule.to_string())));
        } else {
            gateway.shutdown();
            return Err(config::ConfigError::RuleNamesNoTool(rule.to_string()).into());
        }
    }
    external::announce_unchecked(&registry, &gateway, &policy);
    let skills = skills(&workspace, &policy, &registry);
    let config = settings.server_config(ServerConfig::default());
    let locks = LockRegistry::open_home().context("cannot use $TEAAGENT_HOME")?;
    let root = workspace.root().to_path_buf();
    let mut server = Server::new(registry)
        .config(config)
        .policy(policy)
        .workspace(workspace.clone())
        .resources(WorkspaceResources::new(workspace.clone()))
        .skills(skills)
        .lock(locks, root)
        .availability(gateway.clone())
        .state(sandbox)
        .state(sandbox::shell_environment(&settings)?);
    if let Some(state) = &settings.state {
        // A fleet's shared state (`[state]`, TEAAGENT_REDIS_URL): connected at its first use, so
        // the server starts while Redis is down and refuses only what needs it.
        let options = teaagent_core::fleet::RedisOptions {
            prefix: state.prefix.clone(),
            timeout: state.timeout,
            per_principal: state.per_principal,
            fallback_local: state.fallback_local,
        };
        let shared = teaagent_core::fleet::RedisStore::new(&state.redis_url, options).map_err(|why| {
            anyhow::anyhow!("the shared state (`[state]` or {}): {why}", teaagent_core::config::ENV_REDIS_URL)
        })?;
        server = server.shared_state(shared);
    }
    Ok((server, workspace, gateway, announced))
}

/// The workspace folders skills are served from, where the clients keep them (each
/// `<folder>/<name>/SKILL.md`), in this order: the first skill of a name is served.
pub(crate) const WORKSPACE_SKILLS: [&str; 3] = [".agents/skills", ".claude/skills", ".github/skills"];

/// The skills `mcp serve` offers: the workspace's ([`WORKSPACE_SKILLS`], read beneath its root
/// like every file the server reads, its deny rules hiding files), then the user's own in
/// `$TEAAGENT_HOME/skills` (read beneath that folder, the same deny rules applied to paths
/// relative to it). A home without a `skills` folder adds none.
fn skills(workspace: &Workspace, policy: &teaagent_core::Policy, registry: &Registry) -> Skills {
    let mut skills = Skills::new();
    for dir in WORKSPACE_SKILLS {
        skills = skills.workspace_root(workspace, dir);
    }
    let Ok(home) = teaagent_core::home::dir() else { return skills };
    let dir = home.join("skills");
    if !dir.is_dir() {
        return skills;
    }
    match Workspace::open(&dir) {
        Ok(own) => {
            if let Some(hidden) = policy.hidden_paths(registry) {
                own.set_hidden(hidden);
            }
            if let Some(scopes) = policy.link_scopes() {
                own.set_hides_links(scopes);
            }
            skills.workspace_root(&own, ".")
        }
        Err(e) => {
            crate::say::warning(&format!(
                "warning: your skills in {} are not served: {}",
                visible::escape(&dir.display().to_string()),
                visible::escape(&e.to_string())
            ));
            skills
        }
    }
}

/// Children of this process (shell_exec) must not reach its stdin or stdout through
/// `/proc/PID/fd`: a process that is not dumpable keeps those entries to itself.
pub(crate) fn harden() {
    if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        tracing::warn!(error = %e, "cannot mark the process non-dumpable; commands could reach its stdio through /proc");
    }
}
