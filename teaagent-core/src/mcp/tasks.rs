//! Tasks: a `tools/call` answered at once with a handle, polled until its result is ready.
//!
//! Protocol `2026-07-28` carries them as the `io.modelcontextprotocol/tasks` extension
//! ([`TASKS_EXTENSION`]): a client that declares it in a request's capabilities may be answered
//! with a [`CreateTaskResult`] (`resultType: "task"`), then polls `tasks/get`
//! ([`DetailedTask`]), answers the task's questions with `tasks/update` and stops it with
//! `tasks/cancel` (both acknowledged with an empty result). Which tools may run as tasks is the
//! server's to say ([`TaskSupport`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;

/// The extension's identifier, in the server's `capabilities.extensions` and the client's.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool runs as a task (`#[tool(task)]`, `#[tool(task = "required")]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never: the call is answered when the tool returns (the default).
    #[default]
    Forbidden,
    /// As a task for a client that supports tasks, as a plain call for one that does not.
    Optional,
    /// Only as a task: a client that does not support tasks is refused (`-32021`).
    Required,
}

/// When a call of a task tool becomes a task (`#[tool(task, task_start = "body")]`).
///
/// In protocol 2026-07-28 the server decides when a call becomes a task. A tool that asks its
/// questions first and only then does the long part starts from its body: until the body calls
/// [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task), the call is a plain
/// one (its questions come back as `input_required` results, in plain round trips); from there
/// the call is answered with the task's handle and the body goes on in the background. In
/// protocol 2025-11-25 the client asks for a task with the call, which is then a task from the
/// start either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskStart {
    /// The call is a task before the body runs (the default).
    #[default]
    Call,
    /// The body says when, with [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task).
    Body,
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The tool is running (or waiting for its turn).
    Working,
    /// The tool waits for the client's answers (`tasks/update`).
    InputRequired,
    /// The tool returned a result (an `isError` one too).
    Completed,
    /// The call ended with a protocol error (a panic, a timeout): `error` says which.
    Failed,
    /// Cancelled by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over (its status never changes again).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The status as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What every task answer says of the task (the members `tasks/get` and the creation share).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    /// The task's id: unguessable, the handle for every later request.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it is doing, for a person (the tool's latest progress message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (RFC 3339, UTC).
    pub created_at: String,
    /// When its status last changed (RFC 3339, UTC).
    pub last_updated_at: String,
    /// How long the task is kept once it is over, in milliseconds (always written).
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// The answer of a `tools/call` that became a task (`resultType: "task"`): the task's members,
/// flat.
pub type CreateTaskResult = TaskInfo;

/// `tasks/get`'s answer: the task, and what it came to so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: TaskInfo,
    /// `input_required` only: the questions not answered yet, by key
    /// (`{"method": "elicitation/create", "params": …}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
    /// `completed` only: the tool's result (a `CallToolResult`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `failed` only: the JSON-RPC error the call ended with (`{code, message, data}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// Protocol 2025-11-25's experimental task: the same members, with its names for the time to
/// live and the poll interval (`ttl`, `pollInterval`). A `tools/call` that became a task answers
/// `{"task": LegacyTask}`; `tasks/get`, `tasks/cancel` answer it flat, `tasks/list` a list of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTask {
    /// The task's id.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it is doing, for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// When its status last changed.
    pub last_updated_at: String,
    /// How long it is kept once over, in milliseconds (always written).
    pub ttl: Option<u64>,
    /// How often to poll, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

impl From<TaskInfo> for LegacyTask {
    fn from(t: TaskInfo) -> Self {
        Self {
            task_id: t.task_id,
            status: t.status,
            status_message: t.status_message,
            created_at: t.created_at,
            last_updated_at: t.last_updated_at,
            ttl: t.ttl_ms,
            poll_interval: t.poll_interval_ms,
        }
    }
}

/// `_meta` key tying a result to its task (protocol 2025-11-25, on `tasks/result`).
pub const META_RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// The params of `tasks/update`: answers to the task's questions, by key.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// The answers (each the result of the request it answers); keys the task did not ask are
    /// ignored.
    #[serde(default)]
    pub input_responses: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_created_task_is_flat_and_names_ttl_ms_even_when_unbounded() {
        let info = TaskInfo {
            task_id: "t1".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: "2026-12-05T10:30:00Z".into(),
            last_updated_at: "2026-12-05T10:30:00Z".into(),
            ttl_ms: None,
            poll_interval_ms: Some(500),
        };
        assert_eq!(
            serde_json::to_value(&info).expect("as the test set it up"),
            json!({"taskId": "t1", "status": "working", "createdAt": "2026-12-05T10:30:00Z",
                   "lastUpdatedAt": "2026-12-05T10:30:00Z", "ttlMs": null, "pollIntervalMs": 500})
        );
        let detailed = DetailedTask {
            task: TaskInfo { status: TaskStatus::InputRequired, ..info },
            input_requests: Some(JsonObject::new()),
            result: None,
            error: None,
        };
        let v = serde_json::to_value(&detailed).expect("as the test set it up");
        assert_eq!(v["status"], "input_required");
        assert!(v.get("result").is_none() && v.get("error").is_none());
    }
}
