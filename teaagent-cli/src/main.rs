//! `teaagent`: serve workspace tools to any MCP client over stdio.
//!
//! Exit codes: 0 success; 2 usage error (clap's message on stderr, nothing on stdout) or a
//! configuration file that cannot be used ([`config::ConfigError`]: bad value, unknown key,
//! unreadable file); 1 anything else, with a one-line message on stderr that says what went
//! wrong. Every message and warning is shown escaped ([`teaagent_core::visible::escape`]): it
//! may quote configuration files, tool arguments or tool output, whose bytes never reach the
//! terminal raw.

#![allow(clippy::print_stdout)] // this is the command's output

mod cli;
mod config;
mod external;
mod pins;
mod sandbox;
mod trust;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{CommandFactory, Parser};
use teaagent_core::gateway::{Gateway, SEPARATOR};
use teaagent_core::policy::Advice;
use teaagent_core::policy::audit::AuditLog;
use teaagent_core::server::http::oauth::{OAuthConfig, OAuthConfigError, UrlRole};
use teaagent_core::workspace::lock::LockRegistry;
use teaagent_core::workspace::resources::WorkspaceResources;
use teaagent_core::{Announcement, Registry, Server, ServerConfig, Workspace, visible};

use crate::cli::{Approvals, CallFlags, Cli, Command, Mcp};

