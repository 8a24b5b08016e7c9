use teaagent_core::{State, ToolContext, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Route {
    /// Where.
    region: String,
}

/// Route a request.
#[tool(read_only)]
fn route(
    #[header("Context")] _ctx: &ToolContext,
    #[header("Count")] State(count): State<u32>,
    #[header("Route")]
    #[args]
    route: Route,
) -> String {
    format!("{} {count}", route.region)
}

fn main() {}
