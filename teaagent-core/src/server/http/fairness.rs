//! Each caller's share of the connections: requests in progress per caller
//! ([`HttpOptions::max_connections_per_caller`](super::HttpOptions)).
//!
//! A caller is known once its request is authenticated: the principal (`token:NAME`,
//! `oauth:SUB`), or without authentication the client's address (`addr:IP`; every client on one
//! address counts as one). HTTP/1.1 carries one request at a time on a connection, so a
//! request in progress holds its connection: counting the requests in progress of each caller,
//! from authentication to the end of the answer (a stream's included), counts the connections
//! it holds, also where a proxy carries several callers' requests on one connection one after
//! the other. Past its share, a request is answered `429` with `Retry-After` and a JSON-RPC
//! error naming the limit (`reason: "caller_limit"`, `limit: "requests"`), and its connection
//! is closed: the other callers keep the rest of the server's connections.
//!
//! A connection that has not yet sent a whole request belongs to no caller: it counts against
//! the server's limit only, for `header_timeout` at most (`health` for what happens past that
//! limit). The caller's other shares (calls, questions, streams) are the pipeline's
//! (`crate::server::CallerLimits`); this module names the caller for them.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::header::{self, HeaderValue};
use hyper::{Request, StatusCode};

use super::Authenticated;
use super::Endpoint;
use super::reply::json;
use super::{Answer, Reply};
use crate::error::Error;
use crate::jsonrpc::error_line;

/// The caller that the requests of a client at `remote` count against when they carry no
/// principal: its address (`addr:IP`), named once per connection.
pub(super) fn address_caller(remote: SocketAddr) -> Arc<str> {
    Arc::from(format!("addr:{}", remote.ip()))
}

/// The caller a request from `address` (its [`address_caller`]), authenticated as `auth`,
/// counts against.
fn caller_of(auth: &Authenticated, address: &Arc<str>) -> Arc<str> {
    Arc::clone(auth.principal.as_ref().unwrap_or(address))
}

/// Serves an authenticated request to the MCP endpoint within its caller's share, or refuses
/// it.
pub(super) async fn admitted(
    endpoint: &Endpoint,
    request: Request<hyper::body::Incoming>,
    mut auth: Authenticated,
    address: &Arc<str>,
) -> Reply {
    let caller = caller_of(&auth, address);
    let options = &endpoint.options;
    let max = options.max_connections_per_caller.clamp(1, options.max_connections.max(1));
    let share = match endpoint.requests.take(&caller, max) {
        Ok(share) => share,
        Err(refused) => {
            tracing::warn!(%caller, max, "a caller's request over its share was refused (429)");
            return too_many(&refused);
        }
    };
    auth.caller = Some(caller);
    let mut reply = super::mcp::handle(endpoint, request, auth).await;
    // A stream holds the share until it ends; any other answer is complete now.
    if let Answer::Stream(stream) = reply.body_mut() {
        stream.held = Some(share);
    }
    reply
}

/// `429`: the caller has its most requests in progress.
fn too_many(refused: &Error) -> Reply {
    let mut reply = json(StatusCode::TOO_MANY_REQUESTS, error_line(None, &refused.to_error_object_for(true)));
    let h = reply.headers_mut();
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    reply
}
