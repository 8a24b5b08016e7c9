//! `teaagent run TOOL`: one call from the shell.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::bail;
use teaagent_core::gateway::SEPARATOR;
use teaagent_core::visible;

use crate::cli::CallFlags;
use crate::setup::{harden, server, workspace};

/// `run TOOL --args JSON`: the result on stdout (its text, or JSON with `--json`); a tool that
/// reports an error says it on stderr too, and exits 1.
pub(crate) fn call(
    tool: &str,
    args: serde_json::Value,
    json: bool,
    flags: CallFlags,
) -> anyhow::Result<ExitCode> {
    teaagent_core::logging::init_as(
        if flags.log_level == "info" { "warn" } else { &flags.log_level },
        flags.log_format(),
    );
    harden();
    // Only the external server the tool belongs to is started.
    let (server, _, gateway, announced) = server(
        &flags,
        workspace(&flags)?,
        |name| tool.strip_prefix(name).is_some_and(|t| t.starts_with(SEPARATOR)),
        std::time::Duration::ZERO,
    )?;
    // One call, then the process ends: what the sandbox enforces is said first.
    let _ = announced.join();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let outcome = runtime.block_on(server.call_once(tool, args));
    teaagent_core::server::end_runtime(runtime);
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
