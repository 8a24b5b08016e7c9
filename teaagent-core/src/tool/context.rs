//! The context of one running call: who asked, progress reporting, cancellation, the server's
//! state.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::RequestId;
use crate::mcp::notifications::ProgressParams;
use crate::session::Peer;
use crate::tool::inputs::{ClientCapability, InputError, InputRequest, Inputs};
use crate::tool::state::States;
use crate::workspace::{Resolved, Workspace};

/// What a tool call gets besides its arguments. Declare a `&ToolContext` parameter to receive it.
///
/// Cheap to clone; clones share the call.
#[derive(Clone)]
pub struct ToolContext {
    inner: Arc<Inner>,
    /// Outside `inner`: a detached context gets state after it is made ([`ToolContext::with_state`]).
    states: States,
}

struct Inner {
    /// Borrowed for a tool defined in code (no allocation per call).
    tool: std::borrow::Cow<'static, str>,
    request_id: Option<RequestId>,
    progress_token: Option<Value>,
    peer: Option<Peer>,
    cancel: CancellationToken,
    workspace: Option<Workspace>,
    /// `#[path]` arguments as the server resolved and approved them: name, entry, target.
    paths: Vec<(String, Resolved, Resolved)>,
    last_progress: Mutex<Option<f64>>,
    /// The call's questions to the client ([`ToolContext::ask`]); none for a context made
    /// without a server (nothing to ask). Here, not in an allocation of their own: every call
    /// of a server has them.
    inputs: Option<Inputs>,
}

