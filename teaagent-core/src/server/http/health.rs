//! `/healthz` and `/readyz`, which always answer, and the overflow mode that makes sure of it.
//!
//! Every connection is accepted. Up to [`HttpOptions::max_connections`](super::HttpOptions) are
//! served in full; one more is served in *overflow mode*: `/healthz` and `/readyz` are answered
//! as usual, anything else gets `503` with `Retry-After` and `Connection: close`. An overflow
//! connection carries one request, must send it within [`OVERFLOW_HEADER_TIMEOUT`] and lives
//! [`OVERFLOW_LIFETIME`] at most; past [`MAX_OVERFLOW`] of them at once, a new connection is
//! closed as soon as it is accepted. So callers holding every connection (each caller only its
//! share, `fairness`; connections that never send a request for `header_timeout`) cannot keep a
//! load balancer's probe from being answered.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::StatusCode;
use hyper::header::{self, HeaderValue};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use super::Endpoint;
use super::reply::{plain, refused};
use super::{Answer, Reply};
use crate::task::TaskTracker;

/// Connections served in overflow mode at once.
pub(super) const MAX_OVERFLOW: usize = 64;
/// How long an overflow connection may take to send its request's headers.
pub(super) const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest an overflow connection is kept, whatever it does.
pub(super) const OVERFLOW_LIFETIME: Duration = Duration::from_secs(5);

/// The answer to a health check, `None` for any other path.
pub(super) fn answer(endpoint: &Endpoint, path: &str) -> Option<Reply> {
    let reply = match path {
        "/healthz" => plain(StatusCode::OK, "ok\n"),
        "/readyz" if endpoint.draining.is_cancelled() => plain(StatusCode::SERVICE_UNAVAILABLE, "stopping\n"),
        #[cfg(feature = "oauth")]
        "/readyz" if endpoint.oauth.as_ref().is_some_and(|o| !o.ready()) => {
            plain(StatusCode::SERVICE_UNAVAILABLE, "waiting for the authorization server's keys\n")
        }
        "/readyz" => match endpoint.shared.availability.as_ref().and_then(|a| a.pending()) {
            // Ready when what it serves is: not while external servers are still starting.
            Some(waiting) => {
                let mut reply = plain(StatusCode::SERVICE_UNAVAILABLE, "");
                *reply.body_mut() = Answer::Full(Full::new(Bytes::from(format!("{waiting}\n"))));
                reply
            }
            None => plain(StatusCode::OK, "ready\n"),
        },
        _ => return None,
    };
    Some(reply)
}

/// The connections served in overflow mode.
pub(super) struct Overflow {
    slots: Arc<Semaphore>,
}

impl Overflow {
    /// None yet.
    pub(super) fn new() -> Self {
        Self { slots: Arc::new(Semaphore::new(MAX_OVERFLOW)) }
    }

    /// Serves `stream`, accepted over the server's limit, in overflow mode; closes it at once
    /// when [`MAX_OVERFLOW`] are already served so.
    pub(super) fn serve(&self, endpoint: &Arc<Endpoint>, stream: TcpStream, tracker: &TaskTracker) {
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            tracing::debug!("a connection over every limit was closed at once");
            return;
        };
        let endpoint = endpoint.clone();
        tracker.spawn(async move {
            let _permit = permit;
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let reply = answer(&endpoint, request.uri().path()).unwrap_or_else(|| busy(&endpoint));
                    async move { Ok::<_, Infallible>(reply) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(OVERFLOW_HEADER_TIMEOUT)
                .keep_alive(false)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = tokio::time::timeout(OVERFLOW_LIFETIME, connection).await;
        });
    }
}

/// The answer to anything but a health check on an overflow connection.
fn busy(endpoint: &Endpoint) -> Reply {
    let message = format!(
        "the server is serving its most connections at once ({}); retry later",
        endpoint.options.max_connections.max(1)
    );
    let mut reply = refused(StatusCode::SERVICE_UNAVAILABLE, &message);
    let h = reply.headers_mut();
    h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    reply
}
