//! Schemas written in other dialects than 2020-12, rewritten into 2020-12 for validation.
//!
//! Third-party MCP servers (behind the gateway) write their tools' schemas in the dialect their
//! generator speaks: draft-07 is the default of zod-to-json-schema and of older pydantic
//! (`definitions` with `$ref: "#/definitions/…"`, `dependencies`, `items` as a list with
//! `additionalItems`), draft-04 adds boolean `exclusiveMinimum`/`exclusiveMaximum` and `id`, and
//! OpenAPI 3.0 writes `nullable: true`. [`to_2020_12`] rewrites such a schema, by the rules of
//! the dialect it declares in `$schema` (or that its keywords imply, when it declares none), into
//! the 2020-12 schema that accepts exactly the same values, which the validator then compiles.
//! The schema the client sees stays as the server wrote it; only the checking uses the rewrite.
//!
//! | written | checked as |
//! |---|---|
//! | `definitions` (and `$ref: "#/definitions/X"`) | `$defs` (and `#/$defs/X`) |
//! | `dependencies: {a: ["b"]}` | `dependentRequired: {a: ["b"]}` |
//! | `dependencies: {a: {schema}}` | `allOf: [{if: {required: ["a"]}, then: {schema}}]` |
//! | `items: [s1, s2]`, `additionalItems: s` | `prefixItems: [s1, s2]`, `items: s` |
//! | `items: {schema}` with `additionalItems` | `items` (`additionalItems` has no effect there) |
//! | draft-04 `exclusiveMinimum: true` with `minimum: n` | `exclusiveMinimum: n` (likewise maximum) |
//! | draft-04 `id` | dropped (an identifier, no assertion) |
//! | OpenAPI `nullable: true` | `null` added to `type` (and to `enum`) |
//! | OpenAPI `example`, `discriminator` (with `nullable`) | dropped (annotations) |
//!
//! Keywords with no equivalent the validator checks (`$recursiveRef`, `$dynamicRef`, a remote
//! `$ref`) are left as they are, so compiling the result refuses them and the tool stays out.
//!
//! ```
//! use serde_json::json;
//! use teaagent_core::schema::{Validator, dialect};
//!
//! let draft07 = json!({
//!     "$schema": "http://json-schema.org/draft-07/schema#",
//!     "type": "object",
//!     "properties": {"point": {"$ref": "#/definitions/Point"}},
//!     "definitions": {"Point": {"type": "object", "required": ["x"], "properties": {"x": {"type": "number"}}}},
//! });
//! let v = Validator::compile(&dialect::to_2020_12(&draft07)).expect("checkable");
//! assert!(v.is_valid(&json!({"point": {"x": 1}})));
//! assert!(!v.is_valid(&json!({"point": {}})));
//! ```

use serde_json::{Map, Value, json};

/// The dialect a schema is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dialect {
    /// JSON Schema draft-04.
    Draft04,
    /// JSON Schema draft-06 or draft-07 (the same for what is rewritten here).
    Draft07,
    /// JSON Schema 2019-09.
    Draft2019,
    /// JSON Schema 2020-12.
    Draft2020,
}

impl Dialect {
    /// The dialect `schema` declares in `$schema`, or the one its keywords imply (draft-04 for a
    /// boolean `exclusiveMinimum`; draft-07 for `definitions`, `dependencies`, `additionalItems`
    /// or `items` as a list), else 2020-12.
    pub fn of(schema: &Value) -> Dialect {
        if let Some(uri) = schema.get("$schema").and_then(Value::as_str) {
            if uri.contains("draft-04") {
                return Dialect::Draft04;
            }
            if uri.contains("draft-06") || uri.contains("draft-07") {
                return Dialect::Draft07;
            }
            if uri.contains("2019-09") {
                return Dialect::Draft2019;
            }
            if uri.contains("2020-12") {
                return Dialect::Draft2020;
            }
        }
        implied(schema).unwrap_or(Dialect::Draft2020)
    }
}

