//! The permission policy: which calls run, which need an approval, and which approval
//! counts. The client never chooses or raises the mode; deny rules always win.
//!
//! | mode | runs without approval | needs an approval |
//! |---|---|---|
//! | `read-only` | read-only tools | everything else |
//! | `workspace-write` (default) | read-only tools; non-destructive `low`/`medium` tools | destructive tools; `high`, `critical` |
//! | `prompt` | read-only tools | everything else, asked interactively |
//! | `allow` | everything up to `high`, destructive included | `critical` |
//! | `danger-full-access` | everything | nothing |
//!
//! Deny rules are checked first and are fail-closed ([`grant`] says exactly how): a command rule
//! refuses every line it cannot prove runs no matching program, a path rule applies to every
//! path argument and, through [`Policy::hidden_paths`], hides its paths from walks, searches and
//! resources.
//!
//! A call that needs an approval runs when one of these holds, checked in this order:
//! a payload-digest preapproval of exactly this call ([`crate::digest`]) whose paths lead where they are
//! spelled (no link on the way: the digest binds the spelling, so a link put in its path must
//! not carry the approval elsewhere); scoped grants covering the tool or every one of its role
//! arguments ([`grant`]; uses of counted grants are spent only when the call is admitted to run,
//! see [`GrantUses`]); in `prompt` mode, an earlier "for this session" answer for the same tool
//! and role arguments, or a new answer (the `ask` module), to a question that shows every value escaped
//! and uncut. Path arguments are judged where they lead; the pipeline makes sure the call acts on
//! exactly that (`server/call.rs`). Every decision is appended to the audit log ([`audit`]).
//!
//! # Where a policy comes from, and what a denial advises
//!
//! A denial (`-32001`) names the rule that blocked the call and, in its `details`, the exact
//! setting that would allow it — spelled for the place this server takes its policy from
//! ([`Advice`], set with [`Policy::advice`]):
//!
//! - the `teaagent` command ([`Advice::Flags`]): `--grant 'delete_note'`,
//!   `--preapprove sha256:…`, `--permission-mode allow`;
//! - a server built on this crate that takes its policy from the environment and the user's
//!   configuration file ([`Advice::Environment`], what
//!   [`Server::serve_stdio`](crate::Server::serve_stdio) does unless the author fixed the
//!   policy in code; see [`crate::config`]): `TEAAGENT_GRANTS='delete_note'` in the server's
//!   environment (the `env` of its entry in the MCP client's configuration), or
//!   `grants = ["delete_note"]` in `$TEAAGENT_HOME/config.toml`;
//! - a policy fixed in code ([`Advice::Code`], the default of [`Policy::new`]): the
//!   [`Policy::grant`] call to add.
//!
//! Every value is quoted for where it goes (a POSIX shell, TOML, a Rust string), so the advice
//! can be pasted as it is. At startup the server also lists, on stderr, the tools that will need
//! an approval under its mode ([`Policy::approvals_needed`]), with the same kind of advice.
//!
//! ```
//! use teaagent_core::{PermissionMode, Policy};
//!
//! # fn main() -> Result<(), teaagent_core::policy::grant::GrantError> {
//! // Fixed in code: destructive tools need an approval in `workspace-write`; this grants one.
//! let policy = Policy::new(PermissionMode::WorkspaceWrite).grant("delete_note")?;
//! # let _ = policy;
//! # Ok(())
//! # }
//! ```

mod advice;
pub(crate) mod ask;
pub mod audit;
mod facts;
pub mod grant;
mod mode;
mod offer;
mod questions;
mod recording;
pub mod request_state;
mod tool_glob;
mod unmatched;
mod uses;

