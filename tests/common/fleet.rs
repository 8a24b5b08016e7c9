//! The fleet of the fleet tests (`fleet_*.rs`): replicas of the real `teaagent` binary
//! over Streamable HTTP, behind the nginx load balancer that `deploy/` ships (its
//! `teaagent.conf`, rendered by its `render.sh`: round robin, keep-alive upstream, no buffering),
//! sharing one real Redis (`TEAAGENT_REDIS_URL`) and one request-state key
//! (`TEAAGENT_REQUEST_STATE_KEY`), as `deploy/` configures them. nginx and Redis are started by
//! `teaagent_tests::services`, which installs them when the machine lacks them. Every test starts
//! a fleet of its own.
//!
//! Each replica serves a workspace of its own holding `replica.txt` with its name, so a call to
//! `read_file` on it says which replica answered: the spread over the fleet is read from the
//! answers themselves. (The approval tests give the replicas one workspace instead: a state binds
//! what its path arguments resolve to, the directory's identity included, so only a retry on the
//! same files can be accepted — the "a fleet serves framework tools, not one workspace".)
//!
//! The requests go through `common/http.rs`.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::services::{Nginx, Redis};
use teaagent_tests::{Bin, Tree};

use crate::common::http::{Reply, try_exchange};

/// The fleet's bearer token (`NAME:TOKEN`, as `TEAAGENT_HTTP_TOKENS` takes it).
pub(crate) const TOKEN: &str = "fleet-token-0123456789abcdef";

/// Another caller's token, which every replica accepts too.
pub(crate) const OTHER_TOKEN: &str = "other-token-0123456789abcdef";

/// The request-state key every replica shares (64 hex digits).
pub(crate) const STATE_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// How long anything the tests wait for may take: far beyond what it takes even on a loaded
/// machine, a bound against a hang rather than a measure.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// How a test's replicas are configured, beyond the fleet's token that every one gets.
#[derive(Clone, Default)]
pub(crate) struct Setup {
    /// `TEAAGENT_REDIS_URL`: the fleet's shared state.
    pub(crate) redis_url: Option<String>,
    /// `[state] timeout_ms` in the user's file (with the same `redis_url`); unset: the default
    /// (500 ms).
    pub(crate) state_timeout_ms: Option<u64>,
    /// `TEAAGENT_REQUEST_STATE_KEY`; unset: [`STATE_KEY`].
    pub(crate) state_key: Option<&'static str>,
    /// `TEAAGENT_REQUEST_STATE_PREVIOUS_KEY`.
    pub(crate) previous_key: Option<&'static str>,
    /// `TEAAGENT_PERMISSION_MODE`.
    pub(crate) mode: Option<&'static str>,
    /// More of the user's `$TEAAGENT_HOME/config.toml` (`[tools.NAME]` sections).
    pub(crate) config: String,
    /// A workspace root the replicas share; unset: each has its own, holding `replica.txt`.
    pub(crate) root: Option<PathBuf>,
    /// More flags of `teaagent mcp serve`.
    pub(crate) args: Vec<&'static str>,
}

impl Setup {
    /// The user's `config.toml`, or `None` when there is nothing to write.
    pub(crate) fn user_file(&self) -> Option<String> {
        let mut file = self.config.clone();
        if let Some(timeout) = self.state_timeout_ms {
            let url = self.redis_url.as_deref().expect("a `[state]` timeout needs the Redis URL");
            file.push_str(&format!("\n[state]\nredis_url = \"{url}\"\ntimeout_ms = {timeout}\n"));
        }
        (!file.is_empty()).then_some(file)
    }
}

/// One `teaagent mcp serve --http 127.0.0.1:0` of the fleet, configured as `deploy/` configures
/// one (the shared token, state key and Redis), and as its test wants ([`Setup`]).
pub(crate) struct Replica {
    pub(crate) name: String,
    child: Child,
    pub(crate) addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
    _workspace: Option<Tree>,
    _home: Tree,
}

