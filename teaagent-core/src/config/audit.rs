//! `[audit]`: how the audit log is rotated (`crate::policy::audit`, "Rotation").
//!
//! ```toml
//! [audit]
//! max_bytes = 16777216   # audit.jsonl's most bytes before it becomes audit.jsonl.1 (1 KiB to 1 TiB)
//! keep = 5               # old files kept: audit.jsonl.1 (newest) to audit.jsonl.5 (1 to 1000)
//! ```
//!
//! Only the user's file may set it: the log is the user's, in the home, and a smaller size or
//! fewer files would let a cloned repository's `.teaagent/config.toml` make the log forget
//! sooner (a workspace's `[audit]` is ignored with a warning).

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;
use super::bounds::{AUDIT_KEEP, AUDIT_MAX_BYTES};
use crate::policy::audit::Rotation;

/// `[audit]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuditConfig {
    max_bytes: Option<toml::Value>,
    keep: Option<toml::Value>,
}

impl AuditConfig {
    /// The rotation it sets, each key within its range (the default for a key not given).
    pub(super) fn rotation(&self, file: &Path) -> Result<Rotation, ConfigError> {
        let mut rotation = Rotation::default();
        if let Some(value) = &self.max_bytes {
            // Whole and within 1 TiB: exact as a u64.
            rotation.max_bytes = AUDIT_MAX_BYTES.check(value, "audit.max_bytes", file)? as u64;
        }
        if let Some(value) = &self.keep {
            rotation.keep = AUDIT_KEEP.check(value, "audit.keep", file)? as u32;
        }
        Ok(rotation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Rotation, String> {
        let config: AuditConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        config.rotation(Path::new("config.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn each_key_is_range_checked_and_named() {
        assert_eq!(parsed(""), Ok(Rotation::default()));
        assert_eq!(parsed("max_bytes = 4096\nkeep = 2"), Ok(Rotation { max_bytes: 4096, keep: 2 }));
        let small = parsed("max_bytes = 10").expect_err("too small");
        assert!(
            small.contains("`audit.max_bytes` = 10 is out of range") && small.contains("1024"),
            "{small}"
        );
        let none = parsed("keep = 0").expect_err("zero");
        assert!(none.contains("`audit.keep` = 0") && none.contains("from 1 to 1000"), "{none}");
        assert!(parsed("keep = 2.5").is_err(), "whole numbers only");
        assert!(parsed("keep = \"5\"").is_err());
        assert!(parsed("size = 5").expect_err("unknown").contains("unknown field"));
    }
}
