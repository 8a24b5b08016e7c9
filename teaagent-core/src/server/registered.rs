//! A server's tools, given whole or collected from the program's `#[tool]` functions when first
//! needed.

use std::sync::OnceLock;

#[cfg(doc)]
use super::Server;
use crate::registry::Registry;

/// A server's tools: given to [`Server::new`], or collected from the program's `#[tool]`
/// functions the first time they are needed ([`Server::registered`]).
pub(super) struct Tools {
    registry: OnceLock<Registry>,
    /// Why collecting them failed (the registry is then empty).
    error: OnceLock<crate::registry::RegistryError>,
}

impl Tools {
    /// Tools given whole ([`Server::new`]).
    pub(super) fn given(registry: Registry) -> Self {
        Self { registry: registry.into(), error: OnceLock::new() }
    }

    /// The program's `#[tool]` functions, collected when first needed ([`Server::registered`]).
    pub(super) fn registered() -> Self {
        Self { registry: OnceLock::new(), error: OnceLock::new() }
    }

    pub(super) fn get(&self) -> &Registry {
        self.registry.get_or_init(|| match Registry::builder().registered().build() {
            Ok(registry) => registry,
            Err(e) => {
                let _ = self.error.set(e);
                Registry::empty()
            }
        })
    }

    /// The tools, collected now if they were not yet; `Err` when they are invalid.
    pub(super) fn check(&self) -> Result<&Registry, &crate::registry::RegistryError> {
        let registry = self.get();
        self.error.get().map_or(Ok(registry), Err)
    }

    pub(super) fn into_registry(self) -> Registry {
        let _ = self.get();
        self.registry.into_inner().unwrap_or_else(Registry::empty)
    }
}
