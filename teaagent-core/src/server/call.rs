//! `tools/call`: the order of checks, in one place.
//!
//! ```text
//! 0. caller's share    -32000  caller_limit (`limit: "calls"`: its caller has its most calls in
//!                              progress, `crate::server::CallerLimits`; checked by the router)
//! 1. unknown tool      -32601  unknown_tool
//!    task or not       -32021  a tool that runs only as a task, for a modern client that did
//!                              not declare the tasks extension (`-32601` in 2025-11-25 without
//!                              `task`, or with `task` for a tool that never runs as one);
//!                      -32000  caller_limit (`limit: "tasks"`): the caller's tasks not over
//! 2. arguments         -32602  invalid_arguments (every schema violation; from protocol
//!                              2025-11-25 on an isError result instead, see `call_tool`)
//!                              · a refused #[path], -32602 in every version
//!                              (each #[path] resolved once, here, and its identity noted)
//!    (modern era)      -32602  a retry's requestState that does not verify, has expired, was
//!                              used, or is for another call (opened here, held for this call)
//! 3. policy            -32001  approval_denied (mode, deny rules, grants, preapprovals, asking;
//!                              a call only a person can approve is first looked at by the rate
//!                              limit, -32002, so nobody is asked about a call refused anyway;
//!                              modern era: an input_required result with the approval question,
//!                              or the approval an earlier round of this call carries)
//!                      -32000  caller_limit (`limit: "questions"`: the caller has its most
//!                              approval questions open; nobody is asked)
//! 4. rate limit        -32002  rate_limited (looked at; no budget taken yet)
//! 5. workspace lock    -32003  workspace_locked (tools that are not read-only)
//! 6. admission         -32001  a #[path] that leads elsewhere than when it was decided
//!                      -32002  the budget, now taken, was spent by calls admitted meanwhile
//!                      -32001  a counted grant's last use was spent by calls admitted meanwhile
//! 7. run               a task (`call/task.rs`): created now, answered with its handle, and
//!                      the rest of this step runs in the background; or
//!                      a turn (bounded concurrency; the earlier round's state is spent
//!                      here), the handler under its timeout, panics caught, each poll timed
//!                      (a tool that blocks the thread is named and isolated)
//! 8. after the run     modern era: questions the handler asked and the retry did not answer
//!                      -> input_required with a new sealed state; a question the client did
//!                      not declare the capability for -> -32021 (whatever the tool returned);
//!                      then the call's completion record (`policy::audit`): completed,
//!                      failed or input_required, with how long the handler ran
//! ```
//!
//! Each step passes the call on or refuses it with its own error. **A call refused at any step
//! uses nothing**: the policy step and step 4 only look at what counted grants (`;uses=N`) and
//! the rate limit have left; step 6, after every other check passed, takes the budget and spends
//! the grant uses ([`GrantUses::spend`](crate::policy::GrantUses::spend)), all or none. So calls
//! that wait for the lock and are refused never hold budget or uses that others need. An answer
//! "for this session" stays given (the user approved such calls, whatever happened next to this
//! one); an answer "once" was for this call.
//!
//! **An approval binds the target, not the spelling.** Each `#[path]` argument is resolved once
//! (step 2) and policy judges, and the user is shown, what it leads to. For a tool that may
//! write, step 6 resolves it again and compares identities (device and inode of the directory
//! that holds the entry and of the one that holds what it leads to, the kind of each): if
//! anything on the way was swapped — a directory replaced by a link while the question was open
//! — the call is refused with `-32001` and nothing is done. The tool is then handed the resolved
//! handles ([`ToolContext::path_target`]), so its effect happens in the directory that was judged
//! even if a name on the way is swapped while it waits for its turn. Every call gets exactly one
//! answer; every policy decision is audited, and every refusal from step 3 on is a value
//! (`super::refusal::Refusal`) that `checked_call` audits once.

mod admit;
mod lock;
mod paths;
mod task;
#[cfg(test)]
mod tests;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::metrics::Outcome;
use super::rounds::{inputs_for, next_round};
use super::shared::Shared;
use crate::digest::call_digest;
use crate::error::{ArgumentError, Error, Failure};
use crate::jsonrpc::RequestId;
use crate::mcp::modern::InputRequiredResult;
use crate::mcp::tasks::{TASKS_EXTENSION, TaskStart, TaskSupport};
use crate::mcp::tools::CallRequest;
use crate::mcp::{CallToolResult, JsonObject};
use crate::policy::request_state::approval_deadline;
use crate::policy::{CallFacts, Completion};
use crate::schema::validate::JsonType;
use crate::session::Caller;
use crate::session::peer::SessionInfo;
use crate::task::CatchUnwindExt as _;
use crate::tool::inputs::{ClientCapability, Declared, Inputs};
use crate::tool::{ParamRole, ToolContext, ToolDef};
use admit::{AdmitOutcome, Admitted, admit};
use paths::{ForeignCheck, PathArg, confine_paths, foreign_paths, lexical};

