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
//!
//! A tool whose body says when (`task_start = "body"`) starts as a plain call instead:
//! `run_until_task` runs it until its body asks to go on as a task, then creates the task and
//! moves the run, as it is, into the background (the same `drive`, ending and completion
//! record as a task that started as one).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::CallOutcome;
use crate::error::{Error, Failure};
use crate::jsonrpc::RequestId;
use crate::mcp::CallToolResult;
use crate::mcp::JsonObject;
use crate::mcp::tasks::LegacyTask;
use crate::policy::Completion;
use crate::server::shared::Shared;
use crate::server::tasks::{Ending, TaskRecord};
use crate::session::{Caller, Peer};
use crate::task::CatchUnwindExt as _;
use crate::tool::escalation::BecameTask;
use crate::tool::inputs::{Declared, Inputs, Mode};
use crate::tool::{ToolContext, ToolDef, ToolFuture};
use crate::workspace::Resolved;

/// What a task's run needs of its call, owned (the call is answered before it runs).
pub(super) struct TaskRun {
    /// The tool, and what its completion record says of the call.
    pub(super) recorded: Recorded,
    pub(super) args: JsonObject,
    pub(super) resolved: Vec<(String, Resolved, Resolved)>,
    pub(super) id: RequestId,
    pub(super) peer: Peer,
    /// What its client can be asked.
    pub(super) declared: Declared,
    /// Protocol 2025-11-25: the session its questions go to as requests (there is no
    /// `tasks/update` in that era).
    pub(super) legacy: Option<Arc<crate::server::SessionInfo>>,
}

/// What a task's completion record says of its call (`policy::audit`, "Records"), owned: the
/// record is written when the task ends, long after the call was answered.
pub(super) struct Recorded {
    pub(super) tool: Arc<ToolDef>,
    pub(super) digest: String,
    pub(super) principal: Option<Arc<str>>,
    pub(super) allowed_by: std::borrow::Cow<'static, str>,
}

impl Recorded {
    /// Writes the completion record of a run that took `ran` and came to `ending`:
    /// `completed` for a result that is not an error, else `failed`.
    fn audit(&self, shared: &Shared, ran: Duration, ending: &Ending) {
        let outcome = match ending {
            Ending::Completed(result) if result["isError"] != serde_json::Value::Bool(true) => "completed",
            _ => "failed",
        };
        let done = Completion {
            tool: &self.tool,
            digest: &self.digest,
            principal: self.principal.as_deref(),
            allowed_by: &self.allowed_by,
            ran,
        };
        shared.policy.audit_completion(&done, outcome);
    }
}

/// Creates the task and starts its run; the call's answer is the task's handle.
pub(super) async fn start(shared: &Arc<Shared>, caller: &Caller, run: TaskRun) -> Result<CallOutcome, Error> {
    let record = shared.tasks.create(caller)?;
    record.publish_created(shared.store.as_ref()).await;
    let info = record.info();
    let background = Arc::clone(shared);
    // Protocol 2025-11-25: the client is told when its task is over
    // (`notifications/tasks/status`), so it need not poll for that.
    let told = run.legacy.is_some().then(|| run.peer.clone());
    shared.tracker.spawn(async move {
        // `tasks/cancel` cancels the record's token, the one the tool's context has.
        let tool = Arc::clone(&run.recorded.tool);
        drive(&background, &record, tool.name(), body(&background, &record, run)).await;
        if let Some(peer) = told {
            peer.notify("notifications/tasks/status", &LegacyTask::from(record.info()));
        }
    });
    Ok(CallOutcome::Task(info))
}

/// Drives a task's run to its ending and records it, unless `tasks/cancel` comes first (it
/// recorded the ending already; the run is dropped where it is, a command's process tree
/// killed as for any cancelled call). The server stopping fails the task.
async fn drive(shared: &Shared, record: &TaskRecord, tool: &str, run: impl Future<Output = Ending>) {
    let stopping = shared.input_closed.clone();
    let ending = tokio::select! {
        biased;
        () = record.cancel.cancelled() => return,
        () = stopping.cancelled() => Ending::Failed(Error::ToolFailed {
            tool: tool.to_owned(),
            reason: Failure::Internal,
            details: "the server stopped while the task ran".into(),
        }),
        ending = run => ending,
    };
    record.end(ending);
    record.publish(shared.store.as_ref());
}

