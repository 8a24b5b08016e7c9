//! Async tools that block the thread they are polled on (issue: a `std::thread::sleep` inside an
//! `async fn` tool delayed `ping` by seconds on the single-threaded runtime of
//! [`Server::run_stdio`](super::Server::run_stdio)).
//!
//! Every poll of a tool's future is timed (on Linux, two reads of the kernel's coarse monotonic
//! clock, a few nanoseconds each; it advances once a tick, a few milliseconds, which is plenty
//! to tell a poll of 100 ms). A poll that takes longer than [`ServerConfig::slow_poll`] (default
//! 100 ms) held the protocol loop for that long: `ping`, cancellations and every other call
//! waited. Then:
//!
//! - a warning on stderr names the tool, how long it held the thread, and the fix (a plain `fn`
//!   tool runs on the blocking pool; or `tokio::task::spawn_blocking` / `tokio::time::sleep` in
//!   the body), once per tool;
//! - the tool is *isolated* from then on: its later calls run on a blocking-pool thread of their
//!   own (the future is driven there with the runtime's handle), so they can block as long as
//!   they like without stalling the protocol loop. Their timeout, cancellation and panic
//!   reporting are unchanged; a tool that blocks ignores cancellation until it yields, as before.
//!
//! Why not isolate every call from the start: running each future on another thread costs a
//! cross-thread hand-off per call, which is most of a fast call's latency (the stdio benchmark);
//! a tool that behaves pays nothing, and one that blocks stalls the server once, not on every
//! call. The first blocking poll itself cannot be interrupted: nothing can take a thread back
//! from code that does not yield.
//!
//! A prompt's handler (`prompts/get`) is an async function too, and is watched the same way,
//! under the name `prompt:NAME`.
//!
//! [`ServerConfig::slow_poll`]: super::ServerConfig::slow_poll

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Failure};
use crate::mcp::CallToolResult;
use crate::task::{BoxFuture, Running, TaskTracker};
use crate::tool::ToolFuture;

/// The tools caught blocking, whose calls now run isolated.
#[derive(Debug)]
pub(crate) struct Blockers {
    threshold: Duration,
    /// Whether any tool is isolated (the common case, none, skips the lock).
    any: AtomicBool,
    tools: Mutex<HashSet<String>>,
}

impl Blockers {
    pub(crate) fn new(threshold: Duration) -> Self {
        Self { threshold, any: AtomicBool::new(false), tools: Mutex::new(HashSet::new()) }
    }

    /// Whether calls of `tool` run isolated (it was caught blocking).
    pub(crate) fn isolated(&self, tool: &str) -> bool {
        self.any.load(Ordering::Acquire)
            && self.tools.lock().unwrap_or_else(|p| p.into_inner()).contains(tool)
    }

    /// Records that one poll of `tool` took `took`: warns the first time, and isolates it.
    fn caught(&self, tool: &str, took: Duration) {
        let first = self.tools.lock().unwrap_or_else(|p| p.into_inner()).insert(tool.to_owned());
        self.any.store(true, Ordering::Release);
        if first && let Some(prompt) = tool.strip_prefix("prompt:") {
            tracing::warn!(
                prompt,
                blocked_ms = took.as_millis() as u64,
                "the handler of prompt `{prompt}` blocked the server's thread for {:.1} s in one \
                 poll of its future: ping and every call waited meanwhile. Its later runs are on \
                 a thread of their own. Fix the handler: move the blocking part into \
                 `tokio::task::spawn_blocking` (and `std::thread::sleep` to \
                 `tokio::time::sleep(...).await`)",
                took.as_secs_f64()
            );
        } else if first {
            tracing::warn!(
                tool,
                blocked_ms = took.as_millis() as u64,
                "tool `{tool}` blocked the server's thread for {:.1} s in one poll of its future: \
                 ping and every other call waited meanwhile. Its later calls run on a thread of \
                 their own. Fix the tool: make it a plain `fn` (a sync tool runs on the blocking \
                 pool), or move the blocking part into `tokio::task::spawn_blocking` (and \
                 `std::thread::sleep` to `tokio::time::sleep(...).await`)",
                took.as_secs_f64()
            );
        }
    }

    /// Runs one call of `tool`: isolated if it was caught blocking before, else on this thread
    /// with every poll timed.
    pub(crate) async fn run(
        &self,
        tool: &str,
        future: ToolFuture,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
    ) -> Result<CallToolResult, Error> {
        let failed =
            |details| Err(Error::ToolFailed { tool: tool.to_owned(), reason: Failure::Internal, details });
        self.run_any(tool, future, cancel, tracker, failed).await
    }

    /// [`Blockers::run`] for any handler's future (a prompt's, named `prompt:NAME`): `failed`
    /// makes its output when an isolated run was cancelled or could not run.
    pub(crate) async fn run_any<O: Send + 'static>(
        &self,
        name: &str,
        future: BoxFuture<'static, O>,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
        failed: impl FnOnce(String) -> O,
    ) -> O {
        if self.isolated(name) {
            return isolated(future, cancel.clone(), tracker.hold(), failed).await;
        }
        Timed { future, name, blockers: self }.await
    }
}

/// A handler's future with each poll timed.
struct Timed<'a, O> {
    future: BoxFuture<'static, O>,
    name: &'a str,
    blockers: &'a Blockers,
}

impl<O> Future for Timed<'_, O> {
    type Output = O;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<O> {
        let start = coarse_now();
        let poll = self.future.as_mut().poll(cx);
        let took = coarse_now().saturating_sub(start);
        if took > self.blockers.threshold {
            self.blockers.caught(self.name, took);
        }
        poll
    }
}

