use teaagent_core::tool;

/// A window of no time.
#[tool(rate_limit(max_calls = 5, window_secs = 0))]
fn instant() -> String {
    String::new()
}

/// A window before time began.
#[tool(rate_limit(max_calls = 5, window_secs = -1.5))]
fn backwards() -> String {
    String::new()
}

fn main() {}
