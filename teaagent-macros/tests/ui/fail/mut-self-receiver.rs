use teaagent_core::tool;

struct Notes(Vec<String>);

impl Notes {
    /// Add a note.
    #[tool]
    fn add_note(
        &mut self,
        /// The note.
        text: String,
    ) -> String {
        self.0.push(text);
        format!("{} notes", self.0.len())
    }
}

fn main() {}
