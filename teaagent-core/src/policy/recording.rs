//! The audit log's records of a policy's decisions and of the calls that ran (`audit.rs`
//! writes them).

use std::time::Duration;

use super::Policy;
use super::audit::AuditRecord;
use super::facts::CallFacts;
use crate::tool::ToolDef;

impl Policy {
    /// Records a refusal in the audit log, best effort (the call is refused anyway): a log that
    /// cannot be written is logged.
    pub(crate) fn audit_refusal(&self, call: &CallFacts<'_>, rule: &str, outcome: &str) {
        if let Err(e) = self.record(call, rule, outcome) {
            tracing::warn!(error = %e, "the audit log cannot be written");
        }
    }

    /// Records a decision or an outcome in the audit log. `Err` means it could not be written.
    pub fn record(&self, call: &CallFacts<'_>, rule: &str, outcome: &str) -> std::io::Result<()> {
        self.append(call.tool, call.digest, call.principal, rule, outcome, None)
    }

    /// Records that a call `allowed_by` a rule has run (`audit.rs`, "Records"): `outcome` is
    /// `completed`, `failed` or `input_required`, and `ran` how long its handler took. Best
    /// effort: the call has run either way, so a log that cannot be written is only logged.
    pub(crate) fn audit_completion(&self, done: &Completion<'_>, outcome: &str) {
        let ran = Some(AuditRecord::millis(done.ran));
        if let Err(e) = self.append(done.tool, done.digest, done.principal, done.allowed_by, outcome, ran) {
            tracing::warn!(error = %e, "the audit log cannot be written");
        }
    }

    /// One record, when there is a log.
    fn append(
        &self,
        tool: &ToolDef,
        digest: &str,
        principal: Option<&str>,
        rule: &str,
        outcome: &str,
        duration_ms: Option<f64>,
    ) -> std::io::Result<()> {
        let Some(log) = &self.audit else { return Ok(()) };
        log.append(&AuditRecord {
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
        })
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
