use teaagent_core::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    text: String,
}

/// Search.
#[tool(read_only)]
fn search(#[args] query: Query, limit: u32) -> String {
    format!("{} {limit}", query.text)
}

fn main() {}
