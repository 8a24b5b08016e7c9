//! How an instance fails a schema: each problem at its instance pointer, with what is wrong.

use serde_json::{Number, Value};

use super::types::Types;

/// One way an instance fails a schema: where (the instance's JSON pointer), the value there, and
/// what is wrong.
#[derive(Debug, Clone)]
pub struct ValidationError<'a> {
    /// JSON pointer (RFC 6901) of the failing value in the instance; `""` for the root.
    pub pointer: String,
    /// The failing value.
    pub instance: &'a Value,
    /// What is wrong.
    pub kind: ErrorKind<'a>,
}

/// What is wrong with a value (see [`ValidationError`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ErrorKind<'a> {
    /// The `false` schema: no value is allowed here.
    FalseSchema,
    /// Not of the types `type` lists.
    Type(Types),
    /// Not one of the `enum` values (the `enum` array).
    Enum(&'a Value),
    /// Not the `const` value.
    Const(&'a Value),
    /// A property `required` lists is missing.
    Required(&'a str),
    /// Properties that `additionalProperties: false` refuses, with the properties the schema
    /// declares (for the message).
    AdditionalProperties {
        /// The refused properties, in the instance's order.
        unexpected: Vec<&'a str>,
        /// The schema's `properties`, in declaration order.
        known: &'a [String],
    },
    /// A property name fails `propertyNames`.
    PropertyName(&'a str),
    /// Fewer properties than `minProperties`.
    MinProperties(u64),
    /// More properties than `maxProperties`.
    MaxProperties(u64),
    /// `property` is present, so `dependentRequired` wants `missing` too.
    DependentRequired {
        /// The present property.
        property: &'a str,
        /// The one it requires.
        missing: &'a str,
    },
    /// Fewer items than `minItems`.
    MinItems(u64),
    /// More items than `maxItems`.
    MaxItems(u64),
    /// `uniqueItems` and two equal items.
    UniqueItems,
    /// Too few (or too many) items match `contains`.
    Contains {
        /// How many items match.
        matched: u64,
        /// `minContains` (1 without it).
        min: u64,
        /// `maxContains`, if any.
        max: Option<u64>,
    },
    /// Below `minimum`.
    Minimum(&'a Number),
    /// Above `maximum`.
    Maximum(&'a Number),
    /// Not above `exclusiveMinimum`.
    ExclusiveMinimum(&'a Number),
    /// Not below `exclusiveMaximum`.
    ExclusiveMaximum(&'a Number),
    /// Not a multiple of `multipleOf`.
    MultipleOf(&'a Number),
    /// Shorter than `minLength` (in Unicode scalar values).
    MinLength(u64),
    /// Longer than `maxLength`.
    MaxLength(u64),
    /// Does not match `pattern`.
    Pattern(&'a str),
    /// No `anyOf` alternative accepts the value: each alternative's problems.
    AnyOf(Vec<Vec<ValidationError<'a>>>),
    /// No `oneOf` alternative accepts the value: each alternative's problems.
    OneOfNone(Vec<Vec<ValidationError<'a>>>),
    /// More than one `oneOf` alternative accepts the value.
    OneOfMany,
    /// The value matches the `not` schema.
    Not,
}
