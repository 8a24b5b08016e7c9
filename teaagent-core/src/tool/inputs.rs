//! Asking the client for input while a call runs: a form for the user (elicitation), a
//! completion from the client's model (sampling), the client's roots.
//!
//! A tool (or a prompt) asks with [`ToolContext::ask`](crate::ToolContext::ask) or
//! [`ToolContext::ask_all`](crate::ToolContext::ask_all) and gets the client's answer, whichever
//! era the client speaks:
//!
//! - **Legacy era** (`initialize`, protocol 2025-11-25 and before): the question goes to the
//!   client as a request (`elicitation/create`, `sampling/createMessage`, `roots/list`) and the
//!   call waits for its answer: at most [`LEGACY_ANSWER_TIMEOUT`], and never past the tool's own
//!   timeout (the user's time counts against it: give a tool that asks a person a long
//!   `timeout`). A Streamable HTTP request that accepts only `application/json` cannot carry a
//!   request to the client: there,
//!   [`ToolContext::client_supports`](crate::ToolContext::client_supports) is `false` and `ask`
//!   fails with [`InputError::Failed`].
//! - **Modern era** (2026-07-28, multi round-trip requests): a server cannot send the client a
//!   request. The first time a question is asked, `ask` returns [`InputError::Required`]; the
//!   tool passes it on with `?`, and the call is answered with `resultType: "input_required"`,
//!   every question asked so far under its key, and a sealed `requestState`. The client retries
//!   the call with the answers (`inputResponses`) and the state; the tool runs again from the
//!   start, and this time `ask` returns the answer. Answers of earlier rounds travel in the
//!   sealed state, so a tool that asks one question after another (multi-round) writes it as
//!   straight-line code. **A tool runs once per round**: ask before doing anything that should
//!   happen once.
//!
//! Once a call asked a question that is not answered yet, its result is that question, whatever
//! the tool then returns. A question for something the client did not declare (its
//! capabilities) is never sent: `ask` returns [`InputError::Unsupported`] and the call is
//! refused with `-32021` naming the capability, unless the tool checks
//! [`ToolContext::client_supports`](crate::ToolContext::client_supports) first and does without.
//!
//! The state is sealed with the server's request-state key (HMAC-SHA-256), bound to the tool, its
//! arguments and the caller, good once and for ten minutes at most; a state that does not verify
//! is refused with `-32602`. It also records **which questions that round asked** (a digest of
//! each): an answer carried from an earlier round counts only for the very same question (and
//! wins over the retry's), and a retry's answer to a key the round asked is taken only for the
//! question asked under it. Answers are the client's to give: a client may send them before it
//! is asked (protocol 2026-07-28 allows it), so never treat one as more than the client's word.
//! The policy's approval is never taken from a tool's answers, nor a tool's answer from the
//! approval (its key, `approval`, is the server's own). A call has at most [`MAX_ROUNDS`](crate::policy::request_state::MAX_ROUNDS) rounds;
//! the answers it carries are at most 64 KiB of JSON (the state travels in every retry, signed,
//! not encrypted: do not ask for secrets). The key `approval` is the server's own (the policy's
//! question). The client's answers are the client's: check them as any argument.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{ClientCapabilities, JsonObject};
use crate::session::Peer;

/// Most bytes of answers a sealed state carries between rounds (a state travels in every retry).
pub const MAX_CARRIED: usize = 64 * 1024;

/// How long a legacy-era question waits for the client's answer.
pub const LEGACY_ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What a client must have declared to be asked a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCapability {
    /// `elicitation` (a form the user fills in).
    Elicitation,
    /// `sampling` (the client's model answers).
    Sampling,
    /// `roots` (the client's root directories).
    Roots,
}

