use teaagent_core::tool;

/// Read something.
#[tool(cached)]
fn read() -> String {
    String::new()
}

fn main() {
    // The function is still emitted: calling it adds no error.
    let _ = read();
}
