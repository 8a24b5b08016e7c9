//! Keeping each external server running (`gateway.rs`, "Lifecycle"): the gateway's thread, one
//! supervisor a server — the trust check before every start, the pin compared at start and at
//! every (coalesced) `list_changed`, restarts with a backoff, withholding.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::handshake::{list_tools, start_one};
use super::{External, Inner, LinkState, ToolList};
use crate::visible::shown;

/// How long the supervisor waits after a `notifications/tools/list_changed` before it reads
/// the list again (those that arrive meanwhile are taken with it).
const LIST_CHANGED_QUIET: Duration = Duration::from_millis(100);
/// The shortest time between two readings of a running server's changed list.
const LIST_CHANGED_EVERY: Duration = Duration::from_secs(1);
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// A run this long resets the backoff.
const STEADY: Duration = Duration::from_secs(60);

/// The gateway thread: supervises every server until
/// [`Gateway::shutdown`](crate::gateway::Gateway::shutdown); each supervisor then stops its own
/// server (a process group is never left behind by an aborted shutdown).
pub(super) async fn run(inner: Arc<Inner>) {
    let mut supervisors = tokio::task::JoinSet::new();
    for i in 0..inner.links.len() {
        supervisors.spawn(supervise(inner.clone(), i));
    }
    inner.stop.cancelled().await;
    // Two grace periods (stdin closed, then SIGTERM) and the final SIGKILL and reaping.
    let bound = inner.options.shutdown_grace * 2 + Duration::from_secs(1);
    let all = async { while supervisors.join_next().await.is_some() {} };
    if tokio::time::timeout(bound, all).await.is_err() {
        supervisors.abort_all();
    }
}

/// Whether the server may (still) start: [`External::still_trusted`], on the blocking pool (it
/// hashes the executable).
async fn still_trusted(external: &External) -> Result<(), String> {
    let Some(check) = external.still_trusted.clone() else { return Ok(()) };
    tokio::task::spawn_blocking(move || check())
        .await
        .unwrap_or_else(|e| Err(format!("the trust check failed: {e}")))
}

/// Keeps one server running (module docs, "Lifecycle").
async fn supervise(inner: Arc<Inner>, index: usize) {
    let link = &inner.links[index];
    let name = &link.external.launch.name;
    let options = inner.options;
    let mut backoff = FIRST_BACKOFF;
    let mut first = true;
    tokio::select! {
        () = tokio::time::sleep(options.start_after) => {}
        () = link.wanted.notified() => {}
        () = inner.stop.cancelled() => return,
    }
    loop {
        if !first {
            link.restarts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        first = false;
        link.state.send_replace(LinkState::Starting);
        let checked = tokio::select! {
            checked = still_trusted(&link.external) => checked,
            () = inner.stop.cancelled() => return,
        };
        if let Err(why) = checked {
            withhold(&inner, index, why);
            return;
        }
        let started = tokio::select! {
            started = start_one(&link.external.launch, options.startup_timeout) => started,
            () = inner.stop.cancelled() => return,
        };
        match started {
            Err(why) => {
                tracing::warn!(server = %shown(name), "external server did not start: {why}; trying again in {:?}", backoff);
                link.state.send_replace(LinkState::Down(format!("it did not start: {why}")));
            }
            Ok((conn, list)) if list.sha256() != link.external.pinned.sha256() => {
                withhold(&inner, index, changed_list(&link.external.pinned, &list));
                conn.shutdown(options.shutdown_grace).await;
                return;
            }
            Ok((conn, _)) => {
                tracing::info!(server = %shown(name), "external server started");
                link.state.send_replace(LinkState::Up(conn.clone()));
                let since = Instant::now();
                let mut list_changes = conn.list_changes();
                let mut last_read = Instant::now();
                let stopped = loop {
                    tokio::select! {
                        () = conn.closed() => break false,
                        () = inner.stop.cancelled() => break true,
                        Ok(()) = list_changes.changed() => {
                            // Coalesced: one reading for every notification of a quiet moment,
                            // and at most one a second (a flood is not passed on one for one).
                            let wait = LIST_CHANGED_QUIET.max(LIST_CHANGED_EVERY.saturating_sub(last_read.elapsed()));
                            tokio::select! {
                                () = tokio::time::sleep(wait) => {}
                                () = conn.closed() => break false,
                                () = inner.stop.cancelled() => break true,
                            }
                            list_changes.borrow_and_update();
                            last_read = Instant::now();
                            // Calls wait while the new list is compared with the pin.
                            link.state.send_replace(LinkState::Starting);
                            let relisted = tokio::select! {
                                relisted = tokio::time::timeout(options.startup_timeout, list_tools(&conn)) => relisted,
                                () = inner.stop.cancelled() => break true,
                            };
                            match relisted {
                                Ok(Ok(list)) if list.sha256() == link.external.pinned.sha256() => {
                                    // Still what the user allowed: passed on.
                                    link.state.send_replace(LinkState::Up(conn.clone()));
                                    inner.changed.send_modify(|n| *n += 1);
                                }
                                Ok(Ok(list)) => {
                                    withhold(&inner, index, changed_list(&link.external.pinned, &list));
                                    conn.shutdown(options.shutdown_grace).await;
                                    return;
                                }
                                Ok(Err(why)) => {
                                    tracing::warn!(server = %shown(name), "cannot read the external server's changed tool list: {why}; restarting it");
                                    break false;
                                }
                                Err(_) => {
                                    tracing::warn!(server = %shown(name), "the external server did not list its changed tools within {:?}; restarting it", options.startup_timeout);
                                    break false;
                                }
                            }
                        }
                    }
                };
                if stopped {
                    conn.shutdown(options.shutdown_grace).await;
                    return;
                }
                link.state.send_replace(LinkState::Down("it exited; it is being restarted".into()));
                conn.shutdown(options.shutdown_grace).await;
                if since.elapsed() >= STEADY {
                    backoff = FIRST_BACKOFF;
                }
                tracing::warn!(server = %shown(name), "external server exited; restarting it in {:?}", backoff);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = inner.stop.cancelled() => return,
        }
        backoff = (backoff * 2).min(options.max_backoff);
    }
}

fn changed_list(pinned: &ToolList, now: &ToolList) -> String {
    let differences = pinned.differences(now);
    format!(
        "its tool list changed since it was allowed ({} difference{}; `teaagent mcp trust inspect` shows them)",
        differences.len(),
        if differences.len() == 1 { "" } else { "s" }
    )
}

fn withhold(inner: &Inner, index: usize, why: String) {
    let name = &inner.links[index].external.launch.name;
    tracing::warn!(
        server = %shown(name),
        "withheld the tools of external server {}: {why}; check it with `teaagent mcp trust inspect {}` and allow it again with `teaagent mcp trust allow {}`",
        shown(name),
        shown(name),
        shown(name)
    );
    inner.links[index].state.send_replace(LinkState::Withheld(why));
    inner.changed.send_modify(|n| *n += 1);
}
