//! The tasks this server runs (protocol 2026-07-28's `io.modelcontextprotocol/tasks`): the
//! store `tasks/get`, `tasks/update` and `tasks/cancel` read, and what a task's run writes.
//!
//! A task is created by a `tools/call` after every check of the call pipeline passed
//! (`server/call.rs`: the policy is decided once, before the task exists; an approval is never
//! asked in the middle of one). The store keeps it in this process, under an unguessable id,
//! bound to the caller that created it (another principal is told it does not exist):
//!
//! - **Bounded per caller**: at most [`TaskLimits::live_per_caller`] tasks of one caller
//!   (whom its shares count against) that are not over yet; one more is refused with
//!   `caller_limit` (`limit: "tasks"`) before anything runs.
//! - **Expiry**: a task that is over is kept for [`TaskLimits::ttl`] after it ended (`ttlMs`),
//!   then forgotten (`tasks/get` answers `-32602`). A task that runs is never expired.
//! - **Cancellation**: `tasks/cancel` marks it `cancelled` and cancels its call's token: the tool
//!   is dropped where it waits, and `shell_exec`'s process tree is killed as for any cancelled
//!   call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{CallerShare, Error, ParamsProblem};
use crate::mcp::tasks::{DetailedTask, TaskInfo, TaskStatus};
use crate::session::Caller;
use crate::tool::board::TaskBoard;

/// The limits of the task store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskLimits {
    /// How long a task that is over is kept (default one hour).
    pub(crate) ttl: Duration,
    /// How often a client is told to poll (default one second).
    pub(crate) poll_interval: Duration,
    /// Tasks not over yet one caller may have (default 32).
    pub(crate) live_per_caller: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self { ttl: Duration::from_secs(3600), poll_interval: Duration::from_secs(1), live_per_caller: 32 }
    }
}

/// Most tasks the store holds at once, over and not (every caller together).
const MAX_TASKS: usize = 4096;

/// Every task of the server.
#[derive(Default)]
pub(crate) struct TaskStore {
    limits: TaskLimits,
    tasks: Mutex<HashMap<String, Arc<TaskRecord>>>,
}

/// One task.
pub(crate) struct TaskRecord {
    id: String,
    /// The principal that created it (`None`: no authentication); only it sees the task.
    owner: Option<Arc<str>>,
    /// Whom it counts against ([`TaskLimits::live_per_caller`]).
    counted_as: Option<Arc<str>>,
    created_at: String,
    /// Cancelled by `tasks/cancel` (and when the run ends for any reason).
    pub(crate) cancel: CancellationToken,
    /// Its tool's questions and progress.
    pub(crate) board: Arc<TaskBoard>,
    ttl: Duration,
    poll_interval: Duration,
    state: Mutex<State>,
}

struct State {
    status: TaskStatus,
    updated_at: String,
    result: Option<Value>,
    error: Option<Value>,
    ended: Option<Instant>,
}

