//! Streamable HTTP (SPEC §12): one endpoint, `/mcp`, for both protocol eras.
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
//! | path is `/healthz`, `/readyz`, `/mcp` (or, with OAuth, the Protected Resource Metadata's) | else `404` |
//! | `Host` is one this server answers to (loopback names on a loopback bind; with OAuth, also the resource URL's host) | `403` |
//! | `Origin`, when sent, is allowed (the bound loopback origins, or the configured ones) | `403` |
//! | no `access_token` in the query string (a token in a URL ends up in logs) | `400` |
//! | a bearer token, when tokens are configured (`Authorization: Bearer …`, compared in constant time against SHA-256 digests) | `401` + `WWW-Authenticate` |
//! | with OAuth (`HttpOptions::oauth`), a valid access token for this resource, with the required scopes (the `oauth` module has the details) | `401` / `403` + `WWW-Authenticate`; `503` before the issuer's keys are loaded |
//! | the caller (principal, or address without authentication) has fewer than [`HttpOptions::max_connections_per_caller`] requests in progress (`http/fairness.rs`) | `429` + `Retry-After`, `Connection: close` |
//! | method is POST | `405`, `Allow: POST` |
//! | `Content-Type: application/json` | `415` |
//! | `Accept` allows `application/json` or `text/event-stream` (none sent counts as both) | `406` |
//! | body at most [`HttpOptions::max_body_bytes`] | `413` |
//! | one JSON-RPC message (not a batch), parsable | `400` (`-32700` / `-32600`) |
//! | `_meta` names the protocol version and the client's capabilities | `400` (`-32602`) |
//! | `MCP-Protocol-Version` equals `_meta`'s version | `400` (`-32020`) |
//! | the version is one this server speaks | `400` (`-32022`, `data: {supported, requested}`) |
//! | `Mcp-Method` equals `method`; `Mcp-Name` equals `params.name` / `params.uri` for `tools/call`, `resources/read`, `prompts/get` (`=?base64?…?=` decoded) | `400` (`-32020`) |
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

mod fairness;
mod health;
mod legacy;
#[cfg(feature = "oauth")]
pub mod oauth;

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::era::{modern_caller, modern_meta};
use super::router;
use super::shared::Shared;
use crate::error::{Error, InvalidRequest, code};
use crate::jsonrpc::{Incoming as Message, RawParams, RequestId, error_line};
use crate::mcp::ProtocolVersion;
use crate::mcp::modern::META_PROTOCOL_VERSION;
use crate::session::peer::{Out, PRINCIPAL, Peer, REQUEST_PEER, SESSION_ID};

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
    /// How long a client may take to send a request's headers (default 10 s).
    pub header_timeout: Duration,
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
            stream_after: Duration::from_secs(1),
            keep_alive: Duration::from_secs(15),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

/// One accepted bearer token: its name (the principal the audit names) and the SHA-256 of the
/// token (the token itself is not kept).
#[derive(Clone)]
pub struct BearerToken {
    name: String,
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerToken").field("name", &self.name).finish_non_exhaustive()
    }
}

impl BearerToken {
    /// A token named `name`.
    pub fn new(name: impl Into<String>, token: &str) -> Self {
        Self { name: name.into(), digest: hmac_sha256::Hash::hash(token.as_bytes()) }
    }

    /// Tokens from text, one a line: `NAME:TOKEN`, or a bare `TOKEN` (named `token-N`, its line).
    /// Blank lines and lines starting with `#` are skipped. A token shorter than 16 characters is
    /// refused (guessable).
    pub fn parse_lines(text: &str) -> Result<Vec<BearerToken>, String> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, token) = match line.split_once(':') {
                // A name is letters, digits, `_`, `-`, `.`: a bare token keeps its `:`s.
                Some((name, token))
                    if !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) =>
                {
                    (name.to_owned(), token.trim())
                }
                _ => (format!("token-{}", i + 1), line),
            };
            if token.len() < 16 || token.contains(char::is_whitespace) {
                return Err(format!(
                    "line {}: a token is at least 16 characters without spaces (use e.g. `openssl rand -hex 32`)",
                    i + 1
                ));
            }
            out.push(BearerToken::new(name, token));
        }
        Ok(out)
    }
}

/// Whether `addr` is a loopback address (an HTTP server may bind it without authentication).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
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

