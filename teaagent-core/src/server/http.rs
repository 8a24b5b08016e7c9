//! Streamable HTTP: one endpoint, `/mcp`, for both protocol eras.
//!
//! Every message goes through exactly the stdio server's pipeline
//! (`router::dispatch`): argument validation, the permission policy, rate
//! limits, the workspace lock and the audit, which names the authenticated principal.
//!
//! # Both eras
//!
//! The era is chosen per request:
//! 1. an `MCP-Protocol-Version` header that is not a legacy version → protocol `2026-07-28`:
//!    POST only, one message a body, no session (the rest of these docs);
//! 2. an `Mcp-Session-Id` header → that legacy session (`http/legacy.rs`: its POSTs, its GET stream,
//!    DELETE);
//! 3. `initialize` → a new legacy session;
//! 4. `_meta` naming a protocol version → `2026-07-28` (without its header: `-32020`);
//! 5. anything else → `400`, `reason: "no_session"`.
//!
//! # Checks before anything runs, in this order
//!
//! | check | answer |
//! |---|---|
//! | path is `/healthz`, `/readyz`, `/mcp`, `/metrics` (unless served apart: [`HttpOptions::metrics_listen`]) (or, with OAuth, the Protected Resource Metadata's) | else `404` |
//! | `Host` is one this server answers to (loopback names on a loopback bind; with OAuth, also the resource URL's host) | `403` |
//! | `Origin`, when sent, is allowed (the bound loopback origins, or the configured ones) | `403` |
//! | no `access_token` in the query string (a token in a URL ends up in logs) | `400` |
//! | a bearer token, when tokens are configured (`Authorization: Bearer …`, compared in constant time against SHA-256 digests) | `401` + `WWW-Authenticate` |
//! | with OAuth (`HttpOptions::oauth`), a valid access token for this resource, with the required scopes (the `oauth` module has the details) | `401` / `403` + `WWW-Authenticate`; `503` before the issuer's keys are loaded |
//! | the caller (principal, or address without authentication) has fewer than [`HttpOptions::max_connections_per_caller`] requests in progress (`http/fairness.rs`) | `429` + `Retry-After`, `Connection: close` |
//! | `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` each sent at most once (names in any case): two values would let an intermediary act on one request and this server on another | `400` (`-32600`) |
//! | method is POST | `405`, `Allow: POST` |
//! | `Content-Type: application/json` | `415` |
//! | `Accept` allows `application/json` or `text/event-stream` (none sent counts as both) | `406` |
//! | body at most [`HttpOptions::max_body_bytes`] | `413` |
//! | body all in within [`HttpOptions::body_timeout`] of the headers | `408` |
//! | one JSON-RPC message (not a batch), parsable | `400` (`-32700` / `-32600`) |
//! | `_meta` names the protocol version and the client's capabilities | `400` (`-32602`) |
//! | `MCP-Protocol-Version` equals `_meta`'s version | `400` (`-32020`) |
//! | the version is one this server speaks | `400` (`-32022`, `data: {supported, requested}`) |
//! | `Mcp-Method` equals `method`; `Mcp-Name` equals `params.name` / `params.uri` / `params.taskId` for `tools/call`, `resources/read`, `prompts/get` / `tasks/get`, `tasks/update`, `tasks/cancel` (`=?base64?…?=` decoded) | `400` (`-32020`) |
//! | for `tools/call`, each argument the tool mirrors into a header (`x-mcp-header`, [`crate::schema::headers`]) that the body carries, not `null`: its `Mcp-Param-{name}` header (name in any case, sent once, at most 8 KiB) equals the argument's text (a string as it is, an integer in decimal, `true`/`false`) with the spaces around it removed; `=?base64?…?=` is strict Base64 of UTF-8, decoded first | `400` (`-32020`, `reason: "param_header_mismatch"`) |
//! | the method exists in this era | `404` (`-32601`) |
//! | with OAuth, the token has the scopes of the call's tool (`OAuthConfig::scopes_needed`) | `403` + `WWW-Authenticate` |
//!
//! A notification is accepted with `202` and no body. Errors of the call itself (bad arguments,
//! unknown tool, a refusal, a rate limit) are JSON-RPC errors with `200`, as on stdio; a missing
//! client capability (`-32021`) is `400`.
//!
//! # JSON or a stream
//!
//! The answer is `application/json` when the request is done before it has anything else to say
//! (nearly every call). Once the call sends a notification (progress, a log line the request
//! asked for through `_meta`) or runs longer than [`HttpOptions::stream_after`], and the client
//! accepts `text/event-stream`, the answer becomes a stream: each notification an SSE event, the
//! response last, then the stream ends (`X-Accel-Buffering: no`, a comment every
//! [`HttpOptions::keep_alive`]). Closing the connection cancels the call, whichever form the
//! answer had taken.
//!
//! # Authentication
//!
//! None (a loopback bind only), bearer tokens ([`HttpOptions::tokens`]), or, with the feature
//! `oauth`, OAuth 2.1 resource-server mode (`HttpOptions::oauth`, the `oauth` module): JWT
//! access tokens from an authorization server, checked against its published keys, with
//! Protected Resource Metadata for clients to find it. One of the two at a time. Either way the
//! token stops here: the audit names the principal (`token:NAME`, `oauth:SUB`), and no tool,
//! command, log line or error message sees the token.

mod answer;
mod auth;
mod callers;
mod fairness;
mod health;
mod host;
mod legacy;
mod listener;
mod mcp;
mod metrics;
mod modern;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod oauth;
mod param_headers;
mod reply;
mod request;
mod session;
mod stream;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::body::{Body, Frame};
use tokio_util::sync::CancellationToken;

