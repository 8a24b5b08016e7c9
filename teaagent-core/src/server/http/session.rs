//! One legacy-era session over Streamable HTTP and the table of them: its id and principal, its
//! peer, its notification stream, its calls in flight. (`legacy` handles what a session's
//! requests do.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::IdKey;
use crate::mcp::LoggingLevel;
use crate::session::peer::Peer;

/// Sessions kept at once.
pub(crate) const MAX_SESSIONS: usize = 256;
/// Sessions one caller (a token's principal; every caller without a token counts as one) keeps
/// at once: opening one more ends that caller's longest-idle session.
pub(crate) const MAX_SESSIONS_PER_PRINCIPAL: usize = 64;
/// A session unused this long is forgotten.
pub(crate) const IDLE: Duration = Duration::from_secs(30 * 60);

/// The open sessions.
#[derive(Default)]
pub(crate) struct Sessions {
    pub(super) table: Mutex<SessionTable>,
}

/// Sessions by id. Every id in it is the server's own ([`session_id`]: random), so a client can
/// only look names up, never choose what the table holds: foldhash (seeded per process) is
/// enough, where std's SipHash took about 300 instructions for an id, on every request of a
/// session.
pub(super) type SessionTable = HashMap<String, Arc<Session>, foldhash::fast::RandomState>;

/// One legacy session.
pub(crate) struct Session {
    /// Its id (approvals "for this session" are keyed by it).
    pub(crate) id: Arc<str>,
    /// The session's peer: its era (the negotiated version) and its requests to the client.
    /// Its own channel goes nowhere; each POST answers on its own ([`Peer::answering_on`]).
    pub(crate) peer: Peer,
    pub(super) principal: Option<Arc<str>>,
    pub(super) last_used: Mutex<Instant>,
    pub(super) level: Mutex<Option<LoggingLevel>>,
    pub(super) stream: Mutex<Option<mpsc::Sender<Bytes>>>,
    /// Cancelled when its notification stream must end (the session ends, the server stops).
    pub(super) stream_closed: CancellationToken,
    pub(super) in_flight: Mutex<HashMap<IdKey, (CancellationToken, Option<tokio::task::AbortHandle>)>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sessions {
    /// How many sessions are held, and how many of them have their notification stream open.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let table = lock(&self.table);
        let streams =
            table.values().filter(|s| lock(&s.stream).as_ref().is_some_and(|tx| !tx.is_closed())).count();
        (table.len(), streams)
    }
}

impl Session {
    /// A call is about to start (for `notifications/cancelled`); `false` when a call with its
    /// id is still in flight.
    pub(crate) fn started(&self, id: IdKey, cancel: CancellationToken) -> bool {
        match lock(&self.in_flight).entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert((cancel, None));
                true
            }
        }
    }

    /// The task of a call that started.
    pub(crate) fn running(&self, id: &IdKey, abort: tokio::task::AbortHandle) {
        if let Some(entry) = lock(&self.in_flight).get_mut(id) {
            entry.1 = Some(abort);
        }
    }

    /// A call finished; `false` when it was cancelled meanwhile (no response then).
    pub(crate) fn finished(&self, id: &IdKey) -> bool {
        lock(&self.in_flight).remove(id).is_some()
    }

    pub(super) fn cancel(&self, id: &IdKey) {
        if let Some((cancel, abort)) = lock(&self.in_flight).remove(id) {
            cancel.cancel();
            if let Some(abort) = abort {
                abort.abort();
            }
        }
    }

    pub(super) fn close_stream(&self) {
        self.stream_closed.cancel();
        lock(&self.stream).take();
    }

    pub(super) fn end(&self) {
        let calls: Vec<_> = lock(&self.in_flight).drain().collect();
        for (_, (cancel, abort)) in calls {
            cancel.cancel();
            if let Some(abort) = abort {
                abort.abort();
            }
        }
        self.close_stream();
    }
}

/// A new session's id: 128 random bits, as 32 hex digits.
pub(super) fn session_id() -> String {
    crate::digest::random_hex(16)
}
