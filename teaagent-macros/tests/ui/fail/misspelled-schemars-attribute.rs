use teaagent_core::tool;

/// Pick a number.
#[tool]
fn pick(
    /// Up to ten.
    #[schemars(rnage(max = 10))]
    n: u32,
) -> String {
    n.to_string()
}

fn main() {}
