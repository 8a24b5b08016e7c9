//! Tool results and their content blocks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// What the tool produced.
    pub content: Vec<Content>,
    /// Structured output (matches the tool's `outputSchema`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `true` when the tool reports a failure of its own (the call itself worked), or, from
    /// protocol `2025-11-25` on, when its arguments were refused (SEP-1303).
    pub is_error: bool,
    /// `_meta`: metadata for the client, not for the model. Arguments refused as a result carry
    /// the refusal's `data` here (`{tool, reason: "invalid_arguments", errors}`).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<super::JsonObject>,
}

impl CallToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::text(text)], structured_content: None, is_error: false, meta: None }
    }

    /// A tool-level failure: one text block with `isError: true`.
    pub fn error(message: impl Into<String>) -> Self {
        Self { content: vec![Content::text(message)], structured_content: None, is_error: true, meta: None }
    }

    /// Structured output: `structuredContent` plus the same JSON as text, for clients that only
    /// read text.
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        Self {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            is_error: false,
            meta: None,
        }
    }

    /// Several content blocks.
    pub fn contents(content: Vec<Content>) -> Self {
        Self { content, structured_content: None, is_error: false, meta: None }
    }

    /// The same result with `_meta` set.
    pub fn with_meta(mut self, meta: super::JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// About how many bytes this result takes as JSON when its strings need no escapes: the
    /// content's strings, plus room for the rest. Reserved before the answer is written.
    pub(crate) fn wire_size_hint(&self) -> usize {
        let content: usize = self
            .content
            .iter()
            .map(|c| {
                64 + match c {
                    Content::Text { text } => text.len(),
                    Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                        data.len() + mime_type.len()
                    }
                    Content::ResourceLink(link) => link.uri.len() + link.name.len(),
                    Content::Resource { resource } => {
                        resource.uri.len()
                            + resource.text.as_ref().map_or(0, String::len)
                            + resource.blob.as_ref().map_or(0, String::len)
                    }
                }
            })
            .sum();
        // structuredContent repeats the text content's JSON (`CallToolResult::structured`).
        let structured = if self.structured_content.is_some() { content } else { 0 };
        64 + content + structured
    }
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client may read.
    ResourceLink(ResourceLink),
    /// A resource embedded in the result.
    Resource {
        /// The resource's contents.
        resource: EmbeddedResource,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }
}

/// A link to a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// A name for it.
    pub name: String,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The contents of an embedded resource: `text` or base64 `blob`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shapes() {
        assert_eq!(
            serde_json::to_value(CallToolResult::text("hi")).expect("json"),
            json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
        );
        let s = CallToolResult::structured(json!({"n": 1}));
        assert_eq!(
            serde_json::to_value(s).expect("json"),
            json!({"content": [{"type": "text", "text": "{\"n\":1}"}], "structuredContent": {"n": 1}, "isError": false})
        );
        let link = Content::ResourceLink(ResourceLink {
            uri: "teaagent://workspace/a".into(),
            name: "a".into(),
            mime_type: None,
            description: None,
        });
        assert_eq!(
            serde_json::to_value(link).expect("json"),
            json!({"type": "resource_link", "uri": "teaagent://workspace/a", "name": "a"})
        );
    }
}
