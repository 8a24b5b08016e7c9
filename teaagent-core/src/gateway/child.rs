//! One external MCP server process, and the JSON-RPC client that talks to it over its stdio.
//!
//! - **Process**: the resolved executable, its arguments, and *only* the environment variables
//!   its configuration names (`env_clear`). It gets its own process group (a Ctrl-C at the
//!   terminal is teaagent's to handle, and the group is what shutdown signals), and
//!   `PR_SET_PDEATHSIG` = SIGKILL on Linux: if teaagent dies without cleaning up (SIGKILL), the
//!   kernel kills the child too. Shutdown: stdin closed, then SIGTERM to the group after a grace
//!   period, then SIGKILL to the group ([`Connection::shutdown`]).
//! - **Containment**: each run of the server is a [`Scope`] of `crate::containment`, as a
//!   `shell_exec` call is: on Linux it enters a cgroup of its own before it runs (or, where the
//!   server cannot create one, is recognised as a subreaper's descendant), and when the run ends
//!   — shutdown, a restart, teaagent stopping — everything it started is killed, also processes
//!   that left its group (`setsid`, double forks, daemons).
//! - **stdin**: a request is written at once on its sender's thread; what the pipe has no room
//!   for goes to a task on the gateway's thread, and later lines wait behind it
//!   (`child/stdin.rs`).
//! - **stdout** is read on the gateway's thread until a call comes, then on the runtime that
//!   makes the calls (`child/reader.rs`). It is the protocol: one JSON-RPC message a line, at
//!   most [`MAX_LINE`] bytes. A line that is not a JSON-RPC message (a `println!` left in a
//!   server) is dropped with a warning: nothing the child writes ever reaches teaagent's own
//!   stdout.
//! - **stderr** is copied to teaagent's stderr a line at a time, prefixed with the server's
//!   name and escaped ([`crate::visible::escape`]), each line cut at [`MAX_STDERR_LINE`], at
//!   most [`streams::STDERR_LINES_PER_SECOND`] lines a second (the rest dropped and counted).
//! - **Requests from the child**: `ping` is answered; anything else (sampling, roots,
//!   elicitation: the gateway declares no client capabilities) gets `-32601`. An answer is
//!   dropped when over a MiB already waits for the child's stdin: a child that asks without
//!   reading its answers cannot make teaagent hold them.
//! - **Notifications from the child**: progress is routed to the call whose token it names (its
//!   message cut at [`MAX_STDERR_LINE`], like a log line), a few at a time and paced
//!   (`gateway/progress.rs`); `notifications/tools/list_changed` is counted for the supervisor
//!   (which re-reads the list, at most once a second however many arrive, and compares it with
//!   the pinned one); log messages go to stderr like its stderr; the rest is ignored.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

mod reader;
mod stdin;
mod streams;

use reader::{Reading, Seat};
use stdin::Stdin;
use streams::{StderrLines, copy_stderr, first_id, last_id};

use super::progress::{Progress, ProgressQueue};
use crate::containment::{Kind, Scope};
use crate::jsonrpc::response::{write_json_object, write_json_str, write_json_value};
use crate::mcp::JsonObject;
use crate::server::framing::EDGE;
use crate::visible::escape;

/// The longest line read from a child's stdout whatever its result limit
/// ([`Launch::max_result_bytes`]): what its tool list's pages and replies may take.
const MIN_LINE: usize = 8 * 1024 * 1024;
/// The longest line read from a child's stdout at all.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// The default of [`Launch::max_result_bytes`].
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;
/// The longest stderr line copied (the rest of the line is cut, with a marker).
const MAX_STDERR_LINE: usize = 4096;
/// The protocol version the gateway asks external servers for (every current server speaks it,
/// and older ones answer with theirs: the gateway uses only what all versions share).
pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";

