//! What a server counts about its calls ([`ServerMetrics`]), and their families in the text of
//! `/metrics` (the endpoint and the other families are `http/metrics.rs`'s; the README's
//! "Metrics" lists every family).
//!
//! **Bounded.** Every label value is a name the server itself knows: the registry's tools (made
//! up front, one set of series each, plus [`UNKNOWN_TOOL`] for any name the registry does not
//! have, so a client sending random names adds nothing), a fixed vocabulary of outcomes
//! ([`Outcome`]), refusal rules ([`RefusalRule`]), answers and store operations, and the external
//! servers the configuration declares.
//!
//! **Cheap.** A call looks its tool's series up once (a hash of its name, no allocation), then
//! adds to atomics: no lock, nothing held across an await. The text is made only when scraped.

// Only `/metrics` reads what is counted: without the `http` feature nothing does.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use std::time::Duration;

use super::refusal::RefusalRule;
use crate::error::{Error, Failure};
use crate::mcp::CallToolResult;
use crate::metrics::{Counter, Exposition, Histogram, Kind};
use crate::registry::Registry;

/// The `tool` label of calls to a name the registry does not have (a tool's name is letters,
/// digits, `_` and `-`: no tool can be called this).
pub(crate) const UNKNOWN_TOOL: &str = "(unknown)";

macro_rules! outcomes {
    ($($variant:ident => $label:literal,)*) => {
        /// How a call ended (the `outcome` label).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Outcome { $($variant,)* }

        impl Outcome {
            const ALL: &'static [Outcome] = &[$(Outcome::$variant,)*];
            const COUNT: usize = [$($label,)*].len();

            fn label(self) -> &'static str {
                match self { $(Outcome::$variant => $label,)* }
            }
        }
    };
}

outcomes! {
    Ok => "ok",
    ToolError => "tool_error",
    InputRequired => "input_required",
    Task => "task",
    UnknownTool => "unknown_tool",
    InvalidArguments => "invalid_arguments",
    Denied => "denied",
    RateLimited => "rate_limited",
    Locked => "locked",
    CallerLimit => "caller_limit",
    Timeout => "timeout",
    Panic => "panic",
    Overloaded => "overloaded",
    Withheld => "withheld",
    ExternalServer => "external_server",
    StateUnavailable => "state_unavailable",
    Error => "error",
}

impl Outcome {
    /// The outcome of a call that answered with `result`.
    pub(crate) fn of_result(result: &CallToolResult) -> Self {
        if result.is_error { Outcome::ToolError } else { Outcome::Ok }
    }

