//! A request's params as the typed value its method takes; malformed params are `-32602`.

use serde::de::DeserializeOwned;

use crate::error::{Error, ParamsProblem};
use crate::jsonrpc::value::read_object_once;

/// Params at least this long are first read by `jsonrpc::value` ([`parse_large_params`]).
const LARGE: usize = 16 * 1024;

/// Parses a method's params (absent params parse as `{}`); a mismatch is `-32602`.
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<&str>) -> Result<T, Error> {
    let text = params.unwrap_or("{}");
    serde_json::from_str(text)
        .map_err(|e| Error::InvalidParams { reason: ParamsProblem::Malformed, details: e.to_string() })
}

/// [`parse_params`], for a method whose params may carry a large argument (`tools/call`): params
/// of at least [`LARGE`] bytes are read into a map by `jsonrpc::value` (its strings stepped
/// over a block at a time, where `serde_json` takes about ten times the instructions a byte),
/// and `T` is taken from that map, its strings moved, not copied. Anything that reader leaves
/// to `serde_json` (see its docs), and any params `T` refuses, go through [`parse_params`], so
/// the value or the error is the one it gives.
pub(crate) fn parse_large_params<T: DeserializeOwned>(params: Option<&str>) -> Result<T, Error> {
    if let Some(map) = params.filter(|text| text.len() >= LARGE).and_then(read_object_once)
        && let Ok(parsed) = serde_json::from_value(serde_json::Value::Object(map))
    {
        return Ok(parsed);
    }
    parse_params(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::CallToolParams;

    /// Both readings of `text`: the value (as JSON) or the error's message.
    fn both(text: &str) -> (Result<String, String>, Result<String, String>) {
        let shown = |r: Result<Box<CallToolParams>, Error>| {
            r.map(|p| format!("{} {:?} {:?}", p.name, p.arguments, p.meta.map(|m| m.progress_token)))
                .map_err(|e| e.to_string())
        };
        (shown(parse_large_params(Some(text))), shown(parse_params(Some(text))))
    }

    #[test]
    fn large_params_read_as_serde_json_reads_them() {
        let big = "x\u{e9}\"\\\n".repeat(LARGE / 4);
        let escaped = serde_json::to_string(&big).expect("json");
        for text in [
            format!(
                r#"{{"name": "echo", "arguments": {{"text": {escaped}, "n": [1, 2.5]}}, "_meta": {{"progressToken": 7}}}}"#
            ),
            // A duplicate field, a wrong type, a surrogate, trailing text: serde_json's own errors.
            format!(r#"{{"name": "echo", "name": "again", "arguments": {{"text": {escaped}}}}}"#),
            // The same field spelled another way is the same field.
            format!(r#"{{"n\u0061me": "echo", "name": "again", "arguments": {{"text": {escaped}}}}}"#),
            format!(r#"{{"n\u0061me": "echo", "arguments": {{"text": {escaped}}}}}"#),
            format!(r#"{{"name": 5, "arguments": {{"text": {escaped}}}}}"#),
            format!(r#"{{"name": "echo", "arguments": {{"text": {escaped}, "s": "\ud83d\ude00"}}}}"#),
            format!(r#"{{"name": "echo", "arguments": {{"text": {escaped}}}}} x"#),
            format!(r#"{{"arguments": {{"text": {escaped}}}}}"#),
        ] {
            assert!(text.len() >= LARGE);
            let (fast, plain) = both(&text);
            assert_eq!(fast, plain, "{}", &text[..80]);
        }
    }
}