/// The oldest dialect `schema`'s keywords imply anywhere: draft-04 for a boolean
/// `exclusiveMinimum`/`exclusiveMaximum`, draft-07 for `definitions`, `dependencies`,
/// `additionalItems` or `items` as a list.
fn implied(schema: &Value) -> Option<Dialect> {
    match schema {
        Value::Object(o) => {
            if o.get("exclusiveMinimum").is_some_and(Value::is_boolean)
                || o.get("exclusiveMaximum").is_some_and(Value::is_boolean)
            {
                return Some(Dialect::Draft04);
            }
            let here = (o.contains_key("definitions")
                || o.contains_key("dependencies")
                || o.contains_key("additionalItems")
                || o.get("items").is_some_and(Value::is_array))
            .then_some(Dialect::Draft07);
            o.values().filter_map(implied).chain(here).min()
        }
        Value::Array(items) => items.iter().filter_map(implied).min(),
        _ => None,
    }
}

/// `schema`, written in the dialect it declares or implies ([`Dialect::of`]), and with OpenAPI's
/// `nullable`, as the 2020-12 schema that accepts the same values (module docs). A 2020-12
/// schema without `nullable` comes back unchanged.
pub fn to_2020_12(schema: &Value) -> Value {
    let dialect = Dialect::of(schema);
    let mut out = schema.clone();
    if let Value::Object(o) = &mut out {
        o.remove("$schema");
    }
    rewrite(&mut out, dialect);
    out
}

/// Keywords whose value is a map of schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs", "dependentSchemas"];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is one schema.
const SCHEMA_VALUES: &[&str] = &[
    "items",
    "additionalProperties",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Rewrites a schema and every subschema, by keyword (a property named `enum` is a schema; the
/// value of the keyword `enum` is data).
fn rewrite(schema: &mut Value, dialect: Dialect) {
    let Value::Object(o) = schema else { return };
    rewrite_node(o, dialect);
    for (key, value) in o.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            if let Value::Object(map) = value {
                map.values_mut().for_each(|v| rewrite(v, dialect));
            }
        } else if SCHEMA_LISTS.contains(&key) {
            if let Value::Array(list) = value {
                list.iter_mut().for_each(|v| rewrite(v, dialect));
            }
        } else if SCHEMA_VALUES.contains(&key) {
            rewrite(value, dialect);
        }
    }
}

fn rewrite_node(o: &mut Map<String, Value>, dialect: Dialect) {
    if o.contains_key("nullable") {
        nullable(o);
    }
    if dialect == Dialect::Draft2020 {
        return;
    }
    if let Some(Value::String(r)) = o.get_mut("$ref")
        && let Some(name) = r.strip_prefix("#/definitions/")
    {
        *r = format!("#/$defs/{name}");
    }
    if let Some(defs) = o.remove("definitions") {
        match (o.get_mut("$defs"), defs) {
            (Some(Value::Object(existing)), Value::Object(defs)) => {
                for (name, def) in defs {
                    existing.entry(name).or_insert(def);
                }
            }
            (_, defs) => {
                o.insert("$defs".into(), defs);
            }
        }
    }
    if dialect == Dialect::Draft2019 {
        return;
    }
    if let Some(Value::Object(deps)) = o.remove("dependencies") {
        let mut required = Map::new();
        let mut conditions = Vec::new();
        for (name, dep) in deps {
            match dep {
                Value::Array(names) => {
                    required.insert(name, Value::Array(names));
                }
                schema => conditions.push(json!({"if": {"required": [name]}, "then": schema})),
            }
        }
        if !required.is_empty() {
            o.insert("dependentRequired".into(), Value::Object(required));
        }
        if !conditions.is_empty() {
            let all = o.entry("allOf").or_insert_with(|| json!([]));
            if let Value::Array(all) = all {
                all.extend(conditions);
            }
        }
    }
    match o.remove("items") {
        Some(Value::Array(prefix)) => {
            o.insert("prefixItems".into(), Value::Array(prefix));
            if let Some(rest) = o.remove("additionalItems") {
                o.insert("items".into(), rest);
            }
        }
        Some(items) => {
            o.insert("items".into(), items);
            o.remove("additionalItems");
        }
        None => {
            o.remove("additionalItems");
        }
    }
    if dialect == Dialect::Draft04 {
        o.remove("id");
        for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            match o.get(flag) {
                Some(Value::Bool(true)) => {
                    if let Some(limit) = o.remove(bound) {
                        o.insert(flag.into(), limit);
                    } else {
                        o.remove(flag);
                    }
                }
                Some(Value::Bool(false)) => {
                    o.remove(flag);
                }
                _ => {}
            }
        }
    }
}

