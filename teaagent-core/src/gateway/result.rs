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

use serde_json::Value;

use crate::mcp::{CallToolResult, Content};
use crate::visible::shown;

/// `result` (a `tools/call` result of external server `server`) as ours, at most `max_bytes` of
/// content and of structured content (see the module docs).
pub(super) fn external_result(result: Value, server: &str, max_bytes: usize) -> CallToolResult {
    let blocks = match result.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    let setting = format!("[mcp_servers.{}] max_result_bytes", shown(server));
    if let Some(structured) = result.get("structuredContent").filter(|v| v.is_object()) {
        let size = structured.to_string().len();
        if size > max_bytes {
            return CallToolResult::error(format!(
                "the external server `{}` answered with structured content of {size} bytes, more than its limit of {max_bytes} bytes ({setting} raises it); nothing of it was passed on",
                shown(server)
            ));
        }
    }
    let mut room = max_bytes;
    let (mut total, mut left_out) = (0usize, 0usize);
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("(none)").to_owned();
        let block = serde_json::from_value::<Content>(block).unwrap_or_else(|_| {
            Content::text(format!("[a content block of type `{}` was left out]", shown(&kind)))
        });
        let size = match &block {
            Content::Text { text } => text.len(),
            other => serde_json::to_string(other).map_or(usize::MAX, |s| s.len()),
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
            _ => {
                left_out = left_out.saturating_add(room);
                content.push(Content::text(format!(
                    "[a content block of type `{}` ({size} bytes) was left out: over the result limit]",
                    shown(&kind)
                )));
            }
        }
        room = 0;
    }
    if left_out > 0 {
        content.push(Content::text(format!(
            "[truncated: the result of external server `{}` is {total} bytes, more than its limit of {max_bytes}; {left_out} bytes were left out ({setting} raises the limit)]",
            shown(server)
        )));
    }
    let mut out = CallToolResult::contents(content);
    out.is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    out.structured_content = result.get("structuredContent").filter(|v| v.is_object()).cloned();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_keep_known_blocks_and_name_the_rest() {
        let r = external_result(
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
        let r = external_result(
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
        let structured = external_result(
            json!({"content": [], "structuredContent": {"data": "x".repeat(2000)}}),
            "big",
            1001,
        );
        assert!(structured.is_error && structured.structured_content.is_none());
    }
}
