//! Steps 3 to 6 of a call (`call.rs`): the policy (and asking the user), the rate limit, the
//! workspace lock, admission. Each refusal is a [`Refusal`] the pipeline audits once.

use tokio::sync::OwnedSemaphorePermit;

use super::lock::check_lock;
use super::paths::{PathArg, linked_file, recheck, targets_digest};
use crate::error::{Error, Failure};
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::policy::request_state::{Binding, Reservation};
use crate::policy::{CallFacts, Decision, UsesRefusal};
use crate::rate_limit::RateRefusal;
use crate::server::approval::{Approval, ModernRound, approve};
use crate::server::refusal::{Refusal, RefusalRule};
use crate::server::rounds::open_state;
use crate::server::shared::Shared;
use crate::session::Caller;
use crate::session::peer::SessionInfo;
use crate::tool::Tier;
use crate::workspace::Resolved;

/// A call admitted to run, and what it takes with it.
pub(super) struct Admitted<'a> {
    /// Modern era: the retry's answers, the binding, the earlier round's state.
    pub(super) modern: Option<Box<ModernAdmission<'a>>>,
    /// The user approved the call just now (a later round carries the approval).
    pub(super) approved_now: bool,
    /// The call's turn to run.
    pub(super) turn: OwnedSemaphorePermit,
    /// Every `#[path]` argument resolved again at admission: name, entry, target.
    pub(super) resolved: Vec<(String, Resolved, Resolved)>,
    /// The rule that allowed it (its completion record names it too; a mode's is borrowed).
    pub(super) allowed_by: std::borrow::Cow<'static, str>,
}

/// What only a modern call brings to its admission. Boxed wherever it is kept: every call is
/// admitted and moves what its admission holds, few calls are modern.
pub(super) struct ModernAdmission<'a> {
    /// The retry's answers.
    pub(super) responses: JsonObject,
    /// What the call's round-trip states are bound to.
    pub(super) binding: Binding,
    /// The `requestState` of the call's earlier round, held (spent when the call runs).
    pub(super) earlier: Option<Reservation<'a>>,
}

/// What steps 3 to 6 come to when nothing refused the call.
#[allow(clippy::large_enum_variant)] // made once a call and taken apart at once: boxing would allocate on every call
pub(super) enum AdmitOutcome<'a> {
    /// Run it.
    Run(Admitted<'a>),
    /// Modern era: the user is asked first; this is the call's answer.
    InputRequired(InputRequiredResult),
}

