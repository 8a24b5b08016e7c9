//! The workspace lock: who holds the root (or a directory above or below it), and whether that
//! process is alive.

use std::path::Path;

use teaagent_core::visible::escape;
use teaagent_core::workspace::lock::{LockRegistry, LockedRoot};

use super::{Finding, shown};

pub(super) fn check(root: &Path, home: Option<&Path>, findings: &mut Vec<Finding>) {
    let Ok(root) = std::fs::canonicalize(root) else { return }; // said by the configuration's check
    let subject = shown(&root);
    let Some(home) = home else {
        findings.push(Finding::ok("lock", subject, "not locked (no server has run yet)"));
        return;
    };
    let holders = match LockRegistry::in_dir(home).and_then(|locks| locks.holders(&LockedRoot::of(&root))) {
        Ok(holders) => holders,
        Err(e) => {
            findings.push(
                Finding::error("lock", subject, escape(&format!("cannot read the lock registry: {e}")))
                    .fix("see the home directory's findings above"),
            );
            return;
        }
    };
    if holders.is_empty() {
        findings.push(Finding::ok("lock", subject.clone(), "not locked: a server started here takes it"));
    }
    for (record, alive) in holders {
        let what = if record.workspace_path == root {
            String::new()
        } else {
            format!(" (as {})", shown(&record.workspace_path))
        };
        if alive {
            findings.push(
                Finding::warning(
                    "lock",
                    subject.clone(),
                    format!(
                        "held{what} by teaagent pid {} since {}: another server here refuses edits and commands until it exits",
                        record.owner_pid,
                        escape(&record.acquired_at)
                    ),
                )
                .fix(format!("stop that server (kill {}) if it is not wanted, or serve another root", record.owner_pid)),
            );
        } else {
            findings.push(Finding::ok(
                "lock",
                subject.clone(),
                format!(
                    "a stale record{what} of pid {} (since {}), which is not running: ignored, and dropped when the next server starts",
                    record.owner_pid,
                    escape(&record.acquired_at)
                ),
            ));
        }
    }
}
