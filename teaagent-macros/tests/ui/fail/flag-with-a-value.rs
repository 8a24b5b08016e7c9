use teaagent_core::tool;

/// Read something.
#[tool(read_only = true)]
fn read() -> String {
    String::new()
}

fn main() {}
