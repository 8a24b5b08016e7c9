//! A JSON text read into a [`Value`] the way `serde_json` reads it, faster where it matters: the
//! long runs of plain bytes in strings are stepped over a block at a time with the same search
//! the envelope's scanner uses ([`next_special`]), where `serde_json` takes about ten times the
//! instructions a byte (callgrind: 2.4 against 0.2–0.6 on a 1 MiB argument).
//!
//! It reads only what it can read exactly as `serde_json` would and gives up (`None`) on
//! everything else, for the caller to hand the text to `serde_json`, which then gives the same
//! value or the same error as always:
//! - a number is handed to `serde_json` itself (its token only);
//! - a string with a `\u` escape of a surrogate, an unknown escape, or a raw control character;
//! - more than [`MAX_DEPTH`] levels of nesting (`serde_json` refuses 128);
//! - anything that is not JSON.
//!
//! Duplicate keys in an object keep the last value at the first key's place, as a
//! `serde_json::Map` does (an `IndexMap` with the `preserve_order` feature).

use serde_json::{Map, Value};

use crate::json_escapes::next_special;

/// The deepest nesting read here; deeper text goes to `serde_json`.
const MAX_DEPTH: usize = 100;

/// `text` as one JSON value with nothing but whitespace around it, or `None` (see the module
/// docs). (The server reads only objects, [`read_object_once`]; the tests compare any value.)
#[cfg(test)]
pub(crate) fn read_value(text: &str) -> Option<Value> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value(0)?;
    reader.skip_whitespace();
    (reader.at == text.len()).then_some(value)
}

