use teaagent_core::tool;

/// Build the release, later.
#[tool(task, task_start = "later")]
async fn build_later() -> String {
    String::new()
}

fn main() {}
