//! The session's side of the wire that tools and the framework talk through: notifications,
//! requests of the server's own (e.g. `elicitation/create`) and the session state.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::backlog::Backlog;
use super::outbox::{Outbox, Put};
#[cfg(feature = "http")]
use super::request_lines::RequestLines;
use crate::jsonrpc::{ErrorObject, IdKey, RequestId, ResponseFromClient, notification_line};
use crate::mcp::{ClientCapabilities, Implementation, ProtocolVersion};

/// A message for the writer.
#[derive(Debug)]
pub(crate) enum Out {
    /// One complete line (with its `\n`).
    Line(Vec<u8>),
    /// Lines wait in the session's outbox (`session/outbox.rs`): take them all.
    Queued,
    /// Flush everything before this and stop; the sender is told when done.
    Close(oneshot::Sender<()>),
}

/// Who is asking: what `initialize` settled for the life of the process (legacy era), or what
/// one request's `_meta` says (modern era, where every request speaks for itself).
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The negotiated version (legacy) or the request's version (modern).
    pub version: ProtocolVersion,
    /// The client's capabilities.
    pub capabilities: ClientCapabilities,
    /// The client's name and version (a modern request may leave it out: then empty).
    pub client: Implementation,
    /// Modern era: the lowest level of `notifications/message` this request wants (none
    /// without it). Always `None` in the legacy era, where `logging/setLevel` sets the level.
    pub log_level: Option<crate::mcp::LoggingLevel>,
}

/// The era a process serves, fixed by its first message.
#[derive(Debug)]
pub(crate) enum Era {
    /// `initialize` came first: this is the session it settled.
    Legacy(Arc<SessionInfo>),
    /// A modern request (or `server/discover`) came first.
    Modern,
}

/// Why a request to the client got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// The client answered with a JSON-RPC error.
    #[error("the client answered with error {}: {}", .0.code, .0.message)]
    Rejected(ErrorObject),
    /// No answer in time.
    #[error("the client did not answer within {0:?}")]
    Timeout(Duration),
    /// The session ended first.
    #[error("the session ended before the client answered")]
    Closed,
    /// The peer speaks protocol `2026-07-28`, in which a server sends the client no requests
    /// (it asks through an `input_required` result instead).
    #[error(
        "protocol 2026-07-28 has no requests from server to client; ask through an input_required result"
    )]
    NotInThisEra,
}

/// A handle on the session with the client. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<Inner>,
}

struct Inner {
    out: Sink,
    /// Where one writer serves the whole session (stdio): what it shares with the senders.
    writer: Option<OneWriter>,
    session: Arc<Session>,
    /// Whether requests to the client can go out here (an HTTP answer the client takes as JSON
    /// only cannot carry one).
    requests: bool,
}

/// What a session whose lines all go to one writer (stdio) shares with that writer. Cheap to
/// clone.
#[derive(Debug, Default, Clone)]
pub(crate) struct OneWriter {
    /// What the writer has not written yet.
    pub(crate) backlog: Arc<Backlog>,
    /// Where the writer takes its lines from (its channel then carries only the news).
    pub(crate) outbox: Arc<Outbox>,
}

/// Where a peer's lines go.
enum Sink {
    /// A writer's channel (stdio; the server's own peer).
    Writer(mpsc::UnboundedSender<Out>),
    /// The answer of one Streamable HTTP request (`session/request_lines.rs`).
    #[cfg(feature = "http")]
    Request(Arc<RequestLines>),
}

/// What a session keeps whatever its messages go out on.
struct Session {
    era: OnceLock<Era>,
    pending: Mutex<HashMap<IdKey, oneshot::Sender<Result<Value, ErrorObject>>>>,
    next_id: AtomicU64,
}

impl Session {
    fn new() -> Self {
        Session { era: OnceLock::new(), pending: Mutex::new(HashMap::new()), next_id: AtomicU64::new(1) }
    }
}

impl Peer {
    pub(crate) fn new(out: mpsc::UnboundedSender<Out>) -> Self {
        Self::opening(out, None)
    }

    /// A peer whose lines all go to one writer (stdio), through `writer`'s outbox, counted
    /// against its backlog.
    pub(crate) fn with_one_writer(out: mpsc::UnboundedSender<Out>, writer: OneWriter) -> Self {
        Self::opening(out, Some(writer))
    }

    /// A new session's peer.
    fn opening(out: mpsc::UnboundedSender<Out>, writer: Option<OneWriter>) -> Self {
        Self::in_session(Sink::Writer(out), writer, Arc::new(Session::new()), true)
    }

    fn in_session(out: Sink, writer: Option<OneWriter>, session: Arc<Session>, requests: bool) -> Self {
        Self { inner: Arc::new(Inner { out, writer, session, requests }) }
    }

    /// The same session, with its messages going out on `out` (one HTTP response of a legacy
    /// session: a request to the client goes out there, and its answer, which arrives on
    /// another POST, reaches it through the session).
    /// `requests`: whether a request to the client can go out on `out` (else
    /// [`Peer::request`] fails at once with [`PeerError::Closed`]).
    #[cfg(feature = "http")]
    pub(crate) fn answering_on(&self, out: Arc<RequestLines>, requests: bool) -> Self {
        Self::in_session(Sink::Request(out), None, Arc::clone(&self.inner.session), requests)
    }

    /// A session of its own, whose messages go out on `out` (a modern request over HTTP).
    #[cfg(feature = "http")]
    pub(crate) fn for_request(out: Arc<RequestLines>) -> Self {
        Self::in_session(Sink::Request(out), None, Arc::new(Session::new()), true)
    }

