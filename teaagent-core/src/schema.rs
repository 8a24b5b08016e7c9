//! Input and output schemas that every client accepts (SPEC §3).
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
mod report;
pub mod validate;

pub(crate) use report::argument_errors;
pub use report::{PREVIEW_CHARS, bounded, compare_pointers, preview, preview_text};
pub use validate::Validator;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

/// The formats of the JSON Schema 2020-12 vocabulary; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

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

/// Shapes a schema for clients, in place (see the module docs).
pub fn sanitize(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            o.remove("$schema");
            fix_format(o);
            collapse_const_one_of(o);
            split_type_union(o);
            for value in o.values_mut() {
                sanitize(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sanitize),
        _ => {}
    }
}

fn fix_format(o: &mut Map<String, Value>) {
    let Some(format) = o.get("format").and_then(Value::as_str).map(str::to_owned) else { return };
    if STANDARD_FORMATS.contains(&format.as_str()) {
        return;
    }
    o.remove("format");
    let bounds: Option<(i64, u64)> = match format.as_str() {
        "int8" => Some((i8::MIN.into(), i8::MAX as u64)),
        "int16" => Some((i16::MIN.into(), i16::MAX as u64)),
        "int32" => Some((i32::MIN.into(), i32::MAX as u64)),
        "uint8" => Some((0, u8::MAX.into())),
        "uint16" => Some((0, u16::MAX.into())),
        "uint32" => Some((0, u32::MAX.into())),
        _ => None,
    };
    if let Some((min, max)) = bounds {
        o.entry("minimum").or_insert(json!(min));
        o.entry("maximum").or_insert(json!(max));
    } else if format.starts_with("uint") {
        o.entry("minimum").or_insert(json!(0));
    }
}

/// `type: ["string", "null"]` (what schemars writes for an `Option<String>`) becomes
/// `anyOf: [{"type": "string"}, {"type": "null"}]`: the same values, in the form every client
/// reads. A `type` list is legal JSON Schema, but clients that map tool schemas onto a
/// single-`type` dialect (Gemini's function declarations, the OpenAPI subset) reject the tool or
/// drop the constraint, and the MCP Inspector's `--strict` mode warns about it. Keywords of one
/// type (`maxLength`, `minimum`, `properties`, ...) stay beside the `anyOf`: they apply only to
/// values of their type, so the meaning is unchanged.
fn split_type_union(o: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = o.get("type") else { return };
    if types.len() == 1 {
        let only = types[0].clone();
        o.insert("type".into(), only);
        return;
    }
    let branches: Vec<Value> = types.iter().map(|t| json!({ "type": t })).collect();
    o.remove("type");
    match o.get_mut("anyOf") {
        None => {
            o.insert("anyOf".into(), Value::Array(branches));
        }
        Some(_) => {
            let all = o.entry("allOf").or_insert_with(|| json!([]));
            if let Value::Array(all) = all {
                all.push(json!({ "anyOf": branches }));
            }
        }
    }
}

/// `oneOf: [{const: "a", description: ...}, ...]` (documented unit enum variants) becomes
/// `enum: ["a", ...]`, with the variants' descriptions folded into the schema's description.
fn collapse_const_one_of(o: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = o.get("oneOf") else { return };
    let mut values = Vec::with_capacity(variants.len());
    let mut notes = Vec::new();
    for v in variants {
        let Some(v) = v.as_object() else { return };
        if v.keys().any(|k| !matches!(k.as_str(), "const" | "description" | "type" | "title")) {
            return;
        }
        let Some(value) = v.get("const") else { return };
        if let Some(text) = v.get("description").and_then(Value::as_str) {
            notes.push(format!(
                "- `{}`: {}",
                value.as_str().map_or_else(|| value.to_string(), str::to_owned),
                text
            ));
        }
        values.push(value.clone());
    }
    let types: Vec<&'static str> = values.iter().map(json_type).collect();
    o.remove("oneOf");
    if let Some(first) = types.first()
        && types.iter().all(|t| t == first)
    {
        o.insert("type".into(), json!(first));
    }
    o.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let text = notes.join("\n");
        let description = match o.get("description").and_then(Value::as_str) {
            Some(existing) => format!("{existing}\n\n{text}"),
            None => text,
        };
        o.insert("description".into(), Value::String(description));
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        /// Fast.
        Fast,
        /// Careful.
        Careful,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Node {
        name: String,
        children: Vec<Node>,
    }

    #[test]
    fn properties_in_order_with_bounds_and_enums() {
        let mut s = ObjectSchema::new();
        s.property::<String>("zeta", Some("First."), true);
        s.property::<u32>("alpha", None, false);
        s.property::<Mode>("mode", Some("How."), true);
        let v = s.finish();
        let keys: Vec<&String> = v["properties"].as_object().expect("properties").keys().collect();
        assert_eq!(keys, ["zeta", "alpha", "mode"]);
        assert_eq!(
            v["properties"]["alpha"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(v["properties"]["mode"]["enum"], json!(["Fast", "Careful"]));
        assert_eq!(v["properties"]["mode"]["type"], "string");
        assert_eq!(v["properties"]["mode"]["description"], "How.\n\n- `Fast`: Fast.\n- `Careful`: Careful.");
        assert_eq!(v["required"], json!(["zeta", "mode"]));
        assert_eq!(v["additionalProperties"], json!(false));
        assert!(!has_refs(&v));
    }

    #[test]
    fn recursive_types_keep_their_definitions() {
        let mut s = ObjectSchema::new();
        s.property::<Node>("tree", None, true);
        let v = s.finish();
        assert!(has_refs(&v));
        assert!(v["$defs"]["Node"].is_object(), "{v}");
    }

    #[derive(JsonSchema)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Shape {
        Circle { r: u32 },
        Square { side: u32 },
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Flattened {
        name: String,
        #[serde(flatten)]
        shape: Shape,
    }

    #[test]
    fn a_flattened_enum_keeps_its_fields_and_unknown_ones_are_refused() {
        let schema = args_schema::<Flattened>();
        assert_eq!(schema["unevaluatedProperties"], json!(false), "{schema}");
        assert!(schema.get("additionalProperties").is_none(), "{schema}");
        let v = Validator::compile(&schema).expect("compiles");
        assert!(v.is_valid(&json!({"name": "n", "kind": "circle", "r": 1})));
        let bad = json!({"name": "n", "kind": "circle", "r": 1, "side": 2});
        let errors: Vec<(String, String)> =
            argument_errors(&v, &bad).into_iter().map(|e| (e.pointer, e.message)).collect();
        assert_eq!(
            errors,
            [("/side".to_owned(), "unknown property `side`; the properties are `name`".to_owned())]
        );
        // A plain struct still gets `additionalProperties: false`.
        assert_eq!(args_schema::<Node>()["additionalProperties"], json!(false));
    }

    #[test]
    fn empty_objects_still_have_properties() {
        assert_eq!(
            ObjectSchema::new().finish(),
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
