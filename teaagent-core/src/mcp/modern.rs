//! The messages of the modern era (protocol `2026-07-28`): per-request `_meta`,
//! `server/discover`, results that say what they are (`resultType`), cache hints, multi
//! round-trip requests (`input_required`) and `subscriptions/listen`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities};

/// `_meta` key of the protocol version a modern request is written in (required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities for this request (required).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the lowest log level the client wants for this request (optional; without it
/// the request gets no `notifications/message`).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key naming the server (`{"name", "version"}`), on every modern result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key naming the `subscriptions/listen` request a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What a modern request's `_meta` says about its sender. Every field is optional here; the
/// server checks the required ones and answers `-32602` (missing) or `-32022` (a version it does
/// not speak).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModernMeta {
    /// [`META_PROTOCOL_VERSION`].
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    pub protocol_version: Option<String>,
    /// [`META_CLIENT_CAPABILITIES`].
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    pub client_capabilities: Option<ClientCapabilities>,
    /// [`META_CLIENT_INFO`]; informative only, so a malformed one is taken as absent.
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default, deserialize_with = "lenient")]
    pub client_info: Option<Implementation>,
    /// [`META_LOG_LEVEL`].
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    pub log_level: Option<LoggingLevel>,
}

impl ModernMeta {
    /// Whether the request says it is written in the modern era (it names a protocol version).
    pub fn is_modern(&self) -> bool {
        self.protocol_version.is_some()
    }
}

/// `Some` when the value has the type's shape, else `None` (never an error).
fn lenient<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}

/// Who may share a cached copy of a result (`cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// The same for every client: a shared cache may keep it.
    Public,
    /// For this client only (workspace contents).
    Private,
}

impl CacheScope {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// `server/discover` result (the cache hints and `_meta` are added with every modern result).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The versions a modern request may name, newest first.
    pub supported_versions: Vec<&'static str>,
    /// What the server implements.
    pub capabilities: ServerCapabilities,
    /// Usage hints for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// A `tools/call` that needs the client's input first (a multi round-trip request): the
/// questions, and the sealed state the client sends back with its answers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Questions by key; the retry answers them under the same keys in `inputResponses`.
    pub input_requests: serde_json::Map<String, Value>,
    /// Opaque to the client; echoed byte for byte with the retry.
    pub request_state: String,
}

/// `subscriptions/listen` params: which notifications the client wants.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListenParams {
    /// The filter.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
}

/// The notifications a listener asks for, and (acknowledged) those the server will send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_meta_reads_the_reserved_keys_and_ignores_the_rest() {
        let meta: ModernMeta = serde_json::from_value(serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/logLevel": "warning",
            "progressToken": 7,
            "traceparent": "00-abc"
        }))
        .expect("meta");
        assert!(meta.is_modern());
        assert!(meta.client_capabilities.expect("caps").supports_elicitation());
        assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
        assert!(
            serde_json::from_value::<ModernMeta>(serde_json::json!({
                "io.modelcontextprotocol/logLevel": "loud"
            }))
            .is_err()
        );
    }
}
