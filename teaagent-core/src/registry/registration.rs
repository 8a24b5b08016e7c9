//! The tools `#[tool]` registers: each attribute submits a [`ToolRegistration`], collected at link
//! time by `inventory` and read by `RegistryBuilder::registered`.

use crate::tool::ToolDef;

/// A tool registered by the attribute (collected at link time by `inventory`).
pub struct ToolRegistration {
    /// Builds the definition (once, when a registry is built).
    pub build: fn() -> ToolDef,
}

inventory::collect!(ToolRegistration);

/// Every definition registered by `#[tool]` in the linked program.
pub fn registered() -> impl Iterator<Item = &'static ToolRegistration> {
    inventory::iter::<ToolRegistration>.into_iter()
}
