//! `tools/call`: the order of checks, in one place (SPEC §4).
//!
//! ```text
//! 1. unknown tool      -32601  unknown_tool
//! 2. arguments         -32602  invalid_arguments (every schema violation) · a refused #[path]
//! 3. policy            -32001  approval_denied (mode, deny rules, grants, preapprovals, asking)
//! 4. rate limit        -32002  rate_limited
//! 5. workspace lock    -32003  workspace_locked (tools that are not read-only)
//! 6. run               a turn (bounded concurrency), the handler under its timeout, panics caught
//! ```
//!
//! Each step passes the call on or refuses it with its own error. The rate-limit budget is taken
//! at step 4 and given back if step 5 refuses, so a call refused at any step uses none. Every
//! call gets exactly one answer; every policy decision and every refusal after it is audited.

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
use crate::policy::digest::call_digest;
use crate::policy::{CallFacts, Decision};
use crate::tool::{ParamRole, Tier, ToolContext, ToolDef};
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
    let name = tool.name();

    // 2. Arguments: an object (absent means `{}`) that satisfies the input schema; then every
    //    `#[path]` argument confined to the workspace.
    let raw = match params.arguments {
        None | Some(Value::Null) => Value::Object(JsonObject::new()),
        Some(raw) => raw,
    };
    // Hashing the arguments costs what they weigh: only when the policy will look at it.
    let digest = if shared.policy.needs_digest(&tool) { call_digest(name, &raw) } else { String::new() };
    let mut args = match raw {
        Value::Object(args) => args,
        other => {
            return Err(Error::InvalidArguments {
                tool: name.to_owned(),
                errors: vec![ArgumentError {
                    pointer: String::new(),
                    message: format!("arguments must be an object, not {}", json_type(&other)),
                }],
            });
        }
    };
    shared
        .registry
        .check_arguments(name, &mut args)
        .map_err(|errors| Error::InvalidArguments { tool: name.to_owned(), errors })?;
    let (args, physical) = confine_paths(shared, &tool, args)?;

    // 3. Policy: path grants match where a path really leads; command grants match the command.
    let roles: Vec<(&str, ParamRole, &str)> = tool
        .param_roles()
        .filter_map(|(arg, role)| {
            let value = match role {
                ParamRole::Path => physical.iter().find(|(n, _)| n == arg).map(|(_, p)| p.as_str())?,
                ParamRole::Command => args.get(arg)?.as_str()?,
            };
            Some((arg, role, value))
        })
        .collect();
    let facts = CallFacts { tool: &tool, roles, digest: &digest };
    let policy = &shared.policy;
    match policy.decide(&facts, Some(&shared.peer)).await {
        Decision::Deny { rule, details } => {
            audit(shared, &facts, &rule, "denied");
            return Err(Error::ApprovalDenied { tool: name.to_owned(), rule, details });
        }
        Decision::Allow { rule } => {
            if let Err(e) = policy.record(&facts, &rule, "allowed") {
                if tool.tier() > Tier::Low {
                    let rule = format!(
                        "the audit log cannot be written ({e}); calls above tier `low` are refused until it can"
                    );
                    return Err(Error::ApprovalDenied {
                        tool: name.to_owned(),
                        rule,
                        details: "make $TEAAGENT_HOME/audit.jsonl writable (or set TEAAGENT_HOME to a writable directory)".into(),
                    });
                }
                tracing::warn!(error = %e, "the audit log cannot be written");
            }
        }
    }

    // 4. Rate limit.
    let admission = match shared.limiter.admit(name) {
        Ok(admission) => admission,
        Err((limit, retry_after)) => {
            audit(shared, &facts, "rate limit", "rate_limited");
            return Err(Error::RateLimited {
                tool: name.to_owned(),
                max_calls: limit.max_calls,
                window: limit.window,
                retry_after,
            });
        }
    };

    // 5. Workspace lock, for tools that may write.
    if !tool.behavior().read_only
        && let Err(e) = check_lock(shared, name).await
    {
        admission.refund();
        audit(shared, &facts, "workspace lock", "locked");
        return Err(e);
    }

    // 6. Run: wait for a turn, then the handler under its timeout, panics caught.
    let _turn = shared.turn(name).await?;
    let Some(handler) = tool.handler() else {
        return Err(Error::Internal { details: format!("tool `{name}` has no handler") });
    };
    let progress_token = params.meta.and_then(|m| m.progress_token);
    let ctx = ToolContext::new(
        name.to_owned(),
        Some(id.clone()),
        progress_token,
        Some(shared.peer.clone()),
        cancel.clone(),
        shared.workspace.clone(),
    );
    let timeout = shared.config.timeout_for(&tool);
    let run = AssertUnwindSafe(handler.call(ctx, args)).catch_unwind();
    match tokio::time::timeout(timeout, run).await {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(Error::ToolFailed {
            tool: name.to_owned(),
            reason: Failure::Panic,
            details: crate::logging::panic_message(panic.as_ref()),
        }),
        Err(_) => {
            cancel.cancel();
            Err(Error::ToolFailed {
                tool: name.to_owned(),
                reason: Failure::Timeout,
                details: format!("no result after {}s; the call was cancelled", timeout.as_secs_f64()),
            })
        }
    }
}

