//! The modern era's rounds of a call or a prompt: the `requestState` a retry carries, opened;
//! the questions a handler asked, sealed for the retry; the refusal of a question the client
//! cannot be asked.

use std::sync::Arc;

use serde_json::Value;

use super::shared::Shared;
use crate::error::{Error, ParamsProblem};
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::policy::request_state::{Binding, Carried, MAX_ROUNDS, Reservation, StateRefusal};
use crate::session::Peer;
use crate::session::peer::SessionInfo;
use crate::tool::inputs::{ClientCapability, Declared, Inputs, Mode, Pending, tool_answers};

/// Opens the `requestState` a modern retry carries (module `crate::policy::request_state`): it
/// must verify, be unexpired and unused, and match the call as it is now (`binding`), else
/// `-32602` whose message names `what` was refused (`this call to `x``). The state is held for
/// this call: spent if the call runs, released if it is refused.
pub(crate) async fn open_state<'a>(
    shared: &'a Shared,
    what: &str,
    binding: &Binding,
    state: &Value,
) -> Result<Reservation<'a>, (StateRefusal, Error)> {
    let opened = match state {
        Value::String(state) => shared.policy.request_states().open(state, binding).await,
        _ => Err(StateRefusal::Forged),
    };
    opened.map_err(|refusal| {
        let error = Error::InvalidParams {
            reason: ParamsProblem::InvalidRequestState,
            details: format!("the `requestState` of {what} was refused: {refusal}"),
        };
        (refusal, error)
    })
}

/// The questions a handler may ask the client in this round (`crate::tool::inputs`): in the
/// modern era, the retry's answers (never the server's own approval answer) to what the last
/// round asked, and those carried from earlier rounds; in the legacy era, requests to the client
/// on the caller's `peer`, answered within `timeout`; else nobody to ask.
pub(crate) fn inputs_for(
    client: Option<&SessionInfo>,
    peer: &Peer,
    responses: JsonObject,
    carried: Carried,
    deadline: Option<std::time::Instant>,
) -> Inputs {
    Inputs::new(match client.filter(|c| c.version.is_modern()) {
        Some(modern) => Mode::Modern {
            declared: Declared::of(&modern.capabilities),
            responses: tool_answers(responses),
            asked: carried.asked,
            carried: carried.answers,
        },
        None => match peer.legacy().or_else(|| client.map(|c| Arc::new(c.clone()))) {
            Some(session) => Mode::Legacy { peer: peer.clone(), session, deadline },
            None => Mode::None,
        },
    })
}

/// After a handler ran (`failed`: its error text, empty when it failed outright): one that let
/// a question the client cannot be asked end it is refused (`-32021`); one that asked questions
/// this round did not answer gets the `input_required` result of the next round (`Some`), whose
/// state carries the answers so far and `approved_until`; else (`None`) its own answer stands.
pub(crate) fn next_round(
    shared: &Shared,
    name: &str,
    binding: Option<&Binding>,
    pending: Pending,
    failed: Option<&str>,
    approved_until: Option<u64>,
    round: u32,
) -> Result<Option<InputRequiredResult>, Error> {
    if let Some(capability) = pending.ended_by_unsupported(failed) {
        return Err(missing_capability(name, capability));
    }
    match binding {
        Some(binding) if !pending.questions.is_empty() => {
            let next = Carried {
                answers: pending.answers,
                asked: pending.asked,
                approved_until,
                round: round.saturating_add(1),
            };
            ask_again(shared, name, binding, pending.questions, next).map(Some)
        }
        _ => Ok(None),
    }
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
fn missing_capability(name: &str, capability: ClientCapability) -> Error {
    Error::MissingCapability {
        capability: capability.as_str(),
        details: format!(
            "`{name}` asks the client for input that needs the `{}` capability, and this client did not declare it",
            capability.as_str()
        ),
    }
}
