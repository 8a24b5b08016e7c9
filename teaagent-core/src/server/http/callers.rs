//! The callers of protocol 2026-07-28 requests, remembered by the text of their `_meta`.
//!
//! A request of that protocol carries its caller whole in `_meta` (the version, the client's
//! capabilities and name, the log level it wants), and a client sends the same `_meta` with every
//! request. Reading it into a [`SessionInfo`] (a capabilities structure, strings, a log level) was
//! the larger part of the modern checks (about 4,000 of their 6,900 instructions a call, measured
//! with callgrind on the echo over HTTP). The last few callers are kept by their `_meta`'s exact
//! text: a request whose `_meta` is byte for byte one seen before gets the same caller, which
//! that text alone made. Only a caller whose `_meta` passed every check it is read for is kept, and
//! only a `_meta` of at most [`MAX_META_BYTES`] (a larger one is read each time).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::session::SessionInfo;

/// How many callers are kept: a few clients at once (each keeps its own `_meta`).
const KEPT: usize = 8;

/// The largest `_meta` remembered, in bytes; one with a progress token (new with every request)
/// is never seen again, and is not kept long: each new one pushes out the oldest.
pub(super) const MAX_META_BYTES: usize = 1024;

/// The callers last read, newest first.
#[derive(Debug, Default)]
pub(crate) struct Callers {
    kept: Mutex<VecDeque<(Box<str>, Arc<SessionInfo>)>>,
}

impl Callers {
    /// The caller a `_meta` of exactly this text made, if it is kept.
    pub(super) fn get(&self, meta: &str) -> Option<Arc<SessionInfo>> {
        let kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.iter().find(|(text, _)| **text == *meta).map(|(_, caller)| Arc::clone(caller))
    }

    /// Keeps the caller a `_meta` of this text made (not when the text is too long).
    pub(super) fn keep(&self, meta: &str, caller: &Arc<SessionInfo>) {
        if meta.len() > MAX_META_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() == KEPT {
            kept.pop_back();
        }
        kept.push_front((meta.into(), Arc::clone(caller)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::ProtocolVersion;

    fn caller(name: &str) -> Arc<SessionInfo> {
        Arc::new(SessionInfo {
            version: ProtocolVersion::MODERN[0],
            capabilities: Default::default(),
            client: crate::mcp::Implementation { name: name.into(), version: "1".into(), title: None },
            log_level: None,
        })
    }

    #[test]
    fn the_exact_text_finds_its_caller_and_the_oldest_goes_first() {
        let callers = Callers::default();
        callers.keep("{\"a\":1}", &caller("a"));
        assert_eq!(callers.get("{\"a\":1}").expect("kept").client.name, "a");
        assert!(callers.get("{\"a\": 1}").is_none(), "another spelling is read again");
        for i in 0..KEPT {
            callers.keep(&format!("{{\"n\":{i}}}"), &caller(&i.to_string()));
        }
        assert!(callers.get("{\"a\":1}").is_none(), "pushed out by newer ones");
        assert_eq!(callers.get("{\"n\":0}").expect("kept").client.name, "0");
        let long = format!("{{\"x\":\"{}\"}}", "x".repeat(MAX_META_BYTES));
        callers.keep(&long, &caller("long"));
        assert!(callers.get(&long).is_none(), "a long _meta is not kept");
    }
}