impl Replica {
    pub(crate) fn start(name: &str, setup: &Setup) -> Self {
        let home = Tree::new();
        let workspace = match &setup.root {
            Some(_) => None,
            None => {
                let own = Tree::new();
                own.write("ws/replica.txt", name);
                Some(own)
            }
        };
        let root = setup.root.clone().or_else(|| workspace.as_ref().map(Tree::root)).expect("a root");
        if let Some(file) = setup.user_file() {
            std::fs::write(home.base().join("config.toml"), file).expect("config.toml");
        }
        let mut command = Command::new(Bin::Teaagent.path());
        command
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(&setup.args)
            .env("TEAAGENT_HOME", home.base())
            .env("TEAAGENT_HTTP_TOKENS", format!("fleet:{TOKEN}\nother:{OTHER_TOKEN}"))
            .env("TEAAGENT_REQUEST_STATE_KEY", setup.state_key.unwrap_or(STATE_KEY))
            .env_remove("TEAAGENT_REQUEST_STATE_PREVIOUS_KEY")
            .env_remove("TEAAGENT_REDIS_URL")
            .env_remove("TEAAGENT_REDIS_PASSWORD")
            .env_remove("TEAAGENT_PERMISSION_MODE")
            .env_remove("RUST_LOG");
        if let Some(previous) = setup.previous_key {
            command.env("TEAAGENT_REQUEST_STATE_PREVIOUS_KEY", previous);
        }
        if let Some(url) = &setup.redis_url {
            command.env("TEAAGENT_REDIS_URL", url);
        }
        if let Some(mode) = setup.mode {
            command.env("TEAAGENT_PERMISSION_MODE", mode);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a replica");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("stderr"));
        let seen = stderr.clone();
        std::thread::spawn(move || {
            const SAYS: &str = "over Streamable HTTP at http://";
            for line in lines.lines().map_while(Result::ok) {
                if let Some(at) = line.find(SAYS) {
                    let _ = tx.send(line[at + SAYS.len()..].split('/').next().unwrap_or_default().to_owned());
                }
                let mut all = seen.lock().unwrap_or_else(|p| p.into_inner());
                all.push_str(&line);
                all.push('\n');
            }
        });
        let Ok(addr) = rx.recv_timeout(PATIENCE) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("replica {name} did not say where it listens:\n{}", stderr.lock().expect("stderr"));
        };
        let addr = addr.parse().expect("an address");
        Replica { name: name.to_owned(), child, addr, stderr, _workspace: workspace, _home: home }
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Its stderr once `seen` holds for it (or after the usual wait): a thread collects it.
    pub(crate) fn stderr_once(&self, seen: impl Fn(&str) -> bool) -> String {
        teaagent_tests::wire::once_said(|| self.stderr(), seen)
    }

    /// `SIGKILL`, as a machine lost would: no draining.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What `replicas` logged, for a failure's message.
pub(crate) fn logs_of<'a>(replicas: impl IntoIterator<Item = &'a Replica>) -> String {
    let mut all = String::new();
    for replica in replicas {
        all.push_str(&format!("replica {} ({}):\n{}", replica.name, replica.addr, replica.stderr()));
    }
    all
}

/// Redis, three replicas sharing it and the load balancer in front of them.
pub(crate) struct Fleet {
    pub(crate) replicas: Vec<Replica>,
    pub(crate) nginx: Nginx,
    pub(crate) redis: Redis,
}

impl Fleet {
    /// The fleet as `deploy/` runs it: every replica with the shared Redis and state key.
    pub(crate) fn start() -> Self {
        Self::start_with(Setup::default())
    }

    /// The fleet with `setup` for every replica (its `redis_url` is the fleet's Redis).
    pub(crate) fn start_with(setup: Setup) -> Self {
        let redis = Redis::start();
        assert!(redis.ping(), "Redis answers PING once started:\n{}", redis.log());
        let setup = Setup { redis_url: Some(redis.url()), ..setup };
        let replicas: Vec<Replica> =
            ["one", "two", "three"].into_iter().map(|name| Replica::start(name, &setup)).collect();
        let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
        let nginx = Nginx::start(&addrs);
        Fleet { replicas, nginx, redis }
    }

    /// `read_file` of `replica.txt` through the load balancer: the name of the replica that
    /// answered. Panics, saying what every process logged, unless the call succeeded.
    pub(crate) fn which(&self, id: i64) -> String {
        let reply = post(self.nginx.addr(), &read_replica_txt(id), Some(TOKEN));
        match answer(&reply).as_ref().and_then(text_of) {
            Some(name) if reply.status == 200 => name,
            _ => panic!("request {id} through the load balancer failed: {reply:?}\n{}", self.logs()),
        }
    }