pub use advice::Advice;
use advice::how_to_allow;
pub(crate) use advice::question;
pub use facts::{CallFacts, Decision, Question};
pub use mode::PermissionMode;
pub(crate) use recording::Completion;
pub use unmatched::UnmatchedRule;
pub use uses::{GrantUses, UsesRefusal};

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use self::ask::Answer;
use self::audit::AuditLog;
use self::grant::{Grant, GrantError};
use self::request_state::RequestStateKey;
pub use crate::fleet::FLEET_SESSION_APPROVAL;
use crate::fleet::{LocalStore, Store};
use crate::registry::Registry;
use crate::session::Peer;
use crate::tool::{ParamRole, ToolDef};
use crate::visible::shown;
use crate::workspace::HiddenPaths;

/// A server's policy: mode, grants, deny rules, preapprovals, session approvals, audit log.
#[derive(Debug)]
pub struct Policy {
    mode: PermissionMode,
    grants: Vec<Arc<Grant>>,
    denies: Vec<Grant>,
    preapproved: HashSet<String>,
    session: Mutex<HashSet<String>>,
    /// Names of the `#[command]` arguments of the tools served ([`Policy::know_tools`]).
    command_args: std::sync::OnceLock<HashSet<String>>,
    /// Questions in line, per party asked, and how many each caller has open.
    questions: questions::Questions,
    ask_timeout: Duration,
    audit: Option<AuditLog>,
    advice: Advice,
    /// What a command can reach ([`Policy::command_sandbox`]): told in the question about a
    /// tool that runs a command, and recorded in the audit log for its calls.
    command_sandbox: Option<String>,
    /// Keys and used nonces of the modern era's sealed approvals ([`request_state`]); a random
    /// key is drawn at the first use unless [`Policy::request_state_keys`] set one.
    states: std::sync::OnceLock<request_state::RequestStates>,
    /// The server's store ([`crate::fleet`]): counted grants' uses, "for this session" answers
    /// and request states' single use, for every replica that shares it.
    store: Arc<dyn Store>,
}

impl Default for Policy {
    fn default() -> Self {
        Self::new(PermissionMode::default())
    }
}

impl Policy {
    /// A policy in `mode` with no approvals and no audit log.
    pub fn new(mode: PermissionMode) -> Self {
        Self {
            mode,
            grants: Vec::new(),
            denies: Vec::new(),
            preapproved: HashSet::new(),
            session: Mutex::new(HashSet::new()),
            command_args: std::sync::OnceLock::new(),
            questions: questions::Questions::new(crate::session::CallerLimits::default().questions),
            ask_timeout: Duration::from_secs(120),
            audit: None,
            advice: Advice::Code,
            command_sandbox: None,
            states: std::sync::OnceLock::new(),
            store: Arc::new(LocalStore::new()),
        }
    }

    /// Seals the modern era's approval round trips ([`request_state`]) with `key`, and accepts
    /// states sealed with `previous` too (while rotating). Servers that must accept each other's
    /// states (replicas behind a load balancer) share the key; by default each process draws a
    /// random one.
    pub fn request_state_keys(
        mut self,
        key: request_state::RequestStateKey,
        previous: Option<request_state::RequestStateKey>,
    ) -> Self {
        let states = request_state::RequestStates::new(key, previous, Arc::clone(&self.store));
        self.states = std::sync::OnceLock::from(states);
        self
    }

    /// Keeps counted grants' uses, "for this session" answers and request states' single use
    /// in `store` (the server gives its own when it builds its shared state).
    pub(crate) fn with_store(mut self, store: Arc<dyn Store>) -> Self {
        if let Some(states) = self.states.take() {
            self.states = std::sync::OnceLock::from(states.with_store(Arc::clone(&store)));
        }
        self.store = store;
        self
    }

    /// The store this policy keeps its counts and answers in.
    pub(crate) fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// Whether the user approved calls like this one "for this session" where this process did
    /// not see it (another replica of a fleet; one round trip, only for a call that would
    /// otherwise be asked about). An unreachable store counts as no: the user is asked.
    pub(crate) async fn session_approved_elsewhere(&self, call: &CallFacts<'_>) -> Option<Decision> {
        let key = session_key(call);
        if !self.store.session_approved(&key).await.unwrap_or(false) {
            return None;
        }
        self.session.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
        Some(allow("approved by the user for this session (on another replica)"))
    }

