//! `resources/list`, `resources/read`, `resources/templates/list`.

use serde::{Deserialize, Serialize};

/// One entry of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI (the workspace's are `teaagent://workspace/<percent-encoded path>`).
    pub uri: String,
    /// A name for it (the workspace's: the path relative to the root).
    pub name: String,
    /// Its MIME type (the workspace's: guessed from the extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `resources/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// This page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/read` params.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadResourceParams {
    /// The URI to read.
    pub uri: String,
}

/// `resources/read` result.
#[derive(Debug, Clone, Serialize)]
pub struct ReadResourceResult {
    /// The contents (one entry for a file).
    pub contents: Vec<super::EmbeddedResource>,
}

/// One resource template.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// RFC 6570 template.
    pub uri_template: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of what it names, when all share one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// `resources/templates/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates.
    pub resource_templates: Vec<ResourceTemplate>,
}