/// What starts one external server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Its name (in `[mcp_servers.NAME]`), for messages.
    pub name: String,
    /// The executable, as resolved when its fingerprint was taken.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// What its start must find unchanged ([`super::Pins`]: the executable, run through the
    /// file that was hashed, and the files its arguments name).
    pub pins: super::Pins,
    /// Its working directory (`None`: teaagent's). A server behind `mcp serve` runs in the
    /// workspace root, so that a relative path means the same to it as to the policy.
    pub cwd: Option<PathBuf>,
    /// Its whole environment: nothing else of teaagent's reaches it.
    pub env: Vec<(String, String)>,
    /// The OS sandbox it runs in ([`crate::sandbox`]); `None` for none.
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// The most of a tool result passed on, in bytes (default [`DEFAULT_MAX_RESULT_BYTES`]): a
    /// larger one is cut, with a marker. A line from it longer than four times this (at least
    /// 8 MiB, at most 64 MiB) is not read at all: the request it answers fails at once.
    pub max_result_bytes: usize,
}

impl Launch {
    /// The longest line read from this server's stdout (see [`Launch::max_result_bytes`]).
    pub fn max_line_bytes(&self) -> usize {
        self.max_result_bytes.saturating_mul(4).clamp(MIN_LINE, MAX_LINE)
    }
}

/// How a request to the child ended.
#[derive(Debug)]
pub(crate) enum Reply {
    /// Its `result`, as the JSON text the server wrote (valid JSON; the caller reads it once,
    /// into what it needs).
    Result(String),
    /// Its `error` object.
    Error(Value),
    /// The child exited (or closed its stdout) first.
    Closed,
    /// Its reply could not be read, and why (a line too long to read, or not JSON).
    Unreadable(String),
}

/// A running child and its client.
pub(crate) struct Connection {
    name: Arc<str>,
    /// Its lines on teaagent's stderr (its stderr, its log notifications), paced.
    stderr: Arc<StderrLines>,
    /// The longest line read from it.
    max_line: usize,
    /// Its stdin, written by a request's sender or by the gateway's thread (`child/stdin.rs`).
    stdin: Arc<Stdin>,
    /// Where its stdout is read (`child/reader.rs`).
    seat: Arc<Seat>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    progress: Mutex<HashMap<u64, Arc<ProgressQueue>>>,
    next_id: AtomicU64,
    /// Cancelled when the child's stdout ends (it exited, or closed it).
    closed: CancellationToken,
    /// Counts the child's `notifications/tools/list_changed` (a watch: the supervisor takes
    /// them in one, however many came since it last looked).
    list_changed: tokio::sync::watch::Sender<u64>,
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
    pid: Option<u32>,
    /// Lines on its stdout that were not JSON.
    noise: AtomicU64,
    /// Replies that reached a request in flight (the reader tells by it which lines answered
    /// nothing: `child/reader.rs`).
    answered: AtomicU64,
    /// Everything it starts, killed when it is shut down (at the latest when the connection
    /// goes).
    scope: Mutex<Option<Scope>>,
    /// Its sandbox's temporary directory, removed when the connection goes.
    _jail: Option<crate::sandbox::Jail>,
}

