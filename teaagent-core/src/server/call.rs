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
use crate::error::{ArgumentError, Error, Failure, PathRefusal};
use crate::jsonrpc::RequestId;
use crate::mcp::tools::CallToolParams;
use crate::mcp::{CallToolResult, JsonObject};
use crate::tool::ToolContext;
use crate::tool::{ParamRole, ToolDef};
use crate::workspace::lock::LockRefusal;
use crate::workspace::{PathError, Target};

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
    let args = confine_paths(shared, &tool, args)?;
    // 5. Workspace lock, for tools that may write.
    if !tool.behavior().read_only {
        check_lock(shared, tool.name()).await?;
    }
    // 6. Run: wait for a turn, then the handler under its timeout, panics caught.
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
        shared.workspace.clone(),
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

/// Resolves every `#[path]` argument beneath the workspace root and hands the tool its physical
/// workspace-relative form (links resolved, `.` for the root), which is also what path grants
/// match. A refusal is `-32602` naming the argument, the path as given and why. Tools that are
/// not read-only are also refused files with more than one hard link (the other name may be
/// outside); the write itself checks again at the moment of use.
fn confine_paths(shared: &Shared, tool: &ToolDef, mut args: JsonObject) -> Result<JsonObject, Error> {
    let roles: Vec<&str> = tool
        .param_roles()
        .filter(|(name, role)| *role == ParamRole::Path && args.get(*name).is_some_and(Value::is_string))
        .map(|(name, _)| name)
        .collect();
    if roles.is_empty() {
        return Ok(args);
    }
    let Some(workspace) = &shared.workspace else {
        return Err(Error::ToolFailed {
            tool: tool.name().to_owned(),
            reason: Failure::Internal,
            details: "this tool takes a workspace path, but the server was started without a workspace"
                .into(),
        });
    };
    for name in roles {
        let Some(Value::String(given)) = args.get(name) else { continue };
        let refused = |reason| Error::PathRefused {
            tool: tool.name().to_owned(),
            argument: name.to_owned(),
            path: given.clone(),
            reason,
        };
        let resolved = match workspace.resolve_for_create(given) {
            Ok(resolved) => resolved,
            Err(PathError::Refused { reason, .. }) => return Err(refused(reason)),
            // Missing or not a directory: the tool reports that in its own words.
            Err(PathError::NotFound | PathError::NotADirectory) => continue,
            Err(PathError::Io(e)) => {
                return Err(Error::ToolFailed {
                    tool: tool.name().to_owned(),
                    reason: Failure::Internal,
                    details: e.to_string(),
                });
            }
        };
        // A tool that may write must not reach a file that has another name somewhere else.
        if let Target::File { links, .. } = resolved.target()
            && links > 1
            && !tool.behavior().read_only
        {
            return Err(refused(PathRefusal::HardLinked));
        }
        let Some(normal) = resolved.relative().to_str().map(|_| resolved.display()) else {
            return Err(refused(PathRefusal::InvalidPath));
        };
        args.insert(name.to_owned(), Value::String(normal));
    }
    Ok(args)
}

/// Tools that may write need this server to hold the workspace lock (tried again each time).
async fn check_lock(shared: &Shared, tool: &str) -> Result<(), Error> {
    let Some(lock) = shared.lock.clone() else { return Ok(()) };
    if lock.is_held() {
        return Ok(());
    }
    let outcome = tokio::task::spawn_blocking(move || lock.ensure())
        .await
        .map_err(|e| Error::Internal { details: e.to_string() })?;
    match outcome {
        Ok(()) => Ok(()),
        Err(LockRefusal::HeldBy(owner)) => Err(Error::WorkspaceLocked {
            tool: tool.to_owned(),
            owner_pid: owner.owner_pid,
            acquired_at: owner.acquired_at,
        }),
        Err(LockRefusal::Unavailable(details)) => {
            Err(Error::ToolFailed { tool: tool.to_owned(), reason: Failure::Internal, details })
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