impl ClientCapability {
    /// The capability's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientCapability::Elicitation => "elicitation",
            ClientCapability::Sampling => "sampling",
            ClientCapability::Roots => "roots",
        }
    }

    /// Whether `capabilities` declares any of them (a client that declares none can never be
    /// asked anything).
    pub(crate) fn any_declared_in(capabilities: &ClientCapabilities) -> bool {
        [Self::Elicitation, Self::Sampling, Self::Roots].into_iter().any(|c| c.declared_in(capabilities))
    }

    /// Whether `capabilities` declares it.
    pub fn declared_in(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            ClientCapability::Elicitation => capabilities.supports_elicitation(),
            ClientCapability::Sampling => capabilities.sampling.is_some(),
            ClientCapability::Roots => capabilities.roots.is_some(),
        }
    }
}

/// The [`ClientCapability`]s a client declared (what a call needs of its capabilities: a few
/// bits, not a copy of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declared(u8);

impl Declared {
    /// Those `capabilities` declares.
    pub(crate) fn of(capabilities: &ClientCapabilities) -> Self {
        let all = [ClientCapability::Elicitation, ClientCapability::Sampling, ClientCapability::Roots];
        Self(all.into_iter().filter(|c| c.declared_in(capabilities)).fold(0, |bits, c| bits | Self::bit(c)))
    }

    /// Whether it is one of them.
    pub(crate) fn contains(self, capability: ClientCapability) -> bool {
        self.0 & Self::bit(capability) != 0
    }

    fn bit(capability: ClientCapability) -> u8 {
        1 << capability as u8
    }
}

/// A question for the client.
///
/// ```
/// use serde_json::json;
/// use teaagent_core::InputRequest;
///
/// let name = InputRequest::elicit(
///     "What is your name?",
///     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
/// );
/// let capital = InputRequest::sample("What is the capital of France?", 100);
/// let roots = InputRequest::list_roots();
/// # let _ = (name, capital, roots);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    capability: ClientCapability,
    params: JsonObject,
}

impl InputRequest {
    /// A form for the user (`elicitation/create`): `message` says what is asked, and
    /// `requested_schema` is a flat object schema of strings, numbers, booleans and enums. The
    /// answer is `{"action": "accept" | "decline" | "cancel", "content": {…}}`.
    pub fn elicit(message: impl Into<String>, requested_schema: Value) -> Self {
        let mut params = JsonObject::new();
        params.insert("message".into(), Value::String(message.into()));
        params.insert("requestedSchema".into(), requested_schema);
        Self { capability: ClientCapability::Elicitation, params }
    }

    /// A completion from the client's model (`sampling/createMessage`) of one user message. The
    /// answer is `{"role": "assistant", "content": {"type": "text", "text": …}, "model": …}`.
    pub fn sample(prompt: impl Into<String>, max_tokens: u32) -> Self {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt.into()}}],
            "maxTokens": max_tokens,
        });
        let Value::Object(params) = params else { unreachable!("an object literal") };
        Self { capability: ClientCapability::Sampling, params }
    }

    /// A completion with the `sampling/createMessage` params given whole (`messages`,
    /// `maxTokens`, `systemPrompt`, `modelPreferences`, …).
    pub fn sampling(params: JsonObject) -> Self {
        Self { capability: ClientCapability::Sampling, params }
    }

    /// The client's roots (`roots/list`). The answer is `{"roots": [{"uri": …, "name": …}]}`.
    pub fn list_roots() -> Self {
        Self { capability: ClientCapability::Roots, params: JsonObject::new() }
    }

    /// What the client must have declared to be asked this.
    pub fn capability(&self) -> ClientCapability {
        self.capability
    }

    /// The request's method.
    pub fn method(&self) -> &'static str {
        match self.capability {
            ClientCapability::Elicitation => "elicitation/create",
            ClientCapability::Sampling => "sampling/createMessage",
            ClientCapability::Roots => "roots/list",
        }
    }

    /// What identifies the question: its method and params (so an answer is taken only for the
    /// very question it answered).
    fn digest(&self) -> String {
        let params = Value::Object(self.params.clone()).to_string();
        crate::digest::digest_of(&[self.method(), &params])
    }

    /// The request's params as this era writes them (a modern form names its `mode`).
    fn params(&self, modern: bool) -> Value {
        let mut params = self.params.clone();
        if modern && self.capability == ClientCapability::Elicitation {
            params.entry("mode").or_insert_with(|| Value::from("form"));
        }
        Value::Object(params)
    }
}

