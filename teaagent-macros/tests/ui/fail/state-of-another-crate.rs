use teaagent_core::tool;

/// A type of the user's own that happens to be called `State`.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct State<T>(T);

/// Count the notes.
#[tool]
fn count_notes(State(notes): State<Vec<String>>) -> String {
    notes.len().to_string()
}

fn main() {}
