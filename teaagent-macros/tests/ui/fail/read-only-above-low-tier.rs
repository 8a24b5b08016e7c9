use teaagent_core::tool;

/// Look, carefully.
#[tool(read_only, tier = "high")]
fn look() -> String {
    String::new()
}

fn main() {}
