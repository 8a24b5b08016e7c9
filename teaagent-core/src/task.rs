//! The three small async helpers the server needs, written here rather than pulled in:
//! `futures-util` (for [`BoxFuture`] and `catch_unwind`) and tokio-util's `rt` feature (for a
//! task tracker) would bring five crates, a proc-macro among them, into every server built on
//! teaagent-core, for some forty lines.
//!
//! - [`BoxFuture`]: the same alias as `futures_util::future::BoxFuture` (one type: a future
//!   boxed by either is accepted by both).
//! - [`CatchUnwindExt::catch_unwind`]: a panic while polling becomes an `Err` with its payload,
//!   as `futures_util::FutureExt::catch_unwind` does.
//! - [`TaskTracker`]: spawns tasks and waits, once closed, until every one of them has ended
//!   (finished, or aborted: an aborted task's future is dropped, which counts it out).
//!
//! And [`end_runtime`]: how every runtime of ours ends.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, UnwindSafe};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A boxed, `Send` future: what a [`Handler`](crate::Handler) and a
/// [`ResourceProvider`](crate::ResourceProvider) return. The same type as
/// `futures_util::future::BoxFuture`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pin_project_lite::pin_project! {
    /// The future of [`CatchUnwindExt::catch_unwind`].
    pub(crate) struct CatchUnwind<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future + UnwindSafe> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// `future.catch_unwind()`: a panic inside the future is returned, not propagated.
pub(crate) trait CatchUnwindExt: Future + UnwindSafe + Sized {
    fn catch_unwind(self) -> CatchUnwind<Self> {
        CatchUnwind { inner: self }
    }
}

impl<F: Future + UnwindSafe> CatchUnwindExt for F {}

/// Tracks spawned tasks; [`TaskTracker::wait`] returns once the tracker is closed and no tracked
/// task is left. Cheap to clone (clones track together).
#[derive(Clone, Default)]
pub(crate) struct TaskTracker {
    inner: Arc<Tracked>,
}

#[derive(Default)]
struct Tracked {
    running: AtomicUsize,
    closed: AtomicBool,
    changed: Notify,
}

impl Tracked {
    fn done(&self) -> bool {
        self.closed.load(Ordering::SeqCst) && self.running.load(Ordering::SeqCst) == 0
    }
}

/// Held by a tracked task's future: dropping it (the task ended or was aborted) counts it out.
pub(crate) struct Running(Arc<Tracked>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.changed.notify_waiters();
        }
    }
}

impl TaskTracker {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Spawns `task` on the current runtime, tracked.
    pub(crate) fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.running.fetch_add(1, Ordering::SeqCst);
        let running = Running(Arc::clone(&self.inner));
        tokio::spawn(async move {
            let _running = running;
            task.await
        })
    }

    /// Counts work that runs outside any tracked task (a blocking-pool thread) until the
    /// returned guard is dropped: [`TaskTracker::wait`] waits for it too.
    pub(crate) fn hold(&self) -> Running {
        self.inner.running.fetch_add(1, Ordering::SeqCst);
        Running(Arc::clone(&self.inner))
    }

    /// No more tasks are expected: [`TaskTracker::wait`] may return.
    pub(crate) fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.changed.notify_waiters();
    }

    /// Waits until the tracker is closed and every tracked task has ended.
    pub(crate) async fn wait(&self) {
        loop {
            let mut changed = pin!(self.inner.changed.notified());
            // Registered before the check, so a change between the check and the await is seen.
            changed.as_mut().enable();
            if self.inner.done() {
                return;
            }
            changed.await;
        }
    }
}

/// Ends `runtime` once its work is done, without waiting for threads of its blocking pool that
/// are still running: a blocking tool, or a call cut off at the stop while it waits on a thread of
/// its own (for a file lock another process holds, a slow filesystem), cannot be interrupted, and
/// dropping the runtime would wait for it. They get 100 ms, then end with the process.
pub fn end_runtime(runtime: tokio::runtime::Runtime) {
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn wait_returns_once_closed_and_every_task_ended_or_was_aborted() {
        let tracker = TaskTracker::new();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let finishing = tracker.spawn(async move {
            let _ = rx.await;
        });
        let forever = tracker.spawn(std::future::pending::<()>());
        tracker.close();
        // Two tasks still run: waiting does not end.
        assert!(tokio::time::timeout(Duration::from_millis(20), tracker.wait()).await.is_err());
        let _ = tx.send(());
        let _ = finishing.await;
        assert!(tokio::time::timeout(Duration::from_millis(20), tracker.wait()).await.is_err());
        forever.abort();
        tokio::time::timeout(Duration::from_secs(10), tracker.wait()).await.expect("all tasks ended");
    }

    #[tokio::test]
    async fn an_open_tracker_is_not_done_even_when_empty() {
        let tracker = TaskTracker::new();
        assert!(tokio::time::timeout(Duration::from_millis(20), tracker.wait()).await.is_err());
        let waiter = tokio::spawn({
            let tracker = tracker.clone();
            async move { tracker.wait().await }
        });
        tracker.close();
        tokio::time::timeout(Duration::from_secs(10), waiter).await.expect("closed").expect("joined");
    }

    #[tokio::test]
    async fn a_panic_while_polling_is_returned() {
        let panicking = AssertUnwindSafe(async {
            tokio::task::yield_now().await;
            panic!("boom")
        })
        .catch_unwind();
        let err: Box<dyn Any + Send> = panicking.await.expect_err("the panic");
        assert_eq!(err.downcast_ref::<&str>(), Some(&"boom"));
        assert_eq!(AssertUnwindSafe(async { 7 }).catch_unwind().await.ok(), Some(7));
    }
}
