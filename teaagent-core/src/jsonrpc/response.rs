//! Writing outgoing messages as the bytes of one line.
//!
//! Responses are assembled around the id's raw text, so the id goes back exactly as it came in.
//! Every function returns a complete line including its `\n`; a line never contains another
//! newline because `serde_json` escapes control characters inside strings.

use serde::Serialize;
use serde_json::Value;

use super::id::RequestId;
use crate::json_escapes::escape;

/// The `error` member of a JSON-RPC response.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ErrorObject {
    /// The JSON-RPC error code.
    pub code: i32,
    /// A short human-readable message.
    pub message: String,
    /// Structured details (`tool`, `reason`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A success response line: `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n`.
pub fn result_line<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    result_line_sized(id, result, 0)
}

/// [`result_line`] with room for `size_hint` bytes of result reserved up front, so a large result
/// is written once instead of into a buffer that doubles (and is copied) on the way.
pub fn result_line_sized<T: Serialize + ?Sized>(id: &RequestId, result: &T, size_hint: usize) -> Vec<u8> {
    result_line_written(id, size_hint, |out| serde_json::to_writer(out, result))
}

/// [`result_line_sized`] with the result written by `write` (a result type with a writer of its
/// own, such as [`crate::mcp::CallToolResult::write_json`]).
pub(crate) fn result_line_written(
    id: &RequestId,
    size_hint: usize,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + size_hint);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.raw().as_bytes());
    out.extend_from_slice(b",\"result\":");
    if write(&mut out).is_err() {
        // Our result types always serialize; if one ever does not, answer with an error instead
        // of a broken line.
        return error_line(Some(id), &internal_serialization_error());
    }
    out.extend_from_slice(b"}\n");
    out
}

