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
    /// [`GrantUses::spend`], counted in the fleet's shared state when `policy` has one (one
    /// round trip, all or none). A grant the fleet has used up is also marked used up here, so
    /// this replica stops offering it (and asks, in `prompt` mode).
    pub async fn spend_anywhere(self, policy: &Policy) -> Result<(), UsesRefusal> {
        #[cfg(feature = "redis")]
        if let Some(state) = policy.shared.get()
            && !self.0.is_empty()
        {
            let grants: Vec<(&str, u64)> =
                self.0.iter().map(|g| (g.text(), g.uses_total().unwrap_or(0))).collect();
            return match state.take_uses(&grants).await {
                Ok(None) => Ok(()),
                Ok(Some(i)) => {
                    let grant = &self.0[i.min(self.0.len() - 1)];
                    grant.exhaust();
                    Err(UsesRefusal::NoneLeft(grant.text().to_owned()))
                }
                Err(e) => Err(UsesRefusal::Unavailable(e.0)),
            };
        }
        let _ = policy;
        self.spend().map_err(UsesRefusal::NoneLeft)
    }

    /// Spends one use of each grant, all or none: `Err(grant)` names a grant whose last use was
    /// spent by a call admitted since the decision (the call is then refused).
    pub fn spend(self) -> Result<(), String> {
        for (i, grant) in self.0.iter().enumerate() {
            if !grant.take_use() {
                for taken in &self.0[..i] {
                    taken.refund_use();
                }
                return Err(grant.text().to_owned());
            }
        }
        Ok(())
    }
}

/// Why [`GrantUses::spend_anywhere`] spent nothing.
#[derive(Debug, Clone)]
pub enum UsesRefusal {
    /// This grant has no use left (calls admitted since the decision spent them).
    NoneLeft(String),
    /// The fleet's shared state cannot be reached.
    Unavailable(String),
}