fn main() -> ExitCode {
    let early = EarlyServe::start();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli, early) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("teaagent: {}", one_line(&e));
            match e.downcast_ref::<config::ConfigError>() {
                Some(config) if config.is_usage() => ExitCode::from(2),
                // A bad `--oauth-*` value is a usage error, like any other bad flag.
                _ if e.downcast_ref::<OAuthConfigError>().is_some() => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// The error and its causes on one line, escaped.
fn one_line(e: &anyhow::Error) -> String {
    e.chain().map(|cause| visible::escape(&cause.to_string())).collect::<Vec<_>>().join(": ")
}

fn run(cli: Cli, early: Option<EarlyServe>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Mcp { command: Mcp::Serve(args) } if args.http.http.is_some() => {
            serve_http(args.flags, args.http)
        }
        Command::Mcp { command: Mcp::Serve(args) } => serve(args.flags, early),
        Command::Run(args) => {
            call(&args.tool, args.args.unwrap_or_else(|| serde_json::json!({})), args.json, args.flags)
        }
        Command::Mcp { command: Mcp::Tools { json } } => tools(json),
        Command::Mcp { command: Mcp::Trust { command } } => trust::command::run(command),
        Command::Approvals { command: Approvals::Digest { tool, args } } => {
            println!("{}", teaagent_core::digest::call_digest(&tool, &args));
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "teaagent", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A command line clap refused (or help and version, which it reports the same way). Help and
/// version go to stdout as they are; an error goes to stderr with every line escaped
/// ([`visible::escape`]), since it quotes the arguments: a control or bidi character in one
/// never reaches the terminal. Exit code 2 for an error.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
    }
    let text = e.render().to_string();
    let shown: Vec<String> = text.trim_end().lines().map(visible::escape).collect();
    eprintln!("{}", shown.join("\n"));
    ExitCode::from(2)
}

/// The shipped tools.
fn registry() -> anyhow::Result<Registry> {
    Registry::builder()
        .tools(teaagent_core::builtin_tools::builtin())
        .build()
        .context("the built-in tools are invalid")
}

/// The workspace of `--root` (default: the current directory), opened: from here on the server
/// works through this handle, whatever happens to the path.
fn workspace(flags: &CallFlags) -> anyhow::Result<Workspace> {
    let root = flags.root.clone().unwrap_or_else(|| PathBuf::from("."));
    Ok(Workspace::open(&root)?)
}

/// Everything `mcp serve` and `run` share: the configuration, the policy, the gateway, on
/// `workspace`.
fn server(
    flags: &CallFlags,
    workspace: Workspace,
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<(Server, Workspace, Gateway)> {
    for id in &flags.approve_call_id {
        eprintln!(
            "teaagent: warning: --approve-call-id {id} is deprecated and approves nothing; use --grant or --preapprove"
        );
    }
    let (registry, gateway) = external::registry_with_gateway(flags, wanted)?;
    let settings = match config::load(flags, &workspace, &registry) {
        Ok(settings) => settings,
        Err(e) => {
            gateway.shutdown();
            return Err(e.into());
        }
    };
    for warning in &settings.warnings {
        eprintln!("teaagent: warning: {}", visible::escape(warning));
    }
    let sandbox = sandbox::command_sandbox(&settings);
    let policy = settings
        .policy()?
        .advice(Advice::Flags)
        .audit(AuditLog::in_home().context("cannot use $TEAAGENT_HOME")?)
        .command_sandbox(sandbox.summary());
    sandbox::announce(&sandbox);
    // A rule that names no tool is a typo that leaves calls refused (or allowed) against what was
    // meant: refused, as an unknown key is; one naming an external server's tools only warns
    // (that server may be withheld or not allowed right now).
    for rule in policy.rules_naming_no_tool(&registry) {
        if rule.rule.contains(SEPARATOR) {
            eprintln!("teaagent: warning: {}", visible::escape(&rule.to_string()));
        } else {
            gateway.shutdown();
            return Err(config::ConfigError::RuleNamesNoTool(rule.to_string()).into());
        }
    }
    external::announce_unchecked(&registry, &gateway, &policy);
    let config = settings.server_config(ServerConfig::default());
    let locks = LockRegistry::open_home().context("cannot use $TEAAGENT_HOME")?;
    let root = workspace.root().to_path_buf();
    let mut server = Server::new(registry)
        .config(config)
        .policy(policy)
        .workspace(workspace.clone())
        .resources(WorkspaceResources::new(workspace.clone()))
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
    Ok((server, workspace, gateway))
}

/// Children of this process (shell_exec) must not reach its stdin or stdout through
/// `/proc/PID/fd`: a process that is not dumpable keeps those entries to itself.
fn harden() {
    if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        tracing::warn!(error = %e, "cannot mark the process non-dumpable; commands could reach its stdio through /proc");
    }
}

/// `mcp serve`'s first answer, given before the command line is parsed in full (clap builds
/// its whole command tree first, a tenth of a millisecond): when the arguments are `mcp serve`
/// and options, the root they name is opened (a handshake answered means the workspace is this
/// one) and a waiting `initialize` is answered (`teaagent_core::server::early`; `mcp serve`
/// always serves resources and has no instructions). Anything unusual — help, version, a root
/// that cannot be opened — is left to the normal path, which reports it.
struct EarlyServe {
    root: PathBuf,
    workspace: Workspace,
    answer: teaagent_core::EarlyStdio,
}

impl EarlyServe {
    fn start() -> Option<Self> {
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        if args.len() < 2 || args[0] != "mcp" || args[1] != "serve" {
            return None;
        }
        let mut root = PathBuf::from(".");
        let mut rest = args[2..].iter();
        while let Some(arg) = rest.next() {
            let text = arg.to_str()?;
            // Over HTTP, stdin and stdout are not the protocol: nothing is answered there.
            if text == "--http" || text.starts_with("--http=") {
                return None;
            }
            if matches!(text, "-h" | "--help" | "-V" | "--version" | "--") {
                return None;
            }
            if text == "--root" {
                root = PathBuf::from(rest.next()?);
            } else if let Some(value) = text.strip_prefix("--root=") {
                root = PathBuf::from(value);
            }
        }
        let workspace = Workspace::open(&root).ok()?;
        let answer = Server::answer_initialize_early(serve_announcement());
        Some(Self { root, workspace, answer })
    }
}

/// What `mcp serve` announces: resources, and `tools.listChanged` (its gateway may withhold the
/// tools of an external server while it runs; known before the configuration is read, so said
/// whether or not servers are configured — a capability to send, never a promise that it will).
fn serve_announcement() -> Announcement {
    Announcement { tools_list_changed: true, ..Announcement::teaagent(true) }
}

fn serve(flags: CallFlags, early: Option<EarlyServe>) -> anyhow::Result<ExitCode> {
    teaagent_core::logging::init(&flags.log_level);
    harden();
    let root = flags.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let (workspace, early) = match early {
        // The root the full parse names is the one opened early; if the quick look read the
        // arguments otherwise, the right one is opened now (what was read early is kept).
        Some(early) if early.root == root => (early.workspace, early.answer),
        Some(early) => (workspace(&flags)?, early.answer),
        None => (workspace(&flags)?, Server::answer_initialize_early(serve_announcement())),
    };
    let (server, workspace, gateway) = server(&flags, workspace, |_| true)?;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "teaagent {} — an MCP server for {}\n\
             It speaks JSON-RPC on stdin/stdout and is meant to be started by an MCP client, e.g.\n  \
             claude mcp add teaagent -- teaagent mcp serve --root {}\n\
             (see the README for Claude Desktop, Cursor, VS Code and Codex). Waiting for a client on stdin; Ctrl-C stops.",
            env!("CARGO_PKG_VERSION"),
            workspace.root().display(),
            workspace.root().display()
        );
    }
    tracing::info!(root = %workspace.root().display(), "workspace");
    let code = server.run_stdio_after(early);
    gateway.shutdown();
    Ok(code)
}

