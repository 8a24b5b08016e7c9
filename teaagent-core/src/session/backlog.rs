//! What the server has said and the client has not yet read, on a transport with one writer
//! (stdio): the bytes handed to the writer and not yet written.
//!
//! A client that sends requests and does not read the answers would otherwise make the server
//! hold every answer: 3,000 `read_file` calls of a 900 KB file held 800 MiB. Past
//! [`MAX_BACKLOG`], until the writer has brought the backlog down to [`RESUME_AT`], the loop
//! that reads requests reads no further one (the client's requests wait in its pipe, and its
//! writes block, as with any peer that stops reading) and no call starts running (calls read
//! earlier wait for their turn). Calls already running finish, and their answers are kept:
//! nothing is dropped, and what waits is bounded by the limit plus what the running calls
//! (at most `ServerConfig::max_in_flight`) answer.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// Past this many unwritten bytes, no further request is read.
pub(crate) const MAX_BACKLOG: usize = 16 << 20;
/// Reading resumes once the backlog is down to this.
pub(crate) const RESUME_AT: usize = 4 << 20;

/// Bytes handed to the writer and not yet written (module docs).
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    drained: Notify,
    /// The writer is gone (the client went away, or the session ended): nothing will be written
    /// any more, and nothing waits for it.
    closed: AtomicBool,
}

impl Backlog {
    /// `n` more bytes for the writer.
    pub(crate) fn add(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// The writer wrote `n` bytes.
    pub(crate) fn written(&self, n: usize) {
        let before = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| Some(b.saturating_sub(n)))
            .unwrap_or_default();
        if before > RESUME_AT && before.saturating_sub(n) <= RESUME_AT {
            self.drained.notify_waiters();
        }
    }

    /// The writer stopped: whoever waits for room goes on (the session is ending; what is still
    /// sent goes nowhere).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.drained.notify_waiters();
    }

    /// Whether the backlog is past [`MAX_BACKLOG`] (then [`Backlog::room`] waits), while the
    /// writer is there.
    pub(crate) fn is_over(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) > MAX_BACKLOG && !self.closed.load(Ordering::Relaxed)
    }

    /// Returns at once while the backlog is under [`MAX_BACKLOG`]; past it, once it is down to
    /// [`RESUME_AT`].
    pub(crate) async fn room(&self) {
        if !self.is_over() {
            return;
        }
        tracing::debug!("the client is not reading its answers: reading no further request until it does");
        loop {
            let drained = self.drained.notified();
            let mut drained = std::pin::pin!(drained);
            drained.as_mut().enable();
            if self.bytes.load(Ordering::Relaxed) <= RESUME_AT || self.closed.load(Ordering::Relaxed) {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reading_stops_past_the_limit_and_resumes_once_drained() {
        let backlog = std::sync::Arc::new(Backlog::default());
        backlog.add(MAX_BACKLOG);
        tokio::time::timeout(std::time::Duration::from_secs(1), backlog.room())
            .await
            .expect("at the limit, room");
        backlog.add(1);
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.room().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "past the limit, no room");
        backlog.written(MAX_BACKLOG - RESUME_AT);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "not yet down to where reading resumes");
        backlog.written(1);
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("resumed")
            .expect("task");
        // More written than was counted never wraps around.
        backlog.written(usize::MAX);
        tokio::time::timeout(std::time::Duration::from_secs(1), backlog.room()).await.expect("room");
    }

    #[tokio::test]
    async fn a_writer_gone_lets_every_waiter_go_on() {
        let backlog = std::sync::Arc::new(Backlog::default());
        backlog.add(MAX_BACKLOG + 1);
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.room().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "past the limit, no room");
        backlog.close();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("went on")
            .expect("task");
        assert!(!backlog.is_over(), "nothing is behind once nothing can be written");
    }
}
