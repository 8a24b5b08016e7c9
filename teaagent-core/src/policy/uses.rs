//! Counted grants' uses: looked at when a call is decided, spent only when it is admitted.

use std::sync::Arc;

use super::Policy;
use super::grant::Grant;

/// The grants with a use count that approved a call, not yet spent. Policy only looks at the
/// counts when it decides; the pipeline spends the uses once the call passed every other check
/// (rate limit, workspace lock, unchanged targets), so a call refused at any step uses no grant
/// and calls waiting for a step never hold uses that others need. Dropping it spends nothing.
#[derive(Debug, Default)]
pub struct GrantUses(pub(super) Vec<Arc<Grant>>);

impl GrantUses {
    /// Spends one use of each grant in the policy's store (for a fleet, one round trip), all or
    /// none. A grant the store has used up is also marked used up here, so this process stops
    /// offering it (and asks, in `prompt` mode).
    pub async fn spend(self, policy: &Policy) -> Result<(), UsesRefusal> {
        if self.0.is_empty() {
            return Ok(());
        }
        let grants: Vec<(&str, u64)> =
            self.0.iter().map(|g| (g.text(), g.uses_total().unwrap_or(0))).collect();
        match policy.store().take_uses(&grants).await {
            Ok(None) => {
                for grant in &self.0 {
                    grant.note_used();
                }
                Ok(())
            }
            Ok(Some(i)) => {
                let grant = &self.0[i.min(self.0.len() - 1)];
                grant.exhaust();
                Err(UsesRefusal::NoneLeft(grant.text().to_owned()))
            }
            Err(e) => Err(UsesRefusal::Unavailable(e.0)),
        }
    }
}

/// Why [`GrantUses::spend`] spent nothing.
#[derive(Debug, Clone)]
pub enum UsesRefusal {
    /// This grant has no use left (calls admitted since the decision spent them).
    NoneLeft(String),
    /// The fleet's shared state cannot be reached.
    Unavailable(String),
}
