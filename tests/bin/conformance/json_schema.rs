//! The tool of the suite's `json-schema-2020-12` scenario: an input schema kept as written
//! (`#[tool(input_schema = ...)]`), with `$schema`, `$defs`, `$anchor`, `$ref`, `allOf`/`anyOf`,
//! `if`/`then`/`else` and `additionalProperties: false`, listed verbatim and checked on every
//! call.

use serde_json::{Value, json};
use teaagent_core::tool;

/// The schema, exactly as the suite expects it.
pub(crate) fn contact_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// A postal address.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// How to reach someone.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Contact {
    name: Option<String>,
    address: Option<Address>,
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features.
#[tool(read_only, input_schema = contact_schema)]
pub(crate) fn json_schema_2020_12_tool(#[args] contact: Contact) -> String {
    let name = contact.name.as_deref().unwrap_or("someone");
    let city = contact.address.as_ref().and_then(|a| a.city.as_deref()).unwrap_or("nowhere");
    let street = contact.address.as_ref().and_then(|a| a.street.as_deref()).unwrap_or("");
    let reach = match contact.contact_method.as_deref() {
        Some("phone") => contact.phone.unwrap_or_default(),
        _ => contact.email.or(contact.phone).unwrap_or_default(),
    };
    format!("{name} ({street} {city}): {reach}")
}
