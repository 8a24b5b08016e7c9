//! Schemas shaped for clients (see the [module docs](super)): no `$schema`, only standard
//! `format`s (integer widths become bounds), documented unit variants as an `enum`, and a `type`
//! list as an `anyOf`.

use serde_json::{Map, Value, json};

use super::json_type_name;

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

/// Shapes a schema for clients, in place (see the [`schema`](super) module docs).
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
    let types: Vec<&'static str> = values.iter().map(json_type_name).collect();
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