/// Why [`ToolContext::ask`](crate::ToolContext::ask) gives no answer. Pass it on with `?`: it
/// converts into [`ToolError`](crate::ToolError) and `String`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Modern era: the question goes back to the client with the call's result; the call is
    /// answered `input_required` whatever the tool returns.
    #[error("waiting for the client's answer to `{key}`")]
    Required {
        /// The first unanswered question's key.
        key: String,
    },
    /// The client did not declare what the question needs; the call is refused with `-32021`
    /// whatever the tool returns.
    #[error("the client does not support {}", capability.as_str())]
    Unsupported {
        /// What it lacks.
        capability: ClientCapability,
    },
    /// Legacy era: the client answered with an error, did not answer in time, or is gone.
    #[error("the client gave no answer to `{key}`: {reason}")]
    Failed {
        /// The question's key.
        key: String,
        /// What happened.
        reason: String,
    },
    /// There is no client to ask (a call made directly, e.g. `teaagent run` or a unit test).
    #[error("no client to ask for `{key}` (the call was not made by an MCP client)")]
    NoClient {
        /// The question's key.
        key: String,
    },
}

impl From<InputError> for crate::ToolError {
    fn from(e: InputError) -> Self {
        crate::ToolError::new(e)
    }
}

impl From<InputError> for String {
    fn from(e: InputError) -> Self {
        e.to_string()
    }
}

/// The `inputResponses` of a modern retry: absent, or an object whose every answer is an
/// object (the result of the request it answers), at most
/// [`MAX_CARRIED`] bytes of JSON; anything else is
/// `-32602` before anything runs.
pub(crate) fn responses(value: Option<Value>) -> Result<JsonObject, crate::Error> {
    let invalid = |details: String| crate::Error::InvalidParams {
        reason: crate::error::ParamsProblem::Malformed,
        details,
    };
    let responses = match value {
        None | Some(Value::Null) => return Ok(JsonObject::new()),
        Some(Value::Object(responses)) => responses,
        Some(_) => return Err(invalid("`inputResponses` must be an object of answers by key".into())),
    };
    if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
        return Err(invalid(format!(
            "`inputResponses.{key}` must be an object: the result of the request it answers"
        )));
    }
    let size = serde_json::to_vec(&responses).map_or(usize::MAX, |v| v.len());
    let max = MAX_CARRIED;
    if size > max {
        return Err(invalid(format!(
            "`inputResponses` is {size} bytes of JSON; at most {max} are carried between rounds"
        )));
    }
    Ok(responses)
}

/// The key of the server's own question (the policy's approval); a tool cannot ask under it.
pub(crate) const RESERVED_KEY: &str = "approval";

/// The answers of a retry that a tool or prompt may take: all but the server's own approval
/// answer.
pub(crate) fn tool_answers(responses: JsonObject) -> JsonObject {
    responses.into_iter().filter(|(key, _)| key != RESERVED_KEY).collect()
}

/// How a call's questions reach the client.
// Made for every call: what the client declared is kept as a few bits, not a copy of its
// capabilities.
pub(crate) enum Mode {
    /// Nobody to ask.
    None,
    /// Requests to the client on the call's peer, answered before `deadline` (the call's own).
    /// (The session is shared, not copied: a call that asks nothing costs no clone of it.)
    Legacy {
        peer: Peer,
        session: std::sync::Arc<crate::server::SessionInfo>,
        deadline: Option<std::time::Instant>,
    },
    /// Multi round-trip: the retry's answers (to a key the last round `asked`, only for the
    /// question asked under it: its digest), and those of earlier rounds from the sealed state
    /// (`carried`, by key: `{"q": digest, "a": answer}`).
    Modern {
        declared: Declared,
        responses: JsonObject,
        asked: std::collections::BTreeMap<String, String>,
        carried: JsonObject,
    },
    /// A task's tool: questions are posted on its board and the tool waits there for the
    /// client's answers (`tasks/update`), until the task is cancelled.
    Task {
        declared: Declared,
        board: std::sync::Arc<super::board::TaskBoard>,
        cancel: tokio_util::sync::CancellationToken,
    },
}

