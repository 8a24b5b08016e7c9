//! The legacy era over Streamable HTTP (protocols 2025-03-26 … 2025-11-25): sessions.
//!
//! - **`initialize`** (a POST without `Mcp-Session-Id`) opens a session: 128 random bits in hex
//!   (visible ASCII), answered in the `Mcp-Session-Id` header. A session belongs to the
//!   principal that opened it (another token gets `404`, as for an unknown session).
//! - **Its POSTs** carry one request, notification or response. A request runs through the
//!   pipeline under the session's negotiated version and is answered as JSON or as a stream
//!   on its own POST (module docs of [`super`]); requests the server sends the client while it
//!   runs (an approval's `elicitation/create`) go out on that stream, and the client's answer,
//!   POSTed as a JSON-RPC response, is accepted with `202`. `notifications/cancelled` cancels a
//!   call in flight (`202`; the cancelled POST ends without a response). `logging/setLevel` sets
//!   the session's own level. A `MCP-Protocol-Version` header other than the negotiated
//!   version is `400`.
//! - **GET** with the session's id opens its notification stream (one at a time: a second is
//!   `409`): tool list changes of the gateway. **DELETE** ends the session (`204`).
//! - At most [`MAX_SESSIONS`] sessions (`503` with `Retry-After` beyond), and
//!   [`MAX_SESSIONS_PER_PRINCIPAL`] per caller: a caller at its quota that opens another ends
//!   its own longest-idle one, so no client can crowd out the others. One idle for [`IDLE`] is
//!   forgotten. An unknown or ended session is `404`: the client starts a new one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use hyper::StatusCode;
use hyper::header::{self, HeaderMap, HeaderValue};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Authenticated;
use super::Endpoint;
use super::Reply;
use super::answer::{Route, answer};
use super::reply::{empty, json, refused, rpc_error};
use super::request::Accepts;
use super::session::{IDLE, MAX_SESSIONS, MAX_SESSIONS_PER_PRINCIPAL, Session, Sessions, lock, session_id};
use super::stream::{event_stream, sse_event};
use crate::error::{Error, InvalidRequest};
use crate::jsonrpc::{IdKey, Incoming as Message, Request};
use crate::server::era::initialize_answer;
use crate::session::peer::Peer;

/// What a POST of a session brings besides its message.
pub(crate) struct Context {
    pub(crate) accepts: Accepts,
    pub(crate) auth: Authenticated,
    pub(crate) version: Option<String>,
}

impl Sessions {
    /// The session `id`, if it exists, is not expired and belongs to `principal`.
    fn get(&self, id: &str, principal: Option<&str>) -> Option<Arc<Session>> {
        let mut table = lock(&self.table);
        let session = table.get(id)?.clone();
        let now = Instant::now();
        let mut last_used = lock(&session.last_used);
        if now.saturating_duration_since(*last_used) > IDLE {
            drop(last_used);
            table.remove(id);
            session.end();
            return None;
        }
        if session.principal.as_deref() != principal {
            return None;
        }
        *last_used = now;
        drop(last_used);
        Some(session)
    }

    /// `initialize`: a new session.
    pub(crate) fn initialize(
        &self,
        endpoint: &Endpoint,
        request: &Request,
        principal: Option<Arc<str>>,
    ) -> Reply {
        let params = request.params.as_ref().map(|p| p.get());
        let (line, info) = match initialize_answer(&request.id, params, &endpoint.shared.announcement) {
            Ok(answer) => answer,
            Err(line) => return json(StatusCode::BAD_REQUEST, line),
        };
        let id = {
            let mut table = lock(&self.table);
            table.retain(|_, s| {
                let live = lock(&s.last_used).elapsed() <= IDLE;
                if !live {
                    s.end();
                }
                live
            });
            // A caller at its quota makes room by ending its own longest-idle session: a client
            // that leaks sessions only ever ends its own, never another caller's.
            let mine: Vec<(String, Instant)> = table
                .iter()
                .filter(|(_, s)| s.principal == principal)
                .map(|(id, s)| (id.clone(), *lock(&s.last_used)))
                .collect();
            if mine.len() >= MAX_SESSIONS_PER_PRINCIPAL
                && let Some((oldest, _)) = mine.iter().min_by_key(|(_, used)| *used)
                && let Some(ended) = table.remove(oldest)
            {
                ended.end();
            }
            if table.len() >= MAX_SESSIONS {
                drop(table);
                let mut reply = refused(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many sessions are open; end one (DELETE) or retry later",
                );
                reply.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
                return reply;
            }
            let id = session_id();
            let (dead, _) = mpsc::unbounded_channel();
            let peer = Peer::new(dead);
            peer.initialize(info);
            let session = Session {
                id: Arc::from(id.as_str()),
                peer,
                principal,
                last_used: Mutex::new(Instant::now()),
                level: Mutex::new(None),
                stream: Mutex::new(None),
                stream_closed: CancellationToken::new(),
                in_flight: Mutex::new(HashMap::new()),
            };
            table.insert(id.clone(), Arc::new(session));
            id
        };
        tracing::info!("legacy session opened over HTTP");
        let mut reply = json(StatusCode::OK, line);
        if let Ok(value) = HeaderValue::from_str(&id) {
            reply.headers_mut().insert(super::request::SESSION_ID, value);
        }
        reply
    }

