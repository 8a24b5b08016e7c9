//! The lines one Streamable HTTP request sends its client while it runs (progress, logs, the
//! server's own requests, such as an approval), waiting for that request's answer to take them.
//!
//! Most requests send none: a fast tool answers before anything else is said. So what every
//! request opens is small and cheap: a queue behind a lock and a wake-up. (A `tokio` channel
//! here cost a sixth of the HTTP path's own work a call: its state is allocated 128-byte
//! aligned, which the allocator serves only on its slow path, plus a block of slots.)
//!
//! The answer takes the lines as they come ([`Taking::changed`], [`Taking::take`])
//! and, once it has ended, closes the queue ([`Taking`]): a line sent after that (a tool's
//! background task that outlived its call) is dropped, as it was on a closed channel.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The lines of one request not yet taken by its answer (module docs).
#[derive(Debug, Default)]
pub(crate) struct RequestLines {
    queue: Mutex<Queue>,
    news: Notify,
}

#[derive(Debug, Default)]
struct Queue {
    lines: Vec<Vec<u8>>,
    closed: bool,
}

impl RequestLines {
    /// An open queue, and the answer's hold on it (which closes it when dropped).
    pub(crate) fn open() -> (Arc<Self>, Taking) {
        let lines = Arc::new(Self::default());
        (Arc::clone(&lines), Taking(lines))
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `line` for the answer; `false` (and the line dropped) once the answer has ended.
    pub(crate) fn push(&self, line: Vec<u8>) -> bool {
        let mut queue = self.queue();
        if queue.closed {
            return false;
        }
        queue.lines.push(line);
        drop(queue);
        self.news.notify_one();
        true
    }
}

/// The answer's side of a request's [`RequestLines`]: it takes the lines, and closes the queue
/// when dropped, however the answer ends.
#[derive(Debug)]
pub(crate) struct Taking(Arc<RequestLines>);

impl Taking {
    /// Every line queued, in the order sent (none: empty).
    pub(crate) fn take(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.0.queue().lines)
    }

    /// Returns when a line was queued since the last time it returned (at once if one was
    /// queued meanwhile). Cancel-safe: a wake-up it did not return is kept for the next call.
    pub(crate) async fn changed(&self) {
        self.0.news.notified().await;
    }
}

impl Drop for Taking {
    fn drop(&mut self) {
        let mut queue = self.0.queue();
        queue.closed = true;
        queue.lines = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_taken_in_order_and_dropped_once_the_answer_ends() {
        let (lines, taking) = RequestLines::open();
        assert!(taking.take().is_empty());
        assert!(lines.push(b"one\n".to_vec()));
        assert!(lines.push(b"two\n".to_vec()));
        // Queued before the wait: it returns at once.
        tokio::time::timeout(std::time::Duration::from_secs(5), taking.changed()).await.expect("woken");
        assert_eq!(taking.take(), [b"one\n".to_vec(), b"two\n".to_vec()]);
        assert!(taking.take().is_empty());
        drop(taking);
        assert!(!lines.push(b"late\n".to_vec()), "the answer has ended");
        assert!(lines.queue().lines.is_empty(), "nothing is kept for an answer that has ended");
    }

    #[tokio::test]
    async fn a_line_sent_while_the_answer_waits_wakes_it() {
        let (lines, taking) = RequestLines::open();
        let sender = tokio::spawn(async move {
            tokio::task::yield_now().await;
            lines.push(b"news\n".to_vec())
        });
        tokio::time::timeout(std::time::Duration::from_secs(5), taking.changed()).await.expect("woken");
        assert!(sender.await.expect("sender"));
        assert_eq!(taking.take(), [b"news\n".to_vec()]);
    }
}
