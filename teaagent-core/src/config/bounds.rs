//! The numeric keys of a `[tools.NAME]` table (and of `[audit]`) and the range each must be in: a
//! value outside is refused with its dotted key, its file and the range.

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolConfig {
    pub(super) rate_limit: Option<RateLimitConfig>,
    pub(super) timeout_secs: Option<toml::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RateLimitConfig {
    pub(super) max_calls: toml::Value,
    pub(super) window_secs: toml::Value,
}

/// The allowed range of a numeric configuration value.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    min: f64,
    max: f64,
    /// Only whole numbers.
    whole: bool,
    /// What the range says in a message.
    text: &'static str,
}

pub(super) const MAX_CALLS: Bounds =
    Bounds { min: 1.0, max: 1_000_000.0, whole: true, text: "a whole number from 1 to 1000000" };
pub(super) const WINDOW_SECS: Bounds = Bounds {
    min: 0.001,
    max: 2_592_000.0,
    whole: false,
    text: "a number of seconds from 0.001 to 2592000 (30 days)",
};
pub(super) const TIMEOUT_SECS: Bounds = Bounds {
    min: 1.0,
    max: 86_400.0,
    whole: true,
    text: "a whole number of seconds from 1 to 86400 (1 day)",
};

pub(super) const AUDIT_MAX_BYTES: Bounds = Bounds {
    min: 1024.0,
    max: 1_099_511_627_776.0,
    whole: true,
    text: "a whole number of bytes from 1024 (1 KiB) to 1099511627776 (1 TiB)",
};
pub(super) const AUDIT_KEEP: Bounds =
    Bounds { min: 1.0, max: 1000.0, whole: true, text: "a whole number of old files from 1 to 1000" };

impl Bounds {
    /// `value` as a number within the bounds, or an error naming `key` in `file`.
    pub(super) fn check(self, value: &toml::Value, key: &str, file: &Path) -> Result<f64, ConfigError> {
        let number = match value {
            toml::Value::Integer(i) => Some(*i as f64),
            toml::Value::Float(f) if !self.whole => Some(*f),
            _ => None,
        };
        match number {
            Some(n) if n.is_finite() && n >= self.min && n <= self.max => Ok(n),
            _ => Err(ConfigError::OutOfRange {
                file: file.to_path_buf(),
                key: key.to_owned(),
                value: shown_value(value),
                allowed: self.text,
            }),
        }
    }
}

/// A TOML value as a message shows it.
pub(super) fn shown_value(value: &toml::Value) -> String {
    match value {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::String(s) => format!("\"{s}\""),
        toml::Value::Datetime(d) => format!("{d:?}"),
        toml::Value::Array(_) => "an array".to_owned(),
        toml::Value::Table(_) => "a table".to_owned(),
    }
}
