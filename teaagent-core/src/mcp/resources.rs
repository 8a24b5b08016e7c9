//! `resources/list`, `resources/read`, `resources/templates/list`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// One entry of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI (the workspace's are `teaagent://workspace/<percent-encoded path>`).
    pub uri: String,
    /// A name for it (the workspace's: the path relative to the root).
    pub name: String,
    /// Its MIME type (the workspace's: guessed from the extension). Most are one of a few
    /// fixed names: a listing of many resources need not allocate a copy of each
    /// (`Some("text/plain".into())`, or a `String`'s `.into()`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<Cow<'static, str>>,
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

impl ReadResourceResult {
    /// Appends this result as JSON: the bytes of its `Serialize`, with each content's text and
    /// blob escaped a block at a time ([`super::EmbeddedResource::write_json`]): a large file's
    /// text is most of the answer.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"contents\":[");
        for (i, contents) in self.contents.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            contents.write_json(out);
        }
        out.extend_from_slice(b"]}");
    }

    /// About how many bytes this result takes as JSON when its strings need no escapes.
    pub(crate) fn wire_size_hint(&self) -> usize {
        32 + self.contents.iter().map(super::EmbeddedResource::wire_size_hint).sum::<usize>()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::EmbeddedResource;

    /// The hand-written writer gives the bytes of the derived `Serialize`, for every optional
    /// member of a content.
    #[test]
    fn write_json_is_the_serialize_output() {
        let contents = |mime: Option<&str>, text: Option<&str>, blob: Option<&str>| EmbeddedResource {
            uri: "file:///d/\"q\".txt".into(),
            mime_type: mime.map(Into::into),
            text: text.map(Into::into),
            blob: blob.map(Into::into),
        };
        let reads = [
            ReadResourceResult { contents: vec![] },
            ReadResourceResult {
                contents: vec![
                    contents(Some("text/plain"), Some("line\n\"x\"\t\u{7}"), None),
                    contents(None, None, Some("aGk=")),
                    contents(None, None, None),
                    contents(Some("text/plain"), Some(&"y".repeat(70_000)), None),
                ],
            },
        ];
        for read in &reads {
            let mut ours = Vec::new();
            read.write_json(&mut ours);
            assert_eq!(String::from_utf8(ours).expect("utf-8"), serde_json::to_string(read).expect("json"));
        }
    }
}
