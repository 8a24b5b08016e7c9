use teaagent_core::tool;

/// Do something risky.
#[tool(tier = "High")]
fn risky() -> String {
    String::new()
}

fn main() {}
