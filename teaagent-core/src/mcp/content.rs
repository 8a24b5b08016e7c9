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

    /// Appends this result as JSON: the same bytes as its `Serialize` (`serde_json::to_writer`),
    /// with each text block's text and the structured content written by
    /// [`crate::jsonrpc::response::write_json_str`] and its `write_json_value`
    /// (large text is most of a large answer, and escaping it byte by byte was most of its cost).
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"content\":[");
        for (i, block) in self.content.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match block {
                Content::Text { text } => {
                    out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                    crate::jsonrpc::response::write_json_str(out, text);
                    out.push(b'}');
                }
                Content::Resource { resource } => {
                    out.extend_from_slice(b"{\"type\":\"resource\",\"resource\":");
                    resource.write_json(out);
                    out.push(b'}');
                }
                other => serde_json::to_writer(&mut *out, other)?,
            }
        }
        out.push(b']');
        if let Some(structured) = &self.structured_content {
            out.extend_from_slice(b",\"structuredContent\":");
            crate::jsonrpc::response::write_json_value(out, structured);
        }
        out.extend_from_slice(if self.is_error { b",\"isError\":true" } else { b",\"isError\":false" });
        if let Some(meta) = &self.meta {
            out.extend_from_slice(b",\"_meta\":");
            serde_json::to_writer(&mut *out, meta)?;
        }
        out.push(b'}');
        Ok(())
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
                    Content::Resource { resource } => resource.wire_size_hint(),
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

impl EmbeddedResource {
    /// Appends these contents as JSON: the bytes of their `Serialize`, with the strings escaped
    /// by [`crate::jsonrpc::response::write_json_str`] (a file's text is escaped a block at a
    /// time, not byte by byte).
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        use crate::jsonrpc::response::write_json_str;
        out.extend_from_slice(b"{\"uri\":");
        write_json_str(out, &self.uri);
        let members = [("mimeType", &self.mime_type), ("text", &self.text), ("blob", &self.blob)];
        for (key, value) in members {
            if let Some(value) = value {
                out.extend_from_slice(b",\"");
                out.extend_from_slice(key.as_bytes());
                out.extend_from_slice(b"\":");
                write_json_str(out, value);
            }
        }
        out.push(b'}');
    }

    /// About how many bytes these contents take as JSON when their strings need no escapes.
    pub(crate) fn wire_size_hint(&self) -> usize {
        let strings = [&self.mime_type, &self.text, &self.blob];
        64 + self.uri.len() + strings.iter().map(|s| s.as_ref().map_or(0, String::len)).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The hand-written writer gives the bytes of the derived `Serialize`, for every kind of
    /// block and every optional member (resource reads: `super::resources`' tests).
    #[test]
    fn write_json_is_the_serialize_output() {
        let link = ResourceLink {
            uri: "file:///a".into(),
            name: "a".into(),
            mime_type: Some("text/plain".into()),
            description: None,
        };
        let mut meta = crate::mcp::JsonObject::new();
        meta.insert("k".into(), json!(["v", 1]));
        let results = [
            CallToolResult::text(""),
            CallToolResult::text("a \"quoted\"\nline\twith \\ and \u{1} and é"),
            CallToolResult::error("failed"),
            CallToolResult::structured(json!({"n": 1, "s": "x\"y"})),
            CallToolResult::contents(vec![]),
            CallToolResult::contents(vec![
                Content::text("one"),
                Content::Image { data: "aGk=".into(), mime_type: "image/png".into() },
                Content::Audio { data: "aGk=".into(), mime_type: "audio/wav".into() },
                Content::ResourceLink(link),
                Content::Resource {
                    resource: EmbeddedResource {
                        uri: "file:///b".into(),
                        mime_type: None,
                        text: Some("b".into()),
                        blob: None,
                    },
                },
                Content::text("x".repeat(5000)),
            ])
            .with_meta(meta),
        ];
        for result in &results {
            let mut ours = Vec::new();
            result.write_json(&mut ours).expect("written");
            assert_eq!(String::from_utf8(ours).expect("utf-8"), serde_json::to_string(result).expect("json"),);
        }
    }

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