    /// What nginx, Redis and every replica logged, for a failure's message.
    pub(crate) fn logs(&self) -> String {
        format!(
            "nginx's error log:\n{}\nnginx's access log:\n{}\nRedis's log:\n{}\n{}",
            self.nginx.log(),
            self.nginx.access_log(),
            self.redis.log(),
            logs_of(&self.replicas)
        )
    }
}

/// `tools/call` of `read_file` on `replica.txt` (the answering replica's name).
pub(crate) fn read_replica_txt(id: i64) -> Value {
    request(id, "tools/call", json!({"name": "read_file", "arguments": {"path": "replica.txt"}}))
}

/// The text of a successful call's answer.
pub(crate) fn text_of(answer: &Value) -> Option<String> {
    let result = answer.get("result")?;
    if result["isError"] == json!(true) {
        return None;
    }
    result["content"][0]["text"].as_str().map(str::to_owned)
}

/// The error of an answer: its code and data; `None` for an answer that is not an error.
pub(crate) fn error_of(answer: &Value) -> Option<(i64, Value)> {
    let error = answer.get("error")?;
    Some((error["code"].as_i64()?, error["data"].clone()))
}

/// A modern-era request (protocol 2026-07-28): `_meta` in the params, from a client that
/// declares no capability.
pub(crate) fn request(id: i64, method: &str, params: Value) -> Value {
    request_from(id, method, params, json!({}))
}

/// A modern-era request from a client that can ask its user (`elicitation`): a call that needs
/// the user's approval is answered `input_required`, with a `requestState`.
pub(crate) fn asking(id: i64, method: &str, params: Value) -> Value {
    request_from(id, method, params, json!({"elicitation": {}}))
}

pub(crate) fn request_from(id: i64, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "fleet", "version": "0"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A modern POST of `message` to `/mcp` with the headers a conforming client sends, and the
/// bearer token when given.
pub(crate) fn post(addr: SocketAddr, message: &Value, token: Option<&str>) -> Reply {
    try_post(addr, message, token).unwrap_or_else(|e| panic!("POST /mcp to {addr} failed: {e}"))
}

/// [`post`], or why the connection failed.
pub(crate) fn try_post(addr: SocketAddr, message: &Value, token: Option<&str>) -> io::Result<Reply> {
    let method = message["method"].as_str().unwrap_or_default();
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = message["params"]["name"].as_str().filter(|_| method == "tools/call") {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    if let Some(task) = message["params"]["taskId"].as_str().filter(|_| method.starts_with("tasks/")) {
        headers.push(("Mcp-Name", task.to_owned()));
    }
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    try_exchange(addr, "POST", "/mcp", &refs, message.to_string().as_bytes())
}

/// The JSON-RPC response a reply carries: its JSON body, or — a call that ran longer than the
/// replica's `stream_after` (1 s, easily reached on a loaded machine) is answered as an SSE
/// stream — the response among the stream's events.
pub(crate) fn answer(reply: &Reply) -> Option<Value> {
    let is_stream = reply.header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
    if !is_stream {
        return serde_json::from_str(&reply.body).ok();
    }
    reply
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .rfind(|message| message.get("result").is_some() || message.get("error").is_some())
}

/// `message` posted to the replica at `addr` with the fleet's token: its JSON-RPC response
/// (panics, with what the replicas logged, when there is none).
pub(crate) fn call(addr: SocketAddr, message: &Value, logs: &dyn Fn() -> String) -> Value {
    let reply = post(addr, message, Some(TOKEN));
    match answer(&reply) {
        Some(answer) if reply.status == 200 => answer,
        _ => panic!("no JSON-RPC response from {addr} to {message}: {reply:?}\n{}", logs()),
    }
}

/// How many of `answers` each replica gave.
pub(crate) fn tally(answers: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for name in answers {
        *counts.entry(name).or_default() += 1;
    }
    counts
}

/// The rate limit of `read_file` in the user's file: `max` calls an hour (so no admission leaves
/// the window while a test runs, however slow the machine).
pub(crate) fn read_file_limit(max: u32) -> String {
    format!("[tools.read_file]\nrate_limit = {{ max_calls = {max}, window_secs = 3600 }}\n")
}