/// The events of one streamed answer; dropping it (the client went away) cancels the call.
pub(crate) struct EventStream {
    events: mpsc::Receiver<Bytes>,
    _call: CancelOnDrop,
    /// The caller's share of requests in progress, held until the stream ends (`fairness`).
    held: Option<crate::session::fairness::Share>,
}

impl Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.events.poll_recv(cx).map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// Cancels a call when dropped (the client went away), unless it was disarmed (the call
/// finished): its token is cancelled and its task aborted, as a stdio cancellation does.
struct CancelOnDrop {
    call: Option<(CancellationToken, tokio::task::AbortHandle)>,
    /// A legacy session's call: forgotten there too, so its id can be used again.
    session: Option<(Arc<legacy::Session>, crate::jsonrpc::IdKey)>,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.call = None;
        self.session = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some((token, abort)) = self.call.take() {
            token.cancel();
            abort.abort();
        }
        if let Some((session, key)) = self.session.take() {
            session.finished(&key);
        }
    }
}

type Reply = Response<Answer>;

/// How long a client may take to send a request's body once its headers are in.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

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
    pub(crate) sessions: legacy::Sessions,
    /// Each caller's requests in progress ([`HttpOptions::max_connections_per_caller`]).
    pub(crate) requests: Arc<crate::session::fairness::Shares>,
    /// OAuth resource-server mode, running.
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<Arc<oauth::OAuth>>,
}

/// Who sent a request, once [`checked`]: the principal the audit names (none without
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
    fn named(principal: String) -> Self {
        Authenticated {
            principal: Some(Arc::from(principal)),
            caller: None,
            #[cfg(feature = "oauth")]
            scopes: None,
        }
    }
}

/// Accepts connections until `shutdown`, then lets calls in flight finish (the server's grace
/// period) and returns.
pub(crate) async fn serve(
    endpoint: Arc<Endpoint>,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let slots = Arc::new(Semaphore::new(endpoint.options.max_connections.max(1)));
    // The gateway's tool list changes reach the legacy sessions' notification streams (modern
    // clients hear them on their `subscriptions/listen` streams).
    if let Some(availability) = endpoint.shared.availability.as_ref().filter(|a| a.may_change()) {
        let mut changes = availability.changes();
        let endpoint = endpoint.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => match changed {
                        Ok(()) => endpoint.sessions.tools_changed(),
                        Err(_) => return,
                    },
                    () = endpoint.draining.cancelled() => return,
                }
            }
        });
    }
    // The authorization server's keys: loaded now, kept fresh while the server accepts.
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &endpoint.oauth {
        tokio::spawn(oauth.keys.clone().keep_fresh(endpoint.draining.clone()));
    }
    let connections = crate::task::TaskTracker::new();
    let overflow = health::Overflow::new();
    tracing::info!(address = %endpoint.local, "serving MCP over Streamable HTTP at http://{}/mcp", endpoint.local);
    loop {
        // Always accepted: a connection over the limit is served in overflow mode (health
        // answers, `503` for the rest), so a client holding every slot cannot silence `/healthz`.
        let (stream, remote) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            overflow.serve(&endpoint, stream, &connections);
            continue;
        };
        let endpoint = endpoint.clone();
        let stop = shutdown.clone();
        let header_timeout = endpoint.options.header_timeout;
        connections.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let endpoint = endpoint.clone();
                async move { Ok::<_, Infallible>(handle(&endpoint, request, remote).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    // Draining: no new connection; notification streams and `subscriptions/listen` streams end
    // now (they would hold the server open); answers in progress get the grace period, then
    // every call still running is cancelled.
    endpoint.sessions.close_streams();
    endpoint.shared.input_closed.cancel();
    connections.close();
    let grace = endpoint.shared.config.shutdown_grace;
    if tokio::time::timeout(grace, connections.wait()).await.is_err() {
        endpoint.stopping.cancel();
        connections.wait().await;
    }
    endpoint.stopping.cancel();
    endpoint.sessions.end_all();
    Ok(())
}

/// One HTTP request, from `remote`.
async fn handle(endpoint: &Endpoint, request: Request<Incoming>, remote: SocketAddr) -> Reply {
    if let Some(reply) = health::answer(endpoint, request.uri().path()) {
        return reply;
    }
    match request.uri().path() {
        "/mcp" => {
            let origin = request.headers().get(header::ORIGIN).cloned();
            let reply = if request.method() == Method::OPTIONS {
                preflight(endpoint, &request)
            } else {
                match checked(endpoint, &request).await {
                    Err(refusal) => *refusal,
                    Ok(auth) => fairness::admitted(endpoint, request, auth, remote).await,
                }
            };
            with_cors(origin, reply)
        }
        _path => {
            // Protected Resource Metadata: no token, but the same Host and Origin checks.
            #[cfg(feature = "oauth")]
            if let Some(oauth) = endpoint.oauth.as_ref().filter(|o| o.serves_metadata(_path)) {
                let origin = request.headers().get(header::ORIGIN).cloned();
                let reply = match allowed_here(endpoint, request.headers()) {
                    Err(refusal) => *refusal,
                    Ok(()) => oauth.metadata(request.method()),
                };
                return with_cors(origin, reply);
            }
            plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp\n")
        }
    }
}

/// A browser's origin, once allowed, is told so on the answer (CORS).
fn with_cors(origin: Option<HeaderValue>, mut reply: Reply) -> Reply {
    if let Some(origin) = origin
        && reply.status() != StatusCode::FORBIDDEN
    {
        let h = reply.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-session-id, www-authenticate"),
        );
    }
    reply
}

