//! What a registry derives from a definition to serve it — its validators, the arguments it
//! mirrors into headers, its `tools/list` entry — kept with the definition when it was derived
//! before the registry was built (`registry::prepare`), so that it is derived once.
//!
//! A definition does not change once built, so what was derived from it stays true. A clone
//! does not carry it (it is derived again when that clone is built into a registry): the
//! validators are not shared.

use std::fmt;

use serde_json::value::RawValue;

use crate::schema::Validator;
use crate::schema::headers::HeaderParam;

/// Everything a registry keeps of one definition besides the definition.
pub(crate) struct Prepared {
    /// The input schema's validator.
    pub(crate) input: Validator,
    /// The output schema's validator, for a tool with an `outputSchema`.
    pub(crate) output: Option<Validator>,
    /// The arguments mirrored into `Mcp-Param-*` headers.
    pub(crate) headers: Vec<HeaderParam>,
    /// The `tools/list` entry, serialised.
    pub(crate) entry: Box<RawValue>,
}

/// A definition's [`Prepared`] parts, when they were derived before its registry was built.
#[derive(Default)]
pub(crate) struct PreparedSlot(Option<Box<Prepared>>);

impl PreparedSlot {
    #[cfg(feature = "gateway")]
    pub(crate) fn put(&mut self, prepared: Prepared) {
        self.0 = Some(Box::new(prepared));
    }

    pub(crate) fn take(&mut self) -> Option<Prepared> {
        self.0.take().map(|p| *p)
    }
}

impl Clone for PreparedSlot {
    /// Empty: a clone is prepared again when it is built into a registry.
    fn clone(&self) -> Self {
        PreparedSlot(None)
    }
}

impl fmt::Debug for PreparedSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "prepared" } else { "not prepared" })
    }
}
