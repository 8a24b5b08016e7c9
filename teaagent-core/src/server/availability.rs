//! [`ToolAvailability`]: tools of a registry that come and go while the server runs (the
//! gateway's external tools).

/// Tools of a registry whose availability changes while the server runs: the gateway's
/// external tools (`teaagent_core::gateway`, feature `gateway`). A withheld tool is left out of
/// `tools/list` and refused at `tools/call` (`-32000`, `reason: "withheld"`); an external tool
/// that the policy would refuse whatever the call ([`Policy::always_refuses`]) is left out of
/// `tools/list` too (and still refused at `tools/call`). When the set may have changed, the
/// client is told `notifications/tools/list_changed` (the capability says `listChanged: true`).
///
/// [`Policy::always_refuses`]: crate::Policy::always_refuses
pub trait ToolAvailability: Send + Sync + 'static {
    /// Whether anything may change at all (a gateway without servers: no). When not, the
    /// server lists its tools as one without this (cacheable, nothing filtered).
    fn may_change(&self) -> bool {
        true
    }
    /// Whether `tool` is one of these tools.
    fn is_external(&self, tool: &str) -> bool;
    /// Why `tool` is withheld now, if it is.
    fn withheld(&self, tool: &str) -> Option<String>;
    /// Changes whenever the set of available tools may have changed.
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;
    /// What the tools still wait for before they can be served (a gateway's servers that are
    /// starting), or `None` when they are settled: `/readyz` answers `503` until then.
    fn pending(&self) -> Option<String> {
        None
    }
    /// How each external server is doing, for `/metrics` (names as the user's configuration
    /// declares them).
    fn external_servers(&self) -> Vec<ExternalStatus> {
        Vec::new()
    }
}

/// How one external server is doing ([`ToolAvailability::external_servers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalStatus {
    /// Its name, as declared in the configuration.
    pub name: String,
    /// Whether it is running and serving its tools now.
    pub up: bool,
    /// How many times it was started again after its first start.
    pub restarts: u64,
}
