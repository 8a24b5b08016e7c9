//! The child's output streams (`gateway/child.rs`): a stdout line too long to read (the request
//! it answers fails as soon as it is known, by the id it names at either end: [`first_id`],
//! [`last_id`]; the stdout itself is read in `child/reader.rs`), and its stderr copied to
//! teaagent's, a bounded line at a time and at most [`STDERR_LINES_PER_SECOND`] lines a second
//! ([`StderrLines`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

use super::{Connection, MAX_STDERR_LINE, lock};
use crate::visible::escape;

/// Lines too long to read.
impl Connection {
    /// A line that passed [`Connection::max_line`] has begun (`head`: its first bytes): the
    /// request it answers, when its first bytes name it, fails now rather than when the line
    /// ends. True when it did.
    pub(super) fn on_long_start(&self, head: &[u8]) -> bool {
        let Some(id) = first_id(head) else { return false };
        self.unreadable(id, self.too_long(None))
    }

    /// A line of `len` bytes that passed [`Connection::max_line`] has ended (`head` and `tail`:
    /// its ends). The request whose id it names fails; a reply that names none fails every
    /// request waiting (none of them can be told apart from it); a notification is dropped.
    pub(super) fn on_long_line(&self, head: &[u8], tail: &[u8], len: u64) {
        tracing::warn!(
            server = %escape(&self.name),
            "dropped a line of {len} bytes from the external server (more than {})",
            self.max_line
        );
        match first_id(head).or_else(|| last_id(tail)) {
            Some(id) => {
                self.unreadable(id, self.too_long(Some(len)));
            }
            None if memchr::memmem::find(head, b"\"method\"").is_some() => {}
            None => {
                let pending: Vec<u64> = lock(&self.pending).keys().copied().collect();
                for id in pending {
                    self.unreadable(id, self.too_long(Some(len)));
                }
            }
        }
    }

    fn too_long(&self, len: Option<u64>) -> String {
        let size = match len {
            Some(len) => format!("is {len} bytes, more than"),
            None => "passed".to_owned(),
        };
        format!(
            "its reply {size} the {} bytes teaagent reads from `{}` in one line (a larger [mcp_servers.{}] max_result_bytes raises it)",
            self.max_line,
            escape(&self.name),
            escape(&self.name)
        )
    }
}

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

/// Copies the child's stderr to teaagent's until it ends, then says what the pace dropped since
/// the last line written.
pub(super) async fn copy_stderr(stderr: tokio::process::ChildStderr, out: Arc<StderrLines>) {
    copy_lines(stderr, &out).await;
    out.finish();
}

async fn copy_lines(stderr: tokio::process::ChildStderr, out: &StderrLines) {
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
            out.put(&format!("{text}⟪{cut} more bytes⟫"));
        } else {
            out.put(text);
        }
    }
}

/// The lines a second one external server may put on teaagent's stderr (its stderr and its log
/// notifications together): a server that writes more cannot flood the user's log, nor keep
/// teaagent writing it.
pub(super) const STDERR_LINES_PER_SECOND: u32 = 100;

/// One external server's lines on teaagent's stderr, `[NAME] text`, escaped, paced: past
/// [`STDERR_LINES_PER_SECOND`] in a second, lines are dropped, and how many is said with the
/// first line of a later second, or when its stderr ends.
pub(super) struct StderrLines {
    name: Arc<str>,
    /// When the current second began, the lines written in it, and those dropped.
    pace: Mutex<(Instant, u32, u64)>,
}

impl StderrLines {
    pub(super) fn new(name: Arc<str>) -> Self {
        StderrLines { name, pace: Mutex::new((Instant::now(), 0, 0)) }
    }

    /// Writes `text` as one line, unless this second's lines are spent.
    pub(super) fn put(&self, text: &str) {
        let now = Instant::now();
        let mut pace = lock(&self.pace);
        let (since, written, dropped) = &mut *pace;
        if now.duration_since(*since) >= Duration::from_secs(1) {
            (*since, *written) = (now, 0);
            self.say_dropped(std::mem::take(dropped));
        }
        if *written < STDERR_LINES_PER_SECOND {
            *written += 1;
            self.write(text);
        } else {
            *dropped += 1;
        }
    }

    /// The stream ended: what was dropped since the last line written is said now.
    pub(super) fn finish(&self) {
        let dropped = std::mem::take(&mut lock(&self.pace).2);
        self.say_dropped(dropped);
    }

    fn say_dropped(&self, dropped: u64) {
        if dropped > 0 {
            self.write(&format!("⟪{dropped} lines dropped: more than {STDERR_LINES_PER_SECOND} a second⟫"));
        }
    }

    /// One line: `[NAME] text`, or with JSON logs an event whose `server` field is the name.
    fn write(&self, text: &str) {
        let line = if crate::logging::json_lines() {
            let mut fields = serde_json::Map::new();
            fields.insert("server".into(), self.name.as_ref().into());
            crate::logging::json_line("INFO", "teaagent::gateway", escape(text).into(), fields)
        } else {
            format!("[{}] {}\n", escape(&self.name), escape(text))
        };
        crate::logging::stderr::write(line.as_bytes());
    }
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
