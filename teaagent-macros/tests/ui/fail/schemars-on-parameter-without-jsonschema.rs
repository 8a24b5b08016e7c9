use teaagent_core::tool;

#[derive(serde::Deserialize)]
struct Level(u8);

/// Set the level.
#[tool]
fn set_level(
    /// The level.
    #[schemars(range(max = 3))]
    level: Level,
) -> String {
    level.0.to_string()
}

fn main() {}