impl Connection {
    /// Starts the process and its reader, writer and stderr tasks (on the current runtime).
    pub(crate) fn spawn(launch: &Launch) -> std::io::Result<Arc<Connection>> {
        // Exactly what was allowed: checked, and run from the file that was checked.
        let checked = super::pins::check(&launch.program, &launch.pins).map_err(std::io::Error::other)?;
        let mut cmd = tokio::process::Command::new(checked.program(&launch.program));
        cmd.arg0(&launch.program);
        checked.keep_open_in(&mut cmd);
        if let Some(dir) = &launch.cwd {
            cmd.current_dir(dir);
        }
        cmd.args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        // Contained before anything else of its set-up (the sandbox's may leave the user
        // namespace that may move it into its cgroup); one that cannot be contained never runs.
        let scope = Scope::new(Kind::Server).map_err(std::io::Error::other)?;
        scope.contain(&mut cmd).map_err(std::io::Error::other)?;
        // Its sandbox, set up before it runs; one that cannot be enforced keeps it from starting.
        let jail = match &launch.sandbox {
            Some(sandbox) => Some(sandbox.prepare(None, &[]).map_err(std::io::Error::other)?),
            None => None,
        };
        if let Some(jail) = &jail {
            jail.apply(&mut cmd);
        }
        let mut child = cmd.spawn()?;
        let pid = child.id();
        let scope = {
            use std::os::fd::AsFd;
            scope.started(
                pid,
                &[child.stdout.as_ref().map(|s| s.as_fd()), child.stderr.as_ref().map(|s| s.as_fd())],
            )
        };
        let (stdin, stdout, stderr) = match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => return Err(std::io::Error::other("the child's stdio was not piped")),
        };
        // Written by each sender; a backlog by a task that ends when the connection is shut
        // down or its stdout ends (stdin closes then).
        let closed = CancellationToken::new();
        let stdin = Stdin::start(stdin, closed.clone())?;
        let name: Arc<str> = launch.name.as_str().into();
        let conn = Arc::new(Connection {
            name: name.clone(),
            stderr: Arc::new(StderrLines::new(name)),
            max_line: launch.max_line_bytes(),
            stdin,
            seat: Arc::new(Seat::new()),
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            closed,
            list_changed: tokio::sync::watch::channel(0).0,
            child: tokio::sync::Mutex::new(Some(child)),
            pid,
            noise: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            scope: Mutex::new(Some(scope)),
            _jail: jail,
        });
        let seat = conn.seat.clone();
        Reading::start(
            stdout.into_owned_fd()?,
            Arc::downgrade(&conn),
            conn.max_line,
            seat,
            conn.closed.clone(),
        );
        tokio::spawn(copy_stderr(stderr, conn.stderr.clone()));
        Ok(conn)
    }

    /// Resolves when the child's stdout has ended.
    pub(crate) async fn closed(&self) {
        self.closed.cancelled().await;
    }

    /// Whether the child's stdout has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Changes when the child says its tool list changed (from now on).
    pub(crate) fn list_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.list_changed.subscribe()
    }

    /// Sends a request and waits for its reply (or for the child to exit).
    pub(crate) async fn request(&self, method: &str, params: Value) -> Reply {
        let (id, reply) = self.send_request(None, |id| {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let mut line = Vec::new();
            write_json_value(&mut line, &message);
            line
        });
        self.wait(id, reply).await
    }

    /// Sends `tools/call` of `tool` with `arguments`, with `progress` receiving the child's
    /// progress reports for it (its id is the progress token). Returns the id and where the
    /// reply arrives.
    pub(crate) fn send_call(
        &self,
        tool: &str,
        arguments: &JsonObject,
        progress: Option<Arc<ProgressQueue>>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let wants_progress = progress.is_some();
        self.seat.call_from_here();
        self.send_request(progress, |id| {
            use std::io::Write;
            // Written straight from the client's arguments, with no message built first (writing
            // into a `Vec` cannot fail).
            let mut line = Vec::with_capacity(96 + tool.len());
            let _ = write!(line, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"#);
            write_json_str(&mut line, tool);
            line.extend_from_slice(b",\"arguments\":");
            write_json_object(&mut line, arguments);
            if wants_progress {
                let _ = write!(line, r#","_meta":{{"progressToken":{id}}}"#);
            }
            line.extend_from_slice(b"}}");
            line
        })
    }

    /// Sends the request (one line, without its newline) that `message` writes for the next
    /// id; its reply arrives at the receiver returned (and `progress`, when given, gets the
    /// reports for it).
    fn send_request(
        &self,
        progress: Option<Arc<ProgressQueue>>,
        message: impl FnOnce(u64) -> Vec<u8>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if self.is_closed() {
            let _ = tx.send(Reply::Closed);
            return (id, rx);
        }
        let alone = {
            let mut pending = lock(&self.pending);
            pending.insert(id, tx);
            pending.len() == 1
        };
        if let Some(progress) = progress {
            lock(&self.progress).insert(id, progress);
        }
        let mut line = message(id);
        line.push(b'\n');
        // Handed over only while the reply is read on the gateway's thread (`child/reader.rs`).
        self.stdin.send(line, alone && !self.seat.on_serving());
        // Closed between the check and the insert: nobody else will answer it.
        if self.is_closed() {
            self.fail_pending();
        }
        (id, rx)
    }

    /// Waits for the reply to request `id`.
    pub(crate) async fn wait(&self, id: u64, reply: oneshot::Receiver<Reply>) -> Reply {
        let reply = reply.await.unwrap_or(Reply::Closed);
        lock(&self.progress).remove(&id);
        reply
    }

    /// Tells the child a request is no longer wanted (`notifications/cancelled`), and forgets it.
    pub(crate) fn cancel(&self, id: u64, reason: &str) {
        let was_pending = lock(&self.pending).remove(&id).is_some();
        lock(&self.progress).remove(&id);
        if was_pending {
            self.notify("notifications/cancelled", json!({"requestId": id, "reason": reason}));
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn send(&self, message: &Value) {
        self.stdin.send(line_of(message), false);
    }

    fn fail_pending(&self) {
        let pending: Vec<_> = lock(&self.pending).drain().collect();
        for (_, tx) in pending {
            let _ = tx.send(Reply::Closed);
        }
        lock(&self.progress).clear();
    }

    /// Stops the child: stdin closed, up to `grace` to exit, then SIGTERM to its process group,
    /// up to `grace` again, then SIGKILL to the group. Every process of the group is signalled
    /// even when the child itself has exited already (a grandchild it left behind), and then
    /// every process of its scope (those that left the group).
    pub(crate) async fn shutdown(&self, grace: Duration) {
        self.closed.cancel(); // the writer task ends
        self.stdin.close();
        let mut child = self.child.lock().await;
        let Some(mut process) = child.take() else { return };
        let exited = tokio::time::timeout(grace, process.wait()).await.is_ok();
        if let Some(pid) = self.pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
            if !exited {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
                if tokio::time::timeout(grace, process.wait()).await.is_ok() {
                    // The group may still hold grandchildren that ignored SIGTERM.
                }
            }
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = process.start_kill();
        let _ = process.wait().await;
        // And whatever left its group: the whole scope.
        if let Some(mut scope) = lock(&self.scope).take() {
            scope.close();
        }
        self.fail_pending();
    }

    /// Answers request `id` with [`Reply::Unreadable`]; false when no such request waits.
    fn unreadable(&self, id: u64, why: String) -> bool {
        let Some(tx) = self.in_flight(id) else { return false };
        let _ = tx.send(Reply::Unreadable(why));
        true
    }

    /// Request `id`'s way back to its caller, taken out of those in flight (counted as answered).
    fn in_flight(&self, id: u64) -> Option<oneshot::Sender<Reply>> {
        let tx = lock(&self.pending).remove(&id)?;
        self.answered.fetch_add(1, Ordering::Relaxed);
        Some(tx)
    }

    /// How many replies reached a request in flight so far.
    fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Dispatches one line from the child's stdout.
    fn on_line(&self, line: &[u8]) {
        // Most lines are replies: read by their envelope, their result kept as the text it came
        // as. Every other line (and one the quick reading leaves to `serde_json`) is read whole.
        if let Ok(text) = std::str::from_utf8(line)
            && let Some(members) = crate::jsonrpc::scan::members(text)
            && members.method.is_none()
            && let Some(id) = members.id
        {
            self.on_reply(id, members.result, members.error);
            return;
        }
        let message = match serde_json::from_slice::<Value>(line) {
            Ok(message) => message,
            // A reply that cannot be parsed (nested too deep, a bad escape) fails its request at
            // once, saying why, when it names one.
            Err(e) if line.trim_ascii_start().starts_with(b"{") => {
                let (head, tail) = (&line[..line.len().min(EDGE)], &line[line.len().saturating_sub(EDGE)..]);
                if let Some(id) = first_id(head).or_else(|| last_id(tail))
                    && self.unreadable(id, unreadable_reply(&e))
                {
                    return;
                }
                self.noise(line);
                return;
            }
            Err(_) => {
                self.noise(line);
                return;
            }
        };
        self.on_message(message);
    }

    /// A reply to request `id` (its JSON text), with its `result` and `error` members as written.
    fn on_reply(&self, id: &str, result: Option<&str>, error: Option<&str>) {
        // Ours are plain integers: any other id answers nothing of ours.
        let Ok(id) = id.parse::<u64>() else { return };
        let Some(tx) = self.in_flight(id) else { return };
        let reply = match (result, error) {
            (Some(result), None) => Reply::Result(result.to_owned()),
            (None, Some(error)) => match serde_json::from_str(error) {
                Ok(error) => Reply::Error(error),
                // Valid JSON that is not a `Value` (a lone surrogate in a string, say).
                Err(e) => Reply::Unreadable(unreadable_reply(&e)),
            },
            _ => Reply::Error(json!({"code": -32603, "message": "the reply had neither result nor error"})),
        };
        let _ = tx.send(reply);
    }

    fn noise(&self, line: &[u8]) {
        // Said once, then every 1000th: a chatty server must not flood stderr.
        let n = self.noise.fetch_add(1, Ordering::Relaxed);
        if n.is_multiple_of(1000) {
            tracing::warn!(
                server = %escape(&self.name),
                "ignored a line on the external server's stdout that is not JSON ({} bytes; {} such lines so far)",
                line.len(),
                n + 1
            );
        }
    }

    fn on_message(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        match (method, id) {
            (None, Some(id)) => {
                let id = id.to_string();
                let members = message.as_object().map(|m| (m.get("result"), m.get("error")));
                let (result, error) = members.unwrap_or_default();
                self.on_reply(
                    &id,
                    result.map(Value::to_string).as_deref(),
                    error.map(Value::to_string).as_deref(),
                );
            }
            (Some(method), Some(id)) => {
                // A request from the child: only `ping` is served, and not queued for without
                // bound (a child that asks without reading its answers: `child/stdin.rs`).
                let answer = if method == "ping" {
                    json!({"jsonrpc": "2.0", "id": id, "result": {}})
                } else {
                    let method: String = method.chars().take(100).collect();
                    json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32601,
                        "message": format!("teaagent's gateway does not serve `{method}` to external servers")
                    }})
                };
                self.stdin.send_answer(line_of(&answer));
            }
            (Some(method), None) => self.on_notification(method, message.get("params")),
            (None, None) => {}
        }
    }

    fn on_notification(&self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/progress" => {
                let Some(params) = params else { return };
                let Some(token) = params.get("progressToken").and_then(Value::as_u64) else { return };
                let Some(progress) = params.get("progress").and_then(Value::as_f64) else { return };
                let update = Progress {
                    progress,
                    total: params.get("total").and_then(Value::as_f64),
                    message: params.get("message").and_then(Value::as_str).map(cut_line),
                };
                let queue = lock(&self.progress).get(&token).cloned();
                if let Some(queue) = queue {
                    queue.push(update);
                }
            }
            "notifications/tools/list_changed" => self.list_changed.send_modify(|n| *n = n.wrapping_add(1)),
            "notifications/message" => {
                let level = params.and_then(|p| p.get("level")).and_then(Value::as_str).unwrap_or("info");
                let text = match params.and_then(|p| p.get("data")) {
                    Some(Value::String(s)) => cut_line(s),
                    Some(other) => cut_line(&other.to_string()),
                    None => String::new(),
                };
                self.stderr.put(&format!("{level}: {text}"));
            }
            _ => {}
        }
    }
}

