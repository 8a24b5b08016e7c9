use teaagent_core::tool;

/// A struct.
#[tool]
struct NotATool;

fn main() {}
