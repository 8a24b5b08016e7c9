//! A tool that blocks its thread inside an `async fn` (the server names it and isolates its
//! calls), and a prompt handler that does the same.

use teaagent_core::mcp::prompts::GetPromptResult;
use teaagent_core::{PromptDef, Prompts, tool};

/// Sleep with `std::thread::sleep` inside an async tool (blocks the thread it is polled on).
#[tool(read_only)]
async fn nap(
    /// How long to sleep, in milliseconds.
    ms: u64,
    /// A file to create just before sleeping, so a test knows the call is running.
    started: Option<String>,
) -> String {
    if let Some(path) = started {
        std::fs::write(path, b"started").expect("write the start marker");
    }
    std::thread::sleep(std::time::Duration::from_millis(ms));
    format!("slept {ms} ms")
}

/// The prompt `nap`: its handler sleeps with `std::thread::sleep` (arguments `ms`, and `started`
/// as the tool's).
pub(crate) fn prompts() -> Prompts {
    Prompts::new()
        .prompt(
            PromptDef::new("nap")
                .description("Sleeps in its handler, blocking the thread.")
                .argument("ms", "How long to sleep, in milliseconds.", true)
                .argument("started", "A file to create just before sleeping.", false)
                .handler(|_, args| async move {
                    if let Some(path) = args.get("started") {
                        std::fs::write(path, b"started").expect("write the start marker");
                    }
                    let ms: u64 = args["ms"].parse().map_err(teaagent_core::ToolError::new)?;
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    Ok(GetPromptResult::text(format!("slept {ms} ms")))
                }),
        )
        // A handler that misspells its argument (`fil` for `file`): the answer names it.
        .prompt(
            PromptDef::new("typo")
                .description("Reads an argument it does not declare.")
                .argument("file", "A file.", true)
                .argument("note", "A note.", false)
                .handler(|_, args| async move {
                    let note = args.get("note").unwrap_or("(no note)").to_owned();
                    Ok(GetPromptResult::text(format!("{} {note}", &args["fil"])))
                }),
        )
}

/// A prompt whose completer names an argument it does not have: the server does not start.
pub(crate) fn misspelled_completer() -> Prompts {
    Prompts::new().prompt(
        PromptDef::new("summarize")
            .argument("path", "The file.", true)
            .complete("pth", |typed, _| vec![format!("{typed}.md")])
            .handler(
                |_, args| async move { Ok(GetPromptResult::text(format!("Summarize {}.", &args["path"]))) },
            ),
    )
}
