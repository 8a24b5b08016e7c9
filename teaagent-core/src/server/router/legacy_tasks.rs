//! Protocol 2025-11-25's experimental tasks: `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel` over the same store as the modern era's (`server/tasks.rs`).
//!
//! The shapes are that protocol's: a task is flat with `ttl` and `pollInterval`
//! ([`LegacyTask`]); `tasks/result` waits until the task is over, then answers exactly what the
//! call would have (its result with `_meta["io.modelcontextprotocol/related-task"]`, or its
//! error); cancelling a task that is over is `-32602`.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Failure, ParamsProblem};
use crate::mcp::tasks::{LegacyTask, META_RELATED_TASK, TaskIdParams, TaskStatus};
use crate::server::params::parse_params;
use crate::server::shared::Shared;
use crate::session::Caller;

/// What a legacy task method answers.
pub(super) enum LegacyAnswer {
    /// A result.
    Result(Value),
    /// The JSON-RPC error object the task's call ended with (`tasks/result` of a failed task).
    Error(Value),
}

pub(super) async fn answer(
    shared: &Shared,
    method: &str,
    params: Option<&str>,
    caller: &Caller,
    cancel: &CancellationToken,
) -> Result<LegacyAnswer, Error> {
    if method == "tasks/list" {
        // One page: a caller has at most a bounded number of tasks kept.
        let tasks: Vec<LegacyTask> =
            shared.tasks.list(caller).iter().map(|t| LegacyTask::from(t.info())).collect();
        return Ok(LegacyAnswer::Result(json!({ "tasks": tasks })));
    }
    let p = parse_params::<TaskIdParams>(params)?;
    let task = shared.tasks.get(&p.task_id, caller)?;
    let written =
        |t: LegacyTask| serde_json::to_value(t).map_err(|e| Error::Internal { details: e.to_string() });
    match method {
        "tasks/get" => written(task.info().into()).map(LegacyAnswer::Result),
        "tasks/cancel" => {
            if task.info().status.is_terminal() {
                return Err(Error::InvalidParams {
                    reason: ParamsProblem::UnknownTask,
                    details: format!("task {:?} is over already; there is nothing to cancel", p.task_id),
                });
            }
            task.cancel();
            task.publish(shared.store.as_ref());
            written(task.info().into()).map(LegacyAnswer::Result)
        }
        _ => {
            let Some(over) = task.settled(cancel).await else {
                return Err(Error::Internal { details: "the request was cancelled".into() });
            };
            let related = json!({ "taskId": p.task_id });
            match (over.task.status, over.result, over.error) {
                (TaskStatus::Completed, Some(mut result), _) => {
                    if let Some(object) = result.as_object_mut() {
                        let meta = object.entry("_meta").or_insert_with(|| json!({}));
                        if let Some(meta) = meta.as_object_mut() {
                            meta.insert(META_RELATED_TASK.to_owned(), related);
                        }
                    }
                    Ok(LegacyAnswer::Result(result))
                }
                (TaskStatus::Failed, _, Some(error)) => Ok(LegacyAnswer::Error(error)),
                _ => Err(Error::ToolFailed {
                    tool: String::new(),
                    reason: Failure::Internal,
                    details: format!("task {:?} was cancelled before it ended", p.task_id),
                }),
            }
        }
    }
}
