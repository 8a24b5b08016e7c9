use teaagent_core::{State, tool};

/// Notes kept in memory, but not `Clone`.
struct Notes(Vec<String>);

/// Count the notes.
#[tool]
fn count_notes(State(notes): State<Notes>) -> String {
    notes.0.len().to_string()
}

fn main() {}
