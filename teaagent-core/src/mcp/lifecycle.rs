//! `initialize`: client and server information and capabilities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{JsonObject, ProtocolVersion};

/// `initialize` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client asks for (any string: unknown ones are negotiated, not refused).
    pub protocol_version: String,
    /// What the client can do.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
}

/// The client capabilities the server looks at; everything else is kept raw.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientCapabilities {
    /// Present when the client can answer `elicitation/create`.
    #[serde(default)]
    pub elicitation: Option<Value>,
    /// Present when the client can answer `roots/list`.
    #[serde(default)]
    pub roots: Option<Value>,
    /// Present when the client can answer `sampling/createMessage`.
    #[serde(default)]
    pub sampling: Option<Value>,
    /// Anything else.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ClientCapabilities {
    /// Whether the client declared form elicitation (an empty `elicitation: {}` means form mode).
    pub fn supports_elicitation(&self) -> bool {
        match &self.elicitation {
            Some(Value::Object(o)) => o.is_empty() || o.contains_key("form"),
            _ => false,
        }
    }

    /// Whether the client declared the extension `id` (`extensions: {"<id>": {…}}`, modern
    /// era).
    pub fn supports_extension(&self, id: &str) -> bool {
        self.other.get("extensions").and_then(Value::as_object).is_some_and(|e| e.contains_key(id))
    }
}

/// A program's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Machine name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `initialize` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated version.
    pub protocol_version: ProtocolVersion,
    /// What the server implements.
    pub capabilities: ServerCapabilities,
    /// `{"name": "teaagent", "version": ...}`.
    pub server_info: Implementation,
    /// Optional usage hints for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Server capabilities: exactly what this server implements.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerCapabilities {
    /// `tools/list` and `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListCapability>,
    /// `resources/list`, `resources/read`, `resources/templates/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// `prompts/list` and `prompts/get`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListCapability>,
    /// `completion/complete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// `logging/setLevel` and `notifications/message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Protocol 2025-11-25's experimental tasks (`{"list", "cancel", "requests": {"tools":
    /// {"call"}}}`), in the `initialize` result of a server with a tool that runs as a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Value>,
    /// The extensions served, by identifier, each with its settings (modern era only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

/// The capability of a list that never changes during a session.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListCapability {
    /// Whether the server sends `notifications/…/list_changed` (only when some of its tools
    /// may be withheld while it runs: the gateway's).
    pub list_changed: bool,
}

/// Resource capability.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// `resources/subscribe` (legacy era) and resource subscriptions of `subscriptions/listen`
    /// (modern era): [`crate::ResourceProvider::subscribable`].
    pub subscribe: bool,
    /// Always `false`.
    pub list_changed: bool,
}
