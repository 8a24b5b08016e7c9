use std::cell::RefCell;
use std::rc::Rc;

use teaagent_core::{State, tool};

/// Notes shared through an `Rc`, which cannot cross threads.
#[derive(Clone)]
struct Notes(Rc<RefCell<Vec<String>>>);

/// Count the notes.
#[tool]
fn count_notes(State(notes): State<Notes>) -> String {
    notes.0.borrow().len().to_string()
}

fn main() {}