/// `text` cut at [`MAX_STDERR_LINE`] bytes (on a character's boundary), with how much more there
/// was: what a server's log and progress messages may put on teaagent's stderr or pass to the
/// client.
fn cut_line(text: &str) -> String {
    if text.len() <= MAX_STDERR_LINE {
        return text.to_owned();
    }
    let cut = text.floor_char_boundary(MAX_STDERR_LINE);
    format!("{}⟪{} more bytes⟫", &text[..cut], text.len() - cut)
}

/// `message` as one line for the child's stdin.
fn line_of(message: &Value) -> Vec<u8> {
    let mut line = Vec::new();
    write_json_value(&mut line, message);
    line.push(b'\n');
    line
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.closed.cancel(); // the writer task ends, and stdin closes
        // `kill_on_drop` kills the child itself; its group goes too.
        if let Some(pid) = self.pid.and_then(|p| rustix::process::Pid::from_raw(p as i32))
            && let Ok(mut child) = self.child.try_lock()
            && child.take().is_some()
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Why a reply (or its result) cannot be read, from `serde_json`'s account of it.
pub(super) fn unreadable_reply(e: &serde_json::Error) -> String {
    if e.to_string().contains("recursion limit") {
        "its reply is nested more than 128 levels deep, more than teaagent reads".to_owned()
    } else {
        format!("its reply is not valid JSON ({e})")
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// On Linux, the child is killed when the thread that started it ends (teaagent's gateway
/// thread lives as long as the gateway; a SIGKILLed teaagent takes it down).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the child between fork and exec and only makes one
    // async-signal-safe system call (prctl), touching no memory of the parent.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut tokio::process::Command) {}