/// `text` as one JSON object with nothing but whitespace around it, and with its own keys each
/// once: the members as a map, or `None` (see the module docs; also when the text is another
/// value, or names a key twice: a struct read from it would be refused as a duplicate field).
pub(crate) fn read_object_once(text: &str) -> Option<Map<String, Value>> {
    let mut reader = Reader { text, at: 0 };
    reader.skip_whitespace();
    let Value::Object(map) = reader.object(0, true)? else { return None };
    reader.skip_whitespace();
    (reader.at == text.len()).then_some(map)
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth, false),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            value
        })
    }

    /// A number's token, read by `serde_json` (its integer, float and range rules are its own).
    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        let number = serde_json::from_str::<serde_json::Number>(&self.text[start..self.at]).ok()?;
        Some(Value::Number(number))
    }

    fn object(&mut self, depth: usize, once: bool) -> Option<Value> {
        let mut map = Map::new();
        if self.opened(depth, b'{', b'}')? {
            return Some(Value::Object(map));
        }
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.eat(b':')?;
            let value = self.value(depth + 1)?;
            if map.insert(key, value).is_some() && once {
                return None;
            }
            if self.closed(b'}')? {
                return Some(Value::Object(map));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        if self.opened(depth, b'[', b']')? {
            return Some(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.closed(b']')? {
                return Some(Value::Array(items));
            }
        }
    }

    /// Past an object's or an array's `open` (`None` when it is not there, or nested too deep):
    /// `Some(true)` when it is empty (past its `close` too).
    fn opened(&mut self, depth: usize, open: u8, close: u8) -> Option<bool> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.eat(open)?;
        Some(self.eat(close).is_some())
    }

    /// After a member or an item: `Some(true)` past the closing `close`, `Some(false)` past a
    /// comma, `None` at anything else.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.skip_whitespace();
        let next = self.peek()?;
        self.at += 1;
        match next {
            b',' => Some(false),
            b if b == close => Some(true),
            _ => None,
        }
    }

    /// A string from its opening quote: the plain runs copied whole, the escapes decoded.
    fn string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        self.at += 1;
        let mut out = String::new();
        loop {
            let special = next_special(bytes, self.at);
            // A cut before `"`, `\` or a control character is never inside a character.
            out.push_str(self.text.get(self.at..special)?);
            self.at = special + 1;
            match *bytes.get(special)? {
                b'"' => return Some(out),
                b'\\' => {
                    let escaped = *bytes.get(self.at)?;
                    self.at += 1;
                    out.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex = self.text.get(self.at..self.at + 4)?;
                            // `from_str_radix` takes a sign too: four hex digits only.
                            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                                return None;
                            }
                            self.at += 4;
                            // A surrogate (one of a pair, or alone) is left to serde_json.
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
                        }
                        _ => return None,
                    });
                }
                // A raw control character: serde_json refuses it.
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// What serde_json makes of `text`, when it makes a value of it.
    fn serde(text: &str) -> Option<Value> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn reads_what_serde_json_reads_and_leaves_it_the_rest() {
        for text in [
            r#"{"a": [1, -2.5e3, 18446744073709551615, -9223372036854775808, 0.1, true, false, null]}"#,
            r#"{"s": "plain \"quoted\" \\ \/ \b\f\n\r\t \u0041\u00e9\u4e2d and é中😀"}"#,
            r#"{"dup": 1, "other": 2, "dup": 3}"#,
            "  [ ]  ",
            "{}",
            "\"\"",
            "12",
        ] {
            assert_eq!(read_value(text), serde(text), "{text}");
            assert!(read_value(text).is_some(), "{text}");
        }
        // Left to serde_json: surrogates (a pair, or one alone), bad escapes, control
        // characters, bad numbers, trailing text, bad literals, deep nesting.
        for text in [
            r#""\ud83d\ude00""#,
            r#""\ud83d""#,
            r#""\x""#,
            r#""\u00g1""#,
            r#""\u+041""#,
            "\"a\u{1}b\"",
            "1e400",
            "01",
            "1.",
            "[1] x",
            "tru",
            "{\"a\" 1}",
            "[1,]",
            "\"unterminated",
        ] {
            assert_eq!(read_value(text), None, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(read_value(&deep), None);
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(read_value(&fine), serde(&fine));
        // The dup rule of the last value at the first key's place, as serde_json.
        assert_eq!(
            serde_json::to_string(&read_value(r#"{"b": 1, "a": 2, "b": 3}"#)).expect("json"),
            r#"{"b":3,"a":2}"#
        );
        assert_eq!(read_object_once(r#"{"a": 1, "a": 2}"#), None);
        assert_eq!(read_object_once("[1]"), None);
        assert_eq!(
            read_object_once(r#" {"a": {"b": 1, "b": 2}} "#).map(Value::Object),
            Some(json!({"a": {"b": 2}}))
        );
    }

    proptest! {
        /// Whatever serde_json writes (compact or pretty, with the escapes it chooses) reads
        /// back here as serde_json reads it.
        #[test]
        fn serde_jsons_own_text_reads_back_the_same(value in crate::jsonrpc::arbitrary::any_json_value()) {
            for text in [serde_json::to_string(&value).expect("json"), serde_json::to_string_pretty(&value).expect("json")] {
                prop_assert_eq!(read_value(&text), serde(&text));
            }
        }

        /// Any text: the same value as serde_json, or left to it.
        #[test]
        fn any_text_reads_as_serde_json_or_not_at_all(text in "[\\[\\]{}\":,. \\\\a-z0-9\u{e9}\u{1}-]{0,40}") {
            if let Some(value) = read_value(&text) {
                prop_assert_eq!(Some(value), serde(&text));
            }
        }

        /// Escapes, written by hand: the same string as serde_json's, or left to it.
        #[test]
        fn hand_written_escapes_read_as_serde_json_reads_them(
            parts in prop::collection::vec(prop_oneof![
                "[a-z\u{e9}]{0,5}",
                Just("\\n".to_owned()), Just("\\/".to_owned()), Just("\\\"".to_owned()),
                "\\\\u[0-9a-fA-F]{4}",
            ], 0..10),
        ) {
            let text = format!("\"{}\"", parts.concat());
            let surrogate = parts.iter().filter_map(|p| p.strip_prefix("\\u")).any(|hex| {
                u32::from_str_radix(hex, 16).is_ok_and(|c| (0xd800..=0xdfff).contains(&c))
            });
            match read_value(&text) {
                Some(value) => prop_assert_eq!(Some(value), serde(&text)),
                // Only a surrogate is left to serde_json among these.
                None => prop_assert!(surrogate, "{}", text),
            }
        }
    }
}
