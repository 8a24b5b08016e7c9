use teaagent_core::tool;

/// Say something.
#[tool]
fn say(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