/// The questions of one call (shared by its context's clones and the server).
pub(crate) struct Inputs {
    mode: Mode,
    pending: Mutex<Pending>,
    /// Whether the call may become a task midway, and the task it became: from then on its
    /// questions go to the task's board, whatever `mode` says.
    pub(crate) escalation: super::escalation::Escalation,
}

/// What a modern call left open when its handler returned.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// Questions not answered yet, by key (`{"method": …, "params": …}`).
    pub(crate) questions: JsonObject,
    /// The digest of each of those questions, by key (sealed into the next state).
    pub(crate) asked: std::collections::BTreeMap<String, String>,
    /// A question the client could not be asked.
    pub(crate) unsupported: Option<ClientCapability>,
    /// What the handler was told then (the `InputError`'s text), to tell whether it let that
    /// end the call ([`Pending::ended_by_unsupported`]).
    pub(crate) unsupported_said: Option<String>,
    /// Every answer the call was given so far, by key: `{"q": digest, "a": answer}` (carried to
    /// the next round).
    pub(crate) answers: JsonObject,
}

impl Pending {
    /// The capability the client lacks, when the handler let the error it got for it end the
    /// call: it failed, or its result is an error that says it (`?` on `ctx.ask`). A handler that
    /// handled it — a result of its own — is answered with that result.
    pub(crate) fn ended_by_unsupported(&self, failed: Option<&str>) -> Option<ClientCapability> {
        let said = self.unsupported_said.as_deref()?;
        failed.filter(|text| text.is_empty() || text.contains(said)).and(self.unsupported)
    }
}

impl Default for Inputs {
    fn default() -> Self {
        Self::new(Mode::None)
    }
}

