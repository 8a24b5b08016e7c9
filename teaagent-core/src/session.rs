//! Who a request comes from: the client session it arrived on ([`Peer`], [`SessionInfo`]), the
//! caller it counts against, and that caller's fair share of the server ([`CallerLimits`]).
//!
//! The transports set these when a request arrives (stdio: one client; Streamable HTTP: one per
//! session, the caller being the authenticated principal or the client's address); everything
//! above reads them from here.

pub(crate) mod fairness;
pub(crate) mod peer;

pub use fairness::CallerLimits;
pub use peer::{Peer, PeerError, SessionInfo};