/// A browser's CORS preflight: allowed only for an allowed `Host` and `Origin` (no token: a
/// preflight never carries one; the request that follows is checked in full).
fn preflight(endpoint: &Endpoint, request: &Request<Incoming>) -> Reply {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    if !host_allowed(endpoint, host) || !origin.is_some_and(|o| origin_allowed(endpoint, o)) {
        return refused(StatusCode::FORBIDDEN, "requests from that Origin are not allowed");
    }
    let mut reply = empty(StatusCode::NO_CONTENT);
    let h = reply.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("POST, GET, DELETE"));
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id",
        ),
    );
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    reply
}

/// Host, Origin, authentication (before the method: nothing is revealed to a stranger). The
/// caller, when requests authenticate.
async fn checked(endpoint: &Endpoint, request: &Request<Incoming>) -> Result<Authenticated, Box<Reply>> {
    let headers = request.headers();
    allowed_here(endpoint, headers)?;
    if request.uri().query().is_some_and(names_access_token) {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &endpoint.oauth {
            return Err(Box::new(oauth.token_in_query()));
        }
        return Err(Box::new(refused(
            StatusCode::BAD_REQUEST,
            "send the token in the Authorization header, never in the URL",
        )));
    }
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &endpoint.oauth {
        return oauth.authenticate(headers).await;
    }
    if !endpoint.options.tokens.is_empty() {
        if headers.get_all(header::AUTHORIZATION).iter().count() > 1 {
            return Err(Box::new(refused(
                StatusCode::BAD_REQUEST,
                "send one Authorization header, not several",
            )));
        }
        let presented = headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
        let token = presented.and_then(|h| {
            let (scheme, token) = h.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
        let known = token.and_then(|token| {
            let digest = hmac_sha256::Hash::hash(token.as_bytes());
            // Every digest is compared, each in constant time: no early exit tells which.
            endpoint
                .options
                .tokens
                .iter()
                .fold(None, |found, t| if constant_time_eq(&t.digest, &digest) { Some(t) } else { found })
        });
        if let Some(token) = known {
            return Ok(Authenticated::named(format!("token:{}", token.name)));
        }
        let challenge = if presented.is_some() {
            r#"Bearer realm="teaagent", error="invalid_token""#
        } else {
            r#"Bearer realm="teaagent""#
        };
        let mut reply =
            refused(StatusCode::UNAUTHORIZED, "a valid bearer token is required (Authorization: Bearer …)");
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        return Err(Box::new(reply));
    }
    Ok(Authenticated::default())
}

/// Whether a query string carries `access_token` (RFC 6750 §2.3's form, refused here), in any
/// spelling: pairs split at `&` or `;`, each percent-decoded (`%61ccess_token`,
/// `access_token%3D…`) before its name is compared, case-insensitively, spaces (and `+`) around
/// it ignored.
fn names_access_token(query: &str) -> bool {
    query.split(['&', ';']).any(|pair| {
        let decoded = percent_decoded(pair).replace('+', " ");
        let key = decoded.split('=').next().unwrap_or("");
        key.trim().eq_ignore_ascii_case("access_token")
    })
}

/// `text` with every `%XX` decoded (invalid escapes kept as they are; bytes that are not UTF-8
/// replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) =
                (bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b)))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `Host` and `Origin` (DNS rebinding protection). A request needs exactly one `Host` that is
