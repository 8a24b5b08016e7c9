//! Who a request comes from, as its transport knows it ([`Caller`]): made by the transport when
//! the request arrives and carried with it, through the router, into the call's facts.

use std::sync::Arc;

use super::Peer;

/// The caller of one request: who it is, which session of the transport it came on, and where
/// its messages go. The policy binds approvals "for this session" and request states to the
/// principal and the session, and the audit log names the principal.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The authenticated principal, when the transport has one (HTTP with a bearer token:
    /// `token:NAME`; with OAuth, the token's subject).
    pub(crate) principal: Option<Arc<str>>,
    /// The transport's session apart from the process (a legacy session over HTTP).
    pub(crate) session: Option<Arc<str>>,
    /// Where the request's messages go (progress, logs, questions): its own response stream
    /// over HTTP, the process's stdout over stdio.
    pub(crate) peer: Peer,
    /// Who its fair shares count against ([`super::CallerLimits`]), when the transport knows
    /// (HTTP: the principal, or the client's address without authentication).
    pub(crate) counted_as: Option<Arc<str>>,
}

impl Caller {
    /// The process's one client (stdio, or a call made in process): no principal, and no
    /// session apart from the process.
    pub(crate) fn process(peer: &Peer) -> Self {
        Self { principal: None, session: None, peer: peer.clone(), counted_as: None }
    }
}
