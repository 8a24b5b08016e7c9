//! [`Bounded`]: an integer parameter whose schema states the range the tool accepts.
//!
//! Why a type and not a clamp in the body: a tool that silently reduces `depth: 500` to 10 tells
//! the model one thing in its schema (an integer up to 255 or 4294967295, the width of the Rust
//! type) and does another. With `Bounded<MIN, MAX>` the schema carries `minimum: MIN` and
//! `maximum: MAX`, the server's schema validation refuses anything outside as invalid arguments
//! naming the argument and the range (`-32602`, or an `isError` result from protocol `2025-11-25`
//! on: see [`crate::error`]), and deserialization checks the range again, so a value outside it can never reach
//! the body, however the arguments arrived.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};
use serde::{Serialize, Serializer};

/// An unsigned integer from `MIN` to `MAX` (both included): its JSON schema is
/// `{"type": "integer", "minimum": MIN, "maximum": MAX}` and deserializing a value outside the
/// range fails. Use it for every integer parameter the tool limits, instead of clamping in the
/// body; an `Option<Bounded<..>>` parameter is optional with the same range.
///
/// ```
/// use teaagent_core::Bounded;
///
/// /// At most 10 levels.
/// type Depth = Bounded<1, 10>;
///
/// let depth: Depth = serde_json::from_value(serde_json::json!(10)).expect("in range");
/// assert_eq!(depth.get(), 10);
/// assert!(serde_json::from_value::<Depth>(serde_json::json!(11)).is_err());
/// assert!(serde_json::from_value::<Depth>(serde_json::json!(0)).is_err());
/// assert_eq!(Depth::new(3).map(Depth::get), Some(3));
///
/// let schema = teaagent_core::schema::generator().into_root_schema_for::<Depth>();
/// assert_eq!(schema.get("maximum"), Some(&serde_json::json!(10)));
/// assert_eq!(schema.get("minimum"), Some(&serde_json::json!(1)));
/// ```
///
/// As a tool parameter:
///
/// ```
/// use teaagent_core::{Bounded, Registry, ToolError, tool};
///
/// /// Repeat a word.
/// #[tool(read_only)]
/// fn repeat(
///     /// The word.
///     word: String,
///     /// How often (default 1, at most 100).
///     times: Option<Bounded<1, 100>>,
/// ) -> Result<String, ToolError> {
///     Ok(word.repeat(times.map_or(1, Bounded::get) as usize))
/// }
///
/// # fn main() {
/// let registry = Registry::builder().add::<repeat>().build().expect("valid");
/// let times = &registry.listing()[0]["inputSchema"]["properties"]["times"];
/// assert_eq!((&times["minimum"], &times["maximum"]), (&serde_json::json!(1), &serde_json::json!(100)));
/// # }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bounded<const MIN: u64, const MAX: u64>(u64);

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// The lowest value accepted.
    pub const MIN: u64 = MIN;
    /// The highest value accepted.
    pub const MAX: u64 = MAX;

    /// `value` if it is in range.
    pub const fn new(value: u64) -> Option<Self> {
        const { assert!(MIN <= MAX, "Bounded<MIN, MAX> needs MIN <= MAX") };
        if value >= MIN && value <= MAX { Some(Self(value)) } else { None }
    }

    /// The value.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Debug for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl<const MIN: u64, const MAX: u64> fmt::Display for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<const MIN: u64, const MAX: u64> From<Bounded<MIN, MAX>> for u64 {
    fn from(value: Bounded<MIN, MAX>) -> u64 {
        value.0
    }
}

impl<const MIN: u64, const MAX: u64> JsonSchema for Bounded<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("Bounded_{MIN}_{MAX}"))
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Owned(format!("teaagent_core::Bounded<{MIN}, {MAX}>"))
    }

    /// No `format`: the schema shaping in [`crate::schema`] turns integer widths into bounds,
    /// and nothing may widen these.
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": MIN, "maximum": MAX})
    }
}

impl<const MIN: u64, const MAX: u64> Serialize for Bounded<MIN, MAX> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_u64(InRange::<MIN, MAX>)
    }
}

/// The range as serde's "expected" text: `an integer from 1 to 10`.
struct InRange<const MIN: u64, const MAX: u64>;

impl<'de, const MIN: u64, const MAX: u64> Visitor<'de> for InRange<MIN, MAX> {
    type Value = Bounded<MIN, MAX>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer from {MIN} to {MAX}")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Bounded::new(v).ok_or_else(|| E::invalid_value(Unexpected::Unsigned(v), &self))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        u64::try_from(v)
            .ok()
            .and_then(Bounded::new)
            .ok_or_else(|| E::invalid_value(Unexpected::Signed(v), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ObjectSchema;
    use serde_json::json;

    type Small = Bounded<1, 10>;

    #[test]
    fn the_range_is_both_in_the_schema_and_in_deserialization() {
        let mut s = ObjectSchema::new();
        s.property::<Small>("depth", Some("Levels."), false);
        s.property::<Option<Bounded<0, 2000>>>("max", None, false);
        let v = s.finish();
        assert_eq!(
            v["properties"]["depth"],
            json!({"type": "integer", "minimum": 1, "maximum": 10, "description": "Levels."})
        );
        assert_eq!(v["properties"]["max"]["maximum"], json!(2000));
        for ok in [1, 10] {
            assert_eq!(serde_json::from_value::<Small>(json!(ok)).map(Small::get).ok(), Some(ok));
        }
        for bad in [json!(0), json!(11), json!(-1), json!(1.5), json!(u64::MAX), json!("3")] {
            assert!(serde_json::from_value::<Small>(bad.clone()).is_err(), "{bad}");
        }
        let e = serde_json::from_value::<Small>(json!(11)).expect_err("out of range").to_string();
        assert!(e.contains("11") && e.contains("from 1 to 10"), "{e}");
        assert_eq!(serde_json::to_value(Small::new(7)).ok(), Some(json!(7)));
    }

    #[test]
    fn full_width_ranges_work() {
        type All = Bounded<0, { u64::MAX }>;
        assert_eq!(serde_json::from_value::<All>(json!(u64::MAX)).map(All::get).ok(), Some(u64::MAX));
        assert_eq!(All::new(0).map(All::get), Some(0));
    }
}
