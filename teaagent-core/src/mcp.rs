//! MCP message types (the `params` and `result` of every method teaagent serves), one file per
//! concept. Field names follow the MCP schema (camelCase on the wire).
//!
//! The server sends fields added by newer protocol versions (`title`, `outputSchema`,
//! `structuredContent`) to every client: clients ignore members they do not know, and a single
//! shape keeps the listing pre-serialised once for all sessions.

pub mod content;

pub mod elicitation;
pub mod lifecycle;
pub mod logging;
pub mod modern;
pub mod notifications;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tasks;
mod tier;
pub mod tools;
pub mod version;

pub use content::{CallToolResult, Content, EmbeddedResource, ResourceLink};
pub use lifecycle::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult, ServerCapabilities,
};
pub use logging::LoggingLevel;
pub use tier::{Behavior, Tier};
pub use tools::{Tool, ToolAnnotations, ToolRateLimit};
pub use version::ProtocolVersion;

/// A JSON object (`serde_json::Map`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
