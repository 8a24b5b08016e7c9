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
//! checks of a 2026-07-28 HTTP request compare members of its params with the headers
//! (`server/http/modern.rs`): [`members_noting_params`] notes them while it reads the envelope
//! (one pass over the params instead of two), and [`object_members`] reads them, on the same
//! terms, from params that reading left to `serde_json`.

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
#[cfg(any(feature = "gateway", test))]
pub(crate) fn members(text: &str) -> Option<Members<'_>> {
    members_noting_params(text, []).map(|(members, _)| members)
}

/// [`members`], and in the same pass the members `names` of the params, when they are an object:
/// what [`object_members`] would answer for the params' text, or `None` where it would say
/// `None` (or the params are no object). One pass instead of two for a reader that needs both
/// (the checks of a 2026-07-28 HTTP request, `server/http/modern.rs`).
pub(crate) fn members_noting_params<'a, const N: usize>(
    text: &'a str,
    names: [&[u8]; N],
) -> Option<(Members<'a>, Option<[Option<&'a str>; N]>)> {
    const ENVELOPE: [&[u8]; 6] = [b"jsonrpc", b"id", b"method", b"params", b"result", b"error"];
    const PARAMS: usize = 3;
    let mut noted = None;
    let [jsonrpc, id, method, params, result, error] = read_object(text, ENVELOPE, |scan, at| {
        // (With no names to note, the params are read as any other value.)
        if N > 0 && at == Some(PARAMS) && scan.peek() == Some(b'{') {
            noted = scan.object_noting(2, names)?;
            Some(())
        } else {
            scan.value(1)
        }
    })?;
    let members =
        Members { jsonrpc: unless_null(jsonrpc), id, method: unless_null(method), params, result, error };
    Some((members, noted))
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
#[cfg(any(feature = "http", test))]
pub(crate) fn object_members<'a, const N: usize>(
    text: &'a str,
    names: [&[u8]; N],
) -> Option<[Option<&'a str>; N]> {
    read_object(text, names, |scan, _| scan.value(1))
}

/// [`object_members`], each member's value read by `value` (given where the member's name is in
/// `names`, if it is).
fn read_object<'a, const N: usize>(
    text: &'a str,
    names: [&[u8]; N],
    mut value: impl FnMut(&mut Scanner<'a>, Option<usize>) -> Option<()>,
) -> Option<[Option<&'a str>; N]> {
    let mut scan = Scanner { text, bytes: text.as_bytes(), at: 0 };
    let mut found = [None; N];
    scan.whitespace();
    scan.expect(b'{')?;
    scan.items(b'}', |scan| {
        let key = scan.plain_key()?;
        scan.colon()?;
        let start = scan.at;
        let at = names.iter().position(|name| *name == key);
        value(scan, at)?;
        let raw = scan.since(start)?;
        // A member named twice is `serde_json`'s to refuse.
        if let Some(slot) = at.map(|i| &mut found[i])
            && slot.replace(raw).is_some()
        {
            return None;
        }
        Some(())
    })?;
    scan.whitespace();
    (scan.at == scan.bytes.len()).then_some(found)
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    /// The text from `start` to here (both ends are ASCII bytes where a value starts and ends,
    /// so char boundaries).
    fn since(&self, start: usize) -> Option<&'a str> {
        self.text.get(start..self.at)
    }

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

    /// An object nested `depth` levels deep, its members `names` noted on the terms of
    /// [`object_members`]: `None` when it is not valid JSON (the whole reading fails),
    /// `Some(None)` when it is but `object_members` would leave it to `serde_json` (an escape in
    /// a key at its top level, one of `names` twice).
    fn object_noting<const N: usize>(
        &mut self,
        depth: usize,
        names: [&[u8]; N],
    ) -> Option<Option<[Option<&'a str>; N]>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.expect(b'{')?;
        let mut noted = Some([None; N]);
        self.items(b'}', |scan| {
            let key_at = scan.at;
            let key = scan.plain_key();
            if key.is_none() {
                // Valid or not, that is the string's to say; noted, nothing.
                scan.at = key_at;
                scan.string()?;
                noted = None;
            }
            scan.colon()?;
            let start = scan.at;
            scan.value(depth)?;
            let raw = scan.since(start)?;
            if let (Some(key), Some(slots)) = (key, noted.as_mut())
                && let Some(slot) = names.iter().position(|name| *name == key).map(|i| &mut slots[i])
                && slot.replace(raw).is_some()
            {
                noted = None;
            }
            Some(())
        })?;
        Some(noted)
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
