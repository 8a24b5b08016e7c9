//! `/metrics`: the server's numbers in the Prometheus text format (the calls' families are
//! `server/metrics.rs`'s; the sessions', streams', shared state's and external servers' are here). On the MCP endpoint's own address it is behind the same checks as `/mcp` (Host,
//! Origin, the bearer token or OAuth access token); with
//! [`HttpOptions::metrics_listen`](super::HttpOptions::metrics_listen) it is served only on that
//! other address, without authentication (a private address, for the scraper alone).

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::reply::plain;
use super::{Answer, Endpoint, Reply};
use crate::metrics::{Exposition, Kind};
use crate::server::shared::Shared;

/// Connections the separate metrics address serves at once (a scraper or two; more wait).
const MAX_CONNECTIONS: usize = 8;

/// How long a scraper may take to send its request's headers on the separate address.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// The answer to `GET /metrics` (`HEAD` too); `405` for another method.
pub(super) fn answer(endpoint: &Endpoint, method: &Method) -> Reply {
    if method != Method::GET && method != Method::HEAD {
        let mut reply = plain(StatusCode::METHOD_NOT_ALLOWED, "/metrics takes GET\n");
        reply.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return reply;
    }
    let (sessions, session_streams) = endpoint.sessions.counts();
    let text = render(&endpoint.shared, Open { sessions, session_streams });
    let body = if method == Method::HEAD { Bytes::new() } else { Bytes::from(text) };
    let mut reply = Response::new(Answer::Full(Full::new(body)));
    reply.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(Exposition::CONTENT_TYPE));
    reply.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    reply
}

/// Serves `/metrics` alone on `listener`, without authentication, until `shutdown`.
pub(crate) async fn serve_apart(endpoint: Arc<Endpoint>, listener: TcpListener, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "metrics: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let permit = tokio::select! {
            () = shutdown.cancelled() => return,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let endpoint = endpoint.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let reply = match request.uri().path() {
                        "/metrics" => answer(&endpoint, request.method()),
                        _ => plain(StatusCode::NOT_FOUND, "not found: this address serves /metrics\n"),
                    };
                    async move { Ok::<_, Infallible>(reply) }
                });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
}

/// Binds the separate metrics address.
pub(crate) async fn bind(addr: std::net::SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr} for /metrics: {e}")))
}

/// What `/metrics` shows besides the calls: counts the HTTP endpoint keeps.
#[derive(Debug, Default, Clone, Copy)]
struct Open {
    /// Legacy-era sessions.
    sessions: usize,
    /// Their notification streams (GET).
    session_streams: usize,
}

/// The text of `/metrics` for the server `shared`, with what its endpoint counts (`open`).
fn render(shared: &Shared, open: Open) -> String {
    let mut text = Exposition::new();
    shared.metrics.write(&mut text);
    // Read off the turns to run (nothing counted on the call's path for it).
    let running = shared.config.max_in_flight.saturating_sub(shared.run_permits.available_permits());
    let waiting = shared.waiting.load(std::sync::atomic::Ordering::Relaxed);
    text.family(
        "teaagent_calls_in_flight",
        Kind::Gauge,
        "Tool calls and resource reads running, or admitted and waiting for their turn to run.",
    )
    .sample("teaagent_calls_in_flight", &[], running + waiting);

    text.family(
        "teaagent_sessions_open",
        Kind::Gauge,
        "Sessions of protocol 2025-11-25 and earlier held now.",
    )
    .sample("teaagent_sessions_open", &[], open.sessions);
    let listening = shared.listeners.load(std::sync::atomic::Ordering::Relaxed);
    text.family(
        "teaagent_listen_streams_open",
        Kind::Gauge,
        "Open listen streams (SSE), by kind: subscriptions/listen, or a legacy session's GET stream.",
    )
    .sample("teaagent_listen_streams_open", &[("kind", "subscriptions")], listening)
    .sample("teaagent_listen_streams_open", &[("kind", "session")], open.session_streams);

    if let Some(store) = shared.store.metrics() {
        use crate::fleet::StoreOp;
        text.family(
            "teaagent_shared_state_errors_total",
            Kind::Counter,
            "Round trips to the fleet's shared state (Redis) that failed, by operation.",
        );
        for op in StoreOp::ALL {
            text.sample("teaagent_shared_state_errors_total", &[("operation", op.label())], store.errors(op));
        }
        text.family(
            "teaagent_shared_state_duration_seconds",
            Kind::Histogram,
            "How long round trips to the fleet's shared state (Redis) took, by operation.",
        );
        for op in StoreOp::ALL {
            text.histogram(
                "teaagent_shared_state_duration_seconds",
                &[("operation", op.label())],
                store.latency(op),
            );
        }
    }

    let servers = shared.availability.as_ref().map(|a| a.external_servers()).unwrap_or_default();
    if !servers.is_empty() {
        text.family(
            "teaagent_external_server_up",
            Kind::Gauge,
            "Whether an external server (the gateway's) is running and serving its tools.",
        );
        for server in &servers {
            text.sample("teaagent_external_server_up", &[("server", &server.name)], u8::from(server.up));
        }
        text.family(
            "teaagent_external_server_restarts_total",
            Kind::Counter,
            "How many times an external server was started again.",
        );
        for server in &servers {
            text.sample(
                "teaagent_external_server_restarts_total",
                &[("server", &server.name)],
                server.restarts,
            );
        }
    }
    text.finish()
}