/// `mcp serve --http ADDR`: the same server as over stdio, at `http://ADDR/mcp`, until SIGINT or
/// SIGTERM (then calls in progress get the grace period).
fn serve_http(flags: CallFlags, http: cli::HttpFlags) -> anyhow::Result<ExitCode> {
    use teaagent_core::server::http::{BearerToken, HttpOptions};
    teaagent_core::logging::init(&flags.log_level);
    harden();
    let Some(addr) = http.http else { bail!("--http needs an address") };
    let mut tokens = Vec::new();
    if let Some(file) = &http.http_token_file {
        // Read as the user's other named files are: never a FIFO or a device, at most 1 MiB.
        let bytes = teaagent_core::home::read_path(file, teaagent_core::home::MAX_CONFIG_BYTES)
            .with_context(|| format!("cannot read {}", file.display()))?
            .with_context(|| format!("{} does not exist", file.display()))?;
        let text = String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8", file.display()))?;
        tokens
            .extend(BearerToken::parse_lines(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?);
    }
    let oauth = oauth_config(&http.oauth)?;
    if let Ok(text) = std::env::var(teaagent_core::env::ENV_HTTP_TOKENS) {
        if oauth.is_some() {
            bail!(
                "TEAAGENT_HTTP_TOKENS is set, and --oauth-issuer: a server takes tokens or OAuth, not both (unset the variable)"
            );
        }
        tokens.extend(
            BearerToken::parse_lines(&text).map_err(|e| anyhow::anyhow!("TEAAGENT_HTTP_TOKENS: {e}"))?,
        );
    }
    let limits = http.caller_limits();
    let options = HttpOptions {
        tokens,
        max_connections_per_caller: http
            .http_caller_connections
            .map_or(HttpOptions::default().max_connections_per_caller, |n| n as usize),
        allowed_origins: http.http_allow_origin,
        allowed_hosts: http.http_allow_host,
        oauth,
        ..HttpOptions::default()
    };
    let (server, workspace, gateway) = server(&flags, workspace(&flags)?, |_| true)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        // The one line a script waits for (stderr, like every log).
        eprintln!("teaagent: serving {} over Streamable HTTP at http://{local}/mcp", workspace.root().display());
        let stop = tokio_util::sync::CancellationToken::new();
        let signals = stop.clone();
        tokio::spawn(async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                Some(()) = async { match term.as_mut() { Some(t) => t.recv().await, None => std::future::pending().await } } => {}
            }
            signals.cancel();
        });
        server.caller_limits(limits).serve_http(listener, options, stop).await.map_err(anyhow::Error::from)
    });
    gateway.shutdown();
    served?;
    Ok(ExitCode::SUCCESS)
}

/// The `--oauth-*` flags as settings (`None` without `--oauth-issuer`); a bad value names its
/// flag (and is a usage error: exit 2).
fn oauth_config(flags: &cli::OAuthFlags) -> anyhow::Result<Option<OAuthConfig>> {
    use teaagent_core::tool::Tier;
    let (Some(issuer), Some(resource)) = (&flags.oauth_issuer, &flags.oauth_resource) else {
        return Ok(None);
    };
    let named = |flag: &'static str| move |e: OAuthConfigError| anyhow::Error::new(e).context(flag);
    let mut config = OAuthConfig::new(resource, issuer).map_err(|e| {
        let flag = match &e {
            OAuthConfigError::Url { role: UrlRole::Issuer, .. } => "--oauth-issuer",
            _ => "--oauth-resource",
        };
        anyhow::Error::new(e).context(flag)
    })?;
    if let Some(jwks) = &flags.oauth_jwks_uri {
        config = config.jwks_uri(jwks).map_err(named("--oauth-jwks-uri"))?;
    }
    for scope in &flags.oauth_scope {
        config = config.required_scope(scope).map_err(named("--oauth-scope"))?;
    }
    if let Some(scope) = &flags.oauth_write_scope {
        config = config.tier_scope(Tier::Medium, scope).map_err(named("--oauth-write-scope"))?;
    }
    if let Some(scope) = &flags.oauth_exec_scope {
        config = config.tier_scope(Tier::High, scope).map_err(named("--oauth-exec-scope"))?;
    }
    Ok(Some(config))
}

