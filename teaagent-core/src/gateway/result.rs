//! An external server's `tools/call` result as the gateway passes it on: its content blocks (a
//! block of a kind this crate does not know becomes a text block saying so), `structuredContent`
//! and `isError`, never its `_meta`; and never more than the server's
//! [`Launch::max_result_bytes`](super::Launch::max_result_bytes).
//!
//! The bound holds for the content and for `structuredContent` each (servers often send the same
//! data both ways). Text past it is cut, as the built-in tools cut theirs, and a text block at
//! the end says how much was left out and which setting raises the limit; a block that is not
//! text (an image, audio, a resource) that does not fit is left out whole, named. Structured
//! content cannot be cut and still mean anything: one over the bound makes the result an error
//! that says so.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::mcp::{CallToolResult, Content};
use crate::visible::shown;

/// `result` (the JSON text of a `tools/call` result of external server `server`) as ours, at
/// most `max_bytes` of content and of structured content (see the module docs); `Err` when it
/// cannot be read (JSON that is not a `Value`: a lone surrogate in a string, say).
pub(super) fn external_result(
    result: &str,
    server: &str,
    max_bytes: usize,
) -> Result<CallToolResult, serde_json::Error> {
    let Parts { blocks, structured, is_error } = Parts::read(result)?;
    let setting = || format!("[mcp_servers.{}] max_result_bytes", shown(server));
    if let Some(structured) = &structured {
        let size = json_len(structured);
        if size > max_bytes {
            return Ok(CallToolResult::error(format!(
                "the external server `{}` answered with structured content of {size} bytes, more than its limit of {max_bytes} bytes ({} raises it); nothing of it was passed on",
                shown(server),
                setting()
            )));
        }
    }
    let mut room = max_bytes;
    let (mut total, mut left_out) = (0usize, 0usize);
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        let size = match &block {
            Content::Text { text } => text.len(),
            other => json_len(other),
        };
        total = total.saturating_add(size);
        if size <= room {
            room -= size;
            content.push(block);
            continue;
        }
        left_out = left_out.saturating_add(size - room);
        match block {
            Content::Text { mut text } => {
                text.truncate(text.floor_char_boundary(room));
                left_out += room - text.len();
                content.push(Content::text(text));
            }
            other => {
                left_out = left_out.saturating_add(room);
                content.push(Content::text(format!(
                    "[a content block of type `{}` ({size} bytes) was left out: over the result limit]",
                    kind(&other)
                )));
            }
        }
        room = 0;
    }
    if left_out > 0 {
        content.push(Content::text(format!(
            "[truncated: the result of external server `{}` is {total} bytes, more than its limit of {max_bytes}; {left_out} bytes were left out ({} raises the limit)]",
            shown(server),
            setting()
        )));
    }
    let mut out = CallToolResult::contents(content);
    out.is_error = is_error;
    out.structured_content = structured;
    Ok(out)
}

/// What the gateway passes on of a result: its content blocks (one of a kind this crate does not
/// know already replaced by a text block saying so), its structured content when that is an
/// object, and whether it is an error. Anything else in it is dropped.
struct Parts {
    blocks: Vec<Content>,
    structured: Option<Value>,
    is_error: bool,
}

/// The three members of a result [`Parts`] reads (each read once; the rest is skipped).
#[derive(Deserialize)]
struct Members {
    #[serde(default)]
    content: Option<Vec<Value>>,
    #[serde(default, rename = "structuredContent")]
    structured: Option<Value>,
    #[serde(default, rename = "isError")]
    is_error: Option<Value>,
}

impl Parts {
    /// The parts of `result` (valid JSON). A member that is not of its kind counts as absent, as
    /// does everything of a result that is not an object; `Err` for one that is no `Value`.
    fn read(result: &str) -> Result<Self, serde_json::Error> {
        let members = match serde_json::from_str::<Members>(result) {
            Ok(members) => members,
            // Not an object, one that names a member twice (the last one counts, as when the
            // whole result is read), or a `content` that is not an array.
            Err(_) => {
                let mut result = match serde_json::from_str(result)? {
                    Value::Object(members) => members,
                    _ => Map::new(),
                };
                Members {
                    content: match result.remove("content") {
                        Some(Value::Array(blocks)) => Some(blocks),
                        _ => None,
                    },
                    structured: result.remove("structuredContent"),
                    is_error: result.remove("isError"),
                }
            }
        };
        Ok(Self {
            blocks: members.content.unwrap_or_default().into_iter().map(block).collect(),
            structured: members.structured.filter(Value::is_object),
            is_error: members.is_error.and_then(|v| v.as_bool()).unwrap_or(false),
        })
    }
}

