//! Who a request comes from: the client session it arrived on ([`Peer`], [`SessionInfo`]), the
//! caller it counts against, and that caller's fair share of the server ([`CallerLimits`]).
//!
//! The transports make a request's `Caller` when it arrives (stdio: one client; Streamable HTTP:
//! one per session, the caller being the authenticated principal or the client's address) and
//! pass it on with the request.

pub(crate) mod backlog;
mod caller;
pub(crate) mod fairness;
pub(crate) mod outbox;
pub(crate) mod peer;
#[cfg(feature = "http")]
pub(crate) mod request_lines;

pub(crate) use caller::Caller;
pub use fairness::CallerLimits;
pub use peer::{Peer, PeerError, SessionInfo};