    /// The request-state keys and nonces.
    pub(crate) fn request_states(&self) -> &request_state::RequestStates {
        self.states.get_or_init(|| {
            request_state::RequestStates::new(RequestStateKey::random(), None, Arc::clone(&self.store))
        })
    }

    /// How long a modern-era approval question stays open: the ask timeout, at most
    /// [`request_state::MAX_LIFETIME`].
    pub(crate) fn question_lifetime(&self) -> Duration {
        self.ask_timeout.min(request_state::MAX_LIFETIME)
    }

    /// Says where this policy is configured, so that denials name what would allow the call
    /// there (default [`Advice::Code`]).
    pub fn advice(mut self, advice: Advice) -> Self {
        self.advice = advice;
        self
    }

    /// Where this policy is configured.
    pub fn advised(&self) -> &Advice {
        &self.advice
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Adds a scoped grant (see [`grant`]).
    pub fn grant(mut self, text: &str) -> Result<Self, GrantError> {
        self.grants.push(Arc::new(Grant::parse(text)?));
        Ok(self)
    }

    /// Adds a deny rule (same syntax as a grant); it wins over everything.
    pub fn deny(mut self, text: &str) -> Result<Self, GrantError> {
        self.denies.push(Grant::parse(text)?);
        Ok(self)
    }

    /// Preapproves the call whose digest is `digest` (`sha256:<hex>`).
    pub fn preapprove(mut self, digest: &str) -> Result<Self, String> {
        let digest = digest.trim().to_ascii_lowercase();
        if !crate::digest::is_digest(&digest) {
            return Err(format!(
                "invalid preapproval `{digest}`: expected `sha256:` and 64 hex digits (see `teaagent approvals digest`)"
            ));
        }
        self.preapproved.insert(digest);
        Ok(self)
    }

    /// How long an interactive question may wait for its answer (default 120 s).
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// Appends every decision to `log`.
    pub fn audit(mut self, log: AuditLog) -> Self {
        self.audit = Some(log);
        self
    }

    /// What a command can reach (e.g. `teaagent_core::sandbox::Sandbox::summary`): added to the
    /// question about a call of a tool that runs a command (a `#[command]` argument), so the
    /// person approving it knows, and recorded as `sandbox` in the audit log for its calls.
    pub fn command_sandbox(mut self, summary: impl Into<String>) -> Self {
        self.command_sandbox = Some(summary.into());
        self
    }

    /// The question shown to the user about `call` ([`question`]), with what a command can
    /// reach when the tool runs one.
    pub(crate) fn question_for(&self, call: &CallFacts<'_>) -> String {
        let mut text = question(call);
        if let Some(sandbox) = self.sandbox_of(call) {
            text.push_str(&format!(
                "
The command runs {sandbox}."
            ));
        }
        text
    }

    /// The command sandbox, for a call of a tool that runs a command.
    fn sandbox_of(&self, call: &CallFacts<'_>) -> Option<&str> {
        self.sandbox_for(call.tool)
    }

    /// The command sandbox, if `tool` runs a command.
    fn sandbox_for(&self, tool: &ToolDef) -> Option<&str> {
        let runs_command = tool.param_roles().any(|(_, role)| role == ParamRole::Command);
        self.command_sandbox.as_deref().filter(|_| runs_command)
    }

    /// Whether deciding a call of `tool` needs its payload digest: for the audit log, for a
    /// preapproval, or for a denial's advice. Calls that need none skip hashing their arguments.
    pub fn needs_digest(&self, tool: &ToolDef) -> bool {
        self.audit.is_some() || self.mode.requirement(tool).is_some() || !self.denies.is_empty()
    }

    /// The audit log, if any.
    pub fn audit_log(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    /// Learns which argument names are `#[command]` arguments of the tools served (once; the
    /// server does it at start), so that a rule naming one (`*:command=rm*`) is a command rule
    /// for every tool, not a path rule for the tools that lack it.
    pub fn know_tools(&self, registry: &Registry) {
        let _ = self.command_args.set(command_args(registry));
    }

    /// Whether `arg` is a `#[command]` argument: of `tool`, or of any tool served.
    fn is_command_arg(&self, tool: &ToolDef, arg: &str) -> bool {
        tool.param_roles().any(|(n, role)| n == arg && role == ParamRole::Command)
            || self.command_args.get().is_some_and(|args| args.contains(arg))
    }

    /// Which workspace paths the deny rules hide from whom, for [`crate::Workspace::set_hidden`]
    /// (`None` when no deny rule is about paths). A path rule hides a path from a scope (a tool's
    /// name, `resources/list`, `resources/read`) when its tool glob matches the scope and its
    /// glob matches the path; `*` matches the resource scopes too. A rule that names a
    /// `#[command]` argument (`shell_exec:command=…`) is about commands and hides nothing.
    pub fn hidden_paths(&self, registry: &Registry) -> Option<Arc<HiddenPaths>> {
        let commands = command_args(registry);
        let rules: Vec<_> = self
            .denies
            .iter()
            .filter(|deny| deny.is_path_rule(|arg| commands.contains(arg)))
            .filter_map(|deny| deny.path_rule())
            .collect();
        if rules.is_empty() {
            return None;
        }
        Some(Arc::new(move |scope: &str, relative: &Path| {
            let now = SystemTime::now();
            rules.iter().any(|(tool, path, expires)| {
                expires.is_none_or(|at| now < at) && tool.is_match(scope) && path.is_match(relative)
            })
        }))
    }

    /// Which scopes (a tool's name, `resources/read`, ...) a path deny rule applies to: a file
    /// with several names (hard links) is refused to them, since the rule cannot tell such a
    /// file from a denied one by another name (it holds for the file, not only for its name).
    /// `None` when there is no path rule.
    pub fn link_scopes(&self) -> Option<Arc<crate::workspace::LinkScopes>> {
        let rules: Vec<_> = self.denies.iter().filter_map(Grant::path_rule).collect();
        if rules.is_empty() {
            return None;
        }
        Some(Arc::new(move |scope: &str| {
            let now = SystemTime::now();
            rules.iter().any(|(tool, _, expires)| expires.is_none_or(|at| now < at) && tool.is_match(scope))
        }))
    }

    /// Decides a call: deny rules, the mode, preapprovals, grants, session approvals, asking.
    pub async fn decide(&self, call: &CallFacts<'_>, peer: Option<&Peer>) -> Decision {
        match self.decide_now(call) {
            Ok(decision) => decision,
            Err(question) => self.ask(call, peer, question).await,
        }
    }

    /// Everything that needs no person: the decision, or `Err` when only the user can still
    /// approve the call (then [`Policy::ask`]). The pipeline uses the two halves to check what
    /// would refuse the call anyway (its rate limit) before it takes a person's attention.
    pub fn decide_now(&self, call: &CallFacts<'_>) -> Result<Decision, Question> {
        self.decide_without_asking(call).map(Ok).unwrap_or_else(|requirement| Err(Question(requirement)))
    }

    /// Asks the user (the `ask` module) about a call [`Policy::decide_now`] could not decide.
    pub async fn ask(&self, call: &CallFacts<'_>, peer: Option<&Peer>, question: Question) -> Decision {
        match self.ask_within_share(call, peer, None, question).await {
            Ok(decision) => decision,
            Err(refused) => Decision::Deny {
                rule: refused.to_string(),
                details: "nobody was asked; answer or dismiss an open question first".into(),
            },
        }
    }

    /// [`Policy::ask`] for a caller that counts against `counted_as`: one with its most
    /// questions already open ([`crate::session::CallerLimits::questions`]) is not asked, and
    /// the refusal is the error it is ([`crate::Error::CallerLimit`]).
    pub(crate) async fn ask_within_share(
        &self,
        call: &CallFacts<'_>,
        peer: Option<&Peer>,
        counted_as: Option<&Arc<str>>,
        question: Question,
    ) -> Result<Decision, crate::Error> {
        let _open = self.questions.open(counted_as)?;
        // Asking is rare and its future is large: keep it out of every call's state.
        Ok(Box::pin(self.ask_user(call, peer, question.0)).await)
    }

    /// Each caller may have `n` approval questions open at once (the server's
    /// [`crate::session::CallerLimits::questions`]).
    pub(crate) fn questions_per_caller(mut self, n: usize) -> Self {
        self.questions = self.questions.per_caller(n);
        self
    }

    /// Whether a deny rule refuses the call: fail-closed (see [`grant`]): every path argument, as
    /// named and as resolved, and every command argument.
    fn denies_call(&self, rule: &Grant, call: &CallFacts<'_>) -> bool {
        let tool = call.tool;
        let is_command = |arg: &str| self.is_command_arg(tool, arg);
        rule.covers_tool(tool.name())
            || (rule.has_arg() && rule.names_tool(tool.name()) && !call.unchecked.is_empty())
            || call
                .roles
                .iter()
                .any(|(arg, role, value)| rule.may_deny(tool.name(), arg, *role, value, is_command))
            || call
                .entries
                .iter()
                .any(|(arg, value)| rule.may_deny(tool.name(), arg, ParamRole::Path, value, is_command))
    }

    /// Everything but asking: `Err(requirement)` when only the user can still approve.
    fn decide_without_asking(&self, call: &CallFacts<'_>) -> Result<Decision, String> {
        let now = if self.denies.is_empty() && self.grants.is_empty() {
            SystemTime::UNIX_EPOCH
        } else {
            SystemTime::now()
        };
        if let Some(rule) = self.denies.iter().filter(|d| d.is_live(now)).find(|d| self.denies_call(d, call))
        {
            return Ok(Decision::Deny {
                rule: format!("deny rule `{rule}`"),
                details: "deny rules win over every mode and approval; remove the rule from the configuration to allow this call".into(),
            });
        }
        let Some(requirement) = self.mode.requirement(call.tool) else {
            return Ok(allow(self.mode.no_approval_rule()));
        };
        if self.preapproved.contains(call.digest) {
            // The digest was computed from the arguments as written; what was approved is the
            // path as written, not wherever a link on it leads today.
            if let Some((arg, spelled, leads)) = call.detours.first() {
                return Ok(Decision::Deny {
                    rule: format!(
                        "preapproved payload {}, but `{arg}` = `{}` leads through a link to `{}`; a preapproval covers a path only where it is spelled",
                        call.digest,
                        shown(spelled),
                        shown(leads)
                    ),
                    details: how_to_allow(call, &self.advice),
                });
            }
            return Ok(allow(format!("preapproved payload {}", call.digest)));
        }
        if let Some((grants, uses)) = self.granting(call, now) {
            return Ok(Decision::Allow { rule: format!("grant {}", grants.join(", ")).into(), uses });
        }
        if self.mode == PermissionMode::Prompt {
            if self.session.lock().unwrap_or_else(|p| p.into_inner()).contains(&session_key(call)) {
                return Ok(allow("approved by the user for this session"));
            }
            return Err(requirement);
        }
        Ok(Decision::Deny { rule: requirement, details: how_to_allow(call, &self.advice) })
    }

    async fn ask_user(&self, call: &CallFacts<'_>, peer: Option<&Peer>, requirement: String) -> Decision {
        let key = session_key(call);
        // One question at a time to one party (`questions`); other parties are asked meanwhile.
        let _turn = self.questions.turn(questions::Party::asked_through(peer, call.session)).await;
        // Asked and answered "for this session" while this call waited its turn?
        if self.session.lock().unwrap_or_else(|p| p.into_inner()).contains(&key) {
            return allow("approved by the user for this session");
        }
        let answer = ask::ask(peer, &self.question_for(call), self.ask_timeout).await;
        self.answered(call, &requirement, answer)
    }

    /// The decision for a later round of a modern call the user approved in an earlier round
    /// (the sealed state says so, `crate::tool::inputs`, and the approval is still within the
    /// question lifetime it was given at): the same call, asked once. Deny rules and the mode
    /// were checked before this (`decide_now`), so a rule added since still refuses.
    pub(crate) fn approved_in_an_earlier_round(&self) -> Decision {
        allow("approved by the user in an earlier round of this call")
    }

    /// The decision an answer of the user makes; "for this session" is remembered (for the
    /// process, in the modern era, which has no session).
    pub(crate) fn answered(&self, call: &CallFacts<'_>, requirement: &str, answer: Answer) -> Decision {
        match answer {
            Answer::Once => allow("approved by the user (once)"),
            Answer::Session => {
                let key = session_key(call);
                // For every replica that shares the store (this process knows it already).
                self.store.approve_session(&key, FLEET_SESSION_APPROVAL);
                self.session.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
                allow("approved by the user for this session")
            }
            Answer::Deny(why) => Decision::Deny {
                rule: format!("{requirement}; {why}"),
                details: how_to_allow(call, &self.advice),
            },
        }
    }

    /// The grants that approve the call, and those of them with a use count (spent later, at
    /// admission); `None` if they do not.
    fn granting(&self, call: &CallFacts<'_>, now: SystemTime) -> Option<(Vec<String>, GrantUses)> {
        let name = call.tool.name();
        let live: Vec<&Arc<Grant>> = self.grants.iter().filter(|g| g.is_live(now)).collect();
        let chosen: Vec<&Arc<Grant>> = if let Some(whole) = live.iter().find(|g| g.covers_tool(name)) {
            vec![*whole]
        } else if call.roles.is_empty() {
            return None;
        } else {
            let mut chosen = Vec::new();
            for (arg, role, value) in &call.roles {
                let grant = live.iter().find(|g| g.covers_arg(name, arg, *role, value))?;
                if !chosen.iter().any(|c: &&Arc<Grant>| Arc::ptr_eq(c, grant)) {
                    chosen.push(*grant);
                }
            }
            chosen
        };
        // A grant with a use count is spent only when the call runs on it (`GrantUses::spend`).
        let counted = chosen.iter().filter(|g| g.is_counted()).map(|g| Arc::clone(g)).collect();
        Some((chosen.iter().map(|g| format!("`{g}`")).collect(), GrantUses(counted)))
    }
}

fn allow(rule: impl Into<std::borrow::Cow<'static, str>>) -> Decision {
    Decision::Allow { rule: rule.into(), uses: GrantUses::default() }
}

/// The names of every `#[command]` argument of the registry's tools.
fn command_args(registry: &Registry) -> HashSet<String> {
    registry
        .iter()
        .flat_map(|t| t.param_roles().filter(|(_, r)| *r == ParamRole::Command).map(|(n, _)| n.to_owned()))
        .collect()
}

fn session_key(call: &CallFacts<'_>) -> String {
    // An approval "for this session" is the principal's own (over HTTP, every client's is apart).
    // …and, over HTTP, its legacy session's own.
    let mut key = call.principal.map(|p| format!("{p}\u{0}")).unwrap_or_default();
    if let Some(session) = call.session {
        key.push_str(session);
        key.push('\u{0}');
    }
    key.push_str(call.tool.name());
    for (arg, _, value) in &call.roles {
        key.push('\u{0}');
        key.push_str(arg);
        key.push('=');
        key.push_str(value);
    }
    key
}