/// a host name (or address) and an optional numeric port, else `400` (RFC 9112 §3.2).
fn allowed_here(endpoint: &Endpoint, headers: &HeaderMap) -> Result<(), Box<Reply>> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (Some(host), None) => host.to_str().ok().filter(|h| !host_name(h).is_empty()),
        _ => None,
    };
    let Some(host) = host else {
        return Err(Box::new(refused(
            StatusCode::BAD_REQUEST,
            "a request needs exactly one Host header: a host name and an optional numeric port",
        )));
    };
    if !host_allowed(endpoint, host) {
        return Err(Box::new(refused(
            StatusCode::FORBIDDEN,
            "this server does not answer to that Host (DNS rebinding protection)",
        )));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(endpoint, origin) {
            return Err(Box::new(refused(
                StatusCode::FORBIDDEN,
                "requests from that Origin are not allowed",
            )));
        }
    }
    Ok(())
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// `host` without its port (an IPv6 literal keeps its brackets).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        // `[v6]` or `[v6]:port`, nothing else after the bracket.
        return match host.find(']') {
            Some(end) if end + 1 == host.len() => host,
            Some(end)
                if host[end + 1..]
                    .strip_prefix(':')
                    .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit())) =>
            {
                &host[..=end]
            }
            _ => "",
        };
    }
    let name = match host.rsplit_once(':') {
        // A port is digits, and only digits: `localhost:evil.com` names no host.
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        Some(_) => return "",
        None => host,
    };
    // A registered name or an IPv4 address: letters, digits, `-`, `.`, `_`.
    let valid = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if valid { name } else { "" }
}

fn host_allowed(endpoint: &Endpoint, host: &str) -> bool {
    let name = host_name(host);
    if LOOPBACK_NAMES.iter().any(|l| name.eq_ignore_ascii_case(l)) {
        return true;
    }
    let configured = &endpoint.options.allowed_hosts;
    if configured.iter().any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name)) {
        return true;
    }
    #[cfg(feature = "oauth")]
    if endpoint.oauth.as_ref().is_some_and(|o| o.is_resource_host(name)) {
        return true;
    }
    // A public bind with no list: whatever name the client used (authentication guards it).
    !is_loopback(&endpoint.local) && configured.is_empty()
}

fn origin_allowed(endpoint: &Endpoint, origin: &str) -> bool {
    let port = endpoint.local.port();
    let loopback = LOOPBACK_NAMES.iter().any(|name| {
        origin.eq_ignore_ascii_case(&format!("http://{name}:{port}"))
            || origin.eq_ignore_ascii_case(&format!("https://{name}:{port}"))
    });
    loopback || endpoint.options.allowed_origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
}