/// The monotonic clock at the kernel tick's resolution (`CLOCK_MONOTONIC_COARSE`): read from
/// memory through the vDSO, without the hardware counter a precise clock reads.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn coarse_now() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; the call writes it and nothing else.
    #[allow(unsafe_code)]
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut t) } == 0;
    match ok {
        true => Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec.clamp(0, 999_999_999) as u32),
        // Never on Linux; a clock that cannot be read times nothing.
        false => Duration::ZERO,
    }
}

/// Elsewhere (no coarse clock by that name): the precise monotonic clock.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn coarse_now() -> Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Drives `future` on a blocking-pool thread with the runtime's handle (its timers and I/O are
/// still those of the server's runtime), until it ends or `cancel` fires. A panic comes back as
/// a panic, for the caller's `catch_unwind`.
async fn isolated<O: Send + 'static>(
    future: BoxFuture<'static, O>,
    cancel: CancellationToken,
    running: Running,
    failed: impl FnOnce(String) -> O,
) -> O {
    let handle = tokio::runtime::Handle::current();
    let task = tokio::task::spawn_blocking(crate::logging::in_request_scope(move || {
        // Counted by the server's tracker until the thread is done with the tool, not until
        // the call is answered: a call that timed out, or the shutdown's drain that aborted its
        // task, must still wait for it before the workspace lock is released.
        let _running = running;
        handle.block_on(async move {
            tokio::select! {
                result = future => Some(result),
                () = cancel.cancelled() => None,
            }
        })
    }));
    match task.await {
        Ok(Some(result)) => result,
        // Cancelled, timed out or stopping: the caller answers (or not) for that.
        Ok(None) => failed("the call was cancelled".into()),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => failed(format!("the isolated call could not run: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn blocking_tool(ms: u64) -> ToolFuture {
        Box::pin(async move {
            std::thread::sleep(Duration::from_millis(ms));
            Ok(CallToolResult::text("done"))
        })
    }

    /// A poll over the threshold isolates the tool; later calls run off the caller's thread, so
    /// the caller's other tasks progress meanwhile (observed by order, not by time).
    #[tokio::test(flavor = "current_thread")]
    async fn a_tool_caught_blocking_runs_isolated_afterwards() {
        let blockers = Blockers::new(Duration::from_millis(20));
        let cancel = CancellationToken::new();
        assert!(!blockers.isolated("nap"));
        blockers.run("nap", blocking_tool(60), &cancel, &TaskTracker::new()).await.expect("first call");
        assert!(blockers.isolated("nap"), "caught by its slow poll");
        assert!(!blockers.isolated("other"));

        // Isolated: while it sleeps 300 ms elsewhere, a task on this thread gets to run first.
        let (tx, rx) = tokio::sync::oneshot::channel();
        let side = tokio::spawn(async move {
            let _ = tx.send(());
        });
        let tracker = TaskTracker::new();
        let call = blockers.run("nap", blocking_tool(300), &cancel, &tracker);
        tokio::pin!(call);
        let order = tokio::select! {
            biased;
            _ = &mut call => "call first",
            _ = rx => "side task first",
        };
        assert_eq!(order, "side task first");
        call.await.expect("isolated call");
        side.await.expect("side task");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_tool_that_yields_is_never_isolated() {
        // Longer in all than the threshold, but no single poll is.
        let blockers = Blockers::new(Duration::from_millis(200));
        let fut: ToolFuture = Box::pin(async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CallToolResult::text("done"))
        });
        blockers.run("sleepy", fut, &CancellationToken::new(), &TaskTracker::new()).await.expect("call");
        assert!(!blockers.isolated("sleepy"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_isolated_panic_is_still_a_panic() {
        let blockers = Blockers::new(Duration::from_millis(1));
        blockers.caught("boom", Duration::from_secs(1));
        let fut: ToolFuture = Box::pin(async { panic!("boom inside") });
        let caught = crate::task::CatchUnwindExt::catch_unwind(std::panic::AssertUnwindSafe(blockers.run(
            "boom",
            fut,
            &CancellationToken::new(),
            &TaskTracker::new(),
        )))
        .await;
        let panic = caught.expect_err("the panic reaches the caller");
        assert_eq!(crate::logging::panic_message(panic.as_ref()), "boom inside");
    }

    /// The shutdown's drain aborts a call's task when the grace period is over; an isolated
    /// call's thread goes on until the tool returns, and the tracker (what the server waits on
    /// before releasing the workspace lock) counts it until then.
    #[tokio::test(flavor = "current_thread")]
    async fn the_tracker_waits_for_an_isolated_call_whose_task_was_aborted() {
        let blockers = std::sync::Arc::new(Blockers::new(Duration::from_millis(1)));
        blockers.caught("nap", Duration::from_secs(1));
        let tracker = TaskTracker::new();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fut: ToolFuture = {
            let finished = std::sync::Arc::clone(&finished);
            Box::pin(async move {
                let _ = started_tx.send(());
                std::thread::sleep(Duration::from_millis(300));
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(CallToolResult::text("done"))
            })
        };
        let task = {
            let (blockers, tracker2) = (std::sync::Arc::clone(&blockers), tracker.clone());
            tracker.spawn(async move { blockers.run("nap", fut, &CancellationToken::new(), &tracker2).await })
        };
        // Wait (without blocking the runtime) until the tool runs on its thread, then abort.
        while started_rx.try_recv().is_err() {
            tokio::task::yield_now().await;
        }
        task.abort();
        tracker.close();
        tracker.wait().await;
        assert!(
            finished.load(std::sync::atomic::Ordering::SeqCst),
            "wait() returned while the tool still ran"
        );
    }
}
