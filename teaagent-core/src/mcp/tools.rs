//! `tools/list` and `tools/call`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;
use super::Tier;

/// One entry of `tools/list`. `Schema` is how its schemas are held: owned objects by default;
/// the registry writes its listing from borrowed ones.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool<Schema = JsonObject> {
    /// Unique name (`^[A-Za-z0-9_-]{1,64}$`).
    pub name: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: Schema,
    /// JSON Schema of `structuredContent`, for tools with structured output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Schema>,
    /// Behaviour hints, in both the seed's and MCP's vocabulary.
    pub annotations: ToolAnnotations,
    /// Protocol 2025-11-25: whether the tool runs as a task (`{"taskSupport": "optional" |
    /// "required"}`), absent for a tool that never does (later protocols ignore it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
}

/// Tool annotations as sent on the wire: the seed's fields (`readOnly`, `destructive`,
/// `idempotent`, `stateful`, `securityTier`) next to MCP's standard hints, so every client
/// understands them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name (MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Never modifies its environment (MCP).
    pub read_only_hint: bool,
    /// May destroy or overwrite data (MCP; meaningful when not read-only).
    pub destructive_hint: bool,
    /// Calling twice with the same arguments has no further effect (MCP).
    pub idempotent_hint: bool,
    /// Interacts with an open world of external entities (MCP).
    pub open_world_hint: bool,
    /// Seed: never mutates state.
    pub read_only: bool,
    /// Seed: may delete or overwrite data.
    pub destructive: bool,
    /// Seed: calling twice has the same effect as once.
    pub idempotent: bool,
    /// Seed: modifies persistent external state.
    pub stateful: bool,
    /// Seed: `Low`, `Medium`, `High`, `Critical`.
    pub security_tier: Tier,
    /// Seed: the declared rate limit (`ToolRateLimit`), absent when the tool has none. It is the
    /// limit the tool was defined with; a server's [`crate::ToolOverride`] may change the one
    /// enforced (the `-32002`/`-32004` error then names the enforced one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<ToolRateLimit>,
}

/// A declared rate limit as sent in the annotations: `{"maxCalls": N, "windowSeconds": S}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRateLimit {
    /// Calls admitted per window.
    pub max_calls: u32,
    /// The window, in seconds: an integer when whole (`60`), else a decimal (`0.5`).
    #[serde(serialize_with = "seconds")]
    pub window_seconds: f64,
}

fn seconds<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && *value >= 0.0 && *value <= u64::MAX as f64 {
        serializer.serialize_u64(*value as u64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// `tools/call` params.
#[derive(Debug, Clone, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// The arguments object (absent means `{}`).
    #[serde(default)]
    pub arguments: Option<Value>,
    /// Request metadata (`progressToken`).
    #[serde(default, rename = "_meta")]
    pub meta: Option<RequestMeta>,
    /// Modern era, the retry of a multi round-trip request: the answers to the questions of the
    /// `input_required` result, by their keys (ignored in the legacy era).
    /// Kept raw: checked only in the modern era.
    #[serde(default, rename = "inputResponses")]
    pub input_responses: Option<Value>,
    /// Modern era: the `requestState` of the `input_required` result, echoed (ignored in the
    /// legacy era; kept raw, checked only in the modern era).
    #[serde(default, rename = "requestState")]
    pub request_state: Option<Value>,
    /// Protocol 2025-11-25: run the call as a task (`{"ttl": ms}`); ignored in the modern era,
    /// where the server decides.
    #[serde(default)]
    pub task: Option<Value>,
}

/// [`CallToolParams`] as the server reads them.
pub(crate) use boxed::CallToolParams as CallRequest;

mod boxed {
    use serde::Deserialize;
    use serde_json::Value;

    /// [`CallToolParams`](super::CallToolParams) as the server reads them: the same members, read
    /// the same way, with those few calls carry boxed, so that what every call moves through its
    /// steps is small (128 bytes, not 456). Named as the public type: serde's errors name it.
    #[derive(Debug, Deserialize)]
    pub(crate) struct CallToolParams {
        pub(crate) name: String,
        #[serde(default)]
        pub(crate) arguments: Option<Value>,
        #[serde(default, rename = "_meta")]
        pub(crate) meta: Option<Box<RequestMeta>>,
        #[serde(default, rename = "inputResponses")]
        pub(crate) input_responses: Option<Box<Value>>,
        #[serde(default, rename = "requestState")]
        pub(crate) request_state: Option<Box<Value>>,
        #[serde(default)]
        pub(crate) task: Option<Box<Value>>,
    }

    /// [`RequestMeta`](super::RequestMeta) as the server reads it: the protocol version is only
    /// looked for (a modern request in a legacy process is refused), not kept. Named as the
    /// public type: serde's errors name it.
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct RequestMeta {
        #[serde(default)]
        pub(crate) progress_token: Option<Value>,
        #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
        pub(crate) protocol_version: Option<serde::de::IgnoredAny>,
    }
}

/// `_meta` of a request.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMeta {
    /// Where to send `notifications/progress` (a string or an integer, echoed as given).
    #[serde(default)]
    pub progress_token: Option<Value>,
    /// The modern era's protocol version (`io.modelcontextprotocol/protocolVersion`): looked at
    /// only to refuse a modern request in a legacy process.
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: Option<Value>,
}

/// Params of the list methods.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PaginatedParams {
    /// The `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}