fn call(tool: &str, args: serde_json::Value, json: bool, flags: CallFlags) -> anyhow::Result<ExitCode> {
    teaagent_core::logging::init(if flags.log_level == "info" { "warn" } else { &flags.log_level });
    harden();
    // Only the external server the tool belongs to is started.
    let (server, _, gateway) = server(&flags, workspace(&flags)?, |name| {
        tool.strip_prefix(name).is_some_and(|t| t.starts_with(SEPARATOR))
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let outcome = runtime.block_on(server.call_once(tool, args));
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    gateway.shutdown();
    match outcome {
        Ok(result) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                // On a terminal, text is shown escaped: a file's or an external server's bytes
                // never drive the terminal (a pipe gets them as they are).
                let terminal = std::io::stdout().is_terminal();
                for content in &result.content {
                    match content {
                        teaagent_core::Content::Text { text } if terminal => {
                            println!("{}", visible::escape(text))
                        }
                        teaagent_core::Content::Text { text } => println!("{text}"),
                        other => println!("{}", serde_json::to_string(other)?),
                    }
                }
            }
            if !result.is_error {
                return Ok(ExitCode::SUCCESS);
            }
            // The README ("One call from the shell"): the failure is said on stderr too, whatever stdout shows.
            let message: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| match c {
                    teaagent_core::Content::Text { text } => Some(visible::escape(text.trim_end())),
                    _ => None,
                })
                .collect();
            let message = if message.is_empty() { "(no message)".to_owned() } else { message.join(" ") };
            eprintln!("teaagent: `{}` reported an error: {message}", visible::escape(tool));
            Ok(ExitCode::FAILURE)
        }
        Err(e) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&e.to_error_object())?);
            }
            let data = e.data();
            let details =
                data.get("details").and_then(|d| d.as_str()).map(|d| format!(" ({d})")).unwrap_or_default();
            bail!("{e}{details}")
        }
    }
}

fn tools(json: bool) -> anyhow::Result<ExitCode> {
    let listing = external::listing()?;
    let registry = Registry::builder()
        .tools(teaagent_core::builtin_tools::builtin())
        .tools(listing.tools.iter().cloned())
        .build()
        .context("the tools are invalid")?;
    if json {
        let entries: Vec<serde_json::Value> = registry
            .listing()
            .into_iter()
            .map(|mut entry| {
                let name = entry["name"].as_str().unwrap_or_default().to_owned();
                if let Some((server, state)) = listing.server_of(&name) {
                    entry["_meta"] =
                        serde_json::json!({"io.teaagent/server": server, "io.teaagent/state": state});
                }
                entry
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(ExitCode::SUCCESS);
    }
    let annotations = |t: &teaagent_core::ToolDef| {
        let b = t.behavior();
        let flags: Vec<&str> = [
            (b.read_only, "read-only"),
            (b.destructive, "destructive"),
            (b.idempotent, "idempotent"),
            (b.stateful, "stateful"),
            (b.open_world, "open-world"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        flags.join(", ")
    };
    let limit = |t: &teaagent_core::ToolDef| {
        t.rate_limit().map_or("-".to_owned(), |l| format!("{} per {}s", l.max_calls, l.window.as_secs_f64()))
    };
    let mut rows: Vec<[String; 4]> = Vec::new();
    let mut external_rows: Vec<[String; 5]> = Vec::new();
    for t in registry.iter() {
        match listing.server_of(t.name()) {
            None => rows.push([t.name().to_owned(), t.tier().to_string(), annotations(t), limit(t)]),
            Some((server, state)) => external_rows.push([
                t.name().to_owned(),
                visible::shown(server),
                t.tier().to_string(),
                limit(t),
                state.to_owned(),
            ]),
        }
    }
    for [server, state] in &listing.refused {
        external_rows.push([
            format!("{}{SEPARATOR}*", visible::shown(server)),
            visible::shown(server),
            "-".into(),
            "-".into(),
            visible::escape(state),
        ]);
    }
    print_table(&["TOOL", "TIER", "ANNOTATIONS", "RATE LIMIT"], &rows);
    println!();
    println!("shell_exec commands run {}.", sandbox::in_force()?);
    if !external_rows.is_empty() {
        println!();
        println!("external tools (not read-only, open-world; destructive from tier high):");
        print_table(&["TOOL", "SERVER", "TIER", "RATE LIMIT", "STATE"], &external_rows);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn print_table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == N {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        println!("{}", out.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}
