//! `teaagent`: serve workspace tools to any MCP client over stdio.
//!
//! Exit codes: 0 success; 2 usage error (clap's message on stderr, nothing on stdout) or a
//! configuration file that cannot be used ([`config::ConfigError`]: bad value, unknown key,
//! unreadable file; [`clients::ClientError::is_usage`]: a client's file that does not parse or
//! has the wrong shape); 1 anything else, with a one-line message on stderr that says what went
//! wrong. Every message and warning is shown escaped ([`teaagent_core::visible::escape`]): it
//! may quote configuration files, tool arguments or tool output, whose bytes never reach the
//! terminal raw.

#![allow(clippy::print_stdout)] // this is the command's output

mod cli;
mod clients;
mod commands;
mod config;
mod doctor;
mod external;
mod pins;
mod sandbox;
mod say;
mod setup;
mod trust;

use std::process::ExitCode;

use clap::Parser;
use teaagent_core::server::http::oauth::OAuthConfigError;
use teaagent_core::visible;

use crate::cli::Cli;

fn main() -> ExitCode {
    let code = run();
    // Lines that waited for a full stderr (`teaagent_core::logging::stderr`) are written before
    // the exit, for a moment at most.
    teaagent_core::logging::stderr::flush(teaagent_core::logging::stderr::AT_EXIT);
    code
}

fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            say::error(&one_line(&e));
            match e.downcast_ref::<config::ConfigError>() {
                Some(config) if config.is_usage() => ExitCode::from(2),
                // A client's file that cannot be used, or a flag `mcp install` cannot use.
                _ if e.downcast_ref::<clients::ClientError>().is_some_and(clients::ClientError::is_usage) => {
                    ExitCode::from(2)
                }
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
