//! `teaagent completions SHELL`: a completion script for a shell.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::Cli;

/// Prints the completion script for `shell` on stdout.
pub(crate) fn print(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    clap_complete::generate(shell, &mut Cli::command(), "teaagent", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}