/// The run: a turn, the handler under its timeout, its ending.
async fn body(shared: &Shared, record: &TaskRecord, run: TaskRun) -> Ending {
    let TaskRun { recorded, args, resolved, id, peer, declared, legacy } = run;
    let tool = &recorded.tool;
    let name = tool.name();
    let _turn = match shared.turn(name).await {
        Ok(turn) => turn,
        Err(e) => return Ending::Failed(e),
    };
    let Some(handler) = tool.handler() else {
        return Ending::Failed(Error::Internal { details: format!("tool `{name}` has no handler") });
    };
    let cancel = record.cancel.clone();
    let timeout = shared.config.timeout_for(tool);
    let mode = match legacy {
        Some(session) => {
            Mode::Legacy { peer: peer.clone(), session, deadline: Some(Instant::now() + timeout) }
        }
        None => Mode::Task { declared, board: Arc::clone(&record.board), cancel: cancel.clone() },
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
    .with_inputs(inputs);
    let run = AssertUnwindSafe(shared.blockers.run(name, handler.call(ctx, args), &cancel, &shared.tracker))
        .catch_unwind();
    let started = Instant::now();
    let ran = tokio::time::timeout(timeout, run).await;
    let ending = ending_of(shared, tool, ran, &cancel, timeout);
    recorded.audit(shared, started.elapsed(), &ending);
    ending
}

/// What a task's run came to: the handler's result, run under `timeout` with panics caught.
/// A timeout cancels `cancel` (the tool's context's).
pub(super) fn ending_of(
    shared: &Shared,
    tool: &ToolDef,
    ran: Ran,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Ending {
    let name = tool.name();
    match ran {
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
    }
}

/// What a handler's run under its timeout, panics caught, comes to.
pub(super) type Ran = Result<std::thread::Result<Result<CallToolResult, Error>>, tokio::time::error::Elapsed>;

/// What a plain call that may become a task ([`TaskStart::Body`](crate::TaskStart::Body))
/// comes to.
pub(super) enum Until {
    /// The handler ended as a plain call (it never asked to go on as a task, or could not).
    Ran(Ran),
    /// It asked: the call is answered with the task's handle, and runs on in the background.
    Task(crate::mcp::tasks::CreateTaskResult),
}

/// What a plain call hands over to the task it may become.
pub(super) struct Becoming {
    /// The tool, and what the task's completion record will say of the call.
    pub(super) recorded: Recorded,
    /// The call's context (a handle on it): its questions, which a task takes over.
    pub(super) context: ToolContext,
    /// The context's token: the request's cancellation until the call becomes a task, the
    /// task's from then on.
    pub(super) cancel: CancellationToken,
    pub(super) turn: OwnedSemaphorePermit,
    pub(super) timeout: Duration,
}

/// Runs a plain call's handler until it ends or asks to go on as a task
/// ([`ToolContext::continue_as_task`]). Asked, the task is created (visible to `tasks/get`
/// before the call is answered) and the handler's run, its turn and its timeout move into the
/// background as they are; the handler goes on where it asked, its later questions on the task's
/// board. Until then a cancelled request cancels the handler's context.
pub(super) async fn run_until_task(
    shared: &Arc<Shared>,
    caller: &Caller,
    future: ToolFuture,
    request: &CancellationToken,
    becoming: Becoming,
) -> Until {
    let Becoming { recorded, context, cancel, turn, timeout } = becoming;
    let tool = Arc::clone(&recorded.tool);
    let run = {
        let (shared, tool, cancel) = (Arc::clone(shared), Arc::clone(&tool), cancel.clone());
        async move {
            AssertUnwindSafe(shared.blockers.run(tool.name(), future, &cancel, &shared.tracker))
                .catch_unwind()
                .await
        }
    };
    let started = Instant::now();
    let mut run = Box::pin(tokio::time::timeout(timeout, run));
    // (A server's call always has its questions; one without them can only run as it is.)
    let Some(escalation) = context.inputs().map(|inputs| &inputs.escalation) else {
        return Until::Ran(run.await);
    };
    let mut asked = escalation.offer();
    let mut listening = true;
    let answer = loop {
        tokio::select! {
            biased;
            ran = &mut run => return Until::Ran(ran),
            () = request.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
            asked = &mut asked, if listening => {
                listening = false;
                if let Ok(answer) = asked {
                    break answer;
                }
            }
        }
    };
    let record = match shared.tasks.create(caller) {
        Ok(record) => record,
        Err(e) => {
            // Its caller's share of tasks filled up since the call was admitted: it goes on
            // as the plain call it is.
            tracing::debug!(tool = tool.name(), "the call could not become a task: {e}");
            let _ = answer.send(());
            return Until::Ran(run.await);
        }
    };
    escalation.became(BecameTask { board: Arc::clone(&record.board), cancel: record.cancel.clone() });
    record.publish_created(shared.store.as_ref()).await;
    let info = record.info();
    let _ = answer.send(());
    let background = Arc::clone(shared);
    shared.tracker.spawn(async move {
        let _turn = turn;
        let ending = async {
            let ran = run.await;
            let ending = ending_of(&background, &tool, ran, &cancel, timeout);
            recorded.audit(&background, started.elapsed(), &ending);
            ending
        };
        drive(&background, &record, tool.name(), ending).await;
        // Whatever ended it: a tool that runs on a thread of its own stops too.
        cancel.cancel();
    });
    Until::Task(info)
}

fn completed(result: &crate::mcp::CallToolResult) -> Ending {
    match serde_json::to_value(result) {
        Ok(value) => Ending::Completed(value),
        Err(e) => {
            Ending::Failed(Error::Internal { details: format!("a result that cannot be written: {e}") })
        }
    }
}
