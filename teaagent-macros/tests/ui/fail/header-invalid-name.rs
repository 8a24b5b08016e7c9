use teaagent_core::tool;

/// Route a request.
#[tool(read_only)]
fn route(
    /// Where.
    #[header("Two Words")]
    region: String,
    /// Which zone.
    #[header("")]
    zone: String,
) -> String {
    format!("{region} {zone}")
}

fn main() {}
