use teaagent_core::tool;

/// Count.
#[tool(read_only)]
fn count() -> u64 {
    42
}

fn main() {}
