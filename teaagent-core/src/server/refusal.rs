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
    /// What refused it, from a fixed vocabulary (`/metrics`).
    kind: RefusalRule,
}

impl Refusal {
    /// A refusal the audit log records as `outcome` (`denied`, `refused`, `rate_limited`,
    /// `locked`) by `rule`, of the kind `kind`.
    pub(crate) fn audited(
        error: Error,
        rule: impl Into<String>,
        outcome: &'static str,
        kind: RefusalRule,
    ) -> Self {
        Self { error, audit: Some((rule.into(), outcome)), kind }
    }

    /// The call to `tool` denied by `rule` (`-32001`, `approval_denied`, with what to do in
    /// `details`), recorded as `denied` by that rule.
    pub(crate) fn denied(tool: &str, rule: String, details: impl Into<String>, kind: RefusalRule) -> Self {
        let error =
            Error::ApprovalDenied { tool: tool.to_owned(), rule: rule.clone(), details: details.into() };
        Self::audited(error, rule, "denied", kind)
    }

    /// A refusal of the kind `kind` that the audit log does not record.
    pub(crate) fn unrecorded(kind: RefusalRule, error: Error) -> Self {
        Self { error, audit: None, kind }
    }

    /// What refused the call.
    pub(crate) fn kind(&self) -> RefusalRule {
        self.kind
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
        let kind = match &error {
            Error::ToolFailed { reason: crate::error::Failure::Overloaded, .. } => RefusalRule::Overloaded,
            _ => RefusalRule::Other,
        };
        Self { error, audit: None, kind }
    }
}

macro_rules! rules {
    ($($variant:ident => $label:literal, $reason:literal;)*) => {
        /// What refused a call, as `/metrics` counts it (`rule`, and the `reason` it falls
        /// under): a fixed vocabulary, never the text of a rule.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum RefusalRule { $($variant,)* }

        // Read by `/metrics` only (the `http` feature).
        #[cfg_attr(not(feature = "http"), allow(dead_code))]
        impl RefusalRule {
            /// Every rule, in the order of their series.
            pub(crate) const ALL: &'static [RefusalRule] = &[$(RefusalRule::$variant,)*];

            /// The `rule` label.
            pub(crate) fn label(self) -> &'static str {
                match self { $(RefusalRule::$variant => $label,)* }
            }

            /// The `reason` label: the audit log's outcome for it.
            pub(crate) fn reason(self) -> &'static str {
                match self { $(RefusalRule::$variant => $reason,)* }
            }
        }
    };
}

rules! {
    DenyRule => "deny_rule", "denied";
    PermissionMode => "permission_mode", "denied";
    Preapproval => "preapproval", "denied";
    Approval => "approval", "denied";
    HardLink => "hard_link", "denied";
    TargetChanged => "target_changed", "denied";
    GrantUses => "grant_uses", "denied";
    AuditLog => "audit_log", "refused";
    SharedState => "shared_state", "refused";
    RequestState => "request_state", "refused";
    QuestionShare => "question_share", "refused";
    CallShare => "call_share", "refused";
    Overloaded => "overloaded", "refused";
    Other => "other", "refused";
    RateLimit => "rate_limit", "rate_limited";
    WorkspaceLock => "workspace_lock", "locked";
}

impl RefusalRule {
    /// The kind of a denial the policy decided without asking (`Policy::decide_now`), from
    /// its rule's text, which `policy.rs` writes: `deny rule …`, `preapproved payload …`, or
    /// the permission mode's requirement.
    pub(crate) fn of_decision(rule: &str) -> Self {
        if rule.starts_with("deny rule `") {
            RefusalRule::DenyRule
        } else if rule.starts_with("preapproved payload ") {
            RefusalRule::Preapproval
        } else {
            RefusalRule::PermissionMode
        }
    }
}
