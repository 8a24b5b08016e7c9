//! The command line, as clap sees it: commands, flags, help texts with examples.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use teaagent_core::PermissionMode;
use teaagent_core::policy::grant::Grant;

const EXAMPLES: &str = "\
Examples:
  teaagent mcp install vscode            add teaagent (for the current directory) to VS Code
  teaagent mcp serve                     serve the current directory to an MCP client
  teaagent mcp serve --root ~/src/app \\
      --grant 'edit_file:path=src/**' --grant 'shell_exec:command=cargo test'
  teaagent run read_file --args '{\"path\": \"README.md\"}'
  teaagent mcp tools
  teaagent approvals digest delete_path --args '{\"path\": \"build.log\"}'

Configuration: $TEAAGENT_HOME/config.toml (default ~/.teaagent/config.toml), then
<root>/.teaagent/config.toml (may only tighten it), then the variables TEAAGENT_PERMISSION_MODE,
TEAAGENT_GRANTS and TEAAGENT_DENY (one rule per line), TEAAGENT_PREAPPROVE, then flags.";

/// teaagent: a fast, safe Model Context Protocol server for your workspace.
///
/// It serves workspace tools (read, search, edit, shell) over stdio to any MCP client, behind
/// permission modes, approvals, rate limits and a workspace lock.
#[derive(Debug, Parser)]
#[command(name = "teaagent", version, after_help = EXAMPLES, propagate_version = true, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve tools to MCP clients (and add teaagent to them), list the tools, and decide which
    /// external servers to trust.
    #[command(
        after_help = "Examples:\n  teaagent mcp install claude-desktop --root /path/to/project\n  teaagent mcp serve --root /path/to/project\n  teaagent mcp tools --json\n  teaagent mcp trust list"
    )]
    Mcp {
        #[command(subcommand)]
        command: Mcp,
    },
    /// Make one tool call through exactly the server's pipeline and print the result.
    #[command(after_help = "\
Examples:
  teaagent run read_file --args '{\"path\": \"src/main.rs\", \"offset\": 10, \"limit\": 20}'
  teaagent run search_text --args '{\"pattern\": \"TODO\"}' --json
  teaagent run write_file --args '{\"path\": \"notes.md\", \"content\": \"hi\"}' \\
      --grant 'write_file:path=notes.md'

The call is validated, confined to --root, decided by the policy (with the same flags and
configuration as `mcp serve`), rate limited, locked and audited. Exit code 1 when the tool
reports an error or the call is refused.")]
    Run(RunArgs),
    /// Payload-digest preapprovals.
    #[command(
        after_help = "Examples:\n  teaagent approvals digest delete_path --args '{\"path\": \"build.log\"}'"
    )]
    Approvals {
        #[command(subcommand)]
        command: Approvals,
    },
    /// Check what commonly goes wrong, and say how to fix each.
    #[command(after_help = "\
Examples:
  teaagent doctor
  teaagent doctor --root ~/src/app --http-token-file ~/.teaagent/tokens
  teaagent doctor --json | jq '.findings[] | select(.status != \"ok\")'

Checks the binary; the home directory and teaagent's files in it; the configuration (the user's
file, the workspace's, the TEAAGENT_* variables); the clients whose configuration names
teaagent; the workspace lock; each external server (executable, trust, pins); the HTTP token
file; the fleet's Redis. Changes nothing. Exit code 1 when any check finds an error.")]
    Doctor(DoctorArgs),
    /// Read the audit log: every decision on a tool call and how each call that ran ended.
    #[command(after_help = "\
Examples:
  teaagent audit
  teaagent audit --since 1h --decision denied
  teaagent audit --tool write_file --since 2026-12-05T09:00:00Z
  teaagent audit --json | jq -r .rule
  teaagent audit --follow

Reads $TEAAGENT_HOME/audit.jsonl and its rotated files (audit.jsonl.1, …), oldest first. A
record's CALLER is the principal the transport authenticated (HTTP tokens, OAuth), `-` when it
named none (stdio, `teaagent run`). DURATION is how long a call's handler ran, on the record of
its end (completed, failed, input_required). Rotation: `[audit] max_bytes` and `keep` in
$TEAAGENT_HOME/config.toml.")]
    Audit(AuditArgs),
    /// Print a completion script for a shell.
    #[command(after_help = "\