/// The MCP endpoint.
async fn mcp(endpoint: &Endpoint, request: Request<Incoming>, auth: Authenticated) -> Reply {
    // A legacy session's notification stream and its end.
    if let Some(id) = text(request.headers(), "mcp-session-id") {
        if request.method() == Method::GET {
            return endpoint.sessions.listen(endpoint, &id, request.headers(), auth.principal.as_deref());
        }
        if request.method() == Method::DELETE {
            return endpoint.sessions.end(&id, auth.principal.as_deref());
        }
    }
    if request.method() != Method::POST {
        let mut reply =
            refused(StatusCode::METHOD_NOT_ALLOWED, "the MCP endpoint takes POST (protocol 2026-07-28)");
        reply.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return reply;
    }
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let json = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        );
    }
    let accepts = Accepts::of(&headers);
    if !accepts.json && !accepts.stream {
        return refused(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow application/json or text/event-stream",
        );
    }
    let limit = endpoint.options.max_body_bytes;
    // A declared length over the limit is refused at once, before a byte of the body is read.
    if let Some(declared) =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        && declared > limit as u64
    {
        return refused(StatusCode::PAYLOAD_TOO_LARGE, &format!("the body is larger than {limit} bytes"));
    }
    let reading = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, limit).collect());
    let Ok(read) = reading.await else {
        return refused(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time");
    };
    let body = match read {
        Ok(body) => body.to_bytes(),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            return refused(StatusCode::PAYLOAD_TOO_LARGE, &format!("the body is larger than {limit} bytes"));
        }
        Err(_) => return refused(StatusCode::BAD_REQUEST, "the body could not be read"),
    };
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let error = Error::InvalidRequest { reason: InvalidRequest::BatchNotSupported };
        return rpc_error(StatusCode::BAD_REQUEST, None, &error);
    }
    let message = match Message::parse_line(body.to_vec()) {
        Ok(message) => message,
        Err(rejected) => {
            return rpc_error(StatusCode::BAD_REQUEST, rejected.id.as_ref(), &Error::from(&rejected.reason));
        }
    };
    // The era, per request (module docs, "Both eras").
    let header_version = text(&headers, "mcp-protocol-version");
    let legacy_header =
        header_version.as_deref().is_some_and(|v| ProtocolVersion::LEGACY.iter().any(|l| l.as_str() == v));
    let modern_header = header_version.is_some() && !legacy_header;
    if !modern_header {
        if let Some(session) = text(&headers, "mcp-session-id") {
            let context = legacy::Context { accepts, auth, version: header_version };
            return endpoint.sessions.message(endpoint, &session, message, context).await;
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
    let caller = match modern_checks(&headers, &request.method, request.params.as_ref()) {
        Ok(caller) => caller,
        Err((status, error)) => return rpc_error(status, Some(&request.id), &error),
    };
    let route = Route { log_level: caller.log_level, caller, auth, session: None };
    answer(endpoint, request.id, request.method, request.params, route, accepts).await
}

/// What the client accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts {
    json: bool,
    stream: bool,
}

impl Accepts {
    fn of(headers: &HeaderMap) -> Self {
        let values: Vec<&str> =
            headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
        if values.is_empty() {
            return Self { json: true, stream: true };
        }
        let mut out = Self { json: false, stream: false };
        for range in values.iter().flat_map(|v| v.split(',')) {
            let media = range.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            match media.as_str() {
                "*/*" => (out.json, out.stream) = (true, true),
                "application/json" | "application/*" => out.json = true,
                "text/event-stream" | "text/*" => out.stream = true,
                _ => {}
            }
        }
        out
    }
}

/// A header's value as text, with `=?base64?…?=` decoded, trimmed.
fn text(headers: &HeaderMap, name: &str) -> Option<String> {
    let raw = headers.get(name)?.to_str().ok()?.trim();
    if let Some(encoded) = raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        return decode_base64(encoded).and_then(|bytes| String::from_utf8(bytes).ok());
    }
    Some(raw.to_owned())
}

/// Standard base64, with or without padding.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT.decode(text).ok()
}

