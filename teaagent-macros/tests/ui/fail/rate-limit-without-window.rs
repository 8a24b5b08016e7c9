use teaagent_core::tool;

/// Limited, somehow.
#[tool(rate_limit(max_calls = 3))]
fn limited() -> String {
    String::new()
}

fn main() {}
