use teaagent_core::tool;

/// Greet someone.
#[tool]
fn greet(
    /// Who to greet.
    name: &str,
) -> String {
    format!("hello {name}")
}

/// Count the bytes.
#[tool]
fn count(
    /// The bytes.
    bytes: Option<&[u8]>,
) -> String {
    bytes.map_or(0, <[u8]>::len).to_string()
}

fn main() {}
