use teaagent_core::tool;

/// Repeat a text.
#[tool]
fn repeat(
    /// The text.
    #[validate(length(min = 1))]
    text: String,
) -> String {
    text
}

fn main() {}
