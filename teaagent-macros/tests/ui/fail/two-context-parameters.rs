use teaagent_core::{ToolContext, tool};

/// Greet twice.
#[tool]
fn greet(first: &ToolContext, second: &ToolContext) -> String {
    format!("{}{}", first.tool(), second.tool())
}

fn main() {}
