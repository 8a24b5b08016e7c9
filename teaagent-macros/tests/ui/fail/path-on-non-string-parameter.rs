use teaagent_core::tool;

/// Read a file by number.
#[tool(read_only)]
fn read(#[path] file: u32) -> String {
    file.to_string()
}

fn main() {}