/// An error response line; `id: None` writes `"id":null`.
pub fn error_line(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", RequestId::raw).as_bytes());
    out.extend_from_slice(b",\"error\":");
    serde_json::to_writer(&mut out, error)
        .unwrap_or_else(|_| out.extend_from_slice(br#"{"code":-32603,"message":"Internal error"}"#));
    out.extend_from_slice(b"}\n");
    out
}

/// A notification line (no id): `{"jsonrpc":"2.0","method":M,"params":P}\n`.
pub fn notification_line<T: Serialize + ?Sized>(method: &str, params: &T) -> Vec<u8> {
    request_line(None, method, params)
}

/// A request line of the server's own (e.g. `elicitation/create`).
pub fn request_line<T: Serialize + ?Sized>(id: Option<&RequestId>, method: &str, params: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Msg<'a, T: ?Sized> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a T,
    }
    let mut out = Vec::with_capacity(128);
    if let Some(id) = id {
        out.extend_from_slice(b"{\"id\":");
        out.extend_from_slice(id.raw().as_bytes());
        out.push(b',');
        let body = serde_json::to_vec(&Msg { jsonrpc: super::VERSION, method, params });
        // Splice the rest of the object after the id: drop the body's opening brace.
        match body {
            Ok(body) => out.extend_from_slice(&body[1..]),
            Err(_) => return Vec::new(),
        }
    } else if serde_json::to_writer(&mut out, &Msg { jsonrpc: super::VERSION, method, params }).is_err() {
        return Vec::new();
    }
    out.push(b'\n');
    out
}

/// Appends `text` as a JSON string, quotes included, escaped exactly as `serde_json` escapes it
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`; nothing
/// else), only faster on long text.
///
/// `serde_json` looks at every byte of a string on its way out, one at a time: for a tool that
/// returns 1 MiB of text that was a third of the call's CPU time (the `stdio` benchmark's
/// 1 MiB echo). Here `json_escapes::next_special` looks for the next byte that needs an escape
/// eight bytes, then 32, at a time (the search the reader of a message's envelope uses,
/// `scan.rs`), and the runs between escapes are copied whole ([`escape`]). Text dense with
/// escapes (source code with a newline every line, JSON) gains little: each escape starts a new
/// search. (A mask of the escapes per block, tried, was slower on both kinds of text: the
/// compiler does not vectorise it.)
pub(crate) fn write_json_str(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    escape(text, |piece| out.extend_from_slice(piece.as_bytes()));
    out.push(b'"');
}

/// Appends `value` as JSON: the same bytes as `serde_json::to_writer`, with every string (keys
/// included) written by [`write_json_str`].
pub(crate) fn write_json_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // (Writing into a `Vec` cannot fail.)
        Value::Number(n) => drop(serde_json::to_writer(&mut *out, n)),
        Value::String(s) => write_json_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => write_json_object(out, members),
    }
}

/// [`write_json_value`] of an object.
pub(crate) fn write_json_object(out: &mut Vec<u8>, members: &serde_json::Map<String, Value>) {
    out.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json_str(out, key);
        out.push(b':');
        write_json_value(out, value);
    }
    out.push(b'}');
}

/// The answer to a result that cannot be serialized: `-32603`, as `Error::Internal` words it
/// (`crate::error`'s tests check that the two agree).
pub(crate) fn internal_serialization_error() -> ErrorObject {
    const DETAILS: &str = "the result could not be serialized";
    ErrorObject {
        code: -32603,
        message: format!("Internal error: {DETAILS}"),
        data: Some(serde_json::json!({ "reason": "internal_error", "details": DETAILS })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn id(raw: &str) -> RequestId {
        RequestId::from_raw(RawValue::from_string(raw.into()).expect("json")).expect("id")
    }

    #[test]
    fn ids_are_spliced_verbatim() {
        let line = result_line(&id(r#""\u00e9t\u00e9""#), &serde_json::json!({}));
        assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9t\\u00e9\",\"result\":{}}\n");
    }

    #[test]
    fn null_ids_and_notifications() {
        let e = ErrorObject { code: -32700, message: "Parse error".into(), data: None };
        assert_eq!(
            error_line(None, &e),
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"
        );
        let n = notification_line("notifications/message", &serde_json::json!({"a": "x\ny"}));
        assert_eq!(n.iter().filter(|b| **b == b'\n').count(), 1);
        let r = request_line(Some(&id("3")), "ping", &serde_json::json!({}));
        let v: serde_json::Value = serde_json::from_slice(&r).expect("valid json");
        assert_eq!(v, serde_json::json!({"id": 3, "jsonrpc": "2.0", "method": "ping", "params": {}}));
    }

    /// Every byte that needs an escape, at every offset around the block boundaries, and text
    /// from every class of character: the bytes are `serde_json`'s.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut cases: Vec<String> = vec![String::new(), "x".repeat(1 << 16), "é\u{2028}\u{7f}😀".into()];
        for special in (0u8..0x20).chain([b'"', b'\\', 0x7f]) {
            for at in [0, 1, 30, 31, 32, 33, 63, 64, 65, 100] {
                let mut text = "a".repeat(at);
                text.push(char::from(special));
                text.push_str(&"b".repeat(40));
                cases.push(text);
            }
        }
        for text in &cases {
            let mut ours = Vec::new();
            write_json_str(&mut ours, text);
            assert_eq!(ours, serde_json::to_vec(text).expect("json"), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in crate::jsonrpc::arbitrary::any_json_value()) {
            let mut ours = Vec::new();
            write_json_value(&mut ours, &value);
            proptest::prop_assert_eq!(ours, serde_json::to_vec(&value).expect("json"));
        }

        #[test]
        fn any_string_is_written_as_serde_json_writes_it(text in "(?s).{0,300}", pad in 0usize..70) {
            let text = format!("{}{text}", "p".repeat(pad));
            let mut ours = b"prefix".to_vec();
            write_json_str(&mut ours, &text);
            let mut theirs = b"prefix".to_vec();
            serde_json::to_writer(&mut theirs, &text).expect("json");
            proptest::prop_assert_eq!(ours, theirs);
        }
    }
}
