use teaagent_core::tool;

// No doc comment: the misspelled `description` is the one error about it, not also "a tool needs
// a description"; the same for `max_calls` and "`rate_limit` needs `max_calls = N`".
#[tool(read_only, descripton = "Fetch a page.", timeout = 30, rate_limit(max_call = 10, window_secs = 60))]
fn fetch() -> String {
    String::new()
}

fn main() {}