/// What a `tools/call` comes to.
#[derive(Debug)]
pub(crate) enum CallOutcome {
    /// The tool's result.
    Complete(CallToolResult),
    /// Modern era: the user must answer first (a multi round-trip request, see `round_trip` in `server/approval.rs`).
    InputRequired(InputRequiredResult),
    /// Modern era: the call runs on as a task (`server/tasks.rs`); its handle.
    Task(crate::mcp::tasks::CreateTaskResult),
}

/// Answers a `tools/call`: the steps above, then the answer's form for the caller's protocol
/// version. Refused arguments ([`Error::InvalidArguments`], from the schema step, the decoding
/// or the tool) are a result with `isError: true` from `2025-11-25` on and `-32602`
/// before; every other refusal keeps its code. Without a caller ([`crate::Server::call_once`])
/// the error itself is returned.
pub(crate) async fn call_tool(
    shared: &Arc<Shared>,
    id: &RequestId,
    params: Box<CallRequest>,
    cancel: CancellationToken,
    client: Option<&SessionInfo>,
    caller: &Caller,
) -> Result<CallOutcome, Error> {
    // The tool is looked up once, here. Counted (`metrics.rs`): two atomic additions.
    let position = shared.registry.position(&params.name);
    let series = shared.metrics.tool_at(position);
    let started = std::time::Instant::now();
    let answer = checked_call(shared, id, position, params, cancel, client, caller).await;
    let outcome = match &answer {
        Ok(CallOutcome::Complete(result)) => Outcome::of_result(result),
        Ok(CallOutcome::InputRequired(_)) => Outcome::InputRequired,
        // Answered with a handle; the run itself goes on in the background.
        Ok(CallOutcome::Task(_)) => Outcome::Task,
        Err(e) => Outcome::of_error(e),
    };
    series.finished(started.elapsed(), outcome);
    let as_result = client.is_some_and(|s| s.version.refuses_arguments_as_results());
    match answer {
        Err(e) if as_result => e.to_tool_result().map(CallOutcome::Complete).ok_or(e),
        other => other,
    }
}

