use teaagent_core::tool;

/// Do something risky.
#[tool(tier = "extreme")]
fn risky() -> String {
    String::new()
}

fn main() {}
