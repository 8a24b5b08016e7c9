use teaagent_core::tool;

/// Repeat a text.
#[tool]
fn repeat(
    /// The text.
    text: String,
    /// How often.
    #[serde(default)]
    times: u32,
) -> String {
    text.repeat(times as usize)
}

fn main() {}