Examples:
  teaagent completions bash > ~/.local/share/bash-completion/completions/teaagent
  teaagent completions zsh > ~/.zfunc/_teaagent
  teaagent completions fish > ~/.config/fish/completions/teaagent.fish")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum Mcp {
    /// Serve the workspace over stdio (JSON-RPC on stdout, logs on stderr), or Streamable HTTP.
    #[command(after_help = "\
Examples:
  teaagent mcp serve
  teaagent mcp serve --root /path/to/project --permission-mode prompt
  teaagent mcp serve --grant 'edit_file:path=src/**' --grant 'shell_exec:command=cargo test'
  teaagent mcp serve --preapprove sha256:3f5a…   (from `teaagent approvals digest`)
  teaagent mcp serve --http 127.0.0.1:8787       (Streamable HTTP at http://127.0.0.1:8787/mcp)
  teaagent mcp serve --http 0.0.0.0:8787 --http-token-file ~/.teaagent/tokens
  teaagent mcp serve --http 127.0.0.1:8787 --oauth-issuer https://auth.example.com \\
      --oauth-resource https://mcp.example.com/mcp --oauth-scope mcp:tools

An MCP client starts this command; on a terminal it says how to connect one.")]
    Serve(Box<ServeArgs>),
    /// List the tools: names, tiers, annotations, rate limits.
    #[command(after_help = "\
Examples:
  teaagent mcp tools
  teaagent mcp tools --json | jq '.[].name'")]
    Tools {
        /// Print the exact `tools/list` entries as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add teaagent to an MCP client's configuration, or print the entry for any other client.
    #[command(after_help = "\
Examples:
  teaagent mcp install claude-desktop --root ~/src/app
  teaagent mcp install vscode --project --grant 'edit_file:path=src/**'
  teaagent mcp install codex --permission-mode read-only --dry-run
  teaagent mcp install mcp-json --name app

The entry starts this binary (its absolute path) with `mcp serve --root DIR` and the flags
given. Everything else in the file (other servers, comments, formatting) is kept; the previous
file is kept as FILE.bak. Running it again changes nothing.

Files (user; project with --project):
  claude-desktop  ~/.config/Claude/claude_desktop_config.json (macOS: ~/Library/Application
                  Support/Claude/…)
  claude-code     ~/.claude.json; <root>/.mcp.json
  cursor          ~/.cursor/mcp.json; <root>/.cursor/mcp.json
  vscode          ~/.config/Code/User/mcp.json (macOS: ~/Library/Application Support/Code/User/…);
                  <root>/.vscode/mcp.json
  codex           ~/.codex/config.toml ($CODEX_HOME); <root>/.codex/config.toml
  windsurf        ~/.codeium/windsurf/mcp_config.json
  gemini-cli      ~/.gemini/settings.json; <root>/.gemini/settings.json
  mcp-json        prints {\"mcpServers\": {…}} on stdout, writes nothing")]
    Install(InstallArgs),
    /// Remove teaagent's entry from an MCP client's configuration (nothing else).
    #[command(after_help = "\
Examples:
  teaagent mcp uninstall claude-desktop
  teaagent mcp uninstall vscode --project --dry-run
  teaagent mcp uninstall cursor --name app

Only the entry called NAME is removed; the previous file is kept as FILE.bak. No such entry
is not an error: nothing is written.")]
    Uninstall(UninstallArgs),
    /// Decide which external MCP servers declared in the configuration may be started.
    #[command(after_help = "\
Examples:
  teaagent mcp trust list
  teaagent mcp trust allow my-custom-server
  teaagent mcp trust inspect my-custom-server
  teaagent mcp trust deny suspicious-server

A decision records a fingerprint of the server's command, arguments, environment names and
executable (SHA-256); a changed fingerprint is never trusted.")]
    Trust {
        #[command(subcommand)]
        command: Trust,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum Trust {
    /// Every declared server with its decision and whether its fingerprint still matches.
    #[command(after_help = "Examples:\n  teaagent mcp trust list")]
    List,
    /// Trust a declared server as it is now: starts it once, shows every tool it offers (what
    /// the model will read), and pins them.
    #[command(
        after_help = "Examples:\n  teaagent mcp trust allow my-custom-server\n  teaagent mcp trust allow my-custom-server --yes\n\nThe server must be declared in $TEAAGENT_HOME/config.toml as [mcp_servers.NAME]. If its tools change later, `mcp serve` withholds them until you allow it again."
    )]
    Allow {
        /// The server's name in `[mcp_servers.NAME]`.
        name: String,
        /// Record the decision without asking (on a terminal, `allow` shows the server's tools
        /// and asks first; otherwise it records at once).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Never start a declared server.
    #[command(after_help = "Examples:\n  teaagent mcp trust deny suspicious-server")]
    Deny {
        /// The server's name in `[mcp_servers.NAME]`.
        name: String,
    },
    /// Show a server's configuration, its record, and whether the fingerprint matches.
    #[command(after_help = "Examples:\n  teaagent mcp trust inspect my-custom-server")]
    Inspect {
        /// The server's name in `[mcp_servers.NAME]`.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum Approvals {
    /// Print the digest that `--preapprove` takes for one exact call.
    #[command(after_help = "\
Examples:
  teaagent approvals digest delete_path --args '{\"path\": \"build.log\"}'
  teaagent mcp serve --preapprove \\
      \"$(teaagent approvals digest delete_path --args '{\"path\": \"build.log\"}')\"

The digest is the SHA-256 of the RFC 8785 canonical JSON of {\"name\": TOOL, \"arguments\": ARGS}:
key order, spacing and number spelling do not change it; any argument does.")]
    Digest {
        /// The tool.
        tool: String,
        /// The call's arguments (a JSON object).
        #[arg(long, value_name = "JSON", value_parser = parse_json_object)]
        args: serde_json::Value,
    },
}

/// The flags of `mcp serve` and `run`: they set the defaults for every call.
#[derive(Debug, Clone, Args)]
pub(crate) struct CallFlags {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// read-only, workspace-write (default), prompt, allow or danger-full-access. Wins over
    /// $TEAAGENT_PERMISSION_MODE.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub(crate) permission_mode: Option<PermissionMode>,
    /// Allow calls without asking: TOOL, TOOL:ARG=GLOB (paths), TOOL:ARG=PREFIX* (commands);
    /// add ;uses=N or ;expires=WHEN. Repeatable; added to $TEAAGENT_GRANTS (one rule per line).
    #[arg(long, value_name = "RULE", value_parser = parse_grant)]
    pub(crate) grant: Vec<String>,
    /// Allow one exact call: sha256:HEX from `teaagent approvals digest`. Repeatable; added to
    /// $TEAAGENT_PREAPPROVE.
    #[arg(long, value_name = "DIGEST", value_parser = parse_digest)]
    pub(crate) preapprove: Vec<String>,
    /// The user configuration file (default: $TEAAGENT_HOME/config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Log level on stderr: error, warn, info, debug, trace or off (RUST_LOG wins when set).
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = ["error", "warn", "info", "debug", "trace", "off"])]
    pub(crate) log_level: String,
    /// Lines on stderr: text, or json (one JSON object a line: time, level, target, message,
    /// fields; for log shippers). Logs never go to stdout.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub(crate) log_format: String,
    /// Deprecated and inert: accepted for compatibility, approves nothing.
    #[arg(long, value_name = "ID")]
    pub(crate) approve_call_id: Vec<String>,
}

impl CallFlags {
    /// The format of the lines on stderr (`--log-format`).
    pub(crate) fn log_format(&self) -> teaagent_core::logging::LogFormat {
        match self.log_format.as_str() {
            "json" => teaagent_core::logging::LogFormat::Json,
            _ => teaagent_core::logging::LogFormat::Text,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) flags: CallFlags,
    #[command(flatten)]
    pub(crate) http: HttpFlags,
}

/// Streamable HTTP instead of stdio.
#[derive(Debug, Args)]
#[command(next_help_heading = "Streamable HTTP")]
pub(crate) struct HttpFlags {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (protocol 2026-07-28, and
    /// sessions of 2025-11-25 and before), e.g. 127.0.0.1:8787. An address that is not loopback
    /// needs tokens or OAuth.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Bearer tokens, one a line (`NAME:TOKEN` or `TOKEN`; 16+ characters). Also
    /// TEAAGENT_HTTP_TOKENS (same format).
    #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "oauth_issuer")]
    pub(crate) http_token_file: Option<PathBuf>,
    /// A browser origin allowed besides the loopback ones (repeatable), e.g.
    /// `https://app.example.com`.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub(crate) http_allow_origin: Vec<String>,
    /// A Host name this server answers to besides the loopback ones (repeatable), e.g.
    /// mcp.example.com (the name a reverse proxy passes on).
    #[arg(long, value_name = "HOST", requires = "http")]
    pub(crate) http_allow_host: Vec<String>,
    /// Requests one caller (a token, an OAuth subject; without tokens, a client address) may
    /// have in progress at once, each holding its connection; one more is answered 429
    /// [default: 64]
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub(crate) http_caller_connections: Option<u32>,
    /// Calls (tools/call, resources/read, prompts/get) one caller may have in progress at once
    /// [default: 16]
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub(crate) http_caller_calls: Option<u32>,
    /// Approval questions one caller may have open, asked or waiting for their turn [default: 4]
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) http_caller_questions: Option<u32>,
    /// subscriptions/listen streams one caller may keep open (of the server's 16) [default: 4]
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub(crate) http_caller_listens: Option<u32>,
    /// Serve /metrics (Prometheus text format) on this address instead of next to /mcp, and
    /// without authentication there: give a private address only the scraper reaches, e.g.
    /// 127.0.0.1:9464. Without it, /metrics needs what /mcp needs.
    #[arg(long, value_name = "ADDR", requires = "http")]
    pub(crate) metrics_listen: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub(crate) oauth: OAuthFlags,
}

impl HttpFlags {
    /// The limits of one caller's calls, questions and streams: the flags given, else the
    /// defaults.
    pub(crate) fn caller_limits(&self) -> teaagent_core::server::CallerLimits {
        let given = |flag: Option<u32>, default: usize| flag.map_or(default, |n| n as usize);
        let limits = teaagent_core::server::CallerLimits::default();
        limits
            .calls(given(self.http_caller_calls, limits.calls))
            .questions(given(self.http_caller_questions, limits.questions))
            .subscriptions(given(self.http_caller_listens, limits.subscriptions))
    }
}

/// OAuth 2.1 resource-server mode: access tokens of an authorization server, instead of tokens.
#[derive(Debug, Args)]
#[command(next_help_heading = "OAuth (instead of tokens)")]
pub(crate) struct OAuthFlags {
    /// Accept the access tokens (JWT) of this authorization server: its issuer identifier, as
    /// its tokens' `iss` names it, e.g. `https://auth.example.com`. Needs --oauth-resource.
    #[arg(long, value_name = "URL", requires_all = ["http", "oauth_resource"])]
    pub(crate) oauth_issuer: Option<String>,
    /// This server's URL as clients use it (behind a proxy, the public one), e.g.
    /// `https://mcp.example.com/mcp`: the audience every token must name. https unless loopback;
    /// its host is also a Host this server answers to.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub(crate) oauth_resource: Option<String>,
    /// The issuer's key set (JWKS). Default: the `jwks_uri` of the issuer's metadata
    /// (/.well-known/oauth-authorization-server, or openid-configuration).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub(crate) oauth_jwks_uri: Option<String>,
    /// A scope every request needs (repeatable).
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub(crate) oauth_scope: Vec<String>,
    /// A scope calls of tools that write need too (tier medium and above: write_file,
    /// edit_file, create_file, …).
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub(crate) oauth_write_scope: Option<String>,
    /// A scope calls of tools that execute or reach outside need too (tier high and above:
    /// shell_exec, delete_path, move_path, external servers' tools), besides the write scope.
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub(crate) oauth_exec_scope: Option<String>,
}

/// `mcp install`: the client, and the flags its entry starts `mcp serve` with.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The client (mcp-json: print the entry on stdout, for any other client).
    #[arg(value_name = "CLIENT", value_parser = clap::builder::PossibleValuesParser::new(crate::clients::ids()))]
    pub(crate) client: String,
    /// The workspace root the entry serves (default: the current directory; written as an
    /// absolute, canonical path).
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// The entry's --permission-mode: read-only, workspace-write, prompt, allow or
    /// danger-full-access.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub(crate) permission_mode: Option<PermissionMode>,
    /// A --grant of the entry (repeatable): TOOL, TOOL:ARG=GLOB, TOOL:ARG=PREFIX*.
    #[arg(long, value_name = "RULE", value_parser = parse_grant)]
    pub(crate) grant: Vec<String>,
    /// A variable the client sets for the server (repeatable), e.g. TEAAGENT_HOME=/srv/ta.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    pub(crate) env: Vec<(String, String)>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// `mcp uninstall`: the client.
#[derive(Debug, Args)]
pub(crate) struct UninstallArgs {
    /// The client.
    #[arg(value_name = "CLIENT", value_parser = clap::builder::PossibleValuesParser::new(crate::clients::all().iter().map(|c| c.id)))]
    pub(crate) client: String,
    /// The project whose file --project edits (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// Which entry of which file, and whether to write it.
#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// The entry's name in the client's list of servers.
    #[arg(long, value_name = "NAME", default_value = "teaagent", value_parser = parse_name)]
    pub(crate) name: String,
    /// The project's file (inside --root) instead of the user's, for clients that have one.
    #[arg(long)]
    pub(crate) project: bool,
    /// Show the change as a diff of the file; write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The tool to call.
    pub(crate) tool: String,
    /// Its arguments (a JSON object; default `{}`).
    #[arg(long, value_name = "JSON", value_parser = parse_json_object)]
    pub(crate) args: Option<serde_json::Value>,
    /// Print the raw `tools/call` result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) flags: CallFlags,
}

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// Only records since WHEN: a duration back from now (`1h`, `30m`, `2days`) or a time
    /// (RFC 3339, `2026-12-05T09:00:00Z`).
    #[arg(long, value_name = "WHEN", value_parser = crate::commands::audit::parse_since)]
    pub(crate) since: Option<std::time::SystemTime>,
    /// Only records of this tool (its exact name).
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// Only records with this outcome.
    #[arg(long, value_name = "OUTCOME", value_parser = clap::builder::PossibleValuesParser::new(teaagent_core::policy::audit::OUTCOMES))]
    pub(crate) decision: Option<String>,
    /// Print the records as they are in the file (JSON, one a line), filtered the same way.
    #[arg(long)]
    pub(crate) json: bool,
    /// Keep printing records as they are written, across rotations, until interrupted.
    #[arg(long, short = 'f')]
    pub(crate) follow: bool,
}

fn parse_mode(text: &str) -> Result<PermissionMode, String> {
    text.parse()
}

fn parse_grant(text: &str) -> Result<String, String> {
    Grant::parse(text).map(|_| text.to_owned()).map_err(|e| e.why)
}

/// An entry name: what every client accepts as a key (and a TOML bare key).
fn parse_name(text: &str) -> Result<String, String> {
    let ok = (1..=64).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(text.to_owned())
    } else {
        Err("expected 1 to 64 letters, digits, `_` or `-`, e.g. `teaagent` or `teaagent-app`".into())
    }
}

