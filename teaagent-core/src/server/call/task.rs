//! Step 7 for a call that runs as a task: the task is created (visible to `tasks/get` before the
//! call is answered), the call is answered with its handle, and the tool runs on in the
//! background under what was decided for the call (`server/tasks.rs`).
//!
//! Everything before step 7 happened as for any call: the policy, the approval (asked before the
//! task exists, never in the middle of it), the rate limit, admission. The run is the same as a
//! plain call's (a turn, the handler under the tool's timeout, panics caught, each poll timed),
//! but its questions wait on the task's board for `tasks/update`, its progress is the task's
//! `statusMessage`, and its cancellation is the task's: `tasks/cancel`, the timeout, or the
//! server stopping.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use super::CallOutcome;
use crate::error::{Error, Failure};
use crate::jsonrpc::RequestId;
use crate::mcp::{ClientCapabilities, JsonObject};
use crate::policy::Completion;
use crate::server::shared::Shared;
use crate::server::tasks::{Ending, TaskRecord};
use crate::session::{Caller, Peer};
use crate::task::CatchUnwindExt as _;
use crate::tool::inputs::{Inputs, Mode};
use crate::tool::{ToolContext, ToolDef};
use crate::workspace::Resolved;

/// What a task's run needs of its call, owned (the call is answered before it runs).
pub(super) struct TaskRun {
    pub(super) tool: Arc<ToolDef>,
    pub(super) args: JsonObject,
    pub(super) resolved: Vec<(String, Resolved, Resolved)>,
    pub(super) id: RequestId,
    pub(super) peer: Peer,
    pub(super) capabilities: ClientCapabilities,
    pub(super) digest: String,
    pub(super) principal: Option<Arc<str>>,
    pub(super) allowed_by: String,
    /// Protocol 2025-11-25: the session its questions go to as requests (there is no
    /// `tasks/update` in that era).
    pub(super) legacy: Option<Arc<crate::server::SessionInfo>>,
}

/// Creates the task and starts its run; the call's answer is the task's handle.
pub(super) fn start(shared: &Arc<Shared>, caller: &Caller, run: TaskRun) -> Result<CallOutcome, Error> {
    let record = shared.tasks.create(caller)?;
    record.publish(shared.store.as_ref());
    let info = record.info();
    let background = Arc::clone(shared);
    shared.tracker.spawn(async move {
        let cancel = record.cancel.clone();
        let stopping = background.input_closed.clone();
        let tool = run.tool.name().to_owned();
        let ending = tokio::select! {
            biased;
            // `tasks/cancel` recorded the ending already; the run is dropped where it is
            // (a command's process tree is killed as for any cancelled call).
            () = cancel.cancelled() => None,
            () = stopping.cancelled() => Some(Ending::Failed(Error::ToolFailed {
                tool,
                reason: Failure::Internal,
                details: "the server stopped while the task ran".into(),
            })),
            ending = body(&background, &record, run) => Some(ending),
        };
        if let Some(ending) = ending {
            record.end(ending);
            record.publish(background.store.as_ref());
        }
    });
    Ok(CallOutcome::Task(info))
}

/// The run: a turn, the handler under its timeout, its ending.
async fn body(shared: &Shared, record: &TaskRecord, run: TaskRun) -> Ending {
    let TaskRun { tool, args, resolved, id, peer, capabilities, digest, principal, allowed_by, legacy } = run;
    let name = tool.name();
    let _turn = match shared.turn(name).await {
        Ok(turn) => turn,
        Err(e) => return Ending::Failed(e),
    };
    let Some(handler) = tool.handler() else {
        return Ending::Failed(Error::Internal { details: format!("tool `{name}` has no handler") });
    };
    let cancel = record.cancel.clone();
    let timeout = shared.config.timeout_for(&tool);
    let mode = match legacy {
        Some(session) => {
            Mode::Legacy { peer: peer.clone(), session, deadline: Some(Instant::now() + timeout) }
        }
        None => Mode::Task { capabilities, board: Arc::clone(&record.board), cancel: cancel.clone() },
    };
    let inputs = Inputs::new(mode);
    let ctx = ToolContext::new(
        name.to_owned(),
        Some(id),
        None,
        Some(peer),
        cancel.clone(),
        shared.workspace.clone(),
    )
    .with_paths(resolved)
    .with_states(shared.states.clone())
    .with_inputs(Arc::new(inputs));
    let run = AssertUnwindSafe(shared.blockers.run(name, handler.call(ctx, args), &cancel, &shared.tracker))
        .catch_unwind();
    let started = Instant::now();
    let ending = match tokio::time::timeout(timeout, run).await {
        Ok(Ok(Ok(mut result))) => {
            if tool.output_schema().is_some() {
                shared.registry.check_output(name, &mut result);
            }
            completed(&result)
        }
        // Arguments the tool refused are a result, as for a plain call of this era.
        Ok(Ok(Err(e))) => match e.to_tool_result() {
            Some(result) => completed(&result),
            None => Ending::Failed(e),
        },
        Ok(Err(panic)) => Ending::Failed(Error::ToolFailed {
            tool: name.to_owned(),
            reason: Failure::Panic,
            details: crate::logging::panic_message(panic.as_ref()),
        }),
        Err(_) => {
            cancel.cancel();
            Ending::Failed(Error::ToolFailed {
                tool: name.to_owned(),
                reason: Failure::Timeout,
                details: format!("no result after {}s; the task was cancelled", timeout.as_secs_f64()),
            })
        }
    };
    let outcome = match &ending {
        Ending::Completed(result) if result["isError"] != serde_json::Value::Bool(true) => "completed",
        _ => "failed",
    };
    let done = Completion {
        tool: &tool,
        digest: &digest,
        principal: principal.as_deref(),
        allowed_by: &allowed_by,
        ran: started.elapsed(),
    };
    shared.policy.audit_completion(&done, outcome);
    ending
}

fn completed(result: &crate::mcp::CallToolResult) -> Ending {
    match serde_json::to_value(result) {
        Ok(value) => Ending::Completed(value),
        Err(e) => {
            Ending::Failed(Error::Internal { details: format!("a result that cannot be written: {e}") })
        }
    }
}
