//! `tools/call`: the order of checks, in one place (SPEC §4).
//!
//! ```text
//! unknown tool → arguments → policy → rate limit → workspace lock → run
//! ```
//!
//! Each step either passes the call on or refuses it with its own error; a call refused at any
//! step uses no rate-limit budget because the budget is taken only after the steps before it.
//! Running means: wait for a turn (bounded concurrency), then run the handler under the tool's
//! timeout with panics caught, so every call gets exactly one answer.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::main_loop::Shared;
use crate::error::{ArgumentError, Error, Failure};
use crate::jsonrpc::RequestId;
use crate::mcp::tools::CallToolParams;
use crate::mcp::{CallToolResult, JsonObject};
use crate::tool::ToolContext;

pub(crate) async fn call_tool(
    shared: &Arc<Shared>,
    id: &RequestId,
    params: CallToolParams,
    cancel: CancellationToken,
) -> Result<CallToolResult, Error> {
    // 1. Unknown tool.
    let tool = shared.registry.get(&params.name).cloned().ok_or(Error::UnknownTool { tool: params.name })?;
    // 2. Arguments: an object (absent means `{}`).
    let args = match params.arguments {
        None | Some(Value::Null) => JsonObject::new(),
        Some(Value::Object(args)) => args,
        Some(other) => {
            return Err(Error::InvalidArguments {
                tool: tool.name().to_owned(),
                errors: vec![ArgumentError {
                    pointer: String::new(),
                    message: format!("arguments must be an object, not {}", json_type(&other)),
                }],
            });
        }
    };
    // 3. Run: wait for a turn, then the handler under its timeout, panics caught.
    let _turn = shared.turn(tool.name()).await?;
    let Some(handler) = tool.handler() else {
        return Err(Error::Internal { details: format!("tool `{}` has no handler", tool.name()) });
    };
    let progress_token = params.meta.and_then(|m| m.progress_token);
    let ctx = ToolContext::new(
        tool.name().to_owned(),
        Some(id.clone()),
        progress_token,
        Some(shared.peer.clone()),
        cancel.clone(),
    );
    let timeout = tool.timeout().unwrap_or(shared.config.default_tool_timeout);
    let run = AssertUnwindSafe(handler.call(ctx, args)).catch_unwind();
    match tokio::time::timeout(timeout, run).await {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(Error::ToolFailed {
            tool: tool.name().to_owned(),
            reason: Failure::Panic,
            details: crate::logging::panic_message(panic.as_ref()),
        }),
        Err(_) => {
            cancel.cancel();
            Err(Error::ToolFailed {
                tool: tool.name().to_owned(),
                reason: Failure::Timeout,
                details: format!("no result after {}s; the call was cancelled", timeout.as_secs_f64()),
            })
        }
    }
}

/// The JSON type name of a value, for messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