/// Records a refusal after the policy step (best effort: the call is refused anyway).
fn audit(shared: &Shared, facts: &CallFacts<'_>, rule: &str, outcome: &str) {
    if let Err(e) = shared.policy.record(facts, rule, outcome) {
        tracing::warn!(error = %e, "the audit log cannot be written");
    }
}

/// Resolves every `#[path]` argument beneath the workspace root. Where the path really leads
/// (every link followed) must stay inside, and is what path grants match; the tool is handed the
/// path of the entry itself, normalised (directories resolved, `.` for the root, a link in the
/// last component left as named, so deleting or moving a link acts on the link). A refusal is
/// `-32602` naming the argument, the path as given and why. Tools that are not read-only are also
/// refused files with more than one hard link (the other name may be outside); the write itself
/// checks again at the moment of use.
fn confine_paths(
    shared: &Shared,
    tool: &ToolDef,
    mut args: JsonObject,
) -> Result<(JsonObject, Vec<(String, String)>), Error> {
    let roles: Vec<&str> = tool
        .param_roles()
        .filter(|(name, role)| *role == ParamRole::Path && args.get(*name).is_some_and(Value::is_string))
        .map(|(name, _)| name)
        .collect();
    if roles.is_empty() {
        return Ok((args, Vec::new()));
    }
    let Some(workspace) = &shared.workspace else {
        return Err(Error::ToolFailed {
            tool: tool.name().to_owned(),
            reason: Failure::Internal,
            details: "this tool takes a workspace path, but the server was started without a workspace"
                .into(),
        });
    };
    let mut physical = Vec::new();
    for name in roles {
        let Some(Value::String(given)) = args.get(name) else { continue };
        let refused = |reason| Error::PathRefused {
            tool: tool.name().to_owned(),
            argument: name.to_owned(),
            path: given.clone(),
            reason,
        };
        let failed = |e: PathError| match e {
            PathError::Refused { reason, .. } => Some(refused(reason)),
            // Missing or not a directory: the tool reports that in its own words.
            PathError::NotFound | PathError::NotADirectory => None,
            PathError::Io(e) => Some(Error::ToolFailed {
                tool: tool.name().to_owned(),
                reason: Failure::Internal,
                details: e.to_string(),
            }),
        };
        // The entry itself; only a link in the last component needs a second walk to learn (and
        // judge) where it leads.
        let entry = match workspace.resolve_entry_for_create(given) {
            Ok(entry) => entry,
            Err(e) => match failed(e) {
                Some(error) => return Err(error),
                None => continue,
            },
        };
        let resolved = if entry.target() == Target::Symlink {
            match workspace.resolve_for_create(given) {
                Ok(resolved) => resolved,
                Err(e) => match failed(e) {
                    Some(error) => return Err(error),
                    None => continue,
                },
            }
        } else {
            entry.clone()
        };
        // A tool that may write must not reach a file that has another name somewhere else.
        if let Target::File { links, .. } = resolved.target()
            && links > 1
            && !tool.behavior().read_only
        {
            return Err(refused(PathRefusal::HardLinked));
        }
        if resolved.relative().to_str().is_none() || entry.relative().to_str().is_none() {
            return Err(refused(PathRefusal::InvalidPath));
        }
        physical.push((name.to_owned(), resolved.display()));
        args.insert(name.to_owned(), Value::String(entry.display()));
    }
    Ok((args, physical))
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
