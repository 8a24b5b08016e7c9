use teaagent_core::tool;

/// Route a request.
#[tool(read_only)]
fn route(
    /// Where.
    #[header]
    region: String,
    /// How far.
    #[header("Distance")]
    #[header("Far")]
    distance: u32,
) -> String {
    format!("{region} {distance}")
}

fn main() {}