/// Decides and admits the call `facts` describe (`digest`: the arguments' digest a modern call's
/// round-trip state is bound to, when it may open or seal one; `answers`: the retry's
/// `inputResponses` and `requestState`).
pub(super) async fn admit<'a>(
    shared: &'a Shared,
    facts: &CallFacts<'_>,
    paths: &[PathArg],
    caller: &Caller,
    modern: Option<&SessionInfo>,
    digest: Option<&str>,
    answers: super::Answers,
) -> Result<AdmitOutcome<'a>, Refusal> {
    let tool = facts.tool;
    let name = tool.name();
    // A path deny rule holds for the file, not only for its name: a path argument that leads to
    // a file with several hard links may be a denied file by another name.
    if let Some(arg) = linked_file(shared, name, paths) {
        let rule = format!(
            "`{arg}` leads to a file with several hard links, and a path deny rule applies to `{name}`: it may be a denied file by another name"
        );
        let details =
            "nothing was done; name the file by a path that is its only one (a copy instead of a hard link)";
        return Err(Refusal::denied(name, rule, details, RefusalRule::HardLink));
    }
    let policy = &shared.policy;
    // The fleet's shared state cannot be reached (admission or grant uses).
    let state_unavailable = |details| {
        let error = Error::ToolFailed { tool: name.to_owned(), reason: Failure::StoreUnavailable, details };
        Refusal::audited(error, "shared state unavailable", "refused", RefusalRule::SharedState)
    };
    // Refused by the rate limit, or because the store that keeps its windows cannot be reached.
    let rate_refused = |refusal: RateRefusal| match refusal {
        RateRefusal::Limited(limit, retry_after) => {
            let error = Error::RateLimited {
                tool: name.to_owned(),
                max_calls: limit.max_calls,
                window: limit.window,
                retry_after,
            };
            Refusal::audited(error, "rate limit", "rate_limited", RefusalRule::RateLimit)
        }
        RateRefusal::Unavailable(details) => state_unavailable(details),
    };
    // Modern era: the `requestState` of this call's earlier round (its approval, the answers
    // given so far), held for this call and spent only if it runs.
    let modern_part = match modern {
        // Boxed: only a modern call gets here.
        Some(_) => {
            let (responses, state) = answers;
            let mut part = Box::new(modern_admission(name, paths, caller, digest, responses)?);
            if let Some(state) = state {
                // Boxed: only a retry carries a state, and the future would grow every call's.
                part.earlier = Some(Box::pin(open_earlier(shared, name, &part.binding, &state)).await?);
            }
            Some(part)
        }
        None => None,
    };
    let mut approved_now = false;
    let mut asked = false;
    let decision = match policy.decide_now(facts) {
        Ok(decision) => decision,
        Err(question) => {
            asked = true;
            // Only a person can approve it: first make sure the rate limit would let it run,
            // so nobody is asked about a call that is refused anyway.
            shared.limiter.look(name).await.map_err(rate_refused)?;
            let round = modern.zip(modern_part.as_deref()).map(|(client, part)| ModernRound {
                client,
                binding: &part.binding,
                responses: &part.responses,
                earlier: part.earlier.as_ref().map(|e| &e.carried),
            });
            // Boxed: asking a person is rare, and its future would grow every call's.
            match Box::pin(approve(shared, facts, caller, question, round)).await? {
                Approval::Decided(decision, now) => {
                    approved_now = now;
                    decision
                }
                Approval::InputRequired(result) => return Ok(AdmitOutcome::InputRequired(result)),
            }
        }
    };
    let (uses, allowed_by) = match decision {
        Decision::Deny { rule, details } => {
            let kind = if asked { RefusalRule::Approval } else { RefusalRule::of_decision(&rule) };
            return Err(Refusal::denied(name, rule, details, kind));
        }
        Decision::Allow { rule, uses } => {
            if let Err(e) = policy.record_aside(facts, &rule, "allowed").await {
                if tool.tier() > Tier::Low {
                    let rule = format!(
                        "the audit log cannot be written ({e}); calls above tier `low` are refused until it can"
                    );
                    // (Not recorded: the log is what cannot be written.)
                    return Err(Refusal::unrecorded(RefusalRule::AuditLog, Error::ApprovalDenied {
                        tool: name.to_owned(),
                        rule,
                        details: "make $TEAAGENT_HOME/audit.jsonl writable (or set TEAAGENT_HOME to a writable directory)".into(),
                    }));
                }
                tracing::warn!(error = %e, "the audit log cannot be written");
            }
            (uses, rule)
        }
    };

    // 4. Rate limit: a look only; the budget is taken at admission. (With a fleet's shared
    //    windows, no look: one round trip per admitted call, at admission.)
    shared.limiter.look(name).await.map_err(rate_refused)?;

    // 5. Workspace lock, for tools that may write.
    if !tool.behavior().read_only
        && let Err(e) = check_lock(shared, name).await
    {
        return Err(Refusal::audited(e, "workspace lock", "locked", RefusalRule::WorkspaceLock));
    }

    // A turn to run, before the targets are checked again and anything is spent: a call
    // refused as overloaded spends no budget and no grant use, and one that waited for its turn
    // has its targets checked after the wait.
    let turn = shared.turn(name).await?;

    // 6. Admission: the targets are still the ones decided on; then budget and grant uses.
    let resolved = match recheck(shared, tool, paths) {
        Ok(resolved) => resolved,
        Err(changed) => {
            let rule =
                format!("the target of `{changed}` changed after it was checked and before the call ran");
            let details = "nothing was done; a path on the way was replaced (e.g. a directory by a link). Call again to have the new target judged";
            return Err(Refusal::denied(name, rule, details, RefusalRule::TargetChanged));
        }
    };
    let admission = shared.limiter.admit(name, caller.principal.as_deref()).await.map_err(rate_refused)?;
    match uses.spend(policy).await {
        Ok(()) => {}
        Err(UsesRefusal::NoneLeft(grant)) => {
            admission.refund();
            let rule =
                format!("grant `{grant}` has no uses left: calls admitted since the decision spent them");
            return Err(Refusal::denied(
                name,
                rule,
                "nothing was done; add a grant or raise its `uses`",
                RefusalRule::GrantUses,
            ));
        }
        Err(UsesRefusal::Unavailable(details)) => {
            admission.refund();
            return Err(state_unavailable(details));
        }
    }
    // Kept: the call runs (dropped, an admission stays counted).
    drop(admission);
    Ok(AdmitOutcome::Run(Admitted { modern: modern_part, approved_now, turn, resolved, allowed_by }))
}

/// A modern call's part of its admission: its retry's answers read, and what its round-trip
/// states are bound to (`digest`: as for [`admit`]); the state of its earlier round is opened by
/// [`open_earlier`].
fn modern_admission<'a>(
    name: &str,
    paths: &[PathArg],
    caller: &Caller,
    digest: Option<&str>,
    responses: Option<Box<serde_json::Value>>,
) -> Result<ModernAdmission<'a>, Error> {
    let responses = crate::tool::inputs::responses(responses.map(|r| *r))?;
    let binding = Binding {
        tool: name.to_owned(),
        digest: digest.map(str::to_owned),
        targets: targets_digest(paths),
        principal: caller.principal.as_deref().unwrap_or_default().to_owned(),
    };
    Ok(ModernAdmission { responses, binding, earlier: None })
}

/// The `requestState` of a modern call's earlier round, opened and held for this call.
async fn open_earlier<'a>(
    shared: &'a Shared,
    name: &str,
    binding: &Binding,
    state: &serde_json::Value,
) -> Result<Reservation<'a>, Refusal> {
    let what = format!("this call to `{name}`");
    open_state(shared, &what, binding, state).await.map_err(|(refusal, error)| {
        Refusal::audited(
            error,
            format!("requestState refused: {refusal}"),
            "refused",
            RefusalRule::RequestState,
        )
    })
}
