//! Values quoted back, bounded: strings cut and escaped, arrays and objects named, not shown.

use serde_json::Value;

use super::phrasing::units;
use crate::schema::validate::JsonType;

/// Longest piece of a string value quoted back in a message, in characters.
pub const PREVIEW_CHARS: usize = 48;

/// A JSON value quoted back, bounded: strings cut and escaped, arrays and objects named only.
pub fn preview(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{}\"", preview_text(s)),
        Value::Array(items) => format!("{} of {} items", JsonType::Array.article(), items.len()),
        Value::Object(_) => JsonType::Object.article().to_owned(),
        other => other.to_string(),
    }
}

/// A value with its type: `a string: "soon"`, `a number: 5`, `an object`.
pub(super) fn typed(value: &Value) -> String {
    let kind = JsonType::of(value).article();
    match value {
        Value::Bool(b) => format!("{kind}: {b}"),
        Value::Number(n) => format!("{kind}: {n}"),
        Value::String(_) => format!("{kind}: {}", preview(value)),
        // `null`, and arrays and objects, named only.
        Value::Null | Value::Array(_) | Value::Object(_) => preview(value),
    }
}

/// Text quoted back: escaped ([`visible::escape`](crate::visible::escape)) and cut to [`PREVIEW_CHARS`] characters,
/// saying how many more there were.
pub fn preview_text(text: &str) -> String {
    bounded(text, PREVIEW_CHARS)
}

pub use crate::visible::bounded;

/// A string's length (`1 character`), or any other value with its type.
pub(super) fn length(value: &Value) -> String {
    match value {
        Value::String(s) => units(s.chars().count() as u64, "character", "characters"),
        other => typed(other),
    }
}

/// The number of an array's items or an object's properties, or any other value with its type.
pub(super) fn count(value: &Value) -> String {
    match value {
        Value::Array(items) => items.len().to_string(),
        Value::Object(o) => o.len().to_string(),
        other => typed(other),
    }
}
