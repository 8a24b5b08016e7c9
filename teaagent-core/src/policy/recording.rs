//! The audit log's records of a policy's decisions and of the calls that ran (`audit.rs`
//! writes them).

use std::time::Duration;

use super::Policy;
use super::audit::{AuditRecord, AuditWrite};
use super::facts::CallFacts;
use crate::tool::ToolDef;

impl Policy {
    /// Records a refusal in the audit log, best effort (the call is refused anyway): a log that
    /// cannot be written is logged. Never waits on the runtime's thread (`audit.rs`, "Waiting
    /// for the lock").
    pub(crate) fn audit_refusal(&self, call: &CallFacts<'_>, rule: &str, outcome: &str) {
        let Some(log) = &self.audit else { return };
        log.append_best_effort(&self.audit_record(
            call.tool,
            call.digest,
            call.principal,
            rule,
            outcome,
            None,
        ));
    }

    /// Records a decision or an outcome in the audit log. `Err` means it could not be written.
    /// Another process's lock on the log is waited for a few seconds at most (`audit.rs`,
    /// "Waiting for the lock"); a server's own calls use `Policy::record_aside`, which does
    /// not keep a thread of the runtime waiting meanwhile.
    pub fn record(&self, call: &CallFacts<'_>, rule: &str, outcome: &str) -> std::io::Result<()> {
        let Some(log) = &self.audit else { return Ok(()) };
        log.append(&self.audit_record(call.tool, call.digest, call.principal, rule, outcome, None))
    }

    /// [`Policy::record`], waiting for another process's lock, if it must, on the blocking pool
    /// (the [`AuditWrite`] says when it is written).
    pub(crate) fn record_aside(&self, call: &CallFacts<'_>, rule: &str, outcome: &str) -> AuditWrite {
        let Some(log) = &self.audit else { return AuditWrite::nothing() };
        log.append_aside(&self.audit_record(call.tool, call.digest, call.principal, rule, outcome, None))
    }

    /// Records that a call `allowed_by` a rule has run (`audit.rs`, "Records"): `outcome` is
    /// `completed`, `failed` or `input_required`, and `ran` how long its handler took. Best
    /// effort: the call has run either way, so a log that cannot be written is only logged.
    /// Never waits on the runtime's thread, as [`Policy::audit_refusal`].
    pub(crate) fn audit_completion(&self, done: &Completion<'_>, outcome: &str) {
        let Some(log) = &self.audit else { return };
        let ran = Some(AuditRecord::millis(done.ran));
        log.append_best_effort(&self.audit_record(
            done.tool,
            done.digest,
            done.principal,
            done.allowed_by,
            outcome,
            ran,
        ));
    }

    /// One record of this policy's log.
    fn audit_record<'a>(
        &'a self,
        tool: &'a ToolDef,
        digest: &'a str,
        principal: Option<&'a str>,
        rule: &'a str,
        outcome: &'a str,
        duration_ms: Option<f64>,
    ) -> AuditRecord<'a> {
        AuditRecord {
            time: AuditRecord::now(),
            tool: tool.name(),
            tier: tool.tier().as_str(),
            digest,
            mode: self.mode.as_str(),
            rule,
            outcome,
            principal,
            sandbox: self.sandbox_for(tool),
            duration_ms,
        }
    }
}

/// A call that has run, as its completion record names it ([`Policy::audit_completion`]).
#[derive(Debug)]
pub(crate) struct Completion<'a> {
    /// The tool.
    pub(crate) tool: &'a ToolDef,
    /// The call's payload digest (as its decision's record has it).
    pub(crate) digest: &'a str,
    /// Who made it, when the transport named the caller.
    pub(crate) principal: Option<&'a str>,
    /// The rule that allowed it.
    pub(crate) allowed_by: &'a str,
    /// How long its handler ran.
    pub(crate) ran: Duration,
}
