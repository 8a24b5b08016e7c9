use teaagent_core::tool;

/// Add a pair.
#[tool]
fn add((a, b): (i64, i64)) -> String {
    (a + b).to_string()
}

fn main() {}
