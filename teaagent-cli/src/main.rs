//! `teaagent`: serve workspace tools to any MCP client over stdio.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use teaagent_core::{Registry, Server};

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
            let root = match root.canonicalize() {
                Ok(root) => root,
                Err(e) => {
                    eprintln!("teaagent: cannot use --root {}: {e}", root.display());
                    return ExitCode::FAILURE;
                }
            };
            tracing::info!(root = %root.display(), "workspace");
            match Registry::builder().build() {
                Ok(registry) => Server::new(registry).run_stdio(),
                Err(e) => {
                    eprintln!("teaagent: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
