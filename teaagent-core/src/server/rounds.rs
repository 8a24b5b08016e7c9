//! The modern era's rounds of a call or a prompt: the `requestState` a retry carries, opened;
//! the questions a handler asked, sealed for the retry; the refusal of a question the client
//! cannot be asked.

use serde_json::Value;

use super::shared::Shared;
use crate::error::{Error, ParamsProblem};
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::policy::request_state::{Binding, Carried, MAX_ROUNDS, Reservation, StateRefusal};
use crate::tool::inputs::ClientCapability;

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
