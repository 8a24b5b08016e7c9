//! Step 5: the workspace lock, which tools that may write need this server to hold.

use crate::error::{Error, Failure};
use crate::server::shared::Shared;
use crate::workspace::lock::LockRefusal;

/// Tools that may write need this server to hold the workspace lock (tried again each time).
pub(super) async fn check_lock(shared: &Shared, tool: &str) -> Result<(), Error> {
    let Some(lock) = shared.lock.clone() else { return Ok(()) };
    if lock.is_held() {
        return Ok(());
    }
    let outcome = tokio::task::spawn_blocking(move || lock.ensure())
        .await
        .map_err(|e| Error::Internal { details: e.to_string() })?;
    match outcome {
        Ok(()) => Ok(()),
        Err(LockRefusal::HeldBy(owner)) => Err(Error::WorkspaceLocked {
            tool: tool.to_owned(),
            owner_pid: owner.owner_pid,
            acquired_at: owner.acquired_at,
        }),
        Err(LockRefusal::Unavailable(details)) => {
            Err(Error::ToolFailed { tool: tool.to_owned(), reason: Failure::Internal, details })
        }
    }
}