/// How a task's run ended.
pub(crate) enum Ending {
    /// The tool's result (a `CallToolResult`, `isError` ones too).
    Completed(Value),
    /// The JSON-RPC error the call ended with.
    Failed(Error),
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

impl TaskStore {
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self { limits, tasks: Mutex::new(HashMap::new()) }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<TaskRecord>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `caller` may create one more task (checked before the call is admitted, so a
    /// refused call spends nothing).
    pub(crate) fn room_for(&self, caller: &Caller) -> Result<(), Error> {
        let mut tasks = self.tasks();
        expire(&mut tasks);
        let live = tasks.values().filter(|t| t.counted_as == caller.counted_as && !t.is_over()).count();
        if live >= self.limits.live_per_caller {
            return Err(Error::CallerLimit { share: CallerShare::Tasks, max: self.limits.live_per_caller });
        }
        if tasks.len() >= MAX_TASKS {
            return Err(Error::CallerLimit { share: CallerShare::Tasks, max: MAX_TASKS });
        }
        Ok(())
    }

    /// A new task of `caller`, `working`, already visible to `tasks/get` (created before the
    /// call is answered).
    pub(crate) fn create(&self, caller: &Caller) -> Result<Arc<TaskRecord>, Error> {
        self.room_for(caller)?;
        let at = now();
        let record = Arc::new(TaskRecord {
            id: crate::digest::random_hex(16),
            owner: caller.principal.clone(),
            counted_as: caller.counted_as.clone(),
            created_at: at.clone(),
            cancel: CancellationToken::new(),
            board: Arc::new(TaskBoard::default()),
            ttl: self.limits.ttl,
            poll_interval: self.limits.poll_interval,
            state: Mutex::new(State {
                status: TaskStatus::Working,
                updated_at: at,
                result: None,
                error: None,
                ended: None,
            }),
        });
        self.tasks().insert(record.id.clone(), Arc::clone(&record));
        Ok(record)
    }

    /// The task `id` of `caller`; `-32602` when there is none (never was, expired, another
    /// principal's: the three are told apart to nobody).
    pub(crate) fn get(&self, id: &str, caller: &Caller) -> Result<Arc<TaskRecord>, Error> {
        let mut tasks = self.tasks();
        expire(&mut tasks);
        tasks.get(id).filter(|t| t.owner == caller.principal).cloned().ok_or_else(|| Error::InvalidParams {
            reason: ParamsProblem::UnknownTask,
            details: format!(
                "no task {:?} here (a task lives in the process that created it, for its principal only, and is forgotten a while after it ends)",
                crate::visible::bounded(id, 80)
            ),
        })
    }
}

impl TaskStore {
    /// Every task of `caller`'s principal, oldest first (`tasks/list`, protocol 2025-11-25).
    pub(crate) fn list(&self, caller: &Caller) -> Vec<Arc<TaskRecord>> {
        let mut tasks = self.tasks();
        expire(&mut tasks);
        let mut mine: Vec<_> = tasks.values().filter(|t| t.owner == caller.principal).cloned().collect();
        mine.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
        mine
    }
}

/// Forgets the tasks over for longer than their time to live.
fn expire(tasks: &mut HashMap<String, Arc<TaskRecord>>) {
    tasks.retain(|_, t| t.state().ended.is_none_or(|ended| ended.elapsed() < t.ttl));
}

impl TaskRecord {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_over(&self) -> bool {
        self.state().status.is_terminal()
    }

    /// Its status: `input_required` while its tool waits for answers.
    fn status(&self, state: &State) -> TaskStatus {
        match state.status {
            TaskStatus::Working if self.board.open_questions().is_some() => TaskStatus::InputRequired,
            other => other,
        }
    }

    /// What every answer says of it.
    pub(crate) fn info(&self) -> TaskInfo {
        let state = self.state();
        self.info_of(&state)
    }

    fn info_of(&self, state: &State) -> TaskInfo {
        TaskInfo {
            task_id: self.id.clone(),
            status: self.status(state),
            status_message: self.board.message(),
            created_at: self.created_at.clone(),
            last_updated_at: state.updated_at.clone(),
            ttl_ms: Some(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)),
            poll_interval_ms: Some(u64::try_from(self.poll_interval.as_millis()).unwrap_or(u64::MAX).max(1)),
        }
    }

    /// `tasks/get`'s answer.
    pub(crate) fn detailed(&self) -> DetailedTask {
        let state = self.state();
        let task = self.info_of(&state);
        let input_requests = match task.status {
            TaskStatus::InputRequired => self.board.open_questions(),
            _ => None,
        };
        DetailedTask { task, input_requests, result: state.result.clone(), error: state.error.clone() }
    }

    /// Records how its run ended (nothing, if it was cancelled first).
    pub(crate) fn end(&self, ending: Ending) {
        let mut state = self.state();
        if state.status.is_terminal() {
            return;
        }
        match ending {
            Ending::Completed(result) => {
                state.status = TaskStatus::Completed;
                state.result = Some(result);
            }
            Ending::Failed(error) => {
                state.status = TaskStatus::Failed;
                state.error = serde_json::to_value(error.to_error_object_for(true)).ok();
            }
        }
        state.updated_at = now();
        state.ended = Some(Instant::now());
        drop(state);
        self.cancel.cancel();
    }

