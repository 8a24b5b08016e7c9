//! `logging/setLevel` and the levels of `notifications/message` (RFC 5424 severities).

use serde::{Deserialize, Serialize};

/// A log level, least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Notice.
    Notice,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical.
    Critical,
    /// Alert.
    Alert,
    /// Emergency.
    Emergency,
}

impl LoggingLevel {
    /// The MCP level of a `tracing` level (`TRACE` and `DEBUG` are both `debug`).
    pub fn of_tracing(level: tracing::Level) -> Self {
        match level {
            tracing::Level::ERROR => LoggingLevel::Error,
            tracing::Level::WARN => LoggingLevel::Warning,
            tracing::Level::INFO => LoggingLevel::Info,
            _ => LoggingLevel::Debug,
        }
    }
}

/// `logging/setLevel` params.
#[derive(Debug, Clone, Deserialize)]
pub struct SetLevelParams {
    /// The lowest level the client wants to receive.
    pub level: LoggingLevel,
}

/// `notifications/message` params.
#[derive(Debug, Clone, Serialize)]
pub struct LoggingMessageParams<'a> {
    /// Severity.
    pub level: LoggingLevel,
    /// Where it came from (the `tracing` target).
    pub logger: &'a str,
    /// The message and its fields.
    pub data: serde_json::Value,
}
