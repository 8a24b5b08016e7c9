use teaagent_core::tool;

fn route_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"region": {"type": "string"}}})
}

/// Route a request.
#[tool(read_only, input_schema = route_schema)]
fn route(#[header("Region")] region: String) -> String {
    region
}

fn main() {}
