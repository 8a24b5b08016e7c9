//! Writing outgoing messages as the bytes of one line.
//!
//! Responses are assembled around the id's raw text, so the id goes back exactly as it came in.
//! Every function returns a complete line including its `\n`; a line never contains another
//! newline because `serde_json` escapes control characters inside strings.

use serde::Serialize;
use serde_json::Value;

use super::id::RequestId;

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
    let mut out = Vec::with_capacity(128 + size_hint);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.raw().as_bytes());
    out.extend_from_slice(b",\"result\":");
    if serde_json::to_writer(&mut out, result).is_err() {
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

fn internal_serialization_error() -> ErrorObject {
    crate::error::Error::Internal { details: "the result could not be serialized".into() }.to_error_object()
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
}
