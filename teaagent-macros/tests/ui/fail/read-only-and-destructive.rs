use teaagent_core::tool;

/// Delete nothing, allegedly.
#[tool(read_only, destructive)]
fn wipe() -> String {
    String::new()
}

fn main() {
    // The function is still emitted: calling it adds no error.
    let _ = wipe();
}