/// `KEY=VALUE`: a portable variable name (letters, digits, `_`, not starting with a digit) and a
/// value without NUL (which no environment can hold).
fn parse_env(text: &str) -> Result<(String, String), String> {
    let Some((key, value)) = text.split_once('=') else {
        return Err("expected KEY=VALUE, e.g. TEAAGENT_HOME=/srv/teaagent".into());
    };
    let key_ok = key.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !key_ok {
        return Err(format!(
            "`{key}` is not a variable name: letters, digits and `_`, not starting with a digit"
        ));
    }
    if value.contains('\0') {
        return Err("a value cannot contain a NUL character".into());
    }
    Ok((key.to_owned(), value.to_owned()))
}

fn parse_digest(text: &str) -> Result<String, String> {
    let digest = text.trim().to_ascii_lowercase();
    if teaagent_core::digest::is_digest(&digest) {
        Ok(digest)
    } else {
        Err("expected `sha256:` and 64 hex digits (see `teaagent approvals digest`)".into())
    }
}

fn parse_json_object(text: &str) -> Result<serde_json::Value, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(_) => Err("expected a JSON object, e.g. '{\"path\": \"README.md\"}'".into()),
        Err(e) => Err(format!("not JSON: {e}")),
    }
}

/// `teaagent doctor`'s flags.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// The workspace to check the configuration and lock of [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// The user configuration file [default: $TEAAGENT_HOME/config.toml].
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The HTTP token file to check [default: $TEAAGENT_HOME/tokens, when it exists].
    #[arg(long, value_name = "FILE")]
    pub(crate) http_token_file: Option<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