/// One content block, or a text block that says which kind was left out.
fn block(block: Value) -> Content {
    let kind = match block.get("type").and_then(Value::as_str) {
        Some("text") => None,
        other => Some(other.unwrap_or("(none)").to_owned()),
    };
    serde_json::from_value::<Content>(block).unwrap_or_else(|_| {
        let kind = kind.as_deref().unwrap_or("text");
        Content::text(format!("[a content block of type `{}` was left out]", shown(kind)))
    })
}

/// The `type` a content block is written with.
fn kind(block: &Content) -> &'static str {
    match block {
        Content::Text { .. } => "text",
        Content::Image { .. } => "image",
        Content::Audio { .. } => "audio",
        Content::ResourceLink(_) => "resource_link",
        Content::Resource { .. } => "resource",
    }
}

/// The length of `value` written as JSON, counted without writing it anywhere
/// (`usize::MAX` if it cannot be written).
fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(usize::MAX, |()| count.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn external(result: Value, server: &str, max_bytes: usize) -> CallToolResult {
        external_result(&result.to_string(), server, max_bytes).expect("a Value is readable")
    }

    #[test]
    fn results_keep_known_blocks_and_name_the_rest() {
        let r = external(
            json!({
                "content": [{"type": "text", "text": "hi"}, {"type": "hologram", "data": "x"}],
                "isError": true,
                "_meta": {"secret": 1}
            }),
            "s",
            1024,
        );
        assert!(r.is_error);
        assert_eq!(r.content[0], Content::text("hi"));
        assert_eq!(r.content[1], Content::text("[a content block of type `hologram` was left out]"));
        assert!(r.meta.is_none());
    }

    #[test]
    fn results_over_the_limit_are_cut_with_a_marker() {
        let text = "é".repeat(600); // 1200 bytes: the cut falls inside a character
        let r = external(
            json!({"content": [
                {"type": "text", "text": "0123456789"},
                {"type": "text", "text": text},
                {"type": "image", "data": "A".repeat(100), "mimeType": "image/png"}
            ]}),
            "big",
            1001,
        );
        let texts: Vec<String> = r
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(texts[0], "0123456789");
        assert_eq!(texts[1].len(), 990, "cut at a character boundary within the 991 bytes left");
        assert!(texts[2].starts_with("[a content block of type `image`"), "{texts:?}");
        let kept: usize = texts[..2].iter().map(String::len).sum();
        assert!(kept <= 1001);
        assert!(
            texts[3].contains("is 1")
                && texts[3].contains("more than its limit of 1001")
                && texts[3].contains("[mcp_servers.big] max_result_bytes"),
            "{texts:?}"
        );
        let structured =
            external(json!({"content": [], "structuredContent": {"data": "x".repeat(2000)}}), "big", 1001);
        assert!(structured.is_error && structured.structured_content.is_none());
    }

    /// What a result means read whole, as a `Value` (the reading [`Parts::read`] must agree with).
    fn read_whole(text: &str) -> (Vec<Content>, Option<Value>, bool) {
        let result: Value = serde_json::from_str(text).expect("the cases are JSON");
        let blocks = match result.get("content") {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .map(|b| {
                    serde_json::from_value::<Content>(b.clone()).unwrap_or_else(|_| {
                        let kind = b.get("type").and_then(Value::as_str).unwrap_or("(none)");
                        Content::text(format!("[a content block of type `{}` was left out]", shown(kind)))
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        let structured = result.get("structuredContent").filter(|v| v.is_object()).cloned();
        (blocks, structured, result.get("isError").and_then(Value::as_bool).unwrap_or(false))
    }

    #[test]
    fn every_spelling_of_a_result_is_read_as_when_read_whole() {
        let results = [
            r#"{"content":[{"type":"text","text":"a"}],"structuredContent":{"a":1},"isError":false}"#,
            "{ \"isError\" : true ,\n \"content\" : [ { \"text\" : \"a\\u00e9\" , \"type\" : \"text\" } ] }",
            // A member named twice: the last one counts.
            r#"{"content":[{"type":"text","text":"x"}],"content":[{"type":"text","text":"b"}]}"#,
            r#"{"isError":true,"isError":false,"structuredContent":{"a":1},"structuredContent":{"b":2}}"#,
            // Members of the wrong kind count as absent.
            r#"{"content":{"type":"text","text":"a"},"structuredContent":[1],"isError":"yes"}"#,
            r#"{"content":null,"structuredContent":null,"isError":null}"#,
            r#"{"content":[1,"two",null,{"type":"image"},{"text":"no type"},{"type":"text","text":"ok"}]}"#,
            r#"{"_meta":{"content":[{"type":"text","text":"hidden"}]},"other":[{"isError":true}]}"#,
            // Not an object.
            "[1, 2]",
            r#""text""#,
            "null",
            "{}",
        ];
        for text in results {
            let parts = Parts::read(text).expect("the cases are readable");
            assert_eq!((parts.blocks, parts.structured, parts.is_error), read_whole(text), "{text}");
        }
    }
}
