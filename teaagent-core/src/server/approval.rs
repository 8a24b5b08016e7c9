//! Asking the user to approve a call, in one place: for a call the policy could not decide
//! alone (`Policy::decide_now`), an answer "for this session" given on another replica, the
//! question through the client (`elicitation/create` in the legacy era, an `input_required`
//! result in the modern one), the approval an earlier round of the call carries, or the server's
//! terminal when the client cannot be asked.

use serde_json::Value;

use super::refusal::{Refusal, RefusalRule};
use super::rounds::ask_again;
use super::shared::Shared;
use crate::error::Error;
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::policy::request_state::{APPROVAL_ASKED, Binding, Carried};
use crate::policy::{CallFacts, Decision, Question};
use crate::session::Caller;
use crate::session::peer::SessionInfo;

/// The key of the approval question in an `input_required` result and of its answer in the
/// retry's `inputResponses`.
pub(crate) const APPROVAL_INPUT: &str = "approval";

/// What asking came to.
pub(super) enum Approval {
    /// The decision, and whether the user approved it just now (a later round of the call then
    /// carries the approval).
    Decided(Decision, bool),
    /// Modern era: the user is asked through the client; this is the call's answer.
    InputRequired(InputRequiredResult),
}

/// The round of a modern call: the client's own view of itself, the call's binding, the answers
/// its retry carries, and what its earlier round carried.
#[derive(Clone, Copy)]
pub(super) struct ModernRound<'a> {
    pub(super) client: &'a SessionInfo,
    pub(super) binding: &'a Binding,
    pub(super) responses: &'a JsonObject,
    pub(super) earlier: Option<&'a Carried>,
}

/// Asks about a call only a person can approve (`question`). A caller with its most approval
/// questions open is refused (a refusal the audit log records), and nobody is asked.
pub(super) async fn approve(
    shared: &Shared,
    facts: &CallFacts<'_>,
    caller: &Caller,
    question: Question,
    modern: Option<ModernRound<'_>>,
) -> Result<Approval, Refusal> {
    let policy = &shared.policy;
    let over_share = |refused: Error| {
        let rule = refused.to_string();
        Refusal::audited(refused, rule, "refused", RefusalRule::QuestionShare)
    };
    let counted_as = caller.counted_as.as_ref();
    // An answer "for this session" given on another replica of a fleet.
    if let Some(decision) = policy.session_approved_elsewhere(facts).await {
        return Ok(Approval::Decided(decision, false));
    }
    let Some(round) = modern else {
        let asked = policy.ask_within_share(facts, Some(&caller.peer), counted_as, question).await;
        let decision = asked.map_err(over_share)?;
        shared.metrics.approval_asked();
        answered(shared, &decision);
        return Ok(Approval::Decided(decision, false));
    };
    if round.earlier.is_some_and(Carried::approved) {
        return Ok(Approval::Decided(policy.approved_in_an_earlier_round(), false));
    }
    let decision = match round_trip(shared, facts, &question, &round)? {
        RoundTrip::Answered(decision) => decision,
        RoundTrip::Ask(result) => {
            shared.metrics.approval_asked();
            return Ok(Approval::InputRequired(result));
        }
        RoundTrip::Terminal => {
            let decision = policy.ask_within_share(facts, None, counted_as, question).await;
            shared.metrics.approval_asked();
            decision.map_err(over_share)?
        }
    };
    answered(shared, &decision);
    let approved = matches!(decision, Decision::Allow { .. });
    Ok(Approval::Decided(decision, approved))
}

/// Counts the user's answer (`/metrics`).
fn answered(shared: &Shared, decision: &Decision) {
    shared.metrics.approval_answered(matches!(decision, Decision::Allow { .. }));
}

/// Where a modern-era approval stands.
enum RoundTrip {
    /// The retry carried a good `requestState` and the user's answer: this is the decision.
    Answered(Decision),
    /// Ask the user through the client: an `input_required` result.
    Ask(InputRequiredResult),
    /// The client cannot show a form, but the server has a terminal: ask there.
    Terminal,
}

/// An approval in the modern era, where the server cannot send the client a request: a multi
/// round-trip request. The first call gets an `input_required` result with one
/// elicitation form ([`APPROVAL_INPUT`]) and a sealed `requestState`
/// ([`crate::policy::request_state`]) bound to this tool, the digest of these arguments and what
/// every `#[path]` argument resolves to now. The retry's state (opened by the call,
/// `rounds::open_state`) carries the answer, which then decides as an answer through
/// `elicitation/create` does (`accept` with `once`/`session` approves; decline, cancel and
/// anything else deny). A retry with a good state but no answer is asked again.
///
/// A client that declares no elicitation capability is never sent a form: the question goes to
/// the server's terminal when it has one, else the call is refused with `-32021` naming
/// `elicitation`.
fn round_trip(
    shared: &Shared,
    facts: &CallFacts<'_>,
    question: &Question,
    round: &ModernRound<'_>,
) -> Result<RoundTrip, Error> {
    let ModernRound { client, binding, responses, earlier } = *round;
    let policy = &shared.policy;
    let name = facts.tool.name();
    // The answer counts only with a state whose round asked the approval question.
    let asked = earlier.is_some_and(|e| e.asked.contains_key(APPROVAL_INPUT));
    let answer = if asked { responses.get(APPROVAL_INPUT).cloned() } else { None };
    if let Some(answer) = answer {
        let answer = crate::policy::ask::interpret(answer);
        return Ok(RoundTrip::Answered(policy.answered(facts, question.requirement(), answer)));
    }
    if !client.capabilities.supports_elicitation() {
        if crate::policy::ask::terminal_available() {
            return Ok(RoundTrip::Terminal);
        }
        return Err(Error::MissingCapability {
            capability: "elicitation",
            details: format!(
                "`{name}` needs the user's approval ({}); it is asked through the client's form (elicitation) or the server's terminal, and this request declares no elicitation capability while the server has no terminal",
                question.requirement()
            ),
        });
    }
    let form = crate::policy::ask::approval_request(client.version, &shared.policy.question_for(facts));
    let mut params = serde_json::to_value(&form).map_err(|e| Error::Internal { details: e.to_string() })?;
    if let Value::Object(params) = &mut params {
        params.insert("mode".into(), Value::from("form"));
    }
    let mut input_requests = JsonObject::new();
    input_requests.insert(
        APPROVAL_INPUT.into(),
        serde_json::json!({ "method": "elicitation/create", "params": params }),
    );
    // The answers of earlier rounds stay carried (the tool asks its own questions again after
    // the approval, and finds them answered).
    let carried = Carried {
        answers: earlier.map(|e| e.answers.clone()).unwrap_or_default(),
        asked: [(APPROVAL_INPUT.to_owned(), APPROVAL_ASKED.to_owned())].into(),
        approved_until: None,
        round: earlier.map_or(0, |e| e.round).saturating_add(1),
    };
    ask_again(shared, name, binding, input_requests, carried).map(RoundTrip::Ask)
}
