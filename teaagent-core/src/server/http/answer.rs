//! Running a request through the pipeline and answering it: as JSON while the call is quick and
//! quiet, else as a stream (the `http` module docs, "JSON or a stream").

use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use hyper::StatusCode;
use memchr::memmem::Finder;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Authenticated;
use super::Endpoint;
use super::Reply;
use super::reply::{empty, json};
use super::request::Accepts;
use super::stream::{CancelOnDrop, event_stream, sse_event};
use crate::error::{Error, InvalidRequest, code};
use crate::jsonrpc::{RawParams, RequestId, error_line};
use crate::server::router;
use crate::session::Caller;
use crate::session::SessionInfo;
use crate::session::peer::{Peer, REQUEST_PEER};
use crate::session::request_lines::RequestLines;

/// How one request runs: who asks, at which log level, on whose behalf, and (legacy) in which
/// session.
pub(crate) struct Route {
    pub(crate) caller: Arc<SessionInfo>,
    pub(crate) log_level: Option<crate::mcp::LoggingLevel>,
    /// The caller (its principal, and with OAuth its scopes).
    pub(crate) auth: Authenticated,
    /// The legacy session: its peer (requests to the client, answered on other POSTs) and its
    /// calls in flight (`notifications/cancelled`). `None`: a modern request, on its own.
    pub(crate) session: Option<Arc<super::session::Session>>,
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

/// Runs the request through the pipeline and answers it (the `http` module docs, "JSON or a stream").
pub(super) async fn answer(
    endpoint: &Endpoint,
    id: RequestId,
    method: String,
    params: Option<RawParams>,
    route: Route,
    accepts: Accepts,
) -> Reply {
    let Route { caller: client, log_level, auth, session } = route;
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
    let (lines, out) = RequestLines::open();
    let peer = match &session {
        // Requests to the client (an approval) need a stream to go out on.
        Some(session) => session.peer.answering_on(lines, accepts.stream),
        None => {
            let peer = Peer::for_request(lines);
            peer.choose_modern();
            peer
        }
    };
    // A token of its own, not a child of `stopping`: a child takes a lock of its parent when it
    // is made and when it is dropped, on every request. A call still running when the server
    // stops is cut off with its connection once the grace period is over (`listener.rs`): the
    // answer's `CancelOnDrop` cancels this token and ends the run.
    let cancel = CancellationToken::new();
    if endpoint.stopping.is_cancelled() {
        cancel.cancel();
    }
    // A legacy session's call is in its table before it starts: a `notifications/cancelled`
    // finds it, and a second request with its id is refused. (Only a session's call needs its
    // id's key, made once and kept with the id.)
    let in_session = session.as_ref().map(|session| (session.clone(), id.clone()));
    if let Some((session, kept)) = &in_session
        && !session.started(kept.key().clone(), cancel.clone())
    {
        let error = Error::InvalidRequest { reason: InvalidRequest::DuplicateId };
        return json(StatusCode::OK, error_line(Some(&id), &error.to_error_object()));
    }
    let (done_tx, mut done_rx) = tokio::sync::oneshot::channel::<Vec<u8>>();
    let caller =
        Caller { principal, session: session.as_ref().map(|s| s.id.clone()), peer: peer.clone(), counted_as };
    let mut handling = {
        let cancel = cancel.clone();
        let session = session.clone();
        let handling = async move {
            let dispatched = router::dispatch(&shared, &id, &method, params, cancel, Some(client), &caller);
            let line = crate::logging::for_request(log_level, dispatched).await;
            // Gone from the session's table means cancelled while running: no response.
            let wanted = session.as_ref().is_none_or(|s| s.finished(id.key()));
            if wanted {
                let _ = done_tx.send(line);
            }
        };
        Box::pin(REQUEST_PEER.scope(peer, handling))
    };
    // The first poll runs here, inline: most requests (a fast tool, a list) finish in it, and
    // then need no task of their own, no hand-off between tasks and no timer for the stream
    // (the CPU per call of the HTTP benchmark). Nothing can cancel the request during it. One
    // that is not done gets its task, whose first poll registers its own waker (the one given
    // here wakes nothing, as the `Future` contract allows: only the latest poll's waker counts).
    // (Counted by the tracker meanwhile, as a spawned request is: on a runtime of several
    // threads, a shutdown that drains at that moment waits for it.)
    let inline = endpoint.shared.tracker.hold();
    let first = handling.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
    drop(inline);
    let running = match first {
        std::task::Poll::Ready(()) => None,
        std::task::Poll::Pending => {
            let task = endpoint.shared.tracker.spawn(handling);
            if let Some((session, kept)) = &in_session {
                session.running(kept.key(), task.abort_handle());
            }
            Some(task.abort_handle())
        }
    };
    let done = running.is_none();
    // Dropped with the answer (the client left, in either form): the call is cancelled.
    let call = CancelOnDrop { call: running.map(|abort| (cancel, abort)), session: in_session };
    let mut early: Vec<Vec<u8>> = Vec::new();
    let ended = if done {
        // Done in its first poll: its line was sent, or it was cancelled (no timer, no wait).
        Some(done_rx.try_recv().map_or(Ended::Cancelled, Ended::Answered))
    } else {
        // JSON while the call is quick and quiet.
        let deadline = tokio::time::sleep(endpoint.options.stream_after);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                line = &mut done_rx => break Some(line.map_or(Ended::Cancelled, Ended::Answered)),
                () = out.changed() => {
                    // Notifications are dropped for a client that takes JSON only.
                    let sent = out.take();
                    if accepts.stream && !sent.is_empty() {
                        early = sent;
                        break None;
                    }
                }
                () = &mut deadline, if accepts.stream => break None,
            }
        }
    };
    // Notifications sent just before the response still go out (then as a stream).
    if accepts.stream {
        early.extend(out.take());
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
                    for event in out.take() {
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
                () = out.changed() => {
                    let mut gone = false;
                    for event in out.take() {
                        match events_tx.try_send(sse_event(&event)) {
                            Ok(()) => {}
                            Err(mpsc::error::TrySendError::Full(_)) => dropped += 1,
                            Err(mpsc::error::TrySendError::Closed(_)) => {
                                gone = true;
                                break;
                            }
                        }
                    }
                    // The client left (its stream is gone): nothing more to forward.
                    if gone {
                        break;
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
    // Only an error changes the status, and an error answer always has this member. An answer
    // names `result` or `error` right after its id, and neither key can appear unescaped inside
    // a string: whichever comes first says which it is, without scanning a large result whole.
    // The searchers are built once: building one took more than searching a short answer.
    static RESULT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"result\":"));
    static ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"error\":{"));
    let result_at = RESULT.find(line).unwrap_or(line.len());
    if ERROR.find(&line[..result_at]).is_none() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_top_level_error_changes_the_status() {
        let missing = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}"#;
        assert_eq!(status_of(missing), StatusCode::BAD_REQUEST);
        let unknown = br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"m","data":{"reason":"unknown_method"}}}"#;
        assert_eq!(status_of(unknown), StatusCode::NOT_FOUND);
        let tool = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":{"reason":"unknown_tool"}}}"#;
        assert_eq!(status_of(tool), StatusCode::OK);
        // A result that carries `error` objects and text of its own is a result.
        let result = br#"{"jsonrpc":"2.0","id":"\"error\":{","result":{"content":[{"type":"text","text":"\"error\":{\"code\":-32021}"}],"structuredContent":{"error":{"code":-32021}}}}"#;
        assert_eq!(status_of(result), StatusCode::OK);
    }
}
