use teaagent_core::tool;

/// Change nothing, allegedly.
#[tool(read_only, stateful)]
fn remember() -> String {
    String::new()
}

fn main() {}