async fn checked_call(
    shared: &Arc<Shared>,
    id: &RequestId,
    position: Option<usize>,
    params: Box<CallRequest>,
    cancel: CancellationToken,
    client: Option<&SessionInfo>,
    caller: &Caller,
) -> Result<CallOutcome, Error> {
    // 1.-2. The tool and its arguments (a plain function: see `Checked`).
    let mut checked = check(shared, position, *params, client, caller)?;
    let answers = std::mem::take(&mut checked.answers);
    let modern = client.filter(|c| c.version.is_modern());
    let admitted = {
        // 3. The facts the policy judges (`facts`).
        let facts = facts(shared, &checked, caller);
        let bound_digest = checked.round_trips.then_some(checked.digest.as_str());
        // 3.–6. Policy, rate limit, workspace lock, admission (`admit.rs`); a refusal at any of
        //    them is audited here, once. Its future is boxed: held here, it made this one about
        //    1,500 bytes, past what glibc's allocator keeps at hand per size (1,032), and every
        //    call's allocation took its slow path; two small ones take the quick one.
        match Box::pin(admit(shared, &facts, &checked.paths, caller, modern, bound_digest, answers)).await {
            Ok(AdmitOutcome::Run(admitted)) => admitted,
            Ok(AdmitOutcome::InputRequired(result)) => return Ok(CallOutcome::InputRequired(result)),
            Err(refusal) => {
                shared.metrics.refused(refusal.kind());
                return Err(refusal.audit(&shared.policy, &facts));
            }
        }
    };
    let Checked { tool, args, digest, legacy, as_task, may_become_task, progress_token, .. } = checked;
    let Admitted { modern: mut modern_part, approved_now, turn, resolved, allowed_by } = admitted;
    let name = tool.name();
    let policy = &shared.policy;
    // 7. Run (the turn was taken before admission): the handler under its timeout, panics
    //    caught. The earlier round's state is spent now (refused for overload, it stayed good).
    // Boxed, and only when there is one: held here, it was 120 bytes of every call's future.
    let carried = modern_part.as_mut().and_then(|part| part.earlier.take()).map(|held| {
        let carried = Box::new(held.carried.clone());
        held.spend();
        carried
    });
    let approved_until = match approved_now {
        true => Some(approval_deadline(policy.question_lifetime())),
        false => carried.as_deref().filter(|c| c.approved()).and_then(|c| c.approved_until),
    };
    if as_task {
        let run = task::TaskRun {
            args,
            resolved,
            id: id.clone(),
            peer: caller.peer.clone(),
            declared: client.map(|c| Declared::of(&c.capabilities)).unwrap_or_default(),
            recorded: task::Recorded {
                tool: Arc::clone(&tool),
                digest,
                principal: caller.principal.clone(),
                allowed_by,
            },
            legacy: if legacy { caller.peer.legacy() } else { None },
        };
        // Boxed: a call that runs as a task is rare, and its future would grow every call's.
        return Box::pin(task::start(shared, caller, run)).await;
    }
    let Some(handler) = tool.handler() else {
        return Err(Error::Internal { details: format!("tool `{name}` has no handler") });
    };
    // A call that may become a task gets a token of its own: the request's cancels it only
    // until then.
    // (The request's token is handed over, not cloned: a clone takes the token's lock.)
    let (run_cancel, request_cancel) = match may_become_task {
        true => (CancellationToken::new(), Some(cancel)),
        false => (cancel, None),
    };
    let ctx = ToolContext::new(
        tool.name_cow(),
        Some(id.clone()),
        progress_token.map(|token| *token),
        Some(caller.peer.clone()),
        run_cancel,
        shared.workspace.clone(),
    )
    .with_paths(resolved)
    .with_states(shared.states.clone());
    // The questions this call may ask the client (`crate::tool::inputs`).
    let timeout = shared.config.timeout_for(&tool);
    let round = carried.as_deref().map_or(0, |c| c.round);
    // One clock read for the run's start, its deadline and the questions' deadline.
    let started = Instant::now();
    let deadline = started.checked_add(timeout);
    let responses = modern_part.as_mut().map(|part| std::mem::take(&mut part.responses)).unwrap_or_default();
    let inputs =
        inputs_for(client, &caller.peer, responses, carried.map(|c| *c).unwrap_or_default(), deadline);
    let ctx = ctx.with_inputs(inputs);
    // Every poll is timed: a tool that blocks the thread is named and isolated (`watch`).
    // The call's own handle on the context (its token, and the questions it asked), kept
    // while the handler has it.
    let held = ctx.clone();
    let ran = if let Some(request_cancel) = request_cancel {
        let becoming = task::Becoming {
            context: held.clone(),
            cancel: held.cancellation().clone(),
            turn,
            timeout,
            recorded: task::Recorded {
                tool: Arc::clone(&tool),
                digest: digest.clone(),
                principal: caller.principal.clone(),
                allowed_by: allowed_by.clone(),
            },
        };
        // Boxed: a call that may become a task is rare, and its future would grow every call's.
        let until = task::run_until_task(shared, caller, handler.call(ctx, args), &request_cancel, becoming);
        match Box::pin(until).await {
            task::Until::Ran(ran) => ran,
            // Its completion is recorded when the task ends.
            task::Until::Task(info) => return Ok(CallOutcome::Task(info)),
        }
    } else {
        let run = AssertUnwindSafe(shared.blockers.run(
            name,
            handler.call(ctx, args),
            held.cancellation(),
            &shared.tracker,
        ))
        .catch_unwind();
        let ran = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline.into(), run).await,
            // A timeout too long to be written as an instant: none.
            None => Ok(run.await),
        };
        drop(turn);
        ran
    };
    let done = Completion {
        tool: &tool,
        digest: &digest,
        principal: caller.principal.as_deref(),
        allowed_by: &allowed_by,
        ran: started.elapsed(),
    };
    // 8. After the run (in a closure: its `?`s end the run's answer, not the completion
    //    record, written after it: `policy::audit`, "Records").
    let answer = (|| match ran {
        Ok(Ok(result)) => {
            let pending = held.inputs().map(Inputs::take_pending).unwrap_or_default();
            // The tool's error text (empty: it failed outright), to tell a tool that let a
            // missing capability end the call from one that answered without it.
            let failed = match &result {
                Ok(r) if r.is_error => Some(
                    r.content
                        .iter()
                        .filter_map(|c| match c {
                            crate::mcp::Content::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                Ok(_) => None,
                Err(_) => Some(String::new()),
            };
            match next_round(
                shared,
                name,
                modern_part.as_ref().map(|part| &part.binding),
                pending,
                failed.as_deref(),
                approved_until,
                round,
            )? {
                Some(question) => Ok(CallOutcome::InputRequired(question)),
                None => result.map(|mut result| {
                    // A result that breaks the tool's own `outputSchema` never leaves as valid.
                    if tool.output_schema().is_some() {
                        shared.registry.check_output(name, &mut result);
                    }
                    CallOutcome::Complete(result)
                }),
            }
        }
        Ok(Err(panic)) => Err(Error::ToolFailed {
            tool: name.to_owned(),
            reason: Failure::Panic,
            details: crate::logging::panic_message(panic.as_ref()),
        }),
        Err(_) => {
            held.cancellation().cancel();
            Err(Error::ToolFailed {
                tool: name.to_owned(),
                reason: Failure::Timeout,
                details: format!("no result after {}s; the call was cancelled", timeout.as_secs_f64()),
            })
        }
    })();
    let outcome = match &answer {
        Ok(CallOutcome::Complete(result)) if !result.is_error => "completed",
        Ok(CallOutcome::InputRequired(_)) => "input_required",
        _ => "failed",
    };
    policy.audit_completion(&done, outcome);
    answer
}

/// The JSON type name of a value, for messages: [`JsonType::article`], except that every number
/// is `a number` (an integer too).
pub(crate) fn json_type(v: &Value) -> &'static str {
    match JsonType::of(v) {
        JsonType::Integer => JsonType::Number.article(),
        other => other.article(),
    }
}

/// What steps 1 and 2 make of a call: the tool, its arguments as checked, and what the later
/// steps need of the params.
///
/// Made by a plain function, not in [`checked_call`]'s body: what steps 1 and 2 take apart and
/// build on the way would otherwise stay in the call's future across every later wait (a local
/// of an `async fn` keeps its place until its scope ends, moved out or not), and every call's
/// future is moved and allocated whole.
struct Checked {
    tool: Arc<ToolDef>,
    args: JsonObject,
    paths: Vec<PathArg>,
    foreign: ForeignCheck,
    /// The arguments' digest (empty when nothing looks at it).
    digest: String,
    /// A modern call that may open or seal a round-trip state: its states are bound to `digest`.
    round_trips: bool,
    legacy: bool,
    as_task: bool,
    may_become_task: bool,
    /// Boxed, as `answers`: few calls carry one.
    progress_token: Option<Box<Value>>,
    /// The retry's `inputResponses` and `requestState`, as read (boxed: only a modern retry
    /// carries them, and every call moves this value).
    answers: Answers,
}

/// A modern retry's `inputResponses` and `requestState`.
pub(super) type Answers = (Option<Box<Value>>, Option<Box<Value>>);

/// Steps 1 and 2 (see [`Checked`]).
fn check(
    shared: &Shared,
    position: Option<usize>,
    params: CallRequest,
    client: Option<&SessionInfo>,
    caller: &Caller,
) -> Result<Checked, Error> {
    let CallRequest { name, arguments, meta, input_responses, request_state, task } = params;
    let answers = (input_responses, request_state);
    let progress_token = meta.and_then(|m| m.progress_token).map(Box::new);
    // 1. Unknown tool.
    let Some(at) = position else {
        return Err(Error::UnknownTool { tool: name });
    };
    let tool = Arc::clone(shared.registry.at(at));
    drop(name);
    if let Some(why) = shared.availability.as_ref().and_then(|a| a.withheld(tool.name())) {
        return Err(Error::ToolFailed {
            tool: tool.name().to_owned(),
            reason: crate::error::Failure::Withheld,
            details: why,
        });
    }
    let name = tool.name();
    // A tool that runs as a task does so for a client that declared tasks in this request;
    // one that runs only as a task refuses any other (`-32021`). A full share of tasks refuses
    // the call before anything is looked at.
    // Protocol 2025-11-25 instead: the client asks for a task (`task` in the params) and the
    // tool says whether it may (`execution.taskSupport`); a mismatch is `-32601`.
    let legacy = client.is_some_and(|c| !c.version.is_modern());
    let asked = legacy && task.is_some();
    let as_task = match tool.task_support() {
        TaskSupport::Forbidden if asked => {
            return Err(Error::MethodNotFound {
                method: format!("tools/call of `{name}` as a task (it never runs as one)"),
            });
        }
        TaskSupport::Forbidden => false,
        TaskSupport::Required if legacy && !asked => {
            return Err(Error::MethodNotFound {
                method: format!("tools/call of `{name}` without `task` (it runs only as a task)"),
            });
        }
        _ if legacy => {
            if asked {
                shared.tasks.room_for(caller)?;
            }
            asked
        }
        support => {
            let declared = client
                .is_some_and(|c| c.version.is_modern() && c.capabilities.supports_extension(TASKS_EXTENSION));
            if !declared && support == TaskSupport::Required {
                return Err(Error::MissingCapability {
                    capability: TASKS_EXTENSION,
                    details: format!(
                        "tool `{name}` runs only as a task; declare the extension in the request's client capabilities"
                    ),
                });
            }
            if declared {
                shared.tasks.room_for(caller)?;
            }
            declared
        }
    };
    // A tool whose body says when (`TaskStart::Body`) runs as a plain call of this era until it
    // does (`call/task.rs`, `run_until_task`); in 2025-11-25 a call asked as a task is one.
    let may_become_task = as_task && !legacy && tool.task_start() == TaskStart::Body;
    let as_task = as_task && !may_become_task;

    // 2. Arguments: an object (absent means `{}`) that satisfies the input schema; then every
    //    `#[path]` argument confined to the workspace.
    let raw = match arguments {
        None | Some(Value::Null) => Value::Object(JsonObject::new()),
        Some(raw) => raw,
    };
    // Hashing the arguments costs what they weigh: only when the policy will look at it, or
    // when a modern call may open or seal a round-trip state (bound to its arguments): it
    // carries one, or its client declared something it can be asked through.
    let modern = client.filter(|c| c.version.is_modern());
    let round_trips =
        modern.is_some_and(|c| answers.1.is_some() || ClientCapability::any_declared_in(&c.capabilities));
    let digest = if shared.policy.needs_digest(&tool) || round_trips {
        call_digest(name, &raw)
    } else {
        String::new()
    };
    let mut args = match raw {
        Value::Object(args) => args,
        other => {
            return Err(Error::InvalidArguments {
                tool: name.to_owned(),
                errors: vec![ArgumentError {
                    pointer: String::new(),
                    message: format!("`arguments` must be an object (got {})", json_type(&other)),
                }],
            });
        }
    };
    shared
        .registry
        .check_arguments_at(at, &mut args)
        .map_err(|errors| Error::InvalidArguments { tool: name.to_owned(), errors })?;
    let (args, paths, foreign) = match tool.foreign() {
        None => {
            let (args, paths) = confine_paths(shared, &tool, args)?;
            (args, paths, ForeignCheck::default())
        }
        Some(declared) => {
            let (paths, foreign) = foreign_paths(shared, &tool, declared, &args);
            (args, paths, foreign)
        }
    };
    Ok(Checked {
        tool,
        args,
        paths,
        foreign,
        digest,
        round_trips,
        legacy,
        as_task,
        may_become_task,
        progress_token,
        answers,
    })
}

/// Step 3's facts about the call: its role arguments, the entries its paths name, where they
/// lead when that is not where they are spelled.
fn facts<'a>(shared: &Shared, checked: &'a Checked, caller: &'a Caller) -> CallFacts<'a> {
    let Checked { tool, args, paths, foreign, digest, .. } = checked;
    // 3. Policy: path grants match where a path really leads; command grants match the command;
    //    deny rules match paths both as named and as resolved.
    let mut roles: Vec<(&str, ParamRole, &str)> = if tool.foreign().is_none() {
        tool.param_roles()
            .filter_map(|(arg, role)| {
                let value = match role {
                    ParamRole::Path => paths.iter().find(|p| p.name == arg)?.target_shown()?,
                    ParamRole::Command => args.get(arg)?.as_str()?,
                };
                Some((arg, role, value))
            })
            .collect()
    } else {
        // Every value of every path argument (a list has several), and its commands.
        paths
            .iter()
            .filter_map(|p| Some((p.name.as_str(), ParamRole::Path, p.target_shown()?)))
            .chain(
                tool.param_roles()
                    .filter(|(_, role)| *role == ParamRole::Command)
                    .filter_map(|(arg, role)| Some((arg, role, args.get(arg)?.as_str()?))),
            )
            .collect()
    };
    roles.extend(foreign.spelled.iter().map(|(arg, value)| (arg.as_str(), ParamRole::Path, value.as_str())));
    let entries: Vec<(&str, &str)> =
        paths.iter().filter_map(|p| Some((p.name.as_str(), p.entry_shown()?))).collect();
    let detours: Vec<(&str, String, &str)> = paths
        .iter()
        .filter_map(|p| {
            let leads = p.target_shown()?;
            let spelled = lexical(shared, &p.given);
            (spelled != leads).then_some((p.name.as_str(), spelled, leads))
        })
        .collect();
    CallFacts {
        tool,
        roles,
        entries,
        digest,
        detours,
        unchecked: foreign.unchecked.clone(),
        principal: caller.principal.as_deref(),
        session: caller.session.as_deref(),
    }
}