/// OpenAPI 3.0's `nullable: true`: `null` is accepted too. Its annotations go with it.
fn nullable(o: &mut Map<String, Value>) {
    let Some(Value::Bool(true)) = o.remove("nullable") else { return };
    o.remove("example");
    o.remove("discriminator");
    match o.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            o.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&json!("null")) => types.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = o.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    // A nullable `allOf`/`anyOf`/`oneOf`/`$ref` (no `type` of its own): null, or what it says.
    if !o.contains_key("type") {
        let rest = std::mem::take(o);
        o.insert("anyOf".into(), json!([{"type": "null"}, Value::Object(rest)]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Validator;

    fn check(schema: Value) -> Validator {
        Validator::compile(&to_2020_12(&schema)).expect("checkable")
    }

    #[test]
    fn dialects_are_read_from_schema_or_implied_by_keywords() {
        assert_eq!(
            Dialect::of(&json!({"$schema": "http://json-schema.org/draft-04/schema#"})),
            Dialect::Draft04
        );
        assert_eq!(
            Dialect::of(&json!({"$schema": "https://json-schema.org/draft/2019-09/schema"})),
            Dialect::Draft2019
        );
        assert_eq!(Dialect::of(&json!({"properties": {"a": {"items": [{}]}}})), Dialect::Draft07);
        assert_eq!(Dialect::of(&json!({"type": "object"})), Dialect::Draft2020);
        let openapi =
            json!({"properties": {"n": {"minimum": 0, "exclusiveMinimum": true}, "t": {"items": [{}]}}});
        assert_eq!(Dialect::of(&openapi), Dialect::Draft04);
        let plain = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(to_2020_12(&plain), plain);
    }

    #[test]
    fn draft07_definitions_dependencies_and_tuples_are_checked() {
        let v = check(json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
                "card": {"type": "string"},
                "zip": {"type": "string"},
            },
            "dependencies": {"card": ["zip"], "zip": {"properties": {"card": {"minLength": 4}}}},
            "definitions": {"Tag": {"type": "string", "maxLength": 3}},
        }));
        assert!(v.is_valid(&json!({"tags": ["a"], "pair": ["x", 1], "card": "1234", "zip": "9"})));
        assert!(!v.is_valid(&json!({"tags": ["long"]})), "the $ref to definitions is followed");
        assert!(!v.is_valid(&json!({"pair": ["x", 1, 2]})), "additionalItems: false");
        assert!(!v.is_valid(&json!({"pair": [1, 1]})), "a tuple's items");
        assert!(!v.is_valid(&json!({"card": "1234"})), "dependencies as required names");
        assert!(!v.is_valid(&json!({"zip": "9", "card": "12"})), "dependencies as a schema");
    }

    #[test]
    fn draft04_exclusive_bounds_and_openapi_nullable() {
        let v = check(json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "id": "x",
            "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}},
        }));
        assert!(v.is_valid(&json!({"n": 9})));
        assert!(!v.is_valid(&json!({"n": 0})));
        let v = check(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "nullable": true, "example": "ada"},
                "mode": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "point": {"nullable": true, "allOf": [{"type": "object", "required": ["x"]}]},
            },
        }));
        assert!(v.is_valid(&json!({"name": null, "mode": null, "point": null})));
        assert!(v.is_valid(&json!({"name": "x", "mode": "a", "point": {"x": 1}})));
        assert!(!v.is_valid(&json!({"name": 5})));
        assert!(!v.is_valid(&json!({"mode": "c"})));
        assert!(!v.is_valid(&json!({"point": {}})));
    }

    #[test]
    fn what_cannot_be_checked_stays_refused() {
        let remote = json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}});
        assert!(Validator::compile(&to_2020_12(&remote)).is_err());
    }
}
