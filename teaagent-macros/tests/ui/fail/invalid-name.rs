use teaagent_core::tool;

/// Read a file.
#[tool(name = "read file")]
fn read_file() -> String {
    String::new()
}

fn main() {}
