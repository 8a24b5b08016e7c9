use teaagent_core::tool;

/// Read something.
#[tool(read_only, tier = "low", read_only)]
fn read() -> String {
    String::new()
}

fn main() {}
