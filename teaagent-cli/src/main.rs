//! `teaagent`: serve workspace tools to any MCP client over stdio.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use teaagent_core::workspace::lock::LockRegistry;
use teaagent_core::workspace::resources::WorkspaceResources;
use teaagent_core::{Registry, Server, Workspace};

#[derive(Parser)]
#[command(name = "teaagent", version, about = "A fast, safe MCP server for your workspace")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// MCP server commands.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

#[derive(Subcommand)]
enum McpCommand {
    /// Serve the workspace over stdio (JSON-RPC on stdout, logs on stderr).
    Serve {
        /// The workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Log level for stderr (`RUST_LOG` wins when set).
        #[arg(long, value_name = "LEVEL", default_value = "info")]
        log_level: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Mcp { command: McpCommand::Serve { root, log_level } } => {
            teaagent_core::logging::init(&log_level);
            let root = root.unwrap_or_else(|| PathBuf::from("."));
            let workspace = match Workspace::open(&root) {
                Ok(ws) => ws,
                Err(e) => {
                    eprintln!("teaagent: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let locks = match LockRegistry::open_home() {
                Ok(locks) => locks,
                Err(e) => {
                    eprintln!("teaagent: cannot use $TEAAGENT_HOME: {e}");
                    return ExitCode::FAILURE;
                }
            };
            tracing::info!(root = %workspace.root().display(), "workspace");
            let registry = match Registry::builder().build() {
                Ok(registry) => registry,
                Err(e) => {
                    eprintln!("teaagent: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let root = workspace.root().to_path_buf();
            Server::new(registry)
                .workspace(workspace.clone())
                .resources(WorkspaceResources::new(workspace))
                .lock(locks, root)
                .run_stdio()
        }
    }
}
