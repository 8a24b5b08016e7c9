//! Approval questions waiting for their turn.
//!
//! A question goes to one party: the terminal the server runs on (one person, so one question at
//! a time for the whole process), or one client (the session's client over stdio, one legacy
//! session over Streamable HTTP: one at a time each, and a session's "for this session" answer
//! is seen by the questions waiting behind it). Questions to different parties never wait for
//! each other: one caller's unanswered question cannot hold back another caller's.
//!
//! Each caller ([`crate::session::CallerLimits::questions`]) may have only so many questions open,
//! asked or waiting; one more is refused at once ([`Error::CallerLimit`]), so no caller can
//! queue enough questions to fill the terminal's line for long or hold its calls without end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

use crate::error::{CallerShare, Error};
use crate::session::Peer;
use crate::session::fairness::{Share, Shares};

/// Who a question is put to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Party {
    /// The server's controlling terminal.
    Terminal,
    /// A client, through `elicitation/create`: the transport's session (a legacy session over
    /// HTTP), or `None` for the process's one client (stdio).
    Client(Option<Arc<str>>),
}

impl Party {
    /// Who [`super::ask::ask`] will put a question about a call on `session` to.
    pub(crate) fn asked_through(peer: Option<&Peer>, session: Option<&str>) -> Self {
        if super::ask::asks_client(peer) { Party::Client(session.map(Arc::from)) } else { Party::Terminal }
    }
}

/// The lines of questions, one per party asked, and the questions each caller has open.
#[derive(Debug)]
pub(crate) struct Questions {
    lines: Mutex<HashMap<Party, Arc<tokio::sync::Mutex<()>>>>,
    open: Arc<Shares>,
    per_caller: usize,
}

/// A question's turn: while it is held, no other question goes to the same party. Its line is
/// forgotten when nobody else is in it.
pub(crate) struct Turn<'a> {
    questions: &'a Questions,
    party: Party,
    line: Arc<tokio::sync::Mutex<()>>,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Questions {
    /// No question yet; each caller may have `per_caller` open.
    pub(crate) fn new(per_caller: usize) -> Self {
        Self { lines: Mutex::new(HashMap::new()), open: Shares::new(CallerShare::Questions), per_caller }
    }

    /// The same, with `per_caller` questions open per caller.
    pub(crate) fn per_caller(self, per_caller: usize) -> Self {
        Self { per_caller: per_caller.max(1), ..self }
    }

    fn lines(&self) -> std::sync::MutexGuard<'_, HashMap<Party, Arc<tokio::sync::Mutex<()>>>> {
        self.lines.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a question of `caller` as open (until the share is dropped), or refuses it when
    /// the caller has its most open. No caller (stdio): nothing to count.
    pub(crate) fn open(&self, caller: Option<&Arc<str>>) -> Result<Option<Share>, Error> {
        self.open.take_for(caller, self.per_caller)
    }

    /// Waits for the turn to ask `party` (first come, first asked).
    pub(crate) async fn turn(&self, party: Party) -> Turn<'_> {
        let line = Arc::clone(self.lines().entry(party.clone()).or_default());
        let mut turn = Turn { questions: self, party, line, guard: None };
        turn.guard = Some(Arc::clone(&turn.line).lock_owned().await);
        turn
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut lines = self.questions.lines();
        // The table's and this turn's: nobody else waits in this line (a waiter takes its
        // handle under the table's lock, so none can appear meanwhile).
        if Arc::strong_count(&self.line) == 2 {
            lines.remove(&self.party);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn different_parties_never_wait_for_each_other() {
        let questions = Questions::new(4);
        let a = Party::Client(Some(Arc::from("session-a")));
        let b = Party::Client(Some(Arc::from("session-b")));
        let _held = questions.turn(a.clone()).await;
        let other = tokio::time::timeout(Duration::from_secs(5), questions.turn(b)).await;
        assert!(other.is_ok(), "another client's question is asked at once");
        let same = tokio::time::timeout(Duration::from_millis(50), questions.turn(a)).await;
        assert!(same.is_err(), "the same client is asked one question at a time");
    }

    #[tokio::test]
    async fn a_line_nobody_is_in_is_forgotten() {
        let questions = Questions::new(4);
        drop(questions.turn(Party::Terminal).await);
        let waiting = tokio::time::timeout(Duration::from_millis(10), async {
            let _first = questions.turn(Party::Client(None)).await;
            questions.turn(Party::Client(None)).await
        })
        .await;
        assert!(waiting.is_err());
        assert!(questions.lines().is_empty(), "{:?}", questions.lines().keys().collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_caller_has_only_so_many_questions_open() {
        let questions = Questions::new(1).per_caller(2);
        let caller: Option<Arc<str>> = Some(Arc::from("token:a"));
        let first = questions.open(caller.as_ref()).expect("first");
        let _second = questions.open(caller.as_ref()).expect("second");
        let refused = questions.open(caller.as_ref()).expect_err("third");
        assert_eq!(refused, Error::CallerLimit { share: CallerShare::Questions, max: 2 });
        drop(first);
        assert!(questions.open(caller.as_ref()).is_ok());
        assert!(questions.open(None).expect("no caller").is_none(), "stdio has no caller to count");
    }
}
