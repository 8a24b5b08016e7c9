// A parameter without `///` is a warning (`deprecated`, the one lint a macro can raise on
// stable); denied here so that its text is checked.
#![deny(deprecated)]

use std::sync::Arc;

use teaagent_core::{State, ToolContext, tool};

/// Repeat a text.
#[tool]
fn repeat(
    ctx: &ToolContext,
    State(prefix): State<Arc<str>>,
    text: String,
    /// How often.
    times: Option<u32>,
    #[schemars(description = "A separator.")]
    separator: Option<String>,
    limit: Option<u32>,
) -> String {
    let _ = (ctx.tool(), separator, limit);
    format!("{prefix}{}", text.repeat(times.unwrap_or(1) as usize))
}

fn main() {}
