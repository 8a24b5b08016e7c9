//! Where a request's answer goes: straight to the writer, or into a batch that is written as one
//! array once all its requests are answered. A request that is cancelled drops its [`Reply`]
//! unsent; a batch then simply has one answer fewer.

use std::sync::{Arc, Mutex};

use crate::session::peer::Peer;

/// The answer slot of one request.
pub(crate) struct Reply {
    target: Option<Target>,
}

enum Target {
    Direct(Peer),
    Batch(Arc<Batch>),
}

impl Reply {
    pub(crate) fn direct(peer: Peer) -> Self {
        Self { target: Some(Target::Direct(peer)) }
    }

    /// Sends the answer (a complete line).
    pub(crate) fn send(mut self, line: Vec<u8>) {
        match self.target.take() {
            Some(Target::Direct(peer)) => peer.send_line(line),
            Some(Target::Batch(batch)) => batch.done(Some(line)),
            None => {}
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(Target::Batch(batch)) = self.target.take() {
            batch.done(None);
        }
    }
}

/// The answers of one batch.
pub(crate) struct Batch {
    peer: Peer,
    state: Mutex<State>,
}

struct State {
    /// Answers still expected, plus one while the batch is being taken apart.
    pending: usize,
    parts: Vec<Vec<u8>>,
}

impl Batch {
    pub(crate) fn new(peer: Peer) -> Arc<Self> {
        Arc::new(Self { peer, state: Mutex::new(State { pending: 1, parts: Vec::new() }) })
    }

    /// A slot for one more answer.
    pub(crate) fn reply(self: &Arc<Self>) -> Reply {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).pending += 1;
        Reply { target: Some(Target::Batch(Arc::clone(self))) }
    }

    /// Every element has been dispatched.
    pub(crate) fn sealed(&self) {
        self.done(None);
    }

    fn done(&self, line: Option<Vec<u8>>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut line) = line {
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            state.parts.push(line);
        }
        state.pending -= 1;
        if state.pending > 0 || state.parts.is_empty() {
            return;
        }
        let parts = std::mem::take(&mut state.parts);
        drop(state);
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum::<usize>() + 2);
        out.push(b'[');
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(part);
        }
        out.extend_from_slice(b"]\n");
        self.peer.send_line(out);
    }
}
