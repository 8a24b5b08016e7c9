use teaagent_core::tool;

#[tool(read_only)]
fn undocumented() -> String {
    String::new()
}

fn main() {
    // The function is still emitted: calling it adds no error.
    let _ = undocumented();
}
