//! A plain call whose body goes on as a task
//! ([`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task),
//! [`TaskStart::Body`](crate::TaskStart::Body)): the body asks, the server that runs the call
//! creates the task, answers the call with its handle and keeps running the body in the
//! background; the body then goes on where it asked, its questions posted on the task's board.

use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::board::TaskBoard;

/// The body's request to go on as a task, as the server receives it: the sender answers the
/// body once the server is done with it (the task made, or not).
pub(crate) type ContinueAsTask = oneshot::Receiver<oneshot::Sender<()>>;

/// The call's side of the task it became: where its questions and progress go, and what
/// cancels it.
pub(crate) struct BecameTask {
    pub(crate) board: Arc<TaskBoard>,
    pub(crate) cancel: CancellationToken,
}

/// Whether, and how, a plain call may become a task (one per call, in its `Inputs`).
#[derive(Default)]
pub(crate) struct Escalation {
    /// The way to the server, while the call may still become a task (taken by the first ask).
    offered: Mutex<Option<oneshot::Sender<oneshot::Sender<()>>>>,
    /// Set by the server when the call became a task.
    became: OnceLock<BecameTask>,
}

impl Escalation {
    /// Lets the call become a task; the server listens on what this returns.
    pub(crate) fn offer(&self) -> ContinueAsTask {
        let (tx, rx) = oneshot::channel();
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
        rx
    }

    /// The body's request: returns once the server answered it (at once when nothing was
    /// offered, or it was asked already).
    pub(crate) async fn ask(&self) {
        let Some(server) = self.offered.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
        let (done, answered) = oneshot::channel();
        if server.send(done).is_ok() {
            // An error: the server dropped the request, and the call goes on as it was.
            let _ = answered.await;
        }
    }

    /// The server made the task: from now on the call's questions and progress are the task's.
    pub(crate) fn became(&self, task: BecameTask) {
        let _ = self.became.set(task);
    }

    /// The task the call became, if it did.
    pub(crate) fn task(&self) -> Option<&BecameTask> {
        self.became.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn the_body_waits_for_the_server_and_asks_once() {
        let escalation = Arc::new(Escalation::default());
        // Nothing offered: the body goes on at once.
        escalation.ask().await;
        let mut asked = escalation.offer();
        let body = {
            let escalation = Arc::clone(&escalation);
            tokio::spawn(async move { escalation.ask().await })
        };
        let answer = (&mut asked).await.expect("the body asked");
        assert!(!body.is_finished(), "the body waits for the server's answer");
        escalation.became(BecameTask { board: Arc::default(), cancel: CancellationToken::new() });
        answer.send(()).expect("the body waits");
        body.await.expect("the body went on");
        assert!(escalation.task().is_some());
        // A second ask finds nothing offered and returns at once.
        escalation.ask().await;
    }
}
