//! The `echo` tool with structured output (`Json<T>`): what the stdio benchmark measures next to
//! the text `echo` example, to show what structured output costs per call — serializing the
//! value twice (`structuredContent` and its text) and checking it against the tool's
//! `outputSchema` before it is sent.

use std::process::ExitCode;

use teaagent_core::{Json, Server, tool};

/// The text, echoed.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Echoed {
    /// The text, unchanged.
    text: String,
}

/// Echo the text back unchanged, as structured output.
#[tool(read_only, idempotent)]
async fn echo(
    /// The text to echo.
    text: String,
) -> Json<Echoed> {
    Json(Echoed { text })
}

fn main() -> ExitCode {
    Server::registered().run_stdio()
}