    /// Waits until it is over (`tasks/result`, protocol 2025-11-25), or `cancel` fires.
    pub(crate) async fn settled(&self, cancel: &CancellationToken) -> Option<DetailedTask> {
        loop {
            let now = self.detailed();
            if now.task.status.is_terminal() {
                return Some(now);
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = cancel.cancelled() => return None,
            }
        }
    }

    /// Publishes its snapshot for the other replicas of a fleet (`crate::fleet::Store`): its
    /// principal and its `tasks/get` answer, kept for its time to live once it is over (and a
    /// day while it runs). Done when it is created ([`TaskRecord::publish_created`]) and when
    /// it ends.
    pub(crate) fn publish(&self, store: &dyn crate::fleet::Store) {
        if let Some((snapshot, keep)) = self.snapshot(store) {
            store.publish_task(&self.id, snapshot, keep);
        }
    }

    /// [`TaskRecord::publish`] for a task just created, done before its handle is answered: a
    /// client that takes the handle to another replica at once finds it there. (A store that
    /// cannot be reached in its timeout is given up on, as for any publication.)
    pub(crate) async fn publish_created(&self, store: &dyn crate::fleet::Store) {
        if let Some((snapshot, keep)) = self.snapshot(store) {
            let _ = store.publish_task_now(&self.id, snapshot, keep).await;
        }
    }

    /// What it publishes, and for how long; `None` where no other replica reads it.
    fn snapshot(&self, store: &dyn crate::fleet::Store) -> Option<(String, Duration)> {
        if !store.is_shared() {
            return None;
        }
        let detailed = self.detailed();
        let keep = if detailed.task.status.is_terminal() {
            self.ttl
        } else {
            self.ttl + Duration::from_secs(86_400)
        };
        Some((serde_json::json!({ "owner": self.owner.as_deref(), "task": detailed }).to_string(), keep))
    }

    /// `tasks/cancel`: `cancelled` and its call's token cancelled, unless it is already over.
    pub(crate) fn cancel(&self) {
        let mut state = self.state();
        if !state.status.is_terminal() {
            state.status = TaskStatus::Cancelled;
            state.updated_at = now();
            state.ended = Some(Instant::now());
        }
        drop(state);
        self.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Peer;

    fn caller(who: &str) -> Caller {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut c = Caller::process(&Peer::new(tx));
        c.principal = Some(who.into());
        c.counted_as = Some(who.into());
        c
    }

    #[test]
    fn live_tasks_are_bounded_per_caller_and_ended_ones_do_not_count() {
        let store = TaskStore::new(TaskLimits { live_per_caller: 2, ..TaskLimits::default() });
        let alice = caller("alice");
        let first = store.create(&alice).expect("as the test set it up");
        store.create(&alice).expect("as the test set it up");
        assert!(matches!(
            store.create(&alice),
            Err(Error::CallerLimit { share: CallerShare::Tasks, max: 2 })
        ));
        store.create(&caller("bob")).expect("bob has his own share");
        first.cancel();
        store.create(&alice).expect("a cancelled task no longer counts");
    }

    #[test]
    fn a_task_is_seen_by_its_principal_only_and_forgotten_after_its_ttl() {
        let store = TaskStore::new(TaskLimits { ttl: Duration::from_millis(50), ..TaskLimits::default() });
        let alice = caller("alice");
        let task = store.create(&alice).expect("as the test set it up");
        let id = task.info().task_id;
        assert_eq!(store.get(&id, &alice).expect("as the test set it up").info().status, TaskStatus::Working);
        assert_eq!(store.get(&id, &caller("bob")).err().map(|e| e.code()), Some(-32602));
        task.end(Ending::Completed(serde_json::json!({"content": []})));
        let detailed = store.get(&id, &alice).expect("as the test set it up").detailed();
        assert_eq!(detailed.task.status, TaskStatus::Completed);
        task.cancel();
        assert_eq!(
            store.get(&id, &alice).expect("as the test set it up").info().status,
            TaskStatus::Completed,
            "cancel after the end changes nothing"
        );
        std::thread::sleep(Duration::from_millis(80));
        assert!(store.get(&id, &alice).is_err(), "expired");
    }
}
