use teaagent_core::tool;

/// Route a request.
#[tool(read_only)]
fn route(
    /// Where from.
    #[header("Region")]
    from: String,
    /// Where to.
    #[header("REGION")]
    to: String,
) -> String {
    format!("{from} {to}")
}

fn main() {}
