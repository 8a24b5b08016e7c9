//! Arguments mirrored into HTTP headers: a property of a tool's input schema that carries
//! `"x-mcp-header": "Region"` is sent by clients of protocol 2026-07-28 over Streamable HTTP
//! both in the body and as the header `Mcp-Param-Region`, so that proxies and load balancers can
//! route on it without reading the body; the server checks that the two agree (the `http` module
//! docs of `server`, and the README, "Arguments in headers").
//!
//! The annotation's rules, checked when a registry is built ([`header_params`]): the value is a
//! non-empty HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``), unique within the schema
//! ignoring case, and only on a top-level property of type `string`, `integer` or `boolean` (a
//! value with a fraction has no one text for both sides to agree on). Clients leave out a tool
//! that breaks one of them, so a server never offers one.

use serde_json::Value;

/// The schema keyword that mirrors a property into a header.
pub const HEADER_KEYWORD: &str = "x-mcp-header";

/// The prefix of the header an annotated argument is mirrored into: `Mcp-Param-` and the
/// annotation's value.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// The longest header name suffix accepted (header names beyond this are refused by proxies).
pub const MAX_HEADER_NAME: usize = 64;

/// One argument mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The property of the input schema.
    pub property: String,
    /// The annotation's value, as written (`Region`): the header is `Mcp-Param-Region`, its name
    /// compared without regard to case.
    pub header: String,
}

impl HeaderParam {
    /// The header's full name as written: `Mcp-Param-Region`.
    pub fn header_name(&self) -> String {
        format!("{HEADER_PREFIX}{}", self.header)
    }
}

/// Whether `byte` may appear in an HTTP token (a header name).
pub fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Why an `x-mcp-header` value cannot name a header, or `None` when it can.
pub fn header_name_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("it is empty".into());
    }
    if value.len() > MAX_HEADER_NAME {
        return Some(format!("it is longer than {MAX_HEADER_NAME} characters"));
    }
    if let Some(c) = value.chars().find(|c| !c.is_ascii() || !is_token_byte(*c as u8)) {
        return Some(format!(
            "{} cannot appear in a header name (use letters, digits and !#$%&'*+-.^_`|~)",
            crate::visible::escape(&c.to_string())
        ));
    }
    None
}

/// The JSON types a mirrored argument may have.
const MIRRORED_TYPES: &[&str] = &["string", "integer", "boolean"];

/// Every argument of `schema` mirrored into a header, in the order of its properties; or every
/// broken annotation, each said in a sentence naming its property.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, Vec<String>> {
    let mut found: Vec<HeaderParam> = Vec::new();
    let mut problems = Vec::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Ok(found) };
    for (property, sub) in properties {
        let Some(annotation) = sub.get(HEADER_KEYWORD) else { continue };
        let shown = crate::visible::escape(property);
        let Some(header) = annotation.as_str() else {
            problems.push(format!("`{HEADER_KEYWORD}` of property `{shown}` must be a string"));
            continue;
        };
        if let Some(why) = header_name_problem(header) {
            problems.push(format!("`{HEADER_KEYWORD}` of property `{shown}` cannot name a header: {why}"));
            continue;
        }
        let typed = sub.get("type").and_then(Value::as_str);
        if !typed.is_some_and(|t| MIRRORED_TYPES.contains(&t)) {
            problems.push(format!(
                "property `{shown}` carries `{HEADER_KEYWORD}` but is not of type `string`, `integer` or `boolean` (a single `type`): only those have one text in a header"
            ));
            continue;
        }
        if let Some(first) = found.iter().find(|p| p.header.eq_ignore_ascii_case(header)) {
            problems.push(format!(
                "properties `{}` and `{shown}` are both mirrored into the header `{HEADER_PREFIX}{header}` (header names ignore case)",
                crate::visible::escape(&first.property)
            ));
            continue;
        }
        found.push(HeaderParam { property: property.clone(), header: header.to_owned() });
    }
    if problems.is_empty() { Ok(found) } else { Err(problems) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_are_read_in_order() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "plain": {"type": "string"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
            "metric": {"type": "boolean", "x-mcp-header": "X_Metric.v1"},
        }});
        let found = header_params(&schema).expect("valid");
        let names: Vec<_> = found.iter().map(|p| (p.property.as_str(), p.header_name())).collect();
        assert_eq!(
            names,
            [
                ("region", "Mcp-Param-Region".to_owned()),
                ("days", "Mcp-Param-Days".to_owned()),
                ("metric", "Mcp-Param-X_Metric.v1".to_owned())
            ]
        );
    }

    #[test]
    fn every_broken_annotation_is_named() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": ""},
            "b": {"type": "string", "x-mcp-header": "Two Words"},
            "c": {"type": "number", "x-mcp-header": "C"},
            "d": {"type": "string", "x-mcp-header": "Region"},
            "e": {"type": "string", "x-mcp-header": "REGION"},
            "f": {"type": "string", "x-mcp-header": 7},
            "g": {"type": ["string", "null"], "x-mcp-header": "G"},
            "h": {"type": "string", "x-mcp-header": "Bad\r\nX"},
        }});
        let problems = header_params(&schema).expect_err("broken");
        assert_eq!(problems.len(), 7, "{problems:#?}");
        assert!(problems[0].contains("`a`") && problems[0].contains("empty"), "{}", problems[0]);
        assert!(problems[1].contains("`b`") && problems[1].contains("header name"), "{}", problems[1]);
        assert!(problems[2].contains("`c`") && problems[2].contains("integer"), "{}", problems[2]);
        assert!(problems[3].contains("`d` and `e`"), "{}", problems[3]);
        assert!(problems[4].contains("`f`") && problems[4].contains("string"), "{}", problems[4]);
        assert!(problems[5].contains("`g`"), "{}", problems[5]);
        assert!(problems[6].contains("\\r"), "the CR is shown escaped: {}", problems[6]);
    }
}
