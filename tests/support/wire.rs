//! A raw-wire driver: write lines to a real server process, read lines back.
//!
//! Every line the server writes to stdout is checked as it arrives: it must be one JSON-RPC 2.0
//! message (or a batch of them). [`RawServer::finish`] fails the test if any line was not.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for any expected line before failing.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running server process.
pub struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Value, String)>,
    /// Messages read but not yet asked for, with their raw lines.
    unread: VecDeque<(Value, String)>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// While set, stderr is not read ([`RawServer::start_stderr_unread`]).
    stderr_gate: Option<std::sync::mpsc::Sender<()>>,
    violations: Arc<Mutex<Vec<String>>>,
    next_id: u64,
}

impl RawServer {
    /// Starts `bin` with `args`.
    pub fn spawn(bin: &Path, args: &[&str]) -> Self {
        let mut cmd = Command::new(bin);
        cmd.args(args);
        Self::start(cmd)
    }

    /// Starts a prepared command (environment, working directory...).
    pub fn start(cmd: Command) -> Self {
        Self::start_gated(cmd, None)
    }

    /// Starts a prepared command whose stderr is not read until [`RawServer::read_stderr`]: a
    /// client that does not drain it.
    pub fn start_stderr_unread(cmd: Command) -> Self {
        let (open, gate) = channel();
        let mut server = Self::start_gated(cmd, Some(gate));
        server.stderr_gate = Some(open);
        server
    }

    /// Starts reading stderr (after [`RawServer::start_stderr_unread`]).
    pub fn read_stderr(&mut self) {
        self.stderr_gate = None;
    }

    fn start_gated(mut cmd: Command, gate: Option<Receiver<()>>) -> Self {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => panic!("cannot start {cmd:?}: {e}"),
        };
        let stdout = child.stdout.take().map(BufReader::new);
        let mut stderr_pipe = child.stderr.take();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let violations = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = channel();
        let seen = Arc::clone(&violations);
        std::thread::spawn(move || {
            let Some(mut stdout) = stdout else { return };
            let mut line = Vec::new();
            loop {
                line.clear();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                match serde_json::from_slice::<Value>(&line) {
                    Ok(v) if is_jsonrpc(&v) && line.ends_with(b"\n") => {
                        let _ = tx.send((v, String::from_utf8_lossy(&line).into_owned()));
                    }
                    _ => seen
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(String::from_utf8_lossy(&line).into_owned()),
                }
            }
        });
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            // Held until the gate's sender is dropped.
            if let Some(gate) = gate {
                let _ = gate.recv();
            }
            let Some(pipe) = stderr_pipe.as_mut() else { return };
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    return;
                }
                sink.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(&buf[..n]);
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            unread: VecDeque::new(),
            stderr,
            stderr_gate: None,
            violations,
            next_id: 1000,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line (a `\n` is added).
    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("the server reads its stdin");
    }

    /// Writes a JSON value as one line.
    pub fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string());
    }

    /// The next message, whatever it is.
    pub fn recv(&mut self) -> Value {
        self.try_recv(WAIT).unwrap_or_else(|| {
            panic!("no message from the server within {WAIT:?}; stderr:\n{}", self.stderr())
        })
    }

    /// The next message within `wait`, if any.
    pub fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        self.try_recv_raw(wait).map(|(v, _)| v)
    }

    /// The raw line of the next message.
    pub fn recv_raw(&mut self) -> String {
        match self.try_recv_raw(WAIT) {
            Some((_, raw)) => raw,
            None => panic!("no message from the server within {WAIT:?}; stderr:\n{}", self.stderr()),
        }
    }

    fn try_recv_raw(&mut self, wait: Duration) -> Option<(Value, String)> {
        if let Some(m) = self.unread.pop_front() {
            return Some(m);
        }
        self.lines.recv_timeout(wait).ok()
    }

    /// The response with `id`, keeping every other message for later.
    pub fn response(&mut self, id: &Value) -> Value {
        self.response_raw(id).0
    }

    /// The response with `id` and its raw line.
    pub fn response_raw(&mut self, id: &Value) -> (Value, String) {
        let is_it = |m: &Value| m.get("id") == Some(id) && m.get("method").is_none();
        if let Some(i) = self.unread.iter().position(|(m, _)| is_it(m)) {
            return self.unread.remove(i).expect("present");
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(m) if is_it(&m.0) => return m,
                Ok(m) => self.unread.push_back(m),
                Err(_) => panic!("no response to id {id} within {WAIT:?}; stderr:\n{}", self.stderr()),
            }
        }
    }

    /// Messages received so far that were not asked for (notifications, other responses),
    /// after waiting `settle` for more.
    pub fn drain(&mut self, settle: Duration) -> Vec<Value> {
        while let Ok(m) = self.lines.recv_timeout(settle) {
            self.unread.push_back(m);
        }
        self.unread.drain(..).map(|(v, _)| v).collect()
    }

    /// Sends a request with a fresh integer id and waits for its response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&id)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send_json(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// `initialize` with `version`, then `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, version: &str) -> Value {
        let response = self.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "wire-test", "version": "0"}}),
        );
        self.notify("notifications/initialized", json!({}));
        response["result"].clone()
    }

    /// Closes stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends a signal by name (`TERM`, `INT`, `KILL`) with the system's `kill`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name} failed");
    }

    /// Waits for the process to exit.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {limit:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }

    /// The server's stderr once `seen` holds for it, or as it is after [`WAIT`]: a thread
    /// collects stderr, which may lag behind the messages on stdout.
    pub fn stderr_once(&self, seen: impl Fn(&str) -> bool) -> String {
        once_said(|| self.stderr(), seen)
    }

    /// Lines on stdout that were not JSON-RPC messages.
    pub fn violations(&self) -> Vec<String> {
        self.violations.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Closes stdin, expects exit code 0, and fails if any stdout line was not JSON-RPC.
    pub fn finish(mut self) {
        self.close_stdin();
        let status = self.wait(WAIT);
        // Let the stdout reader see the last lines.
        std::thread::sleep(Duration::from_millis(50));
        assert!(status.success(), "exit status {status}; stderr:\n{}", self.stderr());
        let violations = self.violations();
        assert!(violations.is_empty(), "stdout carried non-protocol lines: {violations:?}");
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `v` is one JSON-RPC 2.0 message, or a non-empty batch of them.
pub fn is_jsonrpc(v: &Value) -> bool {
    match v {
        Value::Array(items) => !items.is_empty() && items.iter().all(is_message),
        other => is_message(other),
    }
}

fn is_message(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    if o.get("jsonrpc") != Some(&json!("2.0")) {
        return false;
    }
    // Integers beyond 64 bits parse as floats here; the wire tests compare those ids as text.
    let id_ok = |id: &Value| id.is_string() || id.is_number() || id.is_null();
    match (o.get("method"), o.get("id"), o.get("result"), o.get("error")) {
        (Some(m), id, None, None) => m.is_string() && id.is_none_or(|id| id.is_string() || id.is_number()),
        (None, Some(id), Some(_), None) => id_ok(id),
        (None, Some(id), None, Some(e)) => id_ok(id) && e["code"].is_i64() && e["message"].is_string(),
        _ => false,
    }
}

/// What `read` returns (a server's stderr as collected so far) once `seen` holds for it, or as
/// it is after [`WAIT`]: the thread that collects a server's stderr may lag behind the answers
/// the test has already read.
pub fn once_said(read: impl Fn() -> String, seen: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let said = read();
        if seen(&said) || Instant::now() > deadline {
            return said;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
