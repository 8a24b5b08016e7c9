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
//! time through a long one (the search [`next_special`] shares with the writer of strings,
//! `response.rs`). It is **conservative**:
//! it answers only for a line it is sure `serde_json` reads the same way (strict JSON, an object
//! at the top, no escape in a top-level key, no member named twice, nesting well under
//! `serde_json`'s limit), and otherwise says `None`, and `serde_json` reads the line as before:
//! every refusal, and every error message, is still `serde_json`'s. A differential test
//! (`message/envelope_tests.rs`) holds it to that on thousands of mangled messages.

/// The members of a message's top-level object, each as its JSON text as written (no
/// surrounding whitespace). `jsonrpc` and `method` are `None` when absent or `null` (as an
/// optional field reads them); `id`, `params`, `result` and `error` are `Some("null")` for a
/// `null` that is present.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Members<'a> {
    pub(super) jsonrpc: Option<&'a str>,
    pub(super) id: Option<&'a str>,
    pub(super) method: Option<&'a str>,
    pub(super) params: Option<&'a str>,
    pub(super) result: Option<&'a str>,
    pub(super) error: Option<&'a str>,
}

/// Deepest nesting [`members`] reads itself (`serde_json` refuses beyond 128 levels; anything
/// near that is left to it).
const MAX_DEPTH: usize = 100;

/// Bytes checked together when looking for the end of a run of plain string bytes.
const BLOCK: usize = 32;

/// The envelope of `text`, or `None` when `serde_json` must decide (see the module docs).
pub(super) fn members(text: &str) -> Option<Members<'_>> {
    let mut scan = Scanner { bytes: text.as_bytes(), at: 0 };
    let mut members = Members::default();
    // Which members were seen, `null` included: a member named twice is `serde_json`'s to refuse.
    let mut seen = 0u8;
    scan.whitespace();
    scan.expect(b'{')?;
    scan.items(b'}', |scan| {
        let key = scan.plain_key()?;
        scan.colon()?;
        let start = scan.at;
        scan.value(1)?;
        // Both ends are ASCII bytes (a value starts and ends with one), so char boundaries.
        let raw = text.get(start..scan.at)?;
        let member = match key {
            b"jsonrpc" => Some((1, &mut members.jsonrpc, true)),
            b"id" => Some((2, &mut members.id, false)),
            b"method" => Some((4, &mut members.method, true)),
            b"params" => Some((8, &mut members.params, false)),
            b"result" => Some((16, &mut members.result, false)),
            b"error" => Some((32, &mut members.error, false)),
            _ => None,
        };
        if let Some((bit, slot, null_is_absent)) = member {
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            *slot = (!(null_is_absent && raw == "null")).then_some(raw);
        }
        Some(())
    })?;
    scan.whitespace();
    (scan.at == scan.bytes.len()).then_some(members)
}

/// Where, from `at`, the first byte of `bytes` that a JSON string cannot hold as it is (`"`,
/// `\`, a control character) lies; `bytes.len()` when there is none.
///
/// Eight bytes are looked at together as one `u64` (most strings of a message are shorter than
/// that: inlined); past them, 32 at a time (a loop the compiler turns into vector compares), then eight
/// at a time again to find the one, and the last few bytes one by one.
#[inline]
pub(crate) fn next_special(bytes: &[u8], at: usize) -> usize {
    match word_at(bytes, at).map(special_bytes) {
        Some(0) => next_special_beyond(bytes, at + 8),
        Some(found) => at + first_byte(found),
        None => next_special_beyond(bytes, at),
    }
}

/// [`next_special`] past its first word (kept apart: the first word is most calls' answer).
fn next_special_beyond(bytes: &[u8], mut at: usize) -> usize {
    while let Some(block) = bytes.get(at..at + BLOCK) {
        if block.iter().fold(false, |any, &b| any | is_special(b)) {
            break;
        }
        at += BLOCK;
    }
    while let Some(word) = word_at(bytes, at) {
        match special_bytes(word) {
            0 => at += 8,
            found => return at + first_byte(found),
        }
    }
    let rest = bytes.get(at..).unwrap_or_default();
    rest.iter().position(|&b| is_special(b)).map_or(bytes.len(), |i| at + i)
}

fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The eight bytes from `at`, the first in the lowest byte.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let eight: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(eight))
}

/// A word with the high bit set in the byte of each special byte of `word` (exact for the
/// lowest one, which is all [`first_byte`] reads: a borrow may mark a byte above it).
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH
}

/// Which byte of a word [`special_bytes`] marked first.
fn first_byte(marked: u64) -> usize {
    (marked.trailing_zeros() / 8) as usize
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
