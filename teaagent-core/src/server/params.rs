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

    #[test]
    fn the_servers_reading_of_tools_call_params_is_the_public_types() {
        use crate::mcp::tools::CallRequest;
        let public = |text: &str| {
            parse_params::<CallToolParams>(Some(text))
                .map(|p| {
                    let meta = p.meta.map(|m| (m.progress_token, m.protocol_version.is_some()));
                    format!(
                        "{} {:?} {meta:?} {:?} {:?} {:?}",
                        p.name, p.arguments, p.input_responses, p.request_state, p.task
                    )
                })
                .map_err(|e| e.to_string())
        };
        let ours = |text: &str| {
            parse_params::<CallRequest>(Some(text))
                .map(|p| {
                    let meta = p.meta.map(|m| (m.progress_token, m.protocol_version.is_some()));
                    let unbox = |v: Option<Box<serde_json::Value>>| v.map(|v| *v);
                    format!(
                        "{} {:?} {meta:?} {:?} {:?} {:?}",
                        p.name,
                        p.arguments,
                        unbox(p.input_responses),
                        unbox(p.request_state),
                        unbox(p.task)
                    )
                })
                .map_err(|e| e.to_string())
        };
        for text in [
            r#"{"name": "echo", "arguments": {"text": "hi"}}"#,
            r#"{"name": "echo", "arguments": null, "_meta": {"progressToken": "p", "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}"#,
            r#"{"name": "echo", "inputResponses": {"a": 1}, "requestState": "s", "task": {"ttl": 5}}"#,
            r#"{"name": "echo", "inputResponses": null, "requestState": null, "task": null, "_meta": null}"#,
            r#"{"name": "echo", "_meta": {"progressToken": [1]}, "other": true}"#,
            r#"{"name": "echo", "_meta": 5}"#,
            // The protocol version only looked for: any value, any spelling of its key.
            r#"{"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": {"a": [1]}}}"#,
            r#"{"name": "echo", "_meta": {"io.modelcontextprotocol\/protocolVersion": 5, "progressToken": 1}}"#,
            r#"{"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": null}}"#,
            r#"{"name": "echo", "name": "again"}"#,
            r#"{"arguments": {}}"#,
            r#"{"name": 5}"#,
            "[]",
        ] {
            assert_eq!(ours(text), public(text), "{text}");
        }
    }
}
