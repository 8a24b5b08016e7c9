use teaagent_core::tool;

/// Route a request.
#[tool(read_only)]
fn route(
    /// How far, in kilometres.
    #[header("Distance")]
    distance: f64,
    /// Stops on the way.
    #[header("Stops")]
    stops: Option<Vec<String>>,
) -> String {
    format!("{distance} {stops:?}")
}

fn main() {}
