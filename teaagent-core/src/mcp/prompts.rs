//! `prompts/list`: teaagent offers no prompts, and says so with an empty list.

use serde::Serialize;

/// `prompts/list` result (always empty).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ListPromptsResult {
    /// No prompts.
    pub prompts: Vec<serde_json::Value>,
}
