//! A quick first reading of a message's envelope, for the common case; `serde_json` reads the
//! rest.
//!
//! Classifying a message needs its top-level members as text (`jsonrpc`, `id`, `method`,
//! `params`, `result`, `error`) and the certainty that the whole line is valid JSON. Read with
//! `serde_json` as borrowed raw values, that costs a pass over the params at `serde_json`'s pace
//! of a string (a byte at a time, with the check for an escape), and the params are read once more
//! when the method parses them: for a call with 1 MiB of arguments, the first pass was a quarter
//! of the call's instructions, and for a small call a third of reading its line.
//!
//! [`members`] reads the envelope itself, and skips a string eight bytes at a time, then 32 at a
//! time through a long one (the search `json_escapes::next_special`, shared with the writers of
//! strings). It is **conservative**: it answers only for a line it is sure `serde_json` reads
//! the same way (strict JSON, an object at the top, no escape in a top-level key, no member
//! named twice, nesting well under `serde_json`'s limit), and otherwise says `None`, and
//! `serde_json` reads the line as before: every refusal, and every error message, is still
//! `serde_json`'s. A differential test (`message/envelope_tests.rs`) holds it to that on
//! thousands of mangled messages. It checks a `\u` escape's four hex digits, not what they
//! name: a lone surrogate passes here, and is refused where the value is read (for the
//! gateway's replies, `gateway/result.rs`).
//!
//! The gateway reads its external servers' replies with it too (`gateway/child.rs`), and the
//! checks of a 2026-07-28 HTTP request read the members of its params they compare with the
//! headers through [`object_members`] (`server/http/modern.rs`), on the same terms.

use crate::json_escapes::next_special;

/// The members of a message's top-level object, each as its JSON text as written (no
/// surrounding whitespace). `jsonrpc` and `method` are `None` when absent or `null` (as an
/// optional field reads them); `id`, `params`, `result` and `error` are `Some("null")` for a
/// `null` that is present.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Members<'a> {
    pub(crate) jsonrpc: Option<&'a str>,
    pub(crate) id: Option<&'a str>,
    pub(crate) method: Option<&'a str>,
    pub(crate) params: Option<&'a str>,
    pub(crate) result: Option<&'a str>,
    pub(crate) error: Option<&'a str>,
}

/// Deepest nesting [`members`] reads itself (`serde_json` refuses beyond 128 levels; anything
/// near that is left to it).
pub(crate) const MAX_DEPTH: usize = 100;

/// The envelope of `text`, or `None` when `serde_json` must decide (see the module docs).
pub(crate) fn members(text: &str) -> Option<Members<'_>> {
    let [jsonrpc, id, method, params, result, error] =
        object_members(text, [b"jsonrpc", b"id", b"method", b"params", b"result", b"error"])?;
    Some(Members { jsonrpc: unless_null(jsonrpc), id, method: unless_null(method), params, result, error })
}

/// A member's text, `None` for a `null` (as an optional field reads it).
pub(crate) fn unless_null(raw: Option<&str>) -> Option<&str> {
    raw.filter(|raw| *raw != "null")
}

/// The members `names` of the object `text`, each as its JSON text as written (no surrounding
/// whitespace; a `null` that is present is `Some("null")`), or `None` when `serde_json` must
/// decide, on the terms of [`members`] (see the module docs): strict JSON, an object at the
/// top, no escape in a key at its top level, none of `names` twice, nesting well under
/// `serde_json`'s limit.
pub(crate) fn object_members<'a, const N: usize>(
    text: &'a str,
    names: [&[u8]; N],
) -> Option<[Option<&'a str>; N]> {
    let mut scan = Scanner { bytes: text.as_bytes(), at: 0 };
    let mut found = [None; N];
    scan.whitespace();
    scan.expect(b'{')?;
    scan.items(b'}', |scan| {
        let key = scan.plain_key()?;
        scan.colon()?;
        let start = scan.at;
        scan.value(1)?;
        // Both ends are ASCII bytes (a value starts and ends with one), so char boundaries.
        let raw = text.get(start..scan.at)?;
        if let Some(slot) = names.iter().position(|name| *name == key).map(|i| &mut found[i]) {
            // A member named twice is `serde_json`'s to refuse.
            if slot.replace(raw).is_some() {
                return None;
            }
        }
        Some(())
    })?;
    scan.whitespace();
    (scan.at == scan.bytes.len()).then_some(found)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Steps over `b` if it is next.
    fn take(&mut self, b: u8) -> bool {
        let next = self.peek() == Some(b);
        self.at += usize::from(next);
        next
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.take(b).then_some(())
    }

    /// JSON's whitespace (nothing else: `serde_json` refuses any other).
    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A top-level key without escapes (with one, `None`: it may spell a member's name).
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        let end = next_special(self.bytes, start);
        if self.bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        Some(&self.bytes[start..end])
    }

    /// One value, nested `depth` levels deep.
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            self.at = next_special(self.bytes, self.at);
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                        b'u' => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.at += 5;
                        }
                        _ => return None,
                    }
                }
                // A control character.
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.expect(b'{')?;
        self.items(b'}', |scan| {
            scan.string()?;
            scan.colon()?;
            scan.value(depth)
        })
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.expect(b'[')?;
        self.items(b']', |scan| scan.value(depth))
    }

    /// The items of an object or an array, its opening byte read: each read by `item` (in an
    /// object, a member: its key too), separated by `,` and ended by `close`.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.whitespace();
        if self.take(close) {
            return Some(());
        }
        loop {
            self.whitespace();
            item(self)?;
            self.whitespace();
            if self.take(close) {
                return Some(());
            }
            self.expect(b',')?;
        }
    }

    /// The `:` between a member's key and its value, with the whitespace around it.
    fn colon(&mut self) -> Option<()> {
        self.whitespace();
        self.expect(b':')?;
        self.whitespace();
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.bytes[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(())
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; what follows is the caller's to
    /// check (`01` ends at the `0`, and the `1` is then no delimiter).
    fn number(&mut self) -> Option<()> {
        self.take(b'-');
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.take(b'.') {
            self.some_digits()?;
        }
        if self.take(b'e') || self.take(b'E') {
            if !self.take(b'+') {
                self.take(b'-');
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }
}

#[cfg(test)]
pub(super) mod tests;