pub use auth::BearerToken;
pub(crate) use listener::serve;
pub(crate) use metrics::{bind as bind_metrics, serve_apart as serve_metrics};
use session::Sessions;
use stream::EventStream;

use crate::server::shared::Shared;

/// How a Streamable HTTP server runs.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Bearer tokens accepted (none: no authentication, which only a loopback bind allows).
    pub tokens: Vec<BearerToken>,
    /// Origins allowed besides the loopback ones of the bound port
    /// (`http://localhost:PORT`, `http://127.0.0.1:PORT`, `http://[::1]:PORT`), exactly as a
    /// browser sends them (`https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Host names (with or without a port) allowed besides the loopback names. On a bind that is
    /// not loopback, an empty list allows any `Host`.
    pub allowed_hosts: Vec<String>,
    /// The largest request body (default 4 MiB).
    pub max_body_bytes: usize,
    /// Connections served at once (default 256). More are still accepted, and served in
    /// overflow mode: `/healthz` and `/readyz` are answered, everything else gets `503` with
    /// `Retry-After` and the connection is closed (a few such connections at once, each for a
    /// few seconds at most).
    pub max_connections: usize,
    /// Requests one caller (a token, an OAuth subject, without authentication a client's
    /// address) may have in progress at once, each holding its connection (default 64, at most
    /// [`HttpOptions::max_connections`]). One more is answered `429` with `Retry-After`, and its
    /// connection is closed. The limits of a caller's calls, questions and streams are the
    /// server's ([`crate::server::CallerLimits`]).
    pub max_connections_per_caller: usize,
    /// How long a client may take to send a request's headers (default 10 s); past it, the
    /// connection is closed.
    pub header_timeout: Duration,
    /// How long a client may take to send a POST's body once its headers are in (default 30 s);
    /// past it, `408` and the connection is closed.
    pub body_timeout: Duration,
    /// A call still running after this is answered as a stream, when the client accepts one
    /// (default 1 s).
    pub stream_after: Duration,
    /// A comment on an open stream this often (default 15 s): proxies keep it open, and a client
    /// that is gone is noticed.
    pub keep_alive: Duration,
    /// OAuth 2.1 resource-server mode: access tokens of an authorization server, instead of
    /// [`HttpOptions::tokens`] (not both).
    #[cfg(feature = "oauth")]
    pub oauth: Option<oauth::OAuthConfig>,
    /// Serve `/metrics` (Prometheus text format) on this address instead, without
    /// authentication: give a private address that only the scraper reaches. `None` (default):
    /// `/metrics` is served next to `/mcp`, behind the same authentication.
    pub metrics_listen: Option<SocketAddr>,
}

impl HttpOptions {
    /// Whether requests must authenticate (bearer tokens, or OAuth).
    pub fn authenticates(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.oauth.is_some() {
            return true;
        }
        !self.tokens.is_empty()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            tokens: Vec::new(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            max_connections_per_caller: 64,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            stream_after: Duration::from_secs(1),
            keep_alive: Duration::from_secs(15),
            #[cfg(feature = "oauth")]
            oauth: None,
            metrics_listen: None,
        }
    }
}

/// Whether `addr` is a loopback address (an HTTP server may bind it without authentication).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// What every request's handling shares.
pub(crate) struct Endpoint {
    pub(crate) shared: Arc<Shared>,
    pub(crate) options: HttpOptions,
    pub(crate) local: SocketAddr,
    /// Cancelled when the server stops accepting (`/readyz` says so).
    pub(crate) draining: CancellationToken,
    /// Cancelled when the calls still running must stop; every call's token is its child.
    pub(crate) stopping: CancellationToken,
    /// The legacy era's sessions.
    pub(crate) sessions: Sessions,
    /// Each caller's requests in progress ([`HttpOptions::max_connections_per_caller`]).
    pub(crate) requests: Arc<crate::session::fairness::Shares>,
    /// The callers of modern requests, by their `_meta`.
    pub(crate) callers: callers::Callers,
    /// OAuth resource-server mode, running.
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<Arc<oauth::OAuth>>,
}

/// The answer body: all at once, or a stream of events.
pub(crate) enum Answer {
    Full(Full<Bytes>),
    Stream(EventStream),
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Answer::Full(full) => Pin::new(full).poll_frame(cx),
            Answer::Stream(stream) => Pin::new(stream).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Answer::Full(full) => full.is_end_stream(),
            Answer::Stream(_) => false,
        }
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            // Exact: the answer goes with a Content-Length.
            Answer::Full(full) => full.size_hint(),
            Answer::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}

/// What every request is answered with.
pub(super) type Reply = Response<Answer>;

/// Who sent a request, once [`checked`](auth::checked): the principal the audit names (none without
/// authentication) and, with OAuth, the scopes the token grants.
#[derive(Clone, Default)]
pub(crate) struct Authenticated {
    pub(crate) principal: Option<Arc<str>>,
    /// Who the fair shares count this request against (`fairness`): the principal, or the
    /// client's address without authentication. Set once the request is admitted.
    pub(crate) caller: Option<Arc<str>>,
    #[cfg(feature = "oauth")]
    pub(crate) scopes: Option<Arc<oauth::Scopes>>,
}

impl Authenticated {
    /// A caller known by `principal`, not limited by scopes.
    pub(super) fn named(principal: String) -> Self {
        Authenticated {
            principal: Some(Arc::from(principal)),
            caller: None,
            #[cfg(feature = "oauth")]
            scopes: None,
        }
    }
}