    /// What `initialize` settled, once it has happened (never in the modern era, which has no
    /// session).
    pub fn session(&self) -> Option<&SessionInfo> {
        match self.inner.session.era.get() {
            Some(Era::Legacy(info)) => Some(info),
            _ => None,
        }
    }

    /// The legacy session, shared.
    pub(crate) fn legacy(&self) -> Option<Arc<SessionInfo>> {
        match self.inner.session.era.get() {
            Some(Era::Legacy(info)) => Some(Arc::clone(info)),
            _ => None,
        }
    }

    /// Whether this process serves the modern era.
    pub fn is_modern(&self) -> bool {
        matches!(self.inner.session.era.get(), Some(Era::Modern))
    }

    /// Records the legacy session; `false` if an era was already chosen (a second `initialize`,
    /// or an `initialize` after a modern request).
    pub(crate) fn initialize(&self, info: SessionInfo) -> bool {
        self.inner.session.era.set(Era::Legacy(Arc::new(info))).is_ok()
    }

    /// Fixes the modern era unless the legacy one was chosen; `true` when the era is modern.
    pub(crate) fn choose_modern(&self) -> bool {
        let _ = self.inner.session.era.set(Era::Modern);
        self.is_modern()
    }

    /// Whether a request to the client can go out from here (a Streamable HTTP request that
    /// accepts only `application/json` cannot carry one).
    pub fn can_request(&self) -> bool {
        self.inner.requests && !self.is_modern()
    }

    /// Sends a notification to the client.
    pub fn notify<T: Serialize + ?Sized>(&self, method: &str, params: &T) {
        self.send_line(notification_line(method, params));
    }

    pub(crate) fn send_line(&self, line: Vec<u8>) {
        if !line.is_empty() {
            // Counted before it is sent: the writer may write it at once.
            let writer = self.inner.writer.as_ref();
            let backlog = writer.map(|w| &*w.backlog);
            let len = line.len();
            if let Some(backlog) = backlog {
                backlog.add(len);
            }
            let message = match writer {
                None => Out::Line(line),
                Some(writer) => match writer.outbox.put(line) {
                    Put::Whole(line) => Out::Line(line),
                    Put::First => Out::Queued,
                    // The writer has been told, and takes this line with those before it.
                    Put::Behind => return,
                },
            };
            // A closed channel means the writer is gone (shutdown): nothing left to tell.
            let sent = match &self.inner.out {
                Sink::Writer(out) => out.send(message).is_ok(),
                #[cfg(feature = "http")]
                Sink::Request(out) => match message {
                    Out::Line(line) => out.push(line),
                    Out::Queued | Out::Close(_) => false,
                },
            };
            if !sent && let Some(backlog) = backlog {
                backlog.written(len);
            }
        }
    }

    /// Whether the client has left too much unread (never where nothing is counted): then
    /// [`Peer::room`] waits. See `session/backlog.rs`.
    pub(crate) fn is_behind(&self) -> bool {
        self.inner.writer.as_ref().is_some_and(|w| w.backlog.is_over())
    }

    /// Returns once what the client has not yet read is within bounds (at once where nothing is
    /// counted).
    pub(crate) async fn room(&self) {
        if let Some(writer) = &self.inner.writer {
            writer.backlog.room().await;
        }
    }

    /// The writer's channel (none where the lines go to an HTTP request's answer).
    pub(crate) fn sender(&self) -> Option<&mpsc::UnboundedSender<Out>> {
        match &self.inner.out {
            Sink::Writer(out) => Some(out),
            #[cfg(feature = "http")]
            Sink::Request(_) => None,
        }
    }

    /// Sends a request to the client and waits for its result.
    pub async fn request<T: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &T,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        if self.is_modern() {
            return Err(PeerError::NotInThisEra);
        }
        if !self.inner.requests {
            return Err(PeerError::Closed);
        }
        let id = RequestId::server(self.inner.session.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id.key().clone(), tx);
        /// Forgets the request however the wait ends (an aborted call included).
        struct Forget<'a>(&'a Peer, &'a IdKey);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.pending().remove(self.1);
            }
        }
        let _forget = Forget(self, id.key());
        let line = crate::jsonrpc::response::request_line(Some(&id), method, params);
        self.send_line(line);
        let answer = tokio::time::timeout(timeout, rx).await;
        match answer {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(error))) => Err(PeerError::Rejected(error)),
            Ok(Err(_)) => Err(PeerError::Closed),
            Err(_) => Err(PeerError::Timeout(timeout)),
        }
    }

    /// Routes a client's response to the request waiting for it; unknown ids are logged and
    /// dropped (a response is never answered).
    pub(crate) fn complete(&self, response: ResponseFromClient) {
        let Some(tx) = self.pending().remove(response.id.key()) else {
            tracing::debug!(id = %response.id, "response to no pending request; ignored");
            return;
        };
        let outcome = match response.outcome {
            Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| malformed(&e)),
            Err(raw) => Err(serde_json::from_str(raw.get()).unwrap_or_else(|e| malformed(&e))),
        };
        let _ = tx.send(outcome);
    }

    /// Fails every pending request (the session is ending).
    pub(crate) fn close_pending(&self) {
        self.pending().clear();
    }

    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<IdKey, oneshot::Sender<Result<Value, ErrorObject>>>> {
        self.inner.session.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

tokio::task_local! {
    /// The peer of the request being handled when it is not the process's: a Streamable HTTP
    /// request's notifications (progress, logs) go out on its own response.
    pub(crate) static REQUEST_PEER: Peer;
}

fn malformed(e: &serde_json::Error) -> ErrorObject {
    ErrorObject {
        code: crate::error::code::INVALID_REQUEST,
        message: format!("malformed response: {e}"),
        data: None,
    }
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("session", &self.session()).finish_non_exhaustive()
    }
}
