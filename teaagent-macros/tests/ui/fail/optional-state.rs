use std::sync::Arc;

use teaagent_core::{State, tool};

/// Count the notes.
#[tool]
fn count_notes(notes: Option<State<Arc<Vec<String>>>>) -> String {
    notes.map_or(0, |n| n.len()).to_string()
}

fn main() {}