/// The modern checks of the module docs' table, in order; the caller's session on success.
fn modern_checks(
    headers: &HeaderMap,
    method: &str,
    params: Option<&RawParams>,
) -> Result<Arc<super::SessionInfo>, (StatusCode, Error)> {
    let bad = |error| (StatusCode::BAD_REQUEST, error);
    let mismatch = |details: String| bad(Error::HeaderMismatch { details });
    let meta = modern_meta(params).map_err(bad)?;
    let meta_version = meta.as_ref().and_then(|m| m.protocol_version.clone());
    // `_meta` first: without it nothing else can be compared.
    let invalid = |details: String| {
        bad(Error::InvalidParams { reason: crate::error::ParamsProblem::InvalidMeta, details })
    };
    let Some(meta_version) = meta_version else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_PROTOCOL_VERSION}\"]`"
        )));
    };
    if meta.as_ref().is_some_and(|m| m.client_capabilities.is_none()) {
        return Err(invalid(
            "every request of protocol 2026-07-28 carries `_meta[\"io.modelcontextprotocol/clientCapabilities\"]` (`{}` for none)".into(),
        ));
    }
    match text(headers, "mcp-protocol-version") {
        None => return Err(mismatch("the MCP-Protocol-Version header is missing".into())),
        Some(v) if v != meta_version => {
            return Err(mismatch(format!("MCP-Protocol-Version is {v:?}, but _meta names {meta_version:?}")));
        }
        Some(_) => {}
    }
    if !ProtocolVersion::MODERN.iter().any(|v| v.as_str() == meta_version) {
        return Err(bad(Error::UnsupportedVersion { requested: meta_version }));
    }
    match text(headers, "mcp-method") {
        None => return Err(mismatch("the Mcp-Method header is missing".into())),
        Some(m) if m != method => {
            return Err(mismatch(format!("Mcp-Method is {m:?}, but the body's method is {method:?}")));
        }
        Some(_) => {}
    }
    if matches!(method, "tools/call" | "resources/read" | "prompts/get") {
        let key = if method == "resources/read" { "uri" } else { "name" };
        /// Only the two members compared (everything else, a large argument included, is
        /// skipped by the parser, not built).
        #[derive(serde::Deserialize)]
        struct Named {
            name: Option<String>,
            uri: Option<String>,
        }
        let named = params
            .and_then(|p| serde_json::from_str::<Named>(p.get()).ok())
            .and_then(|n| if method == "resources/read" { n.uri } else { n.name });
        match (text(headers, "mcp-name"), named) {
            (None, _) => return Err(mismatch("the Mcp-Name header is missing".into())),
            (Some(h), Some(b)) if h == b => {}
            (Some(h), b) => {
                return Err(mismatch(format!(
                    "Mcp-Name is {h:?}, but the body's {key} is {:?}",
                    b.unwrap_or_default()
                )));
            }
        }
    }
    // A method this server does not have is answered by the pipeline itself (`404` from
    // `status_of`): the router is the one list of methods.
    modern_caller(method, meta).map_err(|e| {
        let status = if matches!(e, Error::MethodNotFound { .. }) {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::BAD_REQUEST
        };
        (status, e)
    })
}

/// How one request runs: who asks, at which log level, on whose behalf, and (legacy) in which
/// session.
pub(crate) struct Route {
    pub(crate) caller: Arc<super::SessionInfo>,
    pub(crate) log_level: Option<crate::mcp::LoggingLevel>,
    /// The caller (its principal, and with OAuth its scopes).
    pub(crate) auth: Authenticated,
    /// The legacy session: its peer (requests to the client, answered on other POSTs) and its
    /// calls in flight (`notifications/cancelled`). `None`: a modern request, on its own.
    pub(crate) session: Option<Arc<legacy::Session>>,
}

/// How a request's handling ended, as far as its answer is concerned.
enum Ended {
    /// Its response line.
    Answered(Vec<u8>),
    /// Cancelled (no response is sent for it).
    Cancelled,
}

/// Events queued for one streamed answer before notifications are dropped (a client that does
/// not read its stream cannot make the server hold more).
const QUEUED_EVENTS: usize = 1024;

