//! JSON types: the names `type` uses, and sets of them.

use std::fmt;

use serde_json::Value;

use super::numbers::is_integer;

/// JSON types as a set, in `jsonschema`'s order (`null`, `boolean`, `integer`, `number`,
/// `string`, `array`, `object`), the order a report lists them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Types(pub(super) u8);

/// One JSON type, as `type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number without a fractional part.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

const ALL_TYPES: [JsonType; 7] = [
    JsonType::Null,
    JsonType::Boolean,
    JsonType::Integer,
    JsonType::Number,
    JsonType::String,
    JsonType::Array,
    JsonType::Object,
];

impl JsonType {
    /// The type of `value` as it is written: a number without a fraction or an exponent
    /// (serde_json's `i64`/`u64`) is [`Integer`](JsonType::Integer), any other number
    /// [`Number`](JsonType::Number) — `1.0` is a number here, although `type: "integer"`
    /// accepts it ([`Types`] judges by value).
    pub(crate) fn of(value: &Value) -> Self {
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => JsonType::Integer,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }

    pub(super) fn parse(name: &str) -> Option<Self> {
        ALL_TYPES.into_iter().find(|t| t.name() == name)
    }

    /// The name `type` uses.
    pub fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// The name with its article, as a message says it: `an integer`, `a string`, `null`.
    pub(crate) fn article(self) -> &'static str {
        match self {
            JsonType::Array => "an array",
            JsonType::Boolean => "a boolean",
            JsonType::Integer => "an integer",
            JsonType::Null => "null",
            JsonType::Number => "a number",
            JsonType::Object => "an object",
            JsonType::String => "a string",
        }
    }

    pub(super) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl Types {
    /// Every type in the set, in the set's order.
    pub fn iter(self) -> impl Iterator<Item = JsonType> {
        ALL_TYPES.into_iter().filter(move |t| self.0 & t.bit() != 0)
    }

    pub(super) fn accepts(self, value: &Value) -> bool {
        let has = |t: JsonType| self.0 & t.bit() != 0;
        match value {
            Value::Null => has(JsonType::Null),
            Value::Bool(_) => has(JsonType::Boolean),
            Value::Number(n) => has(JsonType::Number) || (has(JsonType::Integer) && is_integer(n)),
            Value::String(_) => has(JsonType::String),
            Value::Array(_) => has(JsonType::Array),
            Value::Object(_) => has(JsonType::Object),
        }
    }
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
