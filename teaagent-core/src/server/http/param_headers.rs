//! The `Mcp-Param-*` headers of a protocol 2026-07-28 `tools/call`: each argument its tool
//! mirrors into a header (`x-mcp-header`, [`crate::schema::headers`]) that the body carries, not
//! `null`, must come with its header, whose value says the same (the `http` module docs' table).
//!
//! The argument's text is a string as it is, an integer in decimal, a boolean `true` or
//! `false`. The header's value is read with the spaces and tabs around it removed; one of the
//! exact form `=?base64?…?=` is strict Base64 (padded, standard alphabet) of UTF-8 text and is
//! compared decoded, anything else is compared as it is. Header values are the client's and may
//! be anything: they are bounded, compared as bytes, and never repeated in an answer or a log.

use hyper::header::HeaderMap;
use serde_json::Value;

use crate::error::{Error, ParamHeaderProblem};
use crate::registry::Registry;

/// The longest header value read (beyond it the header cannot match any argument a client would
/// mirror; proxies refuse far less).
pub(super) const MAX_VALUE_BYTES: usize = 8 * 1024;

/// Checks the mirrored arguments of a call of `tool` with these `arguments` (as the body has
/// them). Arguments that are not an object, or a mirrored argument of a type with no header
/// text, are left to the call's own argument check, which refuses them.
pub(super) fn check_param_headers(
    headers: &HeaderMap,
    registry: &Registry,
    tool: &str,
    arguments: Option<&str>,
) -> Result<(), Error> {
    let mirrored = registry.header_params(tool);
    if mirrored.is_empty() {
        return Ok(());
    }
    let Some(arguments) = arguments else { return Ok(()) };
    let Ok(arguments) = serde_json::from_str::<serde_json::Map<String, Value>>(arguments) else {
        return Ok(());
    };
    for param in mirrored {
        let Some(expected) = arguments.get(&param.property).and_then(header_text) else { continue };
        let refuse = |problem| Error::ParamHeaderMismatch {
            tool: tool.to_owned(),
            argument: param.property.clone(),
            header: param.header_name(),
            problem,
        };
        let name = param.header_name().to_ascii_lowercase();
        let mut values = headers.get_all(name.as_str()).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            let sent = headers.get_all(name.as_str()).iter().count();
            return Err(refuse(if sent == 0 {
                ParamHeaderProblem::Missing
            } else {
                ParamHeaderProblem::Repeated
            }));
        };
        if value.len() > MAX_VALUE_BYTES {
            return Err(refuse(ParamHeaderProblem::TooLong));
        }
        match said(value.as_bytes()) {
            Said::Text(text) if text == expected.as_bytes() => {}
            Said::Text(_) => return Err(refuse(ParamHeaderProblem::Differs)),
            Said::BadBase64 => return Err(refuse(ParamHeaderProblem::InvalidBase64)),
        }
    }
    Ok(())
}

/// The text an argument is mirrored as; `None` for `null` (no header expected) and for a value
/// no header can carry (an object, a fraction: the schema check refuses those).
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i.to_string())
            } else if let Some(u) = n.as_u64() {
                Some(u.to_string())
            } else {
                // `2.0` is an integer to the schema; its text is `2`.
                let f = n.as_f64()?;
                (f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0).then(|| format!("{}", f as i64))
            }
        }
        _ => None,
    }
}

/// What a header value says.
#[derive(Debug, PartialEq)]
enum Said {
    /// Its bytes (decoded, for `=?base64?…?=`).
    Text(Vec<u8>),
    /// `=?base64?…?=` around something that is not strict Base64 of UTF-8 text.
    BadBase64,
}

/// A header value read: spaces and tabs around it removed, `=?base64?…?=` decoded strictly.
fn said(raw: &[u8]) -> Said {
    let trimmed = trim_ows(raw);
    let Some(encoded) = trimmed.strip_prefix(b"=?base64?").and_then(|r| r.strip_suffix(b"?=")) else {
        return Said::Text(trimmed.to_vec());
    };
    use base64::Engine;
    match base64::engine::general_purpose::STANDARD.decode(encoded) {
        Ok(bytes) if std::str::from_utf8(&bytes).is_ok() => Said::Text(bytes),
        _ => Said::BadBase64,
    }
}

/// `raw` without the spaces and horizontal tabs around it.
fn trim_ows(raw: &[u8]) -> &[u8] {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = raw.iter().position(|b| !ows(b)).unwrap_or(raw.len());
    let end = raw.iter().rposition(|b| !ows(b)).map_or(start, |i| i + 1);
    &raw[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_are_read_strictly() {
        let text = |s: &str| Said::Text(s.as_bytes().to_vec());
        assert_eq!(said(b"=?base64?SGVsbG8=?="), text("Hello"));
        assert_eq!(said(b" \t=?base64?SGVsbG8=?=  "), text("Hello"));
        assert_eq!(said(b"=?base64?SGVsbG8?="), Said::BadBase64, "padding is required");
        assert_eq!(said(b"=?base64?SGVs!!!bG8=?="), Said::BadBase64);
        assert_eq!(said(b"=?base64?SGVsbG9=?="), Said::BadBase64, "no stray bits");
        assert_eq!(said(b"=?base64?/w==?="), Said::BadBase64, "not UTF-8");
        assert_eq!(said(b"=?base64?4pyTIMOg?="), text("✓ à"));
        assert_eq!(said(b"=?base64??="), text(""));
        assert_eq!(said(b"=?base64?SGVsbG8="), text("=?base64?SGVsbG8="), "no suffix: literal");
        assert_eq!(said(b"SGVsbG8="), text("SGVsbG8="));
        assert_eq!(said(b"   "), text(""));
    }

    #[test]
    fn arguments_are_mirrored_as_their_text() {
        assert_eq!(header_text(&json!("eu-west")).as_deref(), Some("eu-west"));
        assert_eq!(header_text(&json!(42)).as_deref(), Some("42"));
        assert_eq!(header_text(&json!(-7)).as_deref(), Some("-7"));
        assert_eq!(header_text(&json!(u64::MAX)).as_deref(), Some("18446744073709551615"));
        assert_eq!(header_text(&json!(2.0)).as_deref(), Some("2"));
        assert_eq!(header_text(&json!(true)).as_deref(), Some("true"));
        assert_eq!(header_text(&json!(2.5)), None);
        assert_eq!(header_text(&json!(null)), None);
        assert_eq!(header_text(&json!({"a": 1})), None);
    }
}
