//! `teaagent mcp serve`: the workspace's tools served over stdio, or over Streamable HTTP with
//! `--http`.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, bail};
use teaagent_core::server::http::oauth::{OAuthConfig, OAuthConfigError, UrlRole};

use crate::cli::{self, CallFlags};
use crate::setup::{PROBE_AFTER_START, harden, server, workspace};

/// `mcp serve` over stdio: JSON-RPC on stdin and stdout, logs on stderr.
pub(crate) fn stdio(flags: CallFlags) -> anyhow::Result<ExitCode> {
    teaagent_core::logging::init_as(&flags.log_level, flags.log_format());
    harden();
    let workspace = workspace(&flags)?;
    let (server, workspace, gateway, _announced) = server(&flags, workspace, |_| true, PROBE_AFTER_START)?;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "teaagent {} — an MCP server for {}\n\
             It speaks JSON-RPC on stdin/stdout and is meant to be started by an MCP client; add it to one with\n  \
             teaagent mcp install CLIENT --root {}\n\
             (CLIENT: claude-desktop, claude-code, cursor, vscode, codex, windsurf, gemini-cli; mcp-json prints the\n\
             entry for any other). Waiting for a client on stdin; Ctrl-C stops.",
            env!("CARGO_PKG_VERSION"),
            workspace.root().display(),
            workspace.root().display()
        );
    }
    tracing::info!(root = %workspace.root().display(), "workspace");
    let code = server.run_stdio();
    gateway.shutdown();
    Ok(code)
}

/// `mcp serve --http ADDR`: the same server as over stdio, at `http://ADDR/mcp`, until SIGINT or
/// SIGTERM (then calls in progress get the grace period).
pub(crate) fn http(flags: CallFlags, http: cli::HttpFlags) -> anyhow::Result<ExitCode> {
    use teaagent_core::server::http::{BearerToken, HttpOptions};
    teaagent_core::logging::init_as(&flags.log_level, flags.log_format());
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
        metrics_listen: http.metrics_listen,
        ..HttpOptions::default()
    };
    let (server, workspace, gateway, _announced) =
        server(&flags, workspace(&flags)?, |_| true, PROBE_AFTER_START)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let served = runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr()?;
        // The one line a script waits for (stderr, like every log); with `--log-format json`
        // every line is JSON, and the listener's own log line says where it listens.
        if flags.log_format() == teaagent_core::logging::LogFormat::Text {
            teaagent_core::logging::stderr::write(
                format!(
                    "teaagent: serving {} over Streamable HTTP at http://{local}/mcp\n",
                    workspace.root().display()
                )
                .as_bytes(),
            );
        }
        let stop = teaagent_core::server::stop_on_signals();
        server.caller_limits(limits).serve_http(listener, options, stop).await.map_err(anyhow::Error::from)
    });
    teaagent_core::server::end_runtime(runtime);
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