/// Runs the request through the pipeline and answers it (module docs, "JSON or a stream").
async fn answer(
    endpoint: &Endpoint,
    id: RequestId,
    method: String,
    params: Option<RawParams>,
    route: Route,
    accepts: Accepts,
) -> Reply {
    let Route { caller, log_level, auth, session } = route;
    // With OAuth, the call's own scopes (its tool's tier), before anything runs.
    #[cfg(feature = "oauth")]
    if let (Some(oauth), Some(scopes)) = (&endpoint.oauth, &auth.scopes)
        && let Err(refusal) =
            oauth.authorize(&endpoint.shared.registry, scopes, &id, &method, params.as_ref())
    {
        return *refusal;
    }
    let (principal, counted_as) = (auth.principal, auth.caller);
    let shared = endpoint.shared.clone();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Out>();
    let peer = match &session {
        // Requests to the client (an approval) need a stream to go out on.
        Some(session) => session.peer.answering_on(out_tx, accepts.stream),
        None => {
            let peer = Peer::new(out_tx);
            peer.choose_modern();
            peer
        }
    };
    let cancel = endpoint.stopping.child_token();
    let key = id.key().clone();
    // A legacy session's call is in its table before it starts: a `notifications/cancelled`
    // finds it, and a second request with its id is refused.
    if let Some(session) = &session
        && !session.started(key.clone(), cancel.clone())
    {
        let error = Error::InvalidRequest { reason: InvalidRequest::DuplicateId };
        return json(StatusCode::OK, error_line(Some(&id), &error.to_error_object()));
    }
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel::<Vec<u8>>();
    let session_id = session.as_ref().map(|s| s.id.clone());
    let task = {
        let cancel = cancel.clone();
        let session = session.clone();
        let handling = async move {
            let dispatched = router::dispatch(&shared, &id, &method, params, cancel, Some(caller));
            let line = crate::logging::for_request(log_level, dispatched).await;
            // Gone from the session's table means cancelled while running: no response.
            let wanted = session.as_ref().is_none_or(|s| s.finished(id.key()));
            if wanted {
                let _ = done_tx.send(line);
            }
        };
        let scoped = PRINCIPAL.scope(principal, SESSION_ID.scope(session_id, handling));
        let scoped = crate::session::fairness::CALLER.scope(counted_as, scoped);
        endpoint.shared.tracker.spawn(REQUEST_PEER.scope(peer, scoped))
    };
    if let Some(session) = &session {
        session.running(&key, task.abort_handle());
    }
    // Dropped with the answer (the client left, in either form): the call is cancelled.
    let call = CancelOnDrop {
        call: Some((cancel, task.abort_handle())),
        session: session.as_ref().map(|s| (s.clone(), key.clone())),
    };
    // JSON while the call is quick and quiet.
    let deadline = tokio::time::sleep(endpoint.options.stream_after);
    tokio::pin!(deadline);
    let mut early: Vec<Vec<u8>> = Vec::new();
    let ended = loop {
        tokio::select! {
            biased;
            line = &mut done_rx => break Some(line.map_or(Ended::Cancelled, Ended::Answered)),
            event = out_rx.recv() => match event {
                Some(Out::Line(line)) if accepts.stream => { early.push(line); break None; }
                Some(_) => {} // notifications are dropped for a client that takes JSON only
                None => {}
            },
            () = &mut deadline, if accepts.stream => break None,
        }
    };
    // Notifications sent just before the response still go out (then as a stream).
    if accepts.stream {
        while let Ok(Out::Line(line)) = out_rx.try_recv() {
            early.push(line);
        }
    }
    match ended {
        Some(Ended::Answered(line)) if early.is_empty() => {
            call.disarm();
            let status = status_of(&line);
            return json(status, line);
        }
        Some(Ended::Answered(line)) => {
            call.disarm();
            let (events_tx, events_rx) = mpsc::channel::<Bytes>(early.len() + 1);
            for event in early.iter().chain(std::iter::once(&line)) {
                let _ = events_tx.try_send(sse_event(event));
            }
            return event_stream(events_rx, None);
        }
        // Cancelled by the client (`notifications/cancelled`): nothing to say.
        Some(Ended::Cancelled) => {
            call.disarm();
            return empty(StatusCode::ACCEPTED);
        }
        None => {}
    }
    // A stream from here on.
    let (events_tx, events_rx) = mpsc::channel::<Bytes>(QUEUED_EVENTS);
    for event in &early {
        let _ = events_tx.try_send(sse_event(event));
    }
    let keep_alive = endpoint.options.keep_alive;
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(keep_alive);
        tick.tick().await;
        let mut dropped = 0u64;
        loop {
            tokio::select! {
                biased;
                line = &mut done_rx => {
                    // Notifications queued before the response go first.
                    while let Ok(Out::Line(event)) = out_rx.try_recv() {
                        if events_tx.try_send(sse_event(&event)).is_err() {
                            dropped += 1;
                        }
                    }
                    if let Ok(line) = line {
                        // The response always goes, however slowly the client reads.
                        let _ = events_tx.send(sse_event(&line)).await;
                    }
                    break;
                }
                event = out_rx.recv() => {
                    if let Some(Out::Line(event)) = event {
                        match events_tx.try_send(sse_event(&event)) {
                            Ok(()) => {}
                            Err(mpsc::error::TrySendError::Full(_)) => dropped += 1,
                            Err(mpsc::error::TrySendError::Closed(_)) => break,
                        }
                    }
                }
                _ = tick.tick() => {
                    if let Err(mpsc::error::TrySendError::Closed(_)) =
                        events_tx.try_send(Bytes::from_static(b": keep-alive\n\n"))
                    {
                        break;
                    }
                }
            }
        }
        if dropped > 0 {
            tracing::warn!(dropped, "a client read its event stream too slowly: notifications were dropped");
        }
    });
    event_stream(events_rx, Some(call))
}

