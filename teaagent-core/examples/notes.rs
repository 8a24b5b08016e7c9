//! A small notes server: shared state, a destructive tool and a rate-limited one.
//!
//! The notes live in one `Notes` value given to the server once (`.state(...)`); every tool
//! that declares a `State<Notes>` parameter gets a clone of it (an `Arc`, so the same notes).
//!
//! ```sh
//! cargo build -p teaagent-core --example notes
//! echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   | target/debug/examples/notes
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};

use teaagent_core::{Registry, Server, State, ToolError, tool};

/// The notes, by title. Cloned for every call: the clones share one map.
#[derive(Clone, Default)]
struct Notes(Arc<Mutex<BTreeMap<String, String>>>);

impl Notes {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, String>> {
        // A tool that panicked while holding the lock left the map whole: keep using it.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Add a note, or replace the note of the same title.
#[tool(idempotent)]
fn add_note(
    State(notes): State<Notes>,
    /// The note's title.
    #[schemars(length(min = 1, max = 80))]
    title: String,
    /// The note's text.
    text: String,
) -> String {
    let replaced = notes.lock().insert(title.clone(), text).is_some();
    if replaced { format!("replaced `{title}`") } else { format!("added `{title}`") }
}

/// List the titles of the notes.
#[tool(read_only)]
fn list_notes(State(notes): State<Notes>) -> String {
    let notes = notes.lock();
    if notes.is_empty() {
        return "no notes".into();
    }
    notes.keys().cloned().collect::<Vec<_>>().join("\n")
}

/// Read a note.
#[tool(read_only)]
fn read_note(
    State(notes): State<Notes>,
    /// The note's title.
    title: String,
) -> Result<String, ToolError> {
    notes.lock().get(&title).cloned().ok_or_else(|| ToolError::new(format!("no note titled `{title}`")))
}

/// Delete a note for good.
#[tool(destructive)]
fn delete_note(
    State(notes): State<Notes>,
    /// The note's title.
    title: String,
) -> Result<String, ToolError> {
    match notes.lock().remove(&title) {
        Some(_) => Ok(format!("deleted `{title}`")),
        None => Err(ToolError::new(format!("no note titled `{title}`"))),
    }
}

/// Search the notes' texts for a word (at most 5 searches a minute).
#[tool(read_only, rate_limit(max_calls = 5, window_secs = 60))]
fn search_notes(
    State(notes): State<Notes>,
    /// The word to look for (case-insensitive).
    word: String,
) -> String {
    let word = word.to_lowercase();
    let found: Vec<_> = notes
        .lock()
        .iter()
        .filter(|(_, text)| text.to_lowercase().contains(&word))
        .map(|(title, _)| title.clone())
        .collect();
    if found.is_empty() { format!("no note mentions `{word}`") } else { found.join("\n") }
}

fn main() -> ExitCode {
    let registry = match Registry::builder().registered().build() {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    Server::new(registry).server_info("notes", env!("CARGO_PKG_VERSION")).state(Notes::default()).run_stdio()
}