    /// A POST of session `id`.
    pub(crate) async fn message(
        &self,
        endpoint: &Endpoint,
        id: &str,
        message: Message,
        context: Context,
    ) -> Reply {
        let Some(session) = self.get(id, context.auth.principal.as_deref()) else {
            return unknown_session();
        };
        let negotiated = session.peer.session().map(|s| s.version.as_str());
        if let Some(version) = &context.version
            && Some(version.as_str()) != negotiated
        {
            let error = Error::InvalidRequest { reason: InvalidRequest::SessionVersion };
            let id = match &message {
                Message::Request(r) => Some(&r.id),
                _ => None,
            };
            return rpc_error(StatusCode::BAD_REQUEST, id, &error);
        }
        match message {
            Message::Response(response) => {
                session.peer.complete(response);
                empty(StatusCode::ACCEPTED)
            }
            Message::Notification(notification) => {
                if notification.method == "notifications/cancelled"
                    && let Some(params) = notification.params.as_ref()
                    && let Ok(params) =
                        serde_json::from_str::<crate::mcp::notifications::CancelledParams>(params.get())
                    && let Some(key) = IdKey::of_value(&params.request_id)
                {
                    session.cancel(&key);
                }
                empty(StatusCode::ACCEPTED)
            }
            Message::Request(request) => match request.method.as_str() {
                "initialize" => {
                    let error = Error::InvalidRequest { reason: InvalidRequest::AlreadyInitialized };
                    rpc_error(StatusCode::BAD_REQUEST, Some(&request.id), &error)
                }
                "logging/setLevel" => {
                    let level = request
                        .params
                        .as_ref()
                        .map(|p| serde_json::from_str::<crate::mcp::logging::SetLevelParams>(p.get()));
                    match level {
                        Some(Ok(p)) => {
                            *lock(&session.level) = Some(p.level);
                            json(
                                StatusCode::OK,
                                crate::jsonrpc::result_line(&request.id, &serde_json::json!({})),
                            )
                        }
                        _ => {
                            let error = Error::InvalidParams {
                                reason: crate::error::ParamsProblem::Malformed,
                                details: "logging/setLevel takes {\"level\": …}".into(),
                            };
                            rpc_error(StatusCode::OK, Some(&request.id), &error)
                        }
                    }
                }
                // Written in protocol 2026-07-28: not in a session of the legacy era (as on stdio).
                method
                    if method == "server/discover"
                        || (method != "tools/call"
                            && crate::server::era::names_modern_version(request.params.as_ref())) =>
                {
                    let error = Error::InvalidRequest { reason: InvalidRequest::LegacyEra };
                    rpc_error(StatusCode::BAD_REQUEST, Some(&request.id), &error)
                }
                _ => {
                    let Some(caller) = session.peer.legacy() else { return unknown_session() };
                    let route = Route {
                        caller,
                        log_level: *lock(&session.level),
                        auth: context.auth,
                        session: Some(session.clone()),
                    };
                    answer(endpoint, request.id, request.method, request.params, route, context.accepts).await
                }
            },
        }
    }

    /// GET: the session's stream of notifications unrelated to a request.
    pub(crate) fn listen(
        &self,
        endpoint: &Endpoint,
        id: &str,
        headers: &HeaderMap,
        principal: Option<&str>,
    ) -> Reply {
        let Some(session) = self.get(id, principal) else { return unknown_session() };
        if !Accepts::of(headers).stream {
            return refused(StatusCode::NOT_ACCEPTABLE, "the notification stream is text/event-stream");
        }
        if session.stream_closed.is_cancelled() {
            return unknown_session();
        }
        let mut stream = lock(&session.stream);
        if stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return refused(StatusCode::CONFLICT, "this session's notification stream is already open");
        }
        let (tx, rx) = mpsc::channel(64);
        // Keep-alive comments: proxies keep it open, a client that left is noticed. The stream
        // ends when the session does (its last sender is dropped).
        let keep = tx.clone();
        let every = endpoint.options.keep_alive;
        let closed = session.stream_closed.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tokio::select! {
                    () = closed.cancelled() => return,
                    _ = tick.tick() => {
                        if let Err(mpsc::error::TrySendError::Closed(_)) =
                            keep.try_send(Bytes::from_static(b": keep-alive\n\n"))
                        {
                            return;
                        }
                    }
                }
            }
        });
        *stream = Some(tx);
        event_stream(rx, None)
    }

    /// DELETE: ends the session.
    pub(crate) fn end(&self, id: &str, principal: Option<&str>) -> Reply {
        let Some(session) = self.get(id, principal) else { return unknown_session() };
        lock(&self.table).remove(id);
        session.end();
        empty(StatusCode::NO_CONTENT)
    }

    /// Tells every open notification stream that the tool list changed.
    pub(crate) fn tools_changed(&self) {
        let line =
            crate::jsonrpc::notification_line("notifications/tools/list_changed", &serde_json::json!({}));
        for session in lock(&self.table).values() {
            if let Some(stream) = lock(&session.stream).as_ref() {
                let _ = stream.try_send(sse_event(&line));
            }
        }
    }

    /// Ends every notification stream (the server is stopping: they would hold it open).
    pub(crate) fn close_streams(&self) {
        for session in lock(&self.table).values() {
            session.close_stream();
        }
    }

    /// Ends every session (shutdown).
    pub(crate) fn end_all(&self) {
        for (_, session) in lock(&self.table).drain() {
            session.end();
        }
    }
}

fn unknown_session() -> Reply {
    refused(StatusCode::NOT_FOUND, "no such session (it ended or expired): send `initialize` again")
}
