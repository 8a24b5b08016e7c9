//! The main loop: one `select!` between "stop" and "next line", then small dispatch functions.
//!
//! A request's first poll runs inline, and most requests (a fast tool, a list, a read) finish in
//! it; one that is not done runs on as a task of its own, so a slow call never delays `ping` or
//! another call. `initialize` and notifications are handled inline, in arrival order, because
//! later lines depend on them (batches need the negotiated version; a cancellation must find its
//! request).

use std::io;
use std::sync::Arc;

use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::era::{initialize_answer, modern_caller, modern_meta, names_modern_version};
use super::framing::Frame;
use super::reply::{Batch, Reply};
use super::shared::{InFlight, Shared};
use super::transport::{FrameReader, Input, Output, write_loop};
use super::{Server, router};
use crate::error::{Error, InvalidRequest};
use crate::jsonrpc::message::MessageRefusal;
use crate::jsonrpc::{IdKey, Incoming, Notification, RawParams, Request, RequestId, error_line};
use crate::mcp::modern::ModernMeta;
use crate::mcp::notifications::CancelledParams;
use crate::session::Caller;
use crate::session::peer::{OneWriter, Out, Peer, SessionInfo};

/// Serves until the input ends or `shutdown` is cancelled, then drains.
pub(crate) async fn run(
    server: Server,
    input: Input,
    output: Output,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    // What the client has not read yet: past a bound, no further request is read.
    // (And where the answers wait for the writer, gathered as they are sent.)
    let one_writer = OneWriter::default();
    let backlog = Arc::clone(&one_writer.backlog);
    // A failed write means the client is gone: that stops the loop like EOF.
    let writer = tokio::spawn(write_loop(output, out_rx, one_writer.clone(), shutdown.clone()));
    let peer = Peer::with_one_writer(out_tx, one_writer);
    crate::logging::attach(&peer);
    let shared = Arc::new(Shared::new(server, peer));
    // Calls that wait register their deadlines without waking this thread (`server/timer.rs`).
    let _armed = super::timer::keep_armed();
    tracing::info!(tools = shared.registry.len(), "serving MCP on stdio");
    if let Some(availability) = &shared.availability {
        tokio::spawn(pass_on_list_changes(shared.clone(), availability.changes()));
    }
    // The workspace lock is settled before the first line is read: a client that has its
    // `initialize` answered finds the lock as it will stay (held, or another server's).
    if let Some(lock) = &shared.lock {
        settle_lock(lock);
    }
    let mut reader = FrameReader::new(input, shared.config.max_line_bytes);
    // One wait for the stop, made once: a wait made afresh for every line registers with the
    // token and unregisters again (a lock each way), on every request.
    let stop = shutdown.cancelled();
    let mut stop = std::pin::pin!(stop);
    loop {
        if backlog.is_over() {
            // The client is not reading its answers: no further request until it does.
            tokio::select! {
                biased;
                () = &mut stop => break,
                () = backlog.room() => {}
            }
        }
        // Stop first: once asked to stop, no new line is started.
        if shutdown.is_cancelled() {
            break;
        }
        // A line already read (pipelined requests arrive many to a read) needs no wait.
        if let Some(frame) = reader.buffered() {
            shared.handle_frame(frame);
            continue;
        }
        tokio::select! {
            // Stop first: once asked to stop, no new line is started.
            biased;
            () = &mut stop => break,
            frame = reader.next() => match frame {
                Some(frame) => shared.handle_frame(frame),
                None => {
                    tracing::info!("stdin closed; finishing in-flight calls");
                    break;
                }
            },
        }
    }
    shared.input_closed.cancel();
    shared.drain().await;
    shared.release_lock().await;
    crate::logging::detach();
    shared.peer.close_pending();
    let (done_tx, done_rx) = oneshot::channel();
    if shared.peer.sender().is_some_and(|out| out.send(Out::Close(done_tx)).is_ok()) {
        let _ = tokio::time::timeout(shared.config.shutdown_grace, done_rx).await;
    }
    writer.abort();
    Ok(())
}

/// Tells a legacy-era client `notifications/tools/list_changed` whenever the available tools
/// may have changed (modern-era clients hear it on their `subscriptions/listen` stream).
async fn pass_on_list_changes(shared: Arc<Shared>, mut changes: tokio::sync::watch::Receiver<u64>) {
    while changes.changed().await.is_ok() {
        if shared.input_closed.is_cancelled() {
            return;
        }
        if !shared.peer.is_modern() && shared.peer.session().is_some() {
            shared.peer.notify("notifications/tools/list_changed", &serde_json::json!({}));
        }
    }
}

