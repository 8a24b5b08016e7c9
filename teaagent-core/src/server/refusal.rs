//! A call refused once its facts are known ([`Refusal`]): a value that carries the error the
//! client gets and what the audit log records of it, audited once by the call pipeline
//! (`call.rs`), whichever step refused.

use crate::error::Error;
use crate::policy::{CallFacts, Policy};

/// A refused call: its error, and the audit log's rule and outcome for it (none for a refusal the
/// log does not record: one it cannot write, an overloaded server, a client that cannot be
/// asked).
#[derive(Debug)]
pub(crate) struct Refusal {
    error: Error,
    audit: Option<(String, &'static str)>,
}

impl Refusal {
    /// A refusal the audit log records as `outcome` (`denied`, `refused`, `rate_limited`,
    /// `locked`) by `rule`.
    pub(crate) fn audited(error: Error, rule: impl Into<String>, outcome: &'static str) -> Self {
        Self { error, audit: Some((rule.into(), outcome)) }
    }

    /// The call to `tool` denied by `rule` (`-32001`, `approval_denied`, with what to do in
    /// `details`), recorded as `denied` by that rule.
    pub(crate) fn denied(tool: &str, rule: String, details: impl Into<String>) -> Self {
        let error =
            Error::ApprovalDenied { tool: tool.to_owned(), rule: rule.clone(), details: details.into() };
        Self::audited(error, rule, "denied")
    }

    /// Records the refusal of the call `facts` describe (best effort: it is refused anyway) and
    /// gives its error.
    pub(crate) fn audit(self, policy: &Policy, facts: &CallFacts<'_>) -> Error {
        if let Some((rule, outcome)) = &self.audit {
            policy.audit_refusal(facts, rule, outcome);
        }
        self.error
    }
}

impl From<Error> for Refusal {
    /// A refusal the audit log does not record.
    fn from(error: Error) -> Self {
        Self { error, audit: None }
    }
}
