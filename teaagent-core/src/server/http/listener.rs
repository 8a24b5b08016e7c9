//! The listener: what every request's handling shares, the accept loop (overflow mode past the
//! connection limit), each request routed by its path, and the drain at shutdown.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header;
use hyper::{Method, Request, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::Endpoint;
use super::Reply;
use super::auth::checked;
#[cfg(feature = "oauth")]
use super::host::allowed_here;
use super::host::{preflight, with_cors};
use super::reply::plain;
use super::{fairness, health, metrics};

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
        let stopping = endpoint.stopping.clone();
        let header_timeout = endpoint.options.header_timeout;
        // Who the connection's requests count against without authentication, named once.
        let address = fairness::address_caller(remote);
        connections.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let endpoint = endpoint.clone();
                let address = Arc::clone(&address);
                async move { Ok::<_, Infallible>(handle(&endpoint, request, &address).await) }
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
                    // The grace period over, whatever the connection still does (a call, a body
                    // that is not all there) is cut off: dropped with it, its request is
                    // cancelled (`answer.rs`), and no client holds a stopping server open.
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        () = stopping.cancelled() => {}
                    }
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

/// One HTTP request, from the client at `address` (`fairness::address_caller`).
async fn handle(endpoint: &Endpoint, request: Request<Incoming>, address: &Arc<str>) -> Reply {
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
                    Ok(auth) => fairness::admitted(endpoint, request, auth, address).await,
                }
            };
            with_cors(origin, reply)
        }
        // The server's numbers, behind the same checks as `/mcp` (no fair share: a scrape is
        // cheap and answered at once).
        "/metrics" if endpoint.options.metrics_listen.is_none() => match checked(endpoint, &request).await {
            Err(refusal) => *refusal,
            Ok(_) => metrics::answer(endpoint, request.method()),
        },
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