/// An SSE answer of `events`; `call` is cancelled when it is dropped.
fn event_stream(events: mpsc::Receiver<Bytes>, call: Option<CancelOnDrop>) -> Reply {
    let call = call.unwrap_or(CancelOnDrop { call: None, session: None });
    let mut reply = Response::new(Answer::Stream(EventStream { events, _call: call, held: None }));
    let h = reply.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    reply
}

/// `data: <one JSON line>` as an SSE event.
fn sse_event(line: &[u8]) -> Bytes {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let mut event = Vec::with_capacity(line.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(line);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The status of a finished answer: `400` for a missing client capability, `404` for an unknown
/// method, else `200`.
fn status_of(line: &[u8]) -> StatusCode {
    /// The top level of an answer, as far as its status goes (the rest is skipped, not built).
    #[derive(serde::Deserialize)]
    struct Answered {
        error: Option<Failed>,
    }
    #[derive(serde::Deserialize)]
    struct Failed {
        code: i32,
        data: Option<Reason>,
    }
    #[derive(serde::Deserialize)]
    struct Reason {
        reason: Option<String>,
    }
    // Only an error changes the status, and an error answer always has this member.
    if memchr::memmem::find(line, b"\"error\":{").is_none() {
        return StatusCode::OK;
    }
    let Ok(Answered { error: Some(failed) }) = serde_json::from_slice::<Answered>(line) else {
        return StatusCode::OK;
    };
    let reason = failed.data.and_then(|d| d.reason);
    match failed.code {
        code::MISSING_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        // An unknown method, not an unknown tool (same code, answered in-band).
        code::METHOD_NOT_FOUND if reason.as_deref() == Some("unknown_method") => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
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

fn json(status: StatusCode, line: Vec<u8>) -> Reply {
    let mut line = line;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::from(line))));
    *reply.status_mut() = status;
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    reply
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, error: &Error) -> Reply {
    json(status, error_line(id, &error.to_error_object_for(true)))
}

/// A refusal before any JSON-RPC: a JSON-RPC error without an id, so MCP clients can show it.
fn refused(status: StatusCode, message: &str) -> Reply {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code::INVALID_REQUEST, "message": message}});
    json(status, body.to_string().into_bytes())
}

fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::from_static(text.as_bytes()))));
    *reply.status_mut() = status;
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    reply
}

fn empty(status: StatusCode) -> Reply {
    let mut reply = Response::new(Answer::Full(Full::new(Bytes::new())));
    *reply.status_mut() = status;
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_header_values_decode() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("4pyTIMOgIGxhIG1vZGU=").map(String::from_utf8),
            Some(Ok("✓ à la mode".into()))
        );
        assert_eq!(decode_base64("a$=="), None);
    }

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("localhost:8787"), "localhost");
        assert_eq!(host_name("[::1]:8787"), "[::1]");
        assert_eq!(host_name("example.com"), "example.com");
        assert_eq!(host_name("[::1]evil.com"), "");
        assert_eq!(host_name("[::1]:x"), "");
    }

    #[test]
    fn tokens_parse_one_a_line_and_short_ones_are_refused() {
        let tokens =
            BearerToken::parse_lines("# comment\nalice:0123456789abcdef0123\n\nfedcba9876543210fedcba\n")
                .expect("ok");
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].name, "alice");
        assert_eq!(tokens[1].name, "token-4");
        assert!(BearerToken::parse_lines("bob:short").expect_err("short").contains("line 1"));
    }

    #[test]
    fn a_token_in_the_query_is_noticed() {
        assert!(names_access_token("access_token=abc"));
        assert!(names_access_token("x=1&ACCESS_TOKEN=abc"));
        assert!(names_access_token("access%5Ftoken=abc"));
        assert!(!names_access_token("token=abc&access_tokens=1"));
        for spelling in [
            "%61ccess_token=abc",
            "access_token%3Dabc",
            "x=1;access_token=abc",
            "Access%5FToken=a",
            "%20access_token=a",
            "access_token",
        ] {
            assert!(names_access_token(spelling), "{spelling}");
        }
        assert!(!names_access_token("tokens=access_token"));
    }

    #[test]
    fn accept_headers() {
        let mut h = HeaderMap::new();
        let a = Accepts::of(&h);
        assert!(a.json && a.stream);
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        let a = Accepts::of(&h);
        assert!(a.json && a.stream);
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        let a = Accepts::of(&h);
        assert!(!a.json && !a.stream);
    }
}