/// Takes the workspace lock (or learns who holds it), and logs the outcome. Done once, before
/// anything is served, on the calling thread: nothing else waits for it yet (a registry write
/// under a file lock, without `fsync`: see `workspace::lock`).
pub(crate) fn settle_lock(lock: &crate::workspace::lock::WorkspaceLock) {
    match lock.ensure() {
        Ok(()) => {}
        Err(crate::workspace::lock::LockRefusal::HeldBy(owner)) => tracing::warn!(
            owner_pid = owner.owner_pid,
            since = %owner.acquired_at,
            "another teaagent server holds this workspace: read-only tools work, the others answer -32003 until it is free"
        ),
        Err(crate::workspace::lock::LockRefusal::Unavailable(why)) => tracing::error!("{why}"),
    }
}

impl Shared {
    fn handle_frame(self: &Arc<Self>, frame: Frame) {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len } => {
                tracing::warn!(
                    len,
                    max = self.config.max_line_bytes,
                    "refused a line over the maximum length"
                );
                let error = Error::InvalidRequest { reason: InvalidRequest::LineTooLong };
                self.peer.send_line(error_line(None, &error.to_error_object()));
                return;
            }
        };
        match line.iter().copied().find(|b| !b.is_ascii_whitespace()) {
            None => {} // blank lines carry nothing and get nothing
            Some(b'[') => self.handle_batch(&line),
            Some(_) => match Incoming::parse_line(line) {
                Ok(message) => self.handle_message(message, || Reply::direct(self.peer.clone())),
                Err(rejected) => self.reject(&rejected, Reply::direct(self.peer.clone())),
            },
        }
    }

    fn handle_batch(self: &Arc<Self>, line: &[u8]) {
        let elements: Vec<Box<RawValue>> = match serde_json::from_slice(line) {
            Ok(elements) => elements,
            Err(e) if e.is_data() => {
                return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::NotAMessage });
            }
            Err(e) => return self.reject_line(Error::Parse { details: e.to_string() }),
        };
        let allowed = self.peer.session().is_some_and(|s| s.version.allows_batches());
        if !allowed {
            return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::BatchNotSupported });
        }
        if elements.is_empty() {
            return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::EmptyBatch });
        }
        let batch = Batch::new(self.peer.clone());
        for element in &elements {
            match Incoming::from_raw(element) {
                Ok(message) => self.handle_message(message, || batch.reply()),
                Err(rejected) => self.reject(&rejected, batch.reply()),
            }
        }
        batch.sealed();
    }

    fn reject_line(&self, error: Error) {
        self.peer.send_line(error_line(None, &error.to_error_object()));
    }

    fn reject(&self, rejected: &MessageRefusal, reply: Reply) {
        reply.send(error_line(rejected.id.as_ref(), &Error::from(&rejected.reason).to_error_object()));
    }

    fn handle_message(self: &Arc<Self>, message: Incoming, reply: impl FnOnce() -> Reply) {
        match message {
            Incoming::Request(request) => self.handle_request(request, reply()),
            Incoming::Notification(notification) => self.handle_notification(notification),
            Incoming::Response(response) => self.peer.complete(response),
        }
    }

    fn handle_request(self: &Arc<Self>, request: Request, reply: Reply) {
        let Request { id, method, params } = request;
        if method == "initialize" {
            reply.send(self.initialize(&id, params.as_ref().map(RawParams::get)));
            return;
        }
        let caller = match self.caller(&method, params.as_ref()) {
            Ok(caller) => caller,
            Err(error) => {
                let modern = self.peer.is_modern();
                return reply.send(error_line(Some(&id), &error.to_error_object_for(modern)));
            }
        };
        // (An id's key is made only when a request is still running to compare it with.)
        let duplicate = {
            let in_flight = self.in_flight();
            !in_flight.is_empty() && in_flight.contains_key(id.key())
        };
        if duplicate {
            let error = Error::InvalidRequest { reason: InvalidRequest::DuplicateId };
            return reply.send(error_line(Some(&id), &error.to_error_object()));
        }
        // The id, kept for the in-flight entry's key (the future owns `id`; a clone is cheap,
        // the key is made only for a request that outlives its first poll).
        let kept = id.clone();
        // A token of its own, not a child of `stopping`: a child costs a lock of the parent when
        // it is made and when it is dropped, on every request; the few requests still running at
        // shutdown are in `in_flight`, and `drain` cancels each of them.
        let cancel = CancellationToken::new();
        let shared = Arc::clone(self);
        let log_level = caller.as_ref().and_then(|c| c.log_level);
        let token = cancel.clone();
        // Modern era: `notifications/message` only for a request that asked, at its level.
        // (`router::dispatch` answers a panic of its own as an internal error.)
        let mut work = Box::pin(async move {
            crate::logging::for_request(
                log_level,
                router::dispatch(
                    &shared,
                    &id,
                    &method,
                    params,
                    token,
                    caller,
                    &Caller::process(&shared.peer),
                ),
            )
            .await
        });
        // The first poll runs here, inline: most requests (a fast tool, a list, a read) finish
        // in it, and then need no task, no in-flight entry and no hand-off between tasks (a
        // sequential call's latency, the stdio benchmark). Nothing can cancel a request between
        // its arrival and the end of this poll: the loop reads no other line meanwhile. A
        // request that is not done gets its task, whose first poll registers its own waker
        // (the one given here wakes nothing, as the `Future` contract allows: only the latest
        // poll's waker counts).
        let first = work.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
        if let std::task::Poll::Ready(line) = first {
            return reply.send(line);
        }
        let key = kept.key().clone();
        self.in_flight().insert(key.clone(), InFlight { cancel, abort: None });
        let shared = Arc::clone(self);
        let task_key = key.clone();
        let task = self.tracker.spawn(async move {
            let line = work.await;
            // Gone from the map means cancelled while running: no response.
            if shared.in_flight().remove(&task_key).is_some() {
                reply.send(line);
            }
        });
        if let Some(entry) = self.in_flight().get_mut(&key) {
            entry.abort = Some(task.abort_handle());
        }
    }

    /// Who is asking: the legacy session `initialize` settled, or, in the modern era,
    /// what this request's `_meta` says. The first message fixes the era: a request that names
    /// a protocol version in `_meta` (or is `server/discover`) chooses the modern one. `Ok(None)`:
    /// a `ping` before any era is chosen.
    fn caller(&self, method: &str, params: Option<&RawParams>) -> Result<Option<Arc<SessionInfo>>, Error> {
        if let Some(session) = self.peer.legacy() {
            // `tools/call` looks at its own `_meta` as it parses it (its arguments may be large:
            // they are not read twice for this).
            if method == "server/discover" || (method != "tools/call" && names_modern_version(params)) {
                return Err(Error::InvalidRequest { reason: InvalidRequest::LegacyEra });
            }
            return Ok(Some(session));
        }
        let meta = modern_meta(params)?;
        let modern = method == "server/discover"
            || meta.as_ref().is_some_and(ModernMeta::is_modern)
            || self.peer.is_modern();
        if !modern {
            if method == "ping" {
                return Ok(None);
            }
            return Err(Error::InvalidRequest { reason: InvalidRequest::NotInitialized });
        }
        if !self.peer.choose_modern() {
            return Err(Error::InvalidRequest { reason: InvalidRequest::LegacyEra });
        }
        modern_caller(method, meta).map(Some)
    }

    fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => {
                let params =
                    notification.params.as_ref().map(|p| serde_json::from_str::<CancelledParams>(p.get()));
                let Some(Ok(params)) = params else {
                    tracing::debug!("ignored a malformed notifications/cancelled");
                    return;
                };
                let Some(key) = IdKey::of_value(&params.request_id) else { return };
                if let Some(entry) = self.in_flight().remove(&key) {
                    tracing::debug!(id = ?key, reason = params.reason.as_deref().unwrap_or(""), "request cancelled");
                    entry.cancel.cancel();
                    if let Some(abort) = entry.abort {
                        abort.abort();
                    }
                }
            }
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "ignored notification"),
        }
    }

    fn initialize(&self, id: &RequestId, params: Option<&str>) -> Vec<u8> {
        if self.peer.is_modern() {
            let error = Error::InvalidRequest { reason: InvalidRequest::ModernEra };
            return error_line(Some(id), &error.to_error_object());
        }
        let (line, info) = match initialize_answer(id, params, &self.announcement) {
            Ok(answer) => answer,
            Err(line) => return line,
        };
        tracing::info!(client = %info.client.name, client_version = %info.client.version, protocol = %info.version, "initialize");
        if !self.peer.initialize(info) {
            let error = Error::InvalidRequest { reason: InvalidRequest::AlreadyInitialized };
            return error_line(Some(id), &error.to_error_object());
        }
        line
    }

    /// Lets in-flight calls finish for the grace period, then cancels the rest (they get no
    /// response).
    async fn drain(&self) {
        self.tracker.close();
        if tokio::time::timeout(self.config.shutdown_grace, self.tracker.wait()).await.is_err() {
            let left: Vec<InFlight> = self.in_flight().drain().map(|(_, v)| v).collect();
            tracing::warn!(calls = left.len(), "grace period over; cancelling the calls still running");
            self.stopping.cancel();
            for entry in left {
                entry.cancel.cancel();
                if let Some(abort) = entry.abort {
                    abort.abort();
                }
            }
            self.tracker.wait().await;
        }
        self.stopping.cancel();
    }
}
