//! Input and output schemas that every client accepts.
//!
//! Schemas are generated with schemars (draft 2020-12, for deserialization) and then shaped for
//! clients: the root is always `{"type": "object", "properties": {...}}`; subschemas are inlined
//! (no `$ref`/`$defs` unless a type is recursive); no `$schema`; properties in declaration order;
//! `additionalProperties: false` at the root; enums as `enum` value lists; formats that are not in
//! the JSON Schema vocabulary (`uint32`, `double`, ...) are removed, and integer widths become
//! `minimum`/`maximum` bounds instead. Why: Gemini CLI, Cursor, VS Code Copilot and Claude Desktop
//! reject or mangle `$ref`, `$defs` and `$schema` (gemini-cli #14970, fastmcp #2808,
//! stitch-mcp #184).
//!
//! Schemas are built once, when a tool's definition is built, never per request.
//!
//! A tool whose schema must keep what this shaping removes (`$schema`, `$defs` and `$anchor`,
//! composition, conditionals) gives it as written instead
//! ([`ToolDefBuilder::input_schema_as_written`](crate::tool::ToolDefBuilder::input_schema_as_written),
//! `#[tool(input_schema = ...)]`): shown verbatim, validated all the same. An argument mirrored
//! into an HTTP header carries `x-mcp-header` ([`headers`]).
//!
//! Every call's arguments are validated against the tool's input schema by teaagent's own
//! validator, [`validate`]: the JSON Schema 2020-12 subset these schemas use, compiled once when
//! the registry is built (a keyword it does not know, or a `pattern` the `regex` crate refuses,
//! is an error of the registry, naming the tool). See its docs for what is checked and the
//! `pattern` dialect.
//!
//! Arguments that fail a schema are reported for the model that sent them: every problem at its
//! innermost pointer, enums with their allowed values, `anyOf`/`oneOf` (an `Option<Enum>`, a
//! data-carrying enum) resolved to the alternative the value was meant for: see "Argument
//! reports" below, and [`Error::InvalidArguments`](crate::error::Error::InvalidArguments) for how
//! the report reaches the client.
//!
//! # Argument reports
//!
//! For `priority: Option<Priority>` (`"low" | "medium" | "high"`) and `due: {days: u32}`, the
//! arguments `{"priority": "urgent", "due": {"days": "soon"}}` are reported as
//!
//! ```text
//! /due/days: must be an integer (got a string: "soon")
//! /priority: must be one of "low", "medium" or "high" (got "urgent")
//! /title: missing required property `title`
//! ```
//!
//! never as a bare "no alternative of the `anyOf` matched". How: an `anyOf`/`oneOf` failure descends into the alternative the value fits
//! (those whose `type`, `enum` or `const` reject the value itself are set aside; of the others,
//! the one with the fewest problems at the value itself, then in all); when every alternative
//! rejects it, one problem lists what any would take. Values are quoted back bounded
//! ([`preview`]: strings cut to 48 characters and escaped, arrays and objects named only).
//! Problems are sorted by pointer ([`compare_pointers`]).

pub mod dialect;
#[cfg(test)]
mod differential;
pub mod headers;
pub(crate) mod pointer;
mod report;
mod sanitize;
#[cfg(test)]
mod tests;
pub mod validate;

pub use pointer::compare_pointers;
pub(crate) use report::argument_errors;
pub use report::{PREVIEW_CHARS, bounded, preview, preview_text};
pub use sanitize::sanitize;
pub use validate::Validator;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use validate::JsonType;

/// teaagent's settings: 2020-12, inlined subschemas, no `$schema`.
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

/// A generator with teaagent's settings, for input (what a type deserializes from).
pub fn generator() -> SchemaGenerator {
    settings().into_generator()
}

/// Builds the input schema of a tool, one property at a time.
#[derive(Debug)]
pub struct ObjectSchema {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for ObjectSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectSchema {
    /// An object with no properties yet.
    pub fn new() -> Self {
        Self { generator: generator(), properties: Map::new(), required: Vec::new() }
    }