impl Inputs {
    pub(crate) fn new(mode: Mode) -> Self {
        Self { mode, pending: Mutex::new(Pending::default()), escalation: Default::default() }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the call left open (modern era), once its handler returned.
    pub(crate) fn take_pending(&self) -> Pending {
        std::mem::take(&mut *self.pending())
    }

    pub(crate) fn client_supports(&self, capability: ClientCapability) -> bool {
        match &self.mode {
            Mode::None => false,
            Mode::Legacy { session, peer, .. } => {
                peer.can_request() && capability.declared_in(&session.capabilities)
            }
            Mode::Modern { declared, .. } | Mode::Task { declared, .. } => declared.contains(capability),
        }
    }

    /// The task's board and cancellation, when the call runs as a task (from its start, or
    /// since it became one).
    fn task(&self) -> Option<(&super::board::TaskBoard, &tokio_util::sync::CancellationToken)> {
        if let Some(task) = self.escalation.task() {
            return Some((&task.board, &task.cancel));
        }
        match &self.mode {
            Mode::Task { board, cancel, .. } => Some((board, cancel)),
            _ => None,
        }
    }

    /// The task's board, when the call runs as a task.
    pub(crate) fn board(&self) -> Option<&super::board::TaskBoard> {
        self.task().map(|(board, _)| board)
    }

    pub(crate) async fn ask_all(
        &self,
        requests: Vec<(String, InputRequest)>,
    ) -> Result<JsonObject, InputError> {
        if let Some((key, _)) = requests.iter().find(|(key, _)| key == RESERVED_KEY) {
            return Err(InputError::Failed {
                key: key.clone(),
                reason: format!(
                    "the key `{RESERVED_KEY}` is the server's own (its approval question); ask under another key"
                ),
            });
        }
        if let Some((key, _)) = requests.iter().find(|_| matches!(self.mode, Mode::None)) {
            return Err(InputError::NoClient { key: key.clone() });
        }
        if let (Mode::Legacy { peer, .. }, Some((key, _))) = (&self.mode, requests.first())
            && !peer.can_request()
        {
            return Err(InputError::Failed {
                key: key.clone(),
                reason: "this request accepts only application/json, which cannot carry a request to the client; accept text/event-stream too".into(),
            });
        }
        if let Some((_, request)) = requests.iter().find(|(_, r)| !self.client_supports(r.capability)) {
            let capability = request.capability;
            let error = InputError::Unsupported { capability };
            let mut pending = self.pending();
            pending.unsupported.get_or_insert(capability);
            pending.unsupported_said.get_or_insert_with(|| error.to_string());
            return Err(error);
        }
        if let Some((board, cancel)) = self.task() {
            let first = requests.first().map(|(k, _)| k.clone()).unwrap_or_default();
            let questions = requests
                .into_iter()
                .map(|(key, r)| (key, json!({ "method": r.method(), "params": r.params(true) })))
                .collect();
            return board.ask(questions, cancel).await.map_err(|why| InputError::Failed {
                key: first,
                reason: match why {
                    super::board::NoAnswer::Cancelled => "the task was cancelled".into(),
                    super::board::NoAnswer::TooMany => "a task has at most 64 questions open at once".into(),
                },
            });
        }
        let mut answers = JsonObject::new();
        match &self.mode {
            // Asked on the board above.
            Mode::None | Mode::Task { .. } => {}
            Mode::Legacy { peer, deadline, .. } => {
                for (key, request) in requests {
                    let params = request.params(false);
                    let left = deadline.map_or(LEGACY_ANSWER_TIMEOUT, |d| {
                        d.saturating_duration_since(std::time::Instant::now()).min(LEGACY_ANSWER_TIMEOUT)
                    });
                    match peer.request(request.method(), &params, left).await {
                        Ok(answer) => {
                            answers.insert(key, answer);
                        }
                        Err(e) => return Err(InputError::Failed { key, reason: e.to_string() }),
                    }
                }
            }
            Mode::Modern { responses, asked, carried, .. } => {
                let mut pending = self.pending();
                let mut first_missing = None;
                for (key, request) in requests {
                    let digest = request.digest();
                    // An answer carried from an earlier round first (the client cannot change it),
                    // then this retry's, each only for this very question.
                    let earlier = carried
                        .get(&key)
                        .filter(|c| c["q"].as_str() == Some(digest.as_str()))
                        .map(|c| &c["a"]);
                    let now = responses.get(&key).filter(|_| asked.get(&key).is_none_or(|d| *d == digest));
                    match earlier.or(now) {
                        Some(answer) => {
                            pending.answers.insert(key.clone(), json!({ "q": digest, "a": answer }));
                            answers.insert(key, answer.clone());
                        }
                        None => {
                            let question =
                                json!({ "method": request.method(), "params": request.params(true) });
                            pending.questions.insert(key.clone(), question);
                            pending.asked.insert(key.clone(), digest);
                            first_missing.get_or_insert(key);
                        }
                    }
                }
                if let Some(key) = first_missing {
                    return Err(InputError::Required { key });
                }
            }
        }
        Ok(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).expect("capabilities")
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(f)
    }

    #[test]
    fn modern_answers_count_only_for_the_questions_asked() {
        let name = InputRequest::elicit("Name?", json!({"type": "object"}));
        let roots = InputRequest::list_roots();
        let color = InputRequest::elicit("Color?", json!({"type": "object"}));
        let accept = json!({"action": "accept", "content": {"name": "Ada"}});
        let mut responses = JsonObject::new();
        responses.insert("name".into(), accept.clone());
        responses.insert("color".into(), accept.clone()); // the last round asked another question
        let asked = [("name".to_owned(), name.digest()), ("color".to_owned(), "another".to_owned())].into();
        let mut carried = JsonObject::new();
        carried.insert("earlier".into(), json!({"q": roots.digest(), "a": {"roots": []}}));
        // A carried answer to another question (same key) does not count.
        carried.insert("other".into(), json!({"q": "not this question", "a": {"roots": []}}));
        let inputs = Inputs::new(Mode::Modern {
            declared: Declared::of(&caps(json!({"elicitation": {}, "roots": {}, "sampling": {}}))),
            responses,
            asked,
            carried,
        });
        let questions = vec![
            ("earlier".to_owned(), roots.clone()),
            ("name".to_owned(), name),
            ("color".to_owned(), color),
            ("other".to_owned(), roots),
        ];
        let err = block_on(inputs.ask_all(questions)).expect_err("color and other are not answered");
        assert_eq!(err, InputError::Required { key: "color".into() });
        let pending = inputs.take_pending();
        assert_eq!(pending.questions.keys().collect::<Vec<_>>(), ["color", "other"]);
        assert_eq!(pending.asked.keys().collect::<Vec<_>>(), ["color", "other"]);
        assert_eq!(pending.questions["color"]["params"]["mode"], "form");
        assert_eq!(pending.answers.keys().collect::<Vec<_>>(), ["earlier", "name"]);
        assert_eq!(pending.answers["name"]["a"], accept);
    }

    #[test]
    fn input_responses_are_objects_of_objects_up_to_the_carried_limit() {
        let max = MAX_CARRIED;
        // `{"k":{"t":"…"}}` is 14 bytes of JSON around the text.
        let sized = |n: usize| Some(json!({"k": {"t": "x".repeat(n - 14)}}));
        assert!(responses(sized(max)).is_ok(), "at the limit");
        let past = responses(sized(max + 1)).expect_err("past the limit").to_string();
        assert!(past.contains(&max.to_string()), "{past}");
        assert!(responses(Some(json!({"k": 42}))).is_err());
        assert!(responses(Some(json!([1]))).is_err());
        assert!(responses(None).expect("absent").is_empty());
    }

    #[test]
    fn the_approval_key_is_the_servers() {
        let inputs = Inputs::default();
        let err = block_on(inputs.ask_all(vec![("approval".into(), InputRequest::list_roots())]))
            .expect_err("reserved");
        assert!(matches!(err, InputError::Failed { .. }), "{err}");
        let mut responses = JsonObject::new();
        responses.insert("approval".into(), json!({"action": "accept"}));
        responses.insert("why".into(), json!({"action": "accept"}));
        responses.insert("stray".into(), json!({"action": "accept"}));
        assert_eq!(tool_answers(responses).keys().collect::<Vec<_>>(), ["why", "stray"]);
    }

    #[test]
    fn an_undeclared_capability_is_never_asked() {
        let inputs = Inputs::new(Mode::Modern {
            declared: Declared::of(&caps(json!({"sampling": {}}))),
            responses: JsonObject::new(),
            asked: Default::default(),
            carried: JsonObject::new(),
        });
        assert!(inputs.client_supports(ClientCapability::Sampling));
        assert!(!inputs.client_supports(ClientCapability::Elicitation));
        let asked = vec![("q".to_owned(), InputRequest::elicit("?", json!({})))];
        let err = block_on(inputs.ask_all(asked)).expect_err("no elicitation");
        assert_eq!(err, InputError::Unsupported { capability: ClientCapability::Elicitation });
        let pending = inputs.take_pending();
        assert!(pending.questions.is_empty());
        assert_eq!(pending.unsupported, Some(ClientCapability::Elicitation));
    }

    #[test]
    fn without_a_client_nothing_is_asked() {
        let inputs = Inputs::default();
        let err =
            block_on(inputs.ask_all(vec![("r".into(), InputRequest::list_roots())])).expect_err("no client");
        assert!(matches!(err, InputError::NoClient { .. }));
        assert!(inputs.take_pending().unsupported.is_none());
    }
}
