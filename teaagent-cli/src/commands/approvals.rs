//! `teaagent approvals`: what `--preapprove` takes.

use std::process::ExitCode;

use crate::cli::Approvals;

/// `teaagent approvals …`.
pub(crate) fn run(command: Approvals) -> anyhow::Result<ExitCode> {
    match command {
        Approvals::Digest { tool, args } => {
            println!("{}", teaagent_core::digest::call_digest(&tool, &args));
            Ok(ExitCode::SUCCESS)
        }
    }
}
