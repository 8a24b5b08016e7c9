use teaagent_core::tool;

/// Never callable.
#[tool(rate_limit(max_calls = 0, window_secs = 60))]
fn never() -> String {
    String::new()
}

fn main() {}
