//! The modern era's rounds of a call: the `requestState` a retry carries, opened; an approval
//! asked through an `input_required` result; the questions a handler asked, sealed for the retry.

use serde_json::Value;

use super::audit;
use crate::error::{Error, ParamsProblem};
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::policy::request_state::{APPROVAL_ASKED, Binding, Carried, MAX_ROUNDS, Reservation, StateRefusal};
use crate::policy::{CallFacts, Decision, Question};
use crate::server::shared::Shared;
use crate::session::peer::SessionInfo;
use crate::tool::inputs::ClientCapability;

/// The key of the approval question in an `input_required` result and of its answer in the
/// retry's `inputResponses`.
pub(crate) const APPROVAL_INPUT: &str = "approval";

/// Where a modern-era approval stands.
pub(super) enum RoundTrip {
    /// The retry carried a good `requestState` and the user's answer: this is the decision.
    Answered(Decision),
    /// Ask the user through the client: an `input_required` result.
    Ask(InputRequiredResult),
    /// The client cannot show a form, but the server has a terminal: ask there.
    Terminal,
}

/// Opens the `requestState` a modern retry carries (module `crate::policy::request_state`): it
/// must verify, be unexpired and unused, and match the call as it is now, else `-32602`,
/// audited. The state is held for this call: spent if the call runs, released if it is refused.
pub(super) async fn open_state<'a>(
    shared: &'a Shared,
    facts: &CallFacts<'_>,
    binding: &Binding,
    state: &Value,
) -> Result<Reservation<'a>, Error> {
    let opened = match state {
        Value::String(state) => shared.policy.request_states().open(state, binding).await,
        _ => Err(StateRefusal::Forged),
    };
    opened.map_err(|refusal| {
        audit(shared, facts, &format!("requestState refused: {refusal}"), "refused");
        Error::InvalidParams {
            reason: ParamsProblem::InvalidRequestState,
            details: format!(
                "the `requestState` of this call to `{}` was refused: {refusal}",
                facts.tool.name()
            ),
        }
    })
}

/// An approval in the modern era, where the server cannot send the client a request: a multi
/// round-trip request. The first call gets an `input_required` result with one
/// elicitation form ([`APPROVAL_INPUT`]) and a sealed `requestState`
/// ([`crate::policy::request_state`]) bound to this tool, the digest of these arguments and what
/// every `#[path]` argument resolves to now. The retry's state ([`open_state`], `answered_state`
/// says it was good) carries the answer, which then decides as an answer through
/// `elicitation/create` does (`accept` with `once`/`session` approves; decline, cancel and
/// anything else deny). A retry with a good state but no answer is asked again.
///
/// A client that declares no elicitation capability is never sent a form: the question goes to
/// the server's terminal when it has one, else the call is refused with `-32021` naming
/// `elicitation`.
pub(super) fn round_trip(
    shared: &Shared,
    facts: &CallFacts<'_>,
    caller: &SessionInfo,
    question: &Question,
    binding: &Binding,
    responses: &JsonObject,
    earlier: Option<&Carried>,
) -> Result<RoundTrip, Error> {
    let policy = &shared.policy;
    let name = facts.tool.name();
    // The answer counts only with a state whose round asked the approval question.
    let asked = earlier.is_some_and(|e| e.asked.contains_key(APPROVAL_INPUT));
    let answer = if asked { responses.get(APPROVAL_INPUT).cloned() } else { None };
    if let Some(answer) = answer {
        let answer = crate::policy::ask::interpret(answer);
        return Ok(RoundTrip::Answered(policy.answered(facts, question.requirement(), answer)));
    }
    if !caller.capabilities.supports_elicitation() {
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
    let form = crate::policy::ask::approval_request(caller.version, &shared.policy.question_for(facts));
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

/// The `input_required` result of a call (or a prompt) whose handler asked the client questions
/// it has not answered yet: the questions, and a state sealing the answers so far for the retry.
pub(crate) fn ask_again(
    shared: &Shared,
    name: &str,
    binding: &Binding,
    input_requests: JsonObject,
    carried: Carried,
) -> Result<InputRequiredResult, Error> {
    let policy = &shared.policy;
    if carried.round > MAX_ROUNDS {
        return Err(Error::InvalidParams {
            reason: ParamsProblem::InvalidRequestState,
            details: format!(
                "`{name}` asked for input {MAX_ROUNDS} times in one call; call it again from the start"
            ),
        });
    }
    match policy.request_states().seal_carrying(binding, policy.question_lifetime(), carried) {
        Ok(request_state) => Ok(InputRequiredResult { input_requests, request_state }),
        Err(size) => Err(Error::Internal {
            details: format!(
                "`{name}` was given {size} bytes of answers, more than a request state carries ({} bytes)",
                crate::policy::request_state::MAX_CARRIED
            ),
        }),
    }
}

/// The refusal of a call whose handler asked for something the client did not declare.
pub(crate) fn missing_capability(name: &str, capability: ClientCapability) -> Error {
    Error::MissingCapability {
        capability: capability.as_str(),
        details: format!(
            "`{name}` asks the client for input that needs the `{}` capability, and this client did not declare it",
            capability.as_str()
        ),
    }
}
