//! What a decision is about and what it comes to: the facts of a call ([`CallFacts`]), the
//! [`Decision`], and a [`Question`] only the user can answer.

use super::uses::GrantUses;
use crate::tool::{ParamRole, ToolDef};

/// A call as policy sees it.
#[derive(Debug)]
pub struct CallFacts<'a> {
    /// The tool.
    pub tool: &'a ToolDef,
    /// Its role arguments in this call: name, role, normalised value (for a path: where it
    /// leads, every link followed).
    pub roles: Vec<(&'a str, ParamRole, &'a str)>,
    /// Its path arguments as the entries they name (a link in the last component not followed),
    /// which deny rules also match.
    pub entries: Vec<(&'a str, &'a str)>,
    /// The payload digest of the call as the client sent it.
    pub digest: &'a str,
    /// Path arguments that do not lead where they are spelled (a link on the way): name, as
    /// spelled (normalised), where it leads. A preapproval covers the spelling only, so it does
    /// not cover these.
    pub detours: Vec<(&'a str, String, &'a str)>,
    /// Arguments of this call that the rules cannot look into (a tool of another program's
    /// argument whose role is unknown, or that did not resolve): a deny rule with an argument
    /// that names the tool refuses the call.
    pub unchecked: Vec<String>,
    /// Who makes the call, when the transport authenticated it (HTTP with a bearer token:
    /// `token:NAME`): the audit names it; approvals "for this session" and request states are
    /// bound to it.
    pub principal: Option<&'a str>,
    /// The transport's session the call came on, when it has one apart from the process (a
    /// legacy session over HTTP): approvals "for this session" are its own.
    pub session: Option<&'a str>,
}

/// The outcome of a decision.
#[derive(Debug)]
pub enum Decision {
    /// Run it.
    Allow {
        /// What allowed it.
        rule: std::borrow::Cow<'static, str>,
        /// The counted grants this approval rests on: their uses are [`GrantUses::spend`]t only
        /// when the call is admitted to run, after every other check.
        uses: GrantUses,
    },
    /// Refuse it (`-32001`).
    Deny {
        /// What blocked it.
        rule: String,
        /// How to allow it.
        details: String,
    },
}

/// A call only the user can still approve (from [`Policy::decide_now`](super::Policy::decide_now)), with the rule that asks.
#[derive(Debug)]
pub struct Question(pub(super) String);

impl Question {
    /// The rule that asks (the start of a denial's rule when the answer is no).
    pub(crate) fn requirement(&self) -> &str {
        &self.0
    }
}
