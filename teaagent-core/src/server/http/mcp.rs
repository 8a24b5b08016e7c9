//! The MCP endpoint, once a request is admitted: a legacy session's GET and DELETE, and a POST's
//! body, message and era (the `http` module docs, "Both eras"), up to the pipeline.

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, StatusCode};

use super::Authenticated;
use super::Endpoint;
use super::Reply;
use super::answer::{Route, answer};
use super::legacy;
use super::modern::{ModernRequest, READ_MEMBERS, modern_checks};
use super::reply::{empty, refused, rpc_error};
use super::request::{McpHeaders, read_body, text};
use crate::error::{Error, InvalidRequest};
use crate::jsonrpc::Incoming as Message;
use crate::mcp::ProtocolVersion;
use crate::server::era::modern_meta;

/// The MCP endpoint.
pub(super) async fn handle(endpoint: &Endpoint, request: Request<Incoming>, auth: Authenticated) -> Reply {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let mcp = McpHeaders::of(headers);
    // One value each, or the request means two things (`McpHeaders::repeated`).
    if let Some(name) = mcp.repeated {
        return refused(StatusCode::BAD_REQUEST, &format!("send one {name} header, not several"));
    }
    let session_id = text(mcp.session_id);
    // A legacy session's notification stream and its end.
    if let Some(id) = &session_id {
        if parts.method == Method::GET {
            return endpoint.sessions.listen(endpoint, id, headers, auth.principal.as_deref());
        }
        if parts.method == Method::DELETE {
            return endpoint.sessions.end(id, auth.principal.as_deref());
        }
    }
    if parts.method != Method::POST {
        let mut reply =
            refused(StatusCode::METHOD_NOT_ALLOWED, "the MCP endpoint takes POST (protocol 2026-07-28)");
        reply.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return reply;
    }
    let (accepts, body) = match read_body(endpoint, headers, body).await {
        Ok(read) => read,
        Err(refusal) => return *refusal,
    };
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let error = Error::InvalidRequest { reason: InvalidRequest::BatchNotSupported };
        return rpc_error(StatusCode::BAD_REQUEST, None, &error);
    }
    // The body's own buffer when nothing else holds it (a large body is not copied again).
    // The params' members the modern checks compare are noted in the same pass.
    let (message, noted) = match Message::parse_line_noting(Vec::from(body), READ_MEMBERS) {
        Ok(read) => read,
        Err(rejected) => {
            return rpc_error(StatusCode::BAD_REQUEST, rejected.id.as_ref(), &Error::from(&rejected.reason));
        }
    };
    // The era, per request (the `http` module docs, "Both eras").
    let header_version = text(mcp.protocol_version);
    let legacy_header =
        header_version.as_deref().is_some_and(|v| ProtocolVersion::LEGACY.iter().any(|l| l.as_str() == v));
    let modern_header = header_version.is_some() && !legacy_header;
    if !modern_header {
        if let Some(session) = &session_id {
            let context =
                legacy::Context { accepts, auth, version: header_version.map(std::borrow::Cow::into_owned) };
            return endpoint.sessions.message(endpoint, session, message, context).await;
        }
        match message {
            Message::Request(request) if request.method == "initialize" => {
                return endpoint.sessions.initialize(endpoint, &request, auth.principal);
            }
            ref other if !names_modern_meta(other) => {
                let error = Error::InvalidRequest { reason: InvalidRequest::NoSession };
                let id = match other {
                    Message::Request(request) => Some(&request.id),
                    _ => None,
                };
                return rpc_error(StatusCode::BAD_REQUEST, id, &error);
            }
            _ => {}
        }
    }
    let request = match message {
        Message::Request(request) => request,
        // Nothing for this era to act on (a cancellation is the closing of a response).
        Message::Notification(_) => return empty(StatusCode::ACCEPTED),
        Message::Response(_) => {
            let error = Error::InvalidRequest { reason: InvalidRequest::NotAMessage };
            return rpc_error(StatusCode::BAD_REQUEST, None, &error);
        }
    };
    let checked = ModernRequest {
        headers,
        mcp: &mcp,
        version: header_version.as_deref(),
        method: &request.method,
        params: request.params.as_ref(),
        noted,
    };
    let caller = match modern_checks(checked, &endpoint.shared.registry, &endpoint.callers) {
        Ok(caller) => caller,
        Err((status, error)) => return rpc_error(status, Some(&request.id), &error),
    };
    let route = Route { log_level: caller.log_level, caller, auth, session: None };
    answer(endpoint, request.id, request.method, request.params, route, accepts).await
}

/// Whether a message's `_meta` names a protocol version (a modern message without its header).
fn names_modern_meta(message: &Message) -> bool {
    let params = match message {
        Message::Request(r) => r.params.as_ref(),
        Message::Notification(n) => n.params.as_ref(),
        Message::Response(_) => None,
    };
    modern_meta(params).ok().flatten().is_some_and(|m| m.protocol_version.is_some())
}
