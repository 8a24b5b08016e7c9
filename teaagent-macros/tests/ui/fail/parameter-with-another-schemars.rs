//! A parameter type that derives `JsonSchema` from another version of schemars than teaagent's
//! (`schemars = "0.8"` in the author's Cargo.toml, while teaagent uses schemars 1).
//!
//! schemars 0.8 is not among this workspace's dependencies and these cases build offline, so the
//! other version is simulated: `schemars08` below is what `schemars = "0.8"` gives, a crate with a
//! trait of its own named `JsonSchema`, and the impl is what its derive writes. The type then
//! implements a `JsonSchema`, but not the one teaagent asks for: the same unmet bound as with
//! the real crate, where rustc adds a note that two versions of `schemars` are in the graph.

use teaagent_core::tool;

mod schemars08 {
    pub trait JsonSchema {
        fn schema_name() -> String;
    }
}

#[derive(serde::Deserialize)]
pub struct Point {
    pub x: i64,
    pub y: i64,
}

impl schemars08::JsonSchema for Point {
    fn schema_name() -> String {
        "Point".to_owned()
    }
}

/// Where is it.
#[tool(read_only)]
fn locate(
    /// The point.
    point: Point,
) -> String {
    format!("at {}, {}", point.x, point.y)
}

fn main() {}
