//! `prompts/get` and `completion/complete` ([`crate::prompt`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::rounds::{inputs_for, next_round, open_state};
use super::shared::Shared;
use crate::digest::call_digest;
use crate::error::{Error, ParamsProblem};
use crate::jsonrpc::RequestId;
use crate::mcp::JsonObject;
use crate::mcp::modern::InputRequiredResult;
use crate::mcp::prompts::{
    CompleteParams, CompleteResult, Completion, CompletionRef, GetPromptParams, GetPromptResult,
};
use crate::policy::request_state::Binding;
use crate::prompt::PromptArguments;
use crate::session::Caller;
use crate::session::peer::SessionInfo;
use crate::task::CatchUnwindExt as _;
use crate::tool::ToolContext;
use crate::tool::inputs::Inputs;

/// What `prompts/get` answers.
pub(crate) enum PromptOutcome {
    Complete(GetPromptResult),
    InputRequired(InputRequiredResult),
}

fn invalid(reason: ParamsProblem, details: String) -> Error {
    Error::InvalidParams { reason, details }
}

/// `prompts/get`: the arguments checked against the prompt's, then its handler (which may ask the
/// client for input, as a tool does: `crate::tool::inputs`).
pub(crate) async fn get_prompt(
    shared: &Arc<Shared>,
    id: &RequestId,
    params: GetPromptParams,
    cancel: CancellationToken,
    client: Option<&SessionInfo>,
    caller: &Caller,
) -> Result<PromptOutcome, Error> {
    let name = params.name;
    let Some(def) = shared.prompts.get(&name) else {
        return Err(invalid(ParamsProblem::UnknownPrompt, format!("there is no prompt `{name}`")));
    };
    let mut args = PromptArguments::new(&name, def.argument_names());
    for (key, value) in params.arguments.unwrap_or_default() {
        let Some(_) = def.prompt.arguments.iter().find(|a| a.name == key) else {
            return Err(invalid(
                ParamsProblem::InvalidPromptArguments,
                format!("prompt `{name}` takes no argument `{key}`"),
            ));
        };
        match value {
            Value::String(value) => {
                args.insert(key, value);
            }
            other => {
                return Err(invalid(
                    ParamsProblem::InvalidPromptArguments,
                    format!(
                        "argument `{key}` of prompt `{name}` must be a string (got {})",
                        super::call::json_type(&other)
                    ),
                ));
            }
        }
    }
    if let Some(missing) = def.prompt.arguments.iter().find(|a| a.required && !args.contains(&a.name)) {
        return Err(invalid(
            ParamsProblem::InvalidPromptArguments,
            format!("prompt `{name}` needs the argument `{}`", missing.name),
        ));
    }
    let Some(handler) = def.handler.clone() else {
        return Err(Error::Internal { details: format!("prompt `{name}` has no handler") });
    };

    // Modern era: the state of an earlier round, bound to this prompt, its arguments and caller.
    let modern = client.filter(|c| c.version.is_modern());
    let label = format!("prompt:{name}");
    let binding = modern.map(|_| {
        let object: JsonObject =
            args.iter().map(|(k, v)| (k.to_owned(), Value::String(v.to_owned()))).collect();
        Binding {
            tool: label.clone(),
            digest: Some(call_digest(&label, &Value::Object(object))),
            targets: String::new(),
            principal: caller.principal.as_deref().unwrap_or_default().to_owned(),
        }
    });
    let responses = match modern {
        Some(_) => crate::tool::inputs::responses(params.input_responses)?,
        None => JsonObject::new(),
    };
    let earlier = match (&binding, &params.request_state) {
        (Some(binding), Some(state)) => {
            let what = format!("this `prompts/get` of `{name}`");
            Some(open_state(shared, &what, binding, state).await.map_err(|(_, error)| error)?)
        }
        _ => None,
    };
    // A turn like a tool call's (bounded concurrency); the earlier round's state is spent once
    // the prompt has it.
    let _turn = shared.turn(&label).await?;
    let carried = earlier.as_ref().map(|e| e.carried.clone()).unwrap_or_default();
    if let Some(held) = earlier {
        held.spend();
    }
    let timeout = shared.config.default_tool_timeout;
    let peer = caller.peer.clone();
    let round = carried.round;
    let inputs =
        inputs_for(client, &peer, responses, carried, std::time::Instant::now().checked_add(timeout));
    let ctx = ToolContext::new(
        label.clone(),
        Some(id.clone()),
        None,
        Some(peer),
        cancel.clone(),
        shared.workspace.clone(),
    )
    .with_states(shared.states.clone())
    .with_inputs(inputs);
    // The prompt's own handle on the context, for what it asked once it has run.
    let held = ctx.clone();
    // Every poll is timed, as a tool's: a handler that blocks the thread is named and isolated
    // (`super::watch`).
    let failed = |details: String| Err(crate::tool::ToolError::new(details));
    let run = shared.blockers.run_any(&label, handler(ctx, args), &cancel, &shared.tracker, failed);
    let run = AssertUnwindSafe(run).catch_unwind();
    let result = match tokio::time::timeout(timeout, run).await {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            return Err(Error::Internal {
                details: format!(
                    "prompt `{name}` panicked: {}",
                    crate::logging::panic_message(panic.as_ref())
                ),
            });
        }
        Err(_) => {
            cancel.cancel();
            return Err(Error::Internal {
                details: format!("prompt `{name}` gave no result after {}s", timeout.as_secs_f64()),
            });
        }
    };
    // A prompt that answered without the missing capability is answered with its messages.
    let failed = result.as_ref().err().map(ToString::to_string);
    let pending = held.inputs().map(Inputs::take_pending).unwrap_or_default();
    match next_round(shared, &label, binding.as_ref(), pending, failed.as_deref(), None, round)? {
        Some(question) => Ok(PromptOutcome::InputRequired(question)),
        None => match result {
            Ok(result) => Ok(PromptOutcome::Complete(result)),
            Err(e) => Err(Error::Internal { details: format!("prompt `{name}` failed: {e}") }),
        },
    }
}

/// `completion/complete`: a prompt's completer, or the resource provider's for a template.
pub(crate) fn complete(shared: &Shared, params: CompleteParams) -> Result<CompleteResult, Error> {
    let context = params.context.unwrap_or_default().arguments;
    let values = match params.reference {
        CompletionRef::Prompt { name } => {
            let Some(def) = shared.prompts.get(&name) else {
                return Err(invalid(ParamsProblem::UnknownPrompt, format!("there is no prompt `{name}`")));
            };
            // The filled-in arguments the prompt declares (a client's others are not passed on).
            let names = def.argument_names();
            let mut filled = PromptArguments::new(&name, names.clone());
            for (key, value) in context {
                if names.contains(&key) {
                    filled.insert(key, value);
                }
            }
            def.completions(&params.argument.name, &params.argument.value, &filled)
        }
        CompletionRef::Resource { uri } => match &shared.resources {
            Some(provider) => provider.complete(&uri, &params.argument.name, &params.argument.value),
            None => Vec::new(),
        },
    };
    Ok(CompleteResult { completion: Completion::of(values) })
}
