//! The subcommands, one module each, and what their output shares.

pub(crate) mod approvals;
pub(crate) mod audit;
pub(crate) mod completions;
pub(crate) mod doctor;
pub(crate) mod install;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod tools;
pub(crate) mod trust;

use std::process::ExitCode;

use crate::cli::{Cli, Command, Mcp};

/// Runs the subcommand `cli` names.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Mcp { command: Mcp::Serve(args) } if args.http.http.is_some() => {
            serve::http(args.flags, args.http)
        }
        Command::Mcp { command: Mcp::Serve(args) } => serve::stdio(args.flags),
        Command::Run(args) => {
            run::call(&args.tool, args.args.unwrap_or_else(|| serde_json::json!({})), args.json, args.flags)
        }
        Command::Mcp { command: Mcp::Tools { json } } => tools::list(json),
        Command::Mcp { command: Mcp::Trust { command } } => trust::run(command),
        Command::Mcp { command: Mcp::Install(args) } => install::install(args),
        Command::Mcp { command: Mcp::Uninstall(args) } => install::uninstall(args),
        Command::Approvals { command } => approvals::run(command),
        Command::Audit(args) => audit::show(args),
        Command::Completions { shell } => completions::print(shell),
        Command::Doctor(args) => doctor::run(args),
    }
}

/// Prints `rows` under `header`, in columns as wide as their widest cell (the last one unpadded).
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
