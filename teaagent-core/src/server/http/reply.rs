//! The answers: their body (all at once, or a stream of events) and the common responses
//! (JSON, a JSON-RPC error, a refusal before any JSON-RPC, plain text, nothing).

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::{Answer, Reply};
use crate::error::{Error, code};
use crate::jsonrpc::{RequestId, error_line};

pub(super) fn json(status: StatusCode, line: Vec<u8>) -> Reply {
    let mut line = line;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::from(line))));
    *reply.status_mut() = status;
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    reply
}

pub(super) fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: &Error) -> Reply {
    json(status, error_line(id, &error.to_error_object_for(true)))
}

/// A refusal before any JSON-RPC: a JSON-RPC error without an id, so MCP clients can show it.
pub(super) fn refused(status: StatusCode, message: &str) -> Reply {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code::INVALID_REQUEST, "message": message}});
    json(status, body.to_string().into_bytes())
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::from_static(text.as_bytes()))));
    *reply.status_mut() = status;
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    reply
}

pub(super) fn empty(status: StatusCode) -> Reply {
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::new())));
    *reply.status_mut() = status;
    reply
}
