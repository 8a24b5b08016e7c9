use teaagent_core::tool;

/// Build the release.
#[tool(task = "sometimes")]
async fn build() -> String {
    String::new()
}

fn main() {}
