use std::sync::Arc;

use teaagent_core::{State, tool};

/// Count the notes.
#[tool]
fn count_notes(#[args] State(notes): State<Arc<Vec<String>>>) -> String {
    notes.len().to_string()
}

fn main() {}
