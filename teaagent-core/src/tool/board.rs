//! A running task's board: the questions its tool asked and the client's answers to them, and
//! the tool's latest progress message.
//!
//! A tool that runs as a task asks with the same [`ToolContext::ask`](crate::ToolContext::ask)
//! as any other; its questions are posted here, the task shows `input_required` with them until
//! the client answers through `tasks/update`, and `ask` then returns the answers. Nothing is
//! replayed: the tool waits where it asked. Answers to keys that were not asked are ignored; a
//! partial answer leaves the other questions open.

use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::mcp::JsonObject;

/// Most questions one task may have open at once (a hostile tool cannot grow a record without
/// bound).
const MAX_OPEN: usize = 64;

/// The questions, answers and progress of one task (shared by its tool and the task store).
#[derive(Debug, Default)]
pub(crate) struct TaskBoard {
    state: Mutex<State>,
    answered: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Open questions by key: `{"method": …, "params": …}`.
    questions: JsonObject,
    /// Answers given, by key.
    answers: JsonObject,
    /// The tool's latest progress, for a person.
    message: Option<String>,
}

/// Why [`TaskBoard::ask`] gives no answers.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// The task was cancelled while it waited.
    Cancelled,
    /// Too many questions open at once.
    TooMany,
}

impl TaskBoard {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Posts the questions not answered yet and waits until every one is answered (or `cancel`
    /// fires); the answers by key.
    pub(crate) async fn ask(
        &self,
        questions: Vec<(String, Value)>,
        cancel: &CancellationToken,
    ) -> Result<JsonObject, NoAnswer> {
        let keys: Vec<String> = questions.iter().map(|(k, _)| k.clone()).collect();
        {
            let mut state = self.state();
            for (key, question) in questions {
                if !state.answers.contains_key(&key) {
                    state.questions.insert(key, question);
                }
            }
            if state.questions.len() > MAX_OPEN {
                for key in &keys {
                    state.questions.remove(key);
                }
                return Err(NoAnswer::TooMany);
            }
        }
        loop {
            let answered = self.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            {
                let state = self.state();
                if keys.iter().all(|k| state.answers.contains_key(k)) {
                    return Ok(keys
                        .iter()
                        .filter_map(|k| Some((k.clone(), state.answers.get(k)?.clone())))
                        .collect());
                }
            }
            tokio::select! {
                () = &mut answered => {}
                () = cancel.cancelled() => return Err(NoAnswer::Cancelled),
            }
        }
    }

    /// Takes the client's answers to open questions (others are ignored).
    pub(crate) fn answer(&self, responses: JsonObject) {
        let mut state = self.state();
        let mut any = false;
        for (key, answer) in responses {
            if state.questions.remove(&key).is_some() {
                state.answers.insert(key, answer);
                any = true;
            }
        }
        drop(state);
        if any {
            self.answered.notify_waiters();
        }
    }

    /// The open questions, if any.
    pub(crate) fn open_questions(&self) -> Option<JsonObject> {
        let state = self.state();
        (!state.questions.is_empty()).then(|| state.questions.clone())
    }

    /// Records the tool's latest progress message.
    pub(crate) fn set_message(&self, message: String) {
        self.state().message = Some(message);
    }

    /// The tool's latest progress message.
    pub(crate) fn message(&self) -> Option<String> {
        self.state().message.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn partial_answers_keep_the_rest_open_and_unknown_keys_are_ignored() {
        let board = Arc::new(TaskBoard::default());
        let cancel = CancellationToken::new();
        let asking = {
            let (board, cancel) = (Arc::clone(&board), cancel.clone());
            tokio::spawn(async move {
                board
                    .ask(
                        vec![("a".into(), json!({"method": "m"})), ("b".into(), json!({"method": "m"}))],
                        &cancel,
                    )
                    .await
            })
        };
        while board.open_questions().map_or(0, |q| q.len()) < 2 {
            tokio::task::yield_now().await;
        }
        let mut first = JsonObject::new();
        first.insert("a".into(), json!({"action": "accept"}));
        first.insert("nobody-asked".into(), json!({}));
        board.answer(first);
        let open = board.open_questions().expect("b is still open");
        assert_eq!(open.keys().collect::<Vec<_>>(), ["b"]);
        let mut second = JsonObject::new();
        second.insert("b".into(), json!({"action": "decline"}));
        board.answer(second);
        let answers = asking.await.expect("the task ends").expect("answers");
        assert_eq!(answers["a"]["action"], "accept");
        assert_eq!(answers["b"]["action"], "decline");
        assert!(board.open_questions().is_none());
    }

    #[tokio::test]
    async fn a_cancelled_task_stops_waiting() {
        let board = TaskBoard::default();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(board.ask(vec![("a".into(), json!({}))], &cancel).await, Err(NoAnswer::Cancelled));
    }
}
