//! `notifications/progress` and `notifications/cancelled`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `notifications/progress` params.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams<'a> {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: &'a Value,
    /// Progress so far; increases with every notification.
    pub progress: f64,
    /// The total, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// `notifications/cancelled` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The id of the request to cancel.
    pub request_id: Value,
    /// Why (logged only).
    #[serde(default)]
    pub reason: Option<String>,
}
