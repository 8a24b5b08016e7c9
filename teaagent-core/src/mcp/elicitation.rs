//! `elicitation/create`: the server asks the user a question through the client.

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// `elicitation/create` params (form mode).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// The question shown to the user.
    pub message: String,
    /// A flat object schema of the answer.
    pub requested_schema: JsonObject,
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// `elicitation/create` result.
#[derive(Debug, Clone, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form (with `accept`).
    #[serde(default)]
    pub content: Option<JsonObject>,
}
