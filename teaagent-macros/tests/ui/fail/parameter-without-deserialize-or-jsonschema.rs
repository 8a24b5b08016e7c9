use teaagent_core::tool;

pub struct Point {
    pub x: i64,
    pub y: i64,
}

/// Where is it.
#[tool(read_only)]
fn locate(
    /// A name.
    name: String,
    /// The point.
    point: Point,
) -> String {
    format!("{name} at {}, {}", point.x, point.y)
}

fn main() {
    // The function is still emitted: calling it adds no error.
    let _ = locate(String::new(), Point { x: 1, y: 2 });
}