    /// The outcome of a call that answered with `error`.
    pub(crate) fn of_error(error: &Error) -> Self {
        match error {
            Error::UnknownTool { .. } => Outcome::UnknownTool,
            Error::InvalidArguments { .. } | Error::InvalidParams { .. } | Error::PathRefused { .. } => {
                Outcome::InvalidArguments
            }
            Error::ApprovalDenied { .. } => Outcome::Denied,
            Error::RateLimited { .. } => Outcome::RateLimited,
            Error::WorkspaceLocked { .. } => Outcome::Locked,
            Error::CallerLimit { .. } => Outcome::CallerLimit,
            Error::ToolFailed { reason, .. } => match reason {
                Failure::Timeout => Outcome::Timeout,
                Failure::Panic => Outcome::Panic,
                Failure::Overloaded => Outcome::Overloaded,
                Failure::Withheld => Outcome::Withheld,
                Failure::ExternalExited | Failure::ExternalUnavailable => Outcome::ExternalServer,
                Failure::StoreUnavailable => Outcome::StateUnavailable,
                _ => Outcome::Error,
            },
            _ => Outcome::Error,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One tool's series.
#[derive(Debug, Default)]
pub(crate) struct ToolSeries {
    outcomes: [Counter; Outcome::COUNT],
    latency: Histogram,
}

impl ToolSeries {
    /// Counts a call that ended with `outcome` after `took`.
    pub(crate) fn finished(&self, took: Duration, outcome: Outcome) {
        self.outcomes[outcome.index()].inc();
        self.latency.observe(took);
    }
}

/// A server's counters (module docs).
#[derive(Debug)]
pub(crate) struct ServerMetrics {
    /// A tool's position in the registry → its index in `names` and `tools`.
    by_position: Box<[usize]>,
    /// The `tool` label of each series; the last is [`UNKNOWN_TOOL`].
    names: Vec<Box<str>>,
    tools: Box<[ToolSeries]>,
    refusals: [Counter; RefusalRule::ALL.len()],
    approvals_asked: Counter,
    /// Allowed, denied.
    approvals_answered: [Counter; 2],
}

impl ServerMetrics {
    /// One set of series per tool of `registry`, and one for names it does not have.
    pub(crate) fn new(registry: &Registry) -> Self {
        let mut names: Vec<Box<str>> = registry.iter().map(|t| Box::from(t.name())).collect();
        names.sort();
        names.push(Box::from(UNKNOWN_TOOL));
        let by_position = registry
            .iter()
            .map(|t| {
                names[..names.len() - 1].binary_search_by(|n| (**n).cmp(t.name())).unwrap_or(names.len() - 1)
            })
            .collect();
        let tools = names.iter().map(|_| ToolSeries::default()).collect();
        ServerMetrics {
            by_position,
            names,
            tools,
            refusals: Default::default(),
            approvals_asked: Counter::default(),
            approvals_answered: Default::default(),
        }
    }

    /// The series of the tool at `position` in the registry ([`UNKNOWN_TOOL`]'s for `None`: the
    /// registry has no such tool).
    pub(crate) fn tool_at(&self, position: Option<usize>) -> &ToolSeries {
        let at = position.and_then(|p| self.by_position.get(p).copied()).unwrap_or(self.tools.len() - 1);
        &self.tools[at]
    }

    /// A call refused by `rule`.
    pub(crate) fn refused(&self, rule: RefusalRule) {
        self.refusals[rule as usize].inc();
    }

    /// The user was asked to approve a call.
    pub(crate) fn approval_asked(&self) {
        self.approvals_asked.inc();
    }

    /// The user's answer to an approval question: allowed or not.
    pub(crate) fn approval_answered(&self, allowed: bool) {
        self.approvals_answered[usize::from(!allowed)].inc();
    }

    /// Writes the families of calls, refusals and approvals.
    pub(crate) fn write(&self, text: &mut Exposition) {
        let m = self;
        text.family(
            "teaagent_calls_total",
            Kind::Counter,
            "Tool calls that reached the call pipeline, by tool and how they ended.",
        );
        for (name, series) in m.names.iter().zip(m.tools.iter()) {
            for outcome in Outcome::ALL {
                let n = series.outcomes[outcome.index()].get();
                // Every tool's `ok` series exists from the start; the others once they count.
                if n > 0 || *outcome == Outcome::Ok {
                    text.sample("teaagent_calls_total", &[("tool", name), ("outcome", outcome.label())], n);
                }
            }
        }
        text.family(
            "teaagent_call_duration_seconds",
            Kind::Histogram,
            "How long tool calls took, from the pipeline's first check to the answer, by tool.",
        );
        for (name, series) in m.names.iter().zip(m.tools.iter()) {
            text.histogram("teaagent_call_duration_seconds", &[("tool", name)], &series.latency);
        }
        text.family(
            "teaagent_refusals_total",
            Kind::Counter,
            "Calls refused by the policy, the rate limit, the workspace lock or admission, by reason and rule.",
        );
        for rule in RefusalRule::ALL {
            let n = m.refusals[*rule as usize].get();
            text.sample("teaagent_refusals_total", &[("reason", rule.reason()), ("rule", rule.label())], n);
        }
        text.family("teaagent_rate_limited_total", Kind::Counter, "Calls refused by a rate limit, by tool.");
        for (name, series) in m.names.iter().zip(m.tools.iter()) {
            let n = series.outcomes[Outcome::RateLimited.index()].get();
            text.sample("teaagent_rate_limited_total", &[("tool", name)], n);
        }

        text.family("teaagent_approvals_asked_total", Kind::Counter, "Approval questions asked of the user.")
            .sample("teaagent_approvals_asked_total", &[], m.approvals_asked.get());
        text.family(
            "teaagent_approvals_answered_total",
            Kind::Counter,
            "Approval questions answered, by answer.",
        );
        for (answer, counter) in ["allowed", "denied"].iter().zip(&m.approvals_answered) {
            text.sample("teaagent_approvals_answered_total", &[("answer", answer)], counter.get());
        }
    }
}
