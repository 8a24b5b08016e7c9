use teaagent_core::tool;

/// Echo anything.
#[tool]
fn echo<T: std::fmt::Display>(value: T) -> String {
    value.to_string()
}

fn main() {}
