//! The child's output streams (`gateway/child.rs`): the ids that a line too long to read names at
//! either end ([`first_id`], [`last_id`]: its request fails as soon as it is known; the stdout is
//! read in `child/reader.rs`), and its stderr copied to teaagent's, a bounded line at a time.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::MAX_STDERR_LINE;
use crate::visible::escape;

/// The id of a JSON-RPC message whose first bytes name it (`{"jsonrpc":"2.0","id":7,…`): the
/// first `"id"` key that follows `{` or `,`.
pub(super) fn first_id(head: &[u8]) -> Option<u64> {
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&head[from..], b"\"id\"").map(|i| i + from) {
        let before = head[..at].iter().rev().find(|b| !b.is_ascii_whitespace());
        if matches!(before, Some(b'{' | b','))
            && let Some((id, _)) = number_after(&head[at + 4..])
        {
            return Some(id);
        }
        from = at + 4;
    }
    None
}

/// The id of a JSON-RPC message whose last bytes name it (`…,"jsonrpc":"2.0","id":7}`, as the
/// TypeScript SDK writes its replies): an `"id"` key whose number closes the object.
pub(super) fn last_id(tail: &[u8]) -> Option<u64> {
    let at = memchr::memmem::rfind(tail, b"\"id\"")?;
    let (id, rest) = number_after(&tail[at + 4..])?;
    let rest: Vec<u8> = rest.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
    (rest == b"}").then_some(id)
}

/// `: 123` at the start of `bytes`: the number and what follows it.
pub(super) fn number_after(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let bytes = bytes.trim_ascii_start().strip_prefix(b":")?.trim_ascii_start();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let id = std::str::from_utf8(&bytes[..digits]).ok()?.parse().ok()?;
    Some((id, &bytes[digits..]))
}

pub(super) async fn copy_stderr(stderr: tokio::process::ChildStderr, name: Arc<str>) {
    let mut lines = BufReader::new(stderr);
    loop {
        // A line is read whole but kept only up to the cap (a child cannot make us hold more).
        let mut kept = Vec::new();
        let mut cut = 0usize;
        loop {
            let buf = match lines.fill_buf().await {
                Ok(buf) => buf,
                Err(_) => return,
            };
            if buf.is_empty() {
                if kept.is_empty() && cut == 0 {
                    return;
                }
                break;
            }
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_STDERR_LINE.saturating_sub(kept.len());
            let keep = take.min(room);
            kept.extend_from_slice(&buf[..keep]);
            cut += take - keep;
            lines.consume(take);
            if done {
                break;
            }
        }
        let text = String::from_utf8_lossy(&kept);
        let text = text.trim_end_matches(['\n', '\r']);
        if cut > 0 {
            eprintln_prefixed(&name, &format!("{text}⟪{cut} more bytes⟫"));
        } else {
            eprintln_prefixed(&name, text);
        }
    }
}

/// One line on teaagent's stderr, from an external server: `[NAME] text`, escaped.
pub(super) fn eprintln_prefixed(name: &str, text: &str) {
    use std::io::Write;
    let line = format!("[{}] {}\n", escape(name), escape(text));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_told_by_the_id_at_either_end() {
        assert_eq!(first_id(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"aaa"#), Some(7));
        assert_eq!(first_id(br#"{ "id" : 12 , "#), Some(12));
        // An `"id"` inside a string is escaped, and one after a value's colon is not a key.
        assert_eq!(first_id(br#"{"result":{"text":"{\"id\":9"#), None);
        assert_eq!(first_id(br#"{"result":{"x":"id","#), None);
        assert_eq!(last_id(br#"aaa"}]},"jsonrpc":"2.0","id":41}"#), Some(41));
        assert_eq!(last_id(br#"aaa"}]},"jsonrpc":"2.0","id":41 }  "#), Some(41));
        assert_eq!(last_id(br#""id":41,"more":1}"#), None);
        assert_eq!(last_id(br#""id":"41"}"#), None, "ids the gateway sends are numbers");
    }
}
