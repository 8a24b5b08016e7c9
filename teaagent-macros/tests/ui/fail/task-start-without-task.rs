use teaagent_core::tool;

/// Build the release.
#[tool(task_start = "body")]
async fn build() -> String {
    String::new()
}

fn main() {}