    /// Adds the property `name` of type `T`, with its doc comment as `description`.
    pub fn property<T: JsonSchema + ?Sized>(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if let (Some(text), Value::Object(o)) = (description, &mut schema) {
            o.insert("description".into(), Value::String(text.to_owned()));
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
    }

    /// Mirrors the property `name` into the header `Mcp-Param-{header}` (`"x-mcp-header"`, see
    /// [`headers`]); the registry checks the annotation's rules when it is built.
    pub fn header(&mut self, name: &str, header: &str) {
        if let Some(Value::Object(o)) = self.properties.get_mut(name) {
            o.insert(headers::HEADER_KEYWORD.into(), Value::String(header.to_owned()));
        }
    }

    /// The finished schema.
    pub fn finish(mut self) -> Value {
        let mut root = Map::new();
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), Value::Object(std::mem::take(&mut self.properties)));
        if !self.required.is_empty() {
            root.insert("required".into(), Value::Array(std::mem::take(&mut self.required)));
        }
        root.insert("additionalProperties".into(), json!(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        let mut root = Value::Object(root);
        sanitize(&mut root);
        root
    }
}

/// The whole input schema from one `#[args]` type, shaped like [`ObjectSchema::finish`].
/// Unknown properties are rejected unless the type already says otherwise: with
/// `additionalProperties: false`, or, when the type's properties come partly from subschemas
/// (a `#[serde(flatten)]` enum is a `oneOf` next to the struct's own `properties`), with
/// `unevaluatedProperties: false`, which counts the properties those subschemas declare too
/// (`additionalProperties: false` would refuse the enum's own fields).
pub fn args_schema<T: JsonSchema + ?Sized>() -> Value {
    let mut root = root_schema::<T>(generator());
    if let Value::Object(o) = &mut root
        && o.get("type") == Some(&json!("object"))
    {
        o.entry("properties").or_insert_with(|| json!({}));
        if !o.contains_key("additionalProperties") && !o.contains_key("unevaluatedProperties") {
            let composed = ["allOf", "anyOf", "oneOf", "if", "$ref"].iter().any(|k| o.contains_key(*k));
            let key = if composed { "unevaluatedProperties" } else { "additionalProperties" };
            o.insert(key.into(), json!(false));
        }
    }
    root
}

/// The output schema of structured results of type `T`: what `T` *serializes* to, which is not
/// always what it deserializes from. A field with `#[serde(skip_serializing_if = ...)]` may be
/// left out, so it is not required (for input it would be, unless it had a default); a field
/// with `#[serde(default)]` is always written, so it is required; `#[serde(flatten)]`, renames
/// and enum representations come out as serde writes them. Clients check every result against
/// this schema (the official SDKs do), and so does the server before sending it
/// ([`crate::Registry::check_output`]).
///
/// ```
/// use serde_json::json;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Hit {
///     line: u64,
///     #[serde(skip_serializing_if = "Vec::is_empty")]
///     before: Vec<String>,
/// }
///
/// let schema = teaagent_core::schema::output_schema::<Hit>();
/// assert_eq!(schema["required"], json!(["line"]));
/// ```
pub fn output_schema<T: JsonSchema + ?Sized>() -> Value {
    root_schema::<T>(output_generator())
}

/// A generator for output schemas: [`generator`]'s settings, for serialization.
pub fn output_generator() -> SchemaGenerator {
    settings().for_serialize().into_generator()
}

fn root_schema<T: JsonSchema + ?Sized>(mut generator: SchemaGenerator) -> Value {
    let mut root = generator.root_schema_for::<T>().to_value();
    if let Value::Object(o) = &mut root {
        // A root title is the Rust type's name: noise for a model.
        o.remove("title");
    }
    sanitize(&mut root);
    root
}

/// The JSON type name of `value`, as `type` spells it: `"null"`, `"boolean"`, `"integer"` (a
/// number written without a fraction or an exponent), `"number"` (any other), `"string"`,
/// `"array"`, `"object"`. The crate's one spelling of them ([`JsonType::of`] and
/// [`JsonType::name`]); a message's `an integer` is [`JsonType::article`].
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    JsonType::of(value).name()
}

/// Whether a schema mentions `$ref` anywhere (true only for recursive types).
pub fn has_refs(schema: &Value) -> bool {
    match schema {
        Value::Object(o) => o.contains_key("$ref") || o.values().any(has_refs),
        Value::Array(items) => items.iter().any(has_refs),
        _ => false,
    }
}

/// A [`Schema`] as a plain JSON value.
pub fn to_value(schema: Schema) -> Value {
    schema.to_value()
}
