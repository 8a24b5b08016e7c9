//! Request ids, echoed byte for byte.
//!
//! MCP ids are strings or integers. A client may write `"caf\u00e9"` or `"café"`, `7` or a 30-digit
//! integer; whatever it wrote is what it gets back, because the server keeps the raw JSON text of
//! the id and splices it into the response. A normalised [`IdKey`] identifies the request for
//! `notifications/cancelled`, which may spell the same id differently.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;

/// A request id exactly as the client wrote it. Cloning it is cheap (the request's context, its
/// task and its answer each hold it).
#[derive(Clone)]
pub struct RequestId(Arc<Id>);

struct Id {
    /// The id's JSON text (a string or an integer, checked by [`IdKey::is_id`]).
    raw: Raw,
    /// Made when first asked for: most requests are answered without it.
    key: OnceLock<IdKey>,
}

impl Id {
    fn new(raw: Raw, key: Option<IdKey>) -> Self {
        Self { raw, key: key.map(OnceLock::from).unwrap_or_default() }
    }
}

/// Longest id text kept in place (most ids are a counter's few digits, or a short string).
const SHORT: usize = 22;

/// An id's JSON text: in place when short, so that such an id costs one allocation, not two.
enum Raw {
    Short { len: u8, bytes: [u8; SHORT] },
    Long(Box<str>),
}

impl Raw {
    fn of(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= SHORT => {
                let mut bytes = [0; SHORT];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                Raw::Short { len, bytes }
            }
            _ => Raw::Long(text.into()),
        }
    }

    fn get(&self) -> &str {
        match self {
            // A whole `str`'s bytes, copied: always UTF-8.
            Raw::Short { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Raw::Long(text) => text,
        }
    }
}

/// The meaning of an id, independent of how it was spelled (escapes, whitespace).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// An integer, as its canonical decimal text (arbitrary size).
    Integer(String),
    /// A string, with its escapes decoded.
    String(String),
}

impl RequestId {
    /// Accepts a raw JSON value as a request id: a string or an integer (no fraction, no exponent).
    /// Anything else (`null`, floats, booleans, objects) is `None`.
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        let key = IdKey::of(raw.get())?;
        let raw = match raw.get().len() {
            ..=SHORT => Raw::of(raw.get()),
            _ => Raw::Long(raw.into()),
        };
        Some(Self(Arc::new(Id::new(raw, Some(key)))))
    }

    /// [`RequestId::from_raw`] of an id's JSON text, as a message's member is read (only a
    /// string or an integer is one: anything else, valid JSON or not, is `None`). The text must
    /// be valid JSON (the message was read whole); its key is made when first asked for.
    pub(crate) fn from_text(raw: &str) -> Option<Self> {
        IdKey::is_id(raw).then(|| Self(Arc::new(Id::new(Raw::of(raw), None))))
    }

    /// An id of the server's own (for requests the server sends to the client).
    pub fn server(n: u64) -> Self {
        let text = format!("\"teaagent-{n}\"");
        let key = IdKey::String(format!("teaagent-{n}"));
        Self(Arc::new(Id::new(Raw::of(&text), Some(key))))
    }

    /// The JSON text to echo.
    pub fn raw(&self) -> &str {
        self.0.raw.get()
    }

    /// The normalised key.
    pub fn key(&self) -> &IdKey {
        self.0.key.get_or_init(|| match IdKey::of(self.0.raw.get()) {
            Some(key) => key,
            // (`from_text` took only what `IdKey::is_id` accepts, and that is what `of` reads.)
            None => IdKey::String(self.0.raw.get().to_owned()),
        })
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw())
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw())
    }
}

impl IdKey {
    /// The key of a raw JSON id, or `None` when it is not a string or an integer.
    pub fn of(raw: &str) -> Option<Self> {
        let text = raw.trim();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<String>(text).ok().map(IdKey::String),
            b'-' | b'0'..=b'9' => {
                let digits = text.strip_prefix('-').unwrap_or(text);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let digits = digits.trim_start_matches('0');
                Some(IdKey::Integer(match (digits.is_empty(), text.starts_with('-')) {
                    (true, _) => "0".to_owned(),
                    (false, true) => format!("-{digits}"),
                    (false, false) => digits.to_owned(),
                }))
            }
            _ => None,
        }
    }

    /// Whether a valid JSON value's text is an id (a string or an integer), as [`IdKey::of`]
    /// decides it, without making the key.
    pub(crate) fn is_id(raw: &str) -> bool {
        let text = raw.trim();
        match text.as_bytes().first() {
            Some(b'"') => true,
            Some(b'-' | b'0'..=b'9') => {
                let digits = text.strip_prefix('-').unwrap_or(text);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            }
            _ => false,
        }
    }

    /// The key of a parsed JSON value (as found in `notifications/cancelled`).
    pub fn of_value(value: &serde_json::Value) -> Option<Self> {
        match value {
            serde_json::Value::String(s) => Some(IdKey::String(s.clone())),
            serde_json::Value::Number(n) => IdKey::of(&n.to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("valid json")
    }

    #[test]
    fn strings_and_integers_are_ids() {
        let id = RequestId::from_raw(raw(r#""caf\u00e9""#)).expect("string id");
        assert_eq!(id.raw(), r#""caf\u00e9""#);
        assert_eq!(id.key(), &IdKey::String("café".into()));
        let big = RequestId::from_raw(raw("123456789012345678901234567890")).expect("big integer");
        assert_eq!(big.key(), &IdKey::Integer("123456789012345678901234567890".into()));
        assert_eq!(IdKey::of("-0"), Some(IdKey::Integer("0".into())));
        assert_eq!(IdKey::of("007"), Some(IdKey::Integer("7".into())));
    }

    #[test]
    fn other_values_are_not_ids() {
        for bad in ["null", "1.5", "1e3", "true", "{}", "[]", "-", "-x", " 1.0 "] {
            assert!(IdKey::of(bad).is_none(), "{bad} must not be an id");
            assert!(!IdKey::is_id(bad), "{bad} must not be an id");
            assert!(RequestId::from_text(bad).is_none(), "{bad} must not be an id");
        }
    }

    #[test]
    fn a_key_made_late_is_the_key_made_at_once() {
        for text in [r#""caf\u00e9""#, r#" "a\"b" "#, "007", "-0", "-12", "123456789012345678901234567890"] {
            let late = RequestId::from_text(text).expect("an id");
            assert_eq!(late.raw(), text);
            assert_eq!(Some(late.key()), IdKey::of(text).as_ref(), "{text}");
        }
    }

    #[test]
    fn ids_short_and_long_keep_their_text() {
        for len in [1, SHORT - 1, SHORT, SHORT + 1, 200] {
            let digits = "1".repeat(len);
            let quoted = format!("\"{}\"", "é".repeat(len / 2));
            for text in [digits.as_str(), quoted.as_str()] {
                let read = RequestId::from_text(text).expect("an id");
                let given = RequestId::from_raw(raw(text)).expect("an id");
                assert_eq!((read.raw(), given.raw()), (text, text));
                assert_eq!(read.key(), given.key());
            }
        }
        assert_eq!(RequestId::server(7).raw(), "\"teaagent-7\"");
    }

    #[test]
    fn cancellation_keys_match_request_keys() {
        let v: serde_json::Value = serde_json::from_str(r#""café""#).expect("json");
        assert_eq!(IdKey::of_value(&v), IdKey::of(r#""caf\u00e9""#));
        assert_eq!(IdKey::of_value(&serde_json::json!(7)), IdKey::of("7"));
    }
}
