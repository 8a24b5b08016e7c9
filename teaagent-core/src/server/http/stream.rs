//! Streamed answers: Server-Sent Events, and the call a stream cancels when the client leaves.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::Response;
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderValue};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Answer, Reply};

/// The events of one streamed answer; dropping it (the client went away) cancels the call.
pub(crate) struct EventStream {
    events: mpsc::Receiver<Bytes>,
    _call: CancelOnDrop,
    /// The caller's share of requests in progress, held until the stream ends (`fairness`).
    pub(super) held: Option<crate::session::fairness::Share>,
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
pub(super) struct CancelOnDrop {
    pub(super) call: Option<(CancellationToken, tokio::task::AbortHandle)>,
    /// A legacy session's call: forgotten there too, so its id can be used again.
    pub(super) session: Option<(Arc<super::session::Session>, crate::jsonrpc::RequestId)>,
}

impl CancelOnDrop {
    pub(super) fn disarm(mut self) {
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
        if let Some((session, id)) = self.session.take() {
            session.finished(id.key());
        }
    }
}

/// An SSE answer of `events`; `call` is cancelled when it is dropped.
pub(super) fn event_stream(events: mpsc::Receiver<Bytes>, call: Option<CancelOnDrop>) -> Reply {
    let call = call.unwrap_or(CancelOnDrop { call: None, session: None });
    let mut reply = Response::new(Answer::Stream(EventStream { events, _call: call, held: None }));
    let h = reply.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    reply
}

/// `data: <one JSON line>` as an SSE event.
pub(super) fn sse_event(line: &[u8]) -> Bytes {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let mut event = Vec::with_capacity(line.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(line);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}
