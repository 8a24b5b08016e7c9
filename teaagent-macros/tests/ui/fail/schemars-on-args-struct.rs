use teaagent_core::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    /// What to find.
    text: String,
}

/// Find things.
#[tool]
fn find(#[schemars(length(max = 8))] #[args] query: Query) -> String {
    query.text
}

fn main() {}