impl ToolContext {
    pub(crate) fn new(
        tool: impl Into<std::borrow::Cow<'static, str>>,
        request_id: Option<RequestId>,
        progress_token: Option<Value>,
        peer: Option<Peer>,
        cancel: CancellationToken,
        workspace: Option<Workspace>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                tool: tool.into(),
                request_id,
                progress_token,
                peer,
                cancel,
                workspace,
                paths: Vec::new(),
                last_progress: Mutex::new(None),
                inputs: None,
            }),
            states: States::default(),
        }
    }

    /// Attaches how this call's questions reach the client (only while the context is not
    /// shared yet, as [`ToolContext::with_paths`]).
    pub(crate) fn with_inputs(mut self, inputs: Inputs) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.inputs = Some(inputs);
        }
        self
    }

    /// The call's questions (what it asked, for the server once it has run; see
    /// [`ToolContext::with_inputs`]).
    pub(crate) fn inputs(&self) -> Option<&Inputs> {
        self.inner.inputs.as_ref()
    }

    /// Attaches the server's state.
    pub(crate) fn with_states(mut self, states: States) -> Self {
        self.states = states;
        self
    }

    /// Adds a state value of type `T` (replacing one of the same type): for calling a tool
    /// directly, e.g. in a unit test, where no server hands it over. A server's calls get the
    /// values given to [`Server::state`](crate::Server::state).
    ///
    /// ```
    /// use teaagent_core::ToolContext;
    ///
    /// #[derive(Clone)]
    /// struct Limit(u32);
    ///
    /// let ctx = ToolContext::detached("add_note").with_state(Limit(3));
    /// assert_eq!(ctx.state::<Limit>().map(|l| l.0), Some(3));
    /// ```
    pub fn with_state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// The server's state of type `T` (see [`crate::tool::state`]). `#[tool]` functions take a
    /// [`State<T>`](crate::State) parameter instead; a hand-built tool declares the type with
    /// [`ToolDefBuilder::needs_state`](crate::tool::ToolDefBuilder::needs_state), and the server then refuses to
    /// start without it, so under a server this is `Some` for every declared type. `None` for a
    /// type the server was not given (or a detached context without
    /// [`ToolContext::with_state`]).
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<&T> {
        self.states.get::<T>()
    }

    /// Attaches the `#[path]` arguments as resolved before the call was approved (only while
    /// the context is not shared yet; a shared one keeps what it had).
    pub(crate) fn with_paths(mut self, paths: Vec<(String, Resolved, Resolved)>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.paths = paths;
        }
        self
    }

    /// A context attached to no session (for calling a tool directly, e.g. in unit tests):
    /// progress goes nowhere and the call is never cancelled.
    pub fn detached(tool: impl Into<String>) -> Self {
        Self::new(tool.into(), None, None, None, CancellationToken::new(), None)
    }

    /// A detached context with a workspace (for calling file tools directly).
    pub fn with_workspace(tool: impl Into<String>, workspace: Workspace) -> Self {
        Self::new(tool.into(), None, None, None, CancellationToken::new(), Some(workspace))
    }

    /// The workspace the server confines tools to, if it has one. `#[path]` arguments arrive
    /// already resolved against it; a tool that may write acts through
    /// [`ToolContext::path_target`] / [`ToolContext::path_entry`] (what was approved), others do
    /// the I/O through it ([`Workspace::resolve`] and the methods of
    /// [`crate::workspace::Resolved`]) so the check is repeated at the moment of use.
    pub fn workspace(&self) -> Option<&Workspace> {
        self.inner.workspace.as_ref()
    }

    /// The `#[path]` argument `arg` as the server resolved it before the call was approved, every
    /// link followed: the open directory that holds the target and its name there. Act through
    /// it (and not by resolving the name again) so the call touches exactly what was approved,
    /// even if a name on the way is swapped meanwhile. `None` when the call came without a server
    /// (a detached context) or the path did not resolve (a missing directory on the way).
    pub fn path_target(&self, arg: &str) -> Option<&Resolved> {
        self.inner.paths.iter().find(|(n, _, _)| n == arg).map(|(_, _, target)| target)
    }

    /// Like [`ToolContext::path_target`], but a link in the last component is not followed: the
    /// entry itself, for tools that act on names (delete, move).
    pub fn path_entry(&self, arg: &str) -> Option<&Resolved> {
        self.inner.paths.iter().find(|(n, _, _)| n == arg).map(|(_, entry, _)| entry)
    }

    /// The tool being called.
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// The id of the request, when the call came from a client.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }

    /// Reports progress. Sends `notifications/progress` when the request carried a
    /// `progressToken`; otherwise does nothing. MCP requires progress to increase, so a value not
    /// above the previous one is dropped, and so is everything after the call was cancelled (a
    /// cancelled request gets no further message).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        // A task's progress is read by polling (its `statusMessage`).
        if let Some(board) = self.inputs().and_then(Inputs::board) {
            let shown = match total {
                Some(total) => format!("{progress}/{total}"),
                None => format!("{progress}"),
            };
            board.set_message(match message {
                Some(m) => format!("{shown}: {m}"),
                None => shown,
            });
        }
        let (Some(token), Some(peer)) = (&self.inner.progress_token, &self.inner.peer) else {
            return;
        };
        if self.inner.cancel.is_cancelled() {
            return;
        }
        {
            let mut last = self.inner.last_progress.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|l| progress <= l) || !progress.is_finite() {
                return;
            }
            *last = Some(progress);
        }
        peer.notify(
            "notifications/progress",
            &ProgressParams { progress_token: token, progress, total, message },
        );
    }

    /// Whether the request had a progress token (so progress reports reach the client).
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some() && self.inner.peer.is_some()
    }

    /// The call's cancellation token: cancelled when the client cancels the request, the call
    /// times out, or the server shuts down. Async tools are simply dropped at that moment;
    /// blocking tools should poll [`ToolContext::is_cancelled`].
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// The session's peer (to send notifications or requests to the client), when attached.
    pub fn peer(&self) -> Option<&Peer> {
        self.inner.peer.as_ref()
    }

    /// Asks the client one question and returns its answer, in either protocol era (see
    /// [`crate::tool::inputs`]: in the modern era the first round returns
    /// [`InputError::Required`], which the tool passes on with `?`, and the retry gets the answer).
    ///
    /// ```
    /// use serde_json::json;
    /// use teaagent_core::{InputRequest, ToolContext, ToolError, tool};
    ///
    /// /// Greets the user by the name they give.
    /// #[tool(read_only)]
    /// async fn greet(ctx: &ToolContext) -> Result<String, ToolError> {
    ///     let schema = json!({
    ///         "type": "object",
    ///         "properties": {"name": {"type": "string"}},
    ///         "required": ["name"],
    ///     });
    ///     let answer = ctx.ask("user_name", InputRequest::elicit("What is your name?", schema)).await?;
    ///     match answer["action"].as_str() {
    ///         Some("accept") => Ok(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("stranger"))),
    ///         _ => Err(ToolError::new("no name was given")),
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, InputError> {
        let mut answers = self.ask_all([(key, request)]).await?;
        Ok(answers.remove(key).unwrap_or(Value::Null))
    }

    /// Asks several questions at once (in the modern era one round carries them all) and returns
    /// the answers by key.
    pub async fn ask_all<K: Into<String>>(
        &self,
        requests: impl IntoIterator<Item = (K, InputRequest)>,
    ) -> Result<crate::JsonObject, InputError> {
        let requests = requests.into_iter().map(|(k, r)| (k.into(), r)).collect();
        match self.inputs() {
            Some(inputs) => inputs.ask_all(requests).await,
            None => Inputs::default().ask_all(requests).await,
        }
    }

    /// Goes on as a task, for a tool declared with `#[tool(task, task_start = "body")]`
    /// ([`TaskStart::Body`](crate::TaskStart::Body)): the call is answered now with the task's
    /// handle, and the tool goes on in the background from here, its later questions and
    /// progress the task's. Ask what you need first: questions asked before this are plain round
    /// trips of the call (protocol 2026-07-28 retries it with the answers; a tool runs once per
    /// round), questions asked after it wait on the task for `tasks/update`.
    ///
    /// Does nothing when the call cannot become a task (a client that did not declare the tasks
    /// extension, a tool that starts as a task already, a call made without a client): the tool's
    /// code is the same either way.
    ///
    /// ```
    /// use serde_json::json;
    /// use teaagent_core::{InputRequest, ToolContext, ToolError, tool};
    ///
    /// /// Builds the release the user names, which takes minutes.
    /// #[tool(task = "required", task_start = "body")]
    /// async fn build_release(ctx: &ToolContext) -> Result<String, ToolError> {
    ///     let schema = json!({"type": "object", "properties": {"version": {"type": "string"}}});
    ///     let answer = ctx.ask("version", InputRequest::elicit("Which version?", schema)).await?;
    ///     let version = answer["content"]["version"].as_str().unwrap_or("dev").to_owned();
    ///     ctx.continue_as_task().await;
    ///     // ... minutes of work, polled by the client as a task ...
    ///     Ok(format!("built {version}"))
    /// }
    /// # fn main() {}
    /// ```
    pub async fn continue_as_task(&self) {
        if let Some(inputs) = self.inputs() {
            inputs.escalation.ask().await;
        }
    }

    /// Whether the client declared `capability`, so a question that needs it can be asked.
    pub fn client_supports(&self, capability: ClientCapability) -> bool {
        self.inputs().is_some_and(|i| i.client_supports(capability))
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool", &self.inner.tool)
            .field("request_id", &self.inner.request_id)
            .finish_non_exhaustive()
    }
}
