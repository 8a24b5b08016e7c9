use teaagent_core::tool;

/// Route a request.
#[tool(read_only, input_schema = "route_schema")]
fn route(region: String) -> String {
    region
}

fn main() {}
