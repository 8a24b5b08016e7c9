//! A fleet (SPEC §12): replicas of the real `teaagent` binary over Streamable HTTP, behind the
//! nginx load balancer that `deploy/` ships (its `teaagent.conf`, rendered by its `render.sh`:
//! round robin, keep-alive upstream, no buffering), sharing one real Redis
//! (`TEAAGENT_REDIS_URL`) and one request-state key (`TEAAGENT_REQUEST_STATE_KEY`), as
//! `deploy/` configures them. nginx and Redis are started by `teaagent_tests::services`, which
//! installs them when the machine lacks them.
//!
//! Each replica serves a workspace of its own holding `replica.txt` with its name, so a call to
//! `read_file` on it says which replica answered: the spread over the fleet is read from the
//! answers themselves. (The approval tests give the replicas one workspace instead: a state binds
//! what its path arguments resolve to, the directory's identity included, so only a retry on the
//! same files can be accepted — the "a fleet serves framework tools, not one workspace".)
//!
//! Here: every request through the load balancer answered, by every replica in turn; a replica
//! lost without a request failing; what the load balancer passes on (tokens, `/healthz`,
//! `/readyz`, the protected resource metadata) and what it refuses; the official client through
//! it; Redis killed and started again on the same port. And the shared state end to end (issue
//! 15): exactly `max_calls` admitted across the fleet under 500 concurrent calls through nginx;
//! an approval asked on one replica, answered on a second and its replay refused on a third;
//! Redis killed mid-run (rate-limited calls refused with `state_unavailable`, the others served)
//! and the fleet recovering once it is back; a rotation of the state key. And one caller's share
//! of each replica (README, "Security model and its limits"): through nginx, a caller cannot
//! take every `subscriptions/listen` stream of the fleet, another caller still opens its own.

#[path = "common/client.rs"]
mod client;
#[path = "common/http.rs"]
mod raw;

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use raw::{Reply, exchange, try_exchange};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use teaagent_tests::services::{Nginx, Redis, Resp};
use teaagent_tests::{Bin, Tree};

/// The fleet's bearer token (`NAME:TOKEN`, as `TEAAGENT_HTTP_TOKENS` takes it).
const TOKEN: &str = "fleet-token-0123456789abcdef";

/// Another caller's token, which every replica accepts too.
const OTHER_TOKEN: &str = "other-token-0123456789abcdef";

/// The request-state key every replica shares (64 hex digits).
const STATE_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// How long anything the tests wait for may take: far beyond what it takes even on a loaded
/// machine, a bound against a hang rather than a measure.
const PATIENCE: Duration = Duration::from_secs(60);

/// How a test's replicas are configured, beyond the fleet's token that every one gets.
#[derive(Clone, Default)]
struct Setup {
    /// `TEAAGENT_REDIS_URL`: the fleet's shared state.
    redis_url: Option<String>,
    /// `[state] timeout_ms` in the user's file (with the same `redis_url`); unset: the default
    /// (500 ms).
    state_timeout_ms: Option<u64>,
    /// `TEAAGENT_REQUEST_STATE_KEY`; unset: [`STATE_KEY`].
    state_key: Option<&'static str>,
    /// `TEAAGENT_REQUEST_STATE_PREVIOUS_KEY`.
    previous_key: Option<&'static str>,
    /// `TEAAGENT_PERMISSION_MODE`.
    mode: Option<&'static str>,
    /// More of the user's `$TEAAGENT_HOME/config.toml` (`[tools.NAME]` sections).
    config: String,
    /// A workspace root the replicas share; unset: each has its own, holding `replica.txt`.
    root: Option<PathBuf>,
    /// More flags of `teaagent mcp serve`.
    args: Vec<&'static str>,
}

impl Setup {
    /// The user's `config.toml`, or `None` when there is nothing to write.
    fn user_file(&self) -> Option<String> {
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
struct Replica {
    name: String,
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
    _workspace: Option<Tree>,
    _home: Tree,
}

impl Replica {
    fn start(name: &str, setup: &Setup) -> Self {
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

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `SIGKILL`, as a machine lost would: no draining.
    fn kill(&mut self) {
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
fn logs_of<'a>(replicas: impl IntoIterator<Item = &'a Replica>) -> String {
    let mut all = String::new();
    for replica in replicas {
        all.push_str(&format!("replica {} ({}):\n{}", replica.name, replica.addr, replica.stderr()));
    }
    all
}

/// Redis, three replicas sharing it and the load balancer in front of them.
struct Fleet {
    replicas: Vec<Replica>,
    nginx: Nginx,
    redis: Redis,
}

impl Fleet {
    /// The fleet as `deploy/` runs it: every replica with the shared Redis and state key.
    fn start() -> Self {
        Self::start_with(Setup::default())
    }

    /// The fleet with `setup` for every replica (its `redis_url` is the fleet's Redis).
    fn start_with(setup: Setup) -> Self {
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
    fn which(&self, id: i64) -> String {
        let reply = post(self.nginx.addr(), &read_replica_txt(id), Some(TOKEN));
        match answer(&reply).as_ref().and_then(text_of) {
            Some(name) if reply.status == 200 => name,
            _ => panic!("request {id} through the load balancer failed: {reply:?}\n{}", self.logs()),
        }
    }

    /// What nginx, Redis and every replica logged, for a failure's message.
    fn logs(&self) -> String {
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
fn read_replica_txt(id: i64) -> Value {
    request(id, "tools/call", json!({"name": "read_file", "arguments": {"path": "replica.txt"}}))
}

/// The text of a successful call's answer.
fn text_of(answer: &Value) -> Option<String> {
    let result = answer.get("result")?;
    if result["isError"] == json!(true) {
        return None;
    }
    result["content"][0]["text"].as_str().map(str::to_owned)
}

/// The error of an answer: its code and data; `None` for an answer that is not an error.
fn error_of(answer: &Value) -> Option<(i64, Value)> {
    let error = answer.get("error")?;
    Some((error["code"].as_i64()?, error["data"].clone()))
}

/// A modern-era request (protocol 2026-07-28): `_meta` in the params, from a client that
/// declares no capability.
fn request(id: i64, method: &str, params: Value) -> Value {
    request_from(id, method, params, json!({}))
}

/// A modern-era request from a client that can ask its user (`elicitation`): a call that needs
/// the user's approval is answered `input_required`, with a `requestState`.
fn asking(id: i64, method: &str, params: Value) -> Value {
    request_from(id, method, params, json!({"elicitation": {}}))
}

fn request_from(id: i64, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "fleet", "version": "0"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A modern POST of `message` to `/mcp` with the headers a conforming client sends, and the
/// bearer token when given.
fn post(addr: SocketAddr, message: &Value, token: Option<&str>) -> Reply {
    try_post(addr, message, token).unwrap_or_else(|e| panic!("POST /mcp to {addr} failed: {e}"))
}

/// [`post`], or why the connection failed.
fn try_post(addr: SocketAddr, message: &Value, token: Option<&str>) -> io::Result<Reply> {
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
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    try_exchange(addr, "POST", "/mcp", &refs, message.to_string().as_bytes())
}

/// The JSON-RPC response a reply carries: its JSON body, or — a call that ran longer than the
/// replica's `stream_after` (1 s, easily reached on a loaded machine) is answered as an SSE
/// stream — the response among the stream's events.
fn answer(reply: &Reply) -> Option<Value> {
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
fn call(addr: SocketAddr, message: &Value, logs: &dyn Fn() -> String) -> Value {
    let reply = post(addr, message, Some(TOKEN));
    match answer(&reply) {
        Some(answer) if reply.status == 200 => answer,
        _ => panic!("no JSON-RPC response from {addr} to {message}: {reply:?}\n{}", logs()),
    }
}

/// How many of `answers` each replica gave.
fn tally(answers: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for name in answers {
        *counts.entry(name).or_default() += 1;
    }
    counts
}

#[test]
fn every_request_through_the_load_balancer_is_answered_and_every_replica_takes_some() {
    let fleet = Fleet::start();
    // `tools/list`, as any client starts: answered whichever replica takes it.
    for id in 1..=3 {
        let reply = post(fleet.nginx.addr(), &request(id, "tools/list", json!({})), Some(TOKEN));
        let tools = serde_json::from_str::<Value>(&reply.body)
            .ok()
            .and_then(|a| a["result"]["tools"].as_array().map(Vec::len));
        assert!(reply.status == 200 && tools.is_some_and(|n| n > 0), "{reply:?}\n{}", fleet.logs());
    }
    let counts = tally((0..30).map(|id| fleet.which(id)));
    assert_eq!(counts.values().sum::<usize>(), 30);
    for replica in &fleet.replicas {
        assert!(
            counts.contains_key(&replica.name),
            "round robin gave replica {} nothing: {counts:?}\n{}",
            replica.name,
            fleet.logs()
        );
    }
    assert_eq!(counts.len(), 3, "only the fleet's replicas answer: {counts:?}");
}

#[test]
fn a_replica_lost_is_routed_around_without_a_request_failing() {
    let mut fleet = Fleet::start();
    let before = tally((0..6).map(|id| fleet.which(id)));
    assert_eq!(before.len(), 3, "{before:?}");
    let lost = fleet.replicas[2].name.clone();
    fleet.replicas[2].kill();
    // Its port refuses the connection, so nothing was sent to it: nginx passes each request on
    // to the next replica. (A POST already sent is never retried: no `non_idempotent`.)
    let after = tally((100..130).map(|id| fleet.which(id)));
    assert_eq!(after.values().sum::<usize>(), 30);
    assert!(!after.contains_key(&lost), "a killed replica answered: {after:?}");
    assert_eq!(after.len(), 2, "the two left share the requests: {after:?}\n{}", fleet.logs());
}

#[test]
fn the_load_balancer_passes_on_tokens_health_and_metadata_and_nothing_else() {
    let fleet = Fleet::start();
    let addr = fleet.nginx.addr();
    // Without the token: the replica's 401 and its challenge, passed on unchanged.
    let refused = post(addr, &request(1, "tools/list", json!({})), None);
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(refused.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")), "{refused:?}");
    let wrong = post(addr, &request(2, "tools/list", json!({})), Some("not-the-fleet-token-0123456789"));
    assert_eq!(wrong.status, 401, "{wrong:?}");

    // Health: each answered by a replica, without a token.
    let health = exchange(addr, "GET", "/healthz", &[], b"");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"), "{health:?}");
    let ready = exchange(addr, "GET", "/readyz", &[], b"");
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"), "{ready:?}");

    // The protected resource metadata (RFC 9728) reaches a replica, whatever it answers: not
    // nginx's own page. Anything else is nginx's 404, never passed on.
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let metadata = exchange(addr, "GET", path, &[], b"");
        assert!(!metadata.body.contains("nginx"), "{path} was not passed to a replica: {metadata:?}");
    }
    for path in ["/", "/elsewhere", "/mcp/more", "/healthz/x"] {
        let other = exchange(addr, "GET", path, &[], b"");
        assert_eq!(other.status, 404, "{path}: {other:?}");
        assert!(other.body.contains("nginx"), "{path} is answered by nginx itself: {other:?}");
    }
    // A body up to teaagent's own limit goes through (nginx allows a little more, so teaagent's
    // JSON answer is what a client sees).
    let big =
        request(3, "tools/call", json!({"name": "read_file", "arguments": {"path": "x".repeat(3 << 20)}}));
    let reply = post(addr, &big, Some(TOKEN));
    assert_eq!(reply.status, 200, "{}", &reply.body[..reply.body.len().min(300)]);
    assert!(
        serde_json::from_str::<Value>(&reply.body)
            .is_ok_and(|a| a.get("result").is_some() || a.get("error").is_some()),
        "{reply:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_works_through_the_load_balancer() {
    let fleet = Fleet::start();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(fleet.nginx.url()).auth_header(TOKEN.to_owned()),
    );
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-fleet-e2e", "0.1"),
        ),
        events: tokio::sync::mpsc::unbounded_channel().0,
    };
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = client::timely(recorder.serve_with_lifecycle(transport, mode)).await.expect("discover");
    client.set_response_cache_config(ClientCacheConfig::disabled()).await;
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "read_file"), "{tools:?}");
    // The server the client discovered is the fleet: its calls land on every replica.
    let mut answers = Vec::new();
    for _ in 0..9 {
        let call = CallToolRequestParams::new("read_file")
            .with_arguments(json!({"path": "replica.txt"}).as_object().cloned().expect("object"));
        let result = client::timely(client.call_tool(call)).await.expect("read_file");
        let value = serde_json::to_value(&result).expect("json");
        answers.push(value["content"][0]["text"].as_str().expect("text").to_owned());
    }
    let counts = tally(answers);
    assert_eq!(counts.len(), 3, "{counts:?}\n{}", fleet.logs());
    client.cancel().await.expect("close");
}

#[test]
fn redis_killed_then_started_again_on_the_same_port_answers_again() {
    let mut redis = Redis::start();
    let url = redis.url();
    assert!(redis.ping(), "{}", redis.log());
    assert_eq!(redis.command(&["SET", "fleet:probe", "1"]).expect("SET"), Resp::Simple("OK".into()));
    assert_eq!(redis.command(&["GET", "fleet:probe"]).expect("GET"), Resp::Bulk(Some(b"1".to_vec())));

    redis.kill();
    assert!(!redis.ping(), "a killed Redis answers nothing");
    assert!(TcpStream::connect(redis.addr()).is_err(), "a killed Redis's port refuses connections");

    redis.restart();
    assert_eq!(redis.url(), url, "the same address after a restart");
    assert!(redis.ping(), "{}", redis.log());
    // Nothing was persisted: it starts empty.
    assert_eq!(redis.command(&["GET", "fleet:probe"]).expect("GET"), Resp::Bulk(None));
    assert_eq!(redis.command(&["DBSIZE"]).expect("DBSIZE"), Resp::Integer(0));
    // An error is an answer, not a failed connection.
    assert!(matches!(redis.command(&["NO-SUCH-COMMAND"]), Ok(Resp::Error(e)) if e.starts_with("ERR")));
}

/// The rate limit of `read_file` in the user's file: `max` calls an hour (so no admission leaves
/// the window while a test runs, however slow the machine).
fn read_file_limit(max: u32) -> String {
    format!("[tools.read_file]\nrate_limit = {{ max_calls = {max}, window_secs = 3600 }}\n")
}

/// What one call of the burst got.
enum Outcome {
    /// It ran: the name of the replica that admitted it.
    Ran(String),
    /// `-32004`, `reason: "rate_limited"`.
    Limited,
    /// Anything else: what it was.
    Other(String),
}

#[test]
fn exactly_max_calls_are_admitted_across_the_fleet_under_500_concurrent_calls() {
    const CALLS: usize = 500;
    const MAX: u32 = 10;
    let fleet = Fleet::start_with(Setup {
        config: read_file_limit(MAX),
        // Every admission is a round trip to Redis from a replica sharing two cores with 500
        // client threads, nginx, Redis and the other replicas: a generous answer timeout, so
        // what is measured is the window, not the machine's load (a timeout would show as
        // `state_unavailable`, never as an extra admission).
        state_timeout_ms: Some(30_000),
        // What is measured is the shared window under one caller's burst: that caller may
        // have every call in progress at once (its share of a replica is bounded by default:
        // `through_the_load_balancer_one_caller_cannot_take_every_listen_stream`).
        args: vec!["--http-caller-connections", "256", "--http-caller-calls", "1024"],
        ..Setup::default()
    });
    let addr = fleet.nginx.addr();
    let start = Barrier::new(CALLS);
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..CALLS)
            .map(|i| {
                let start = &start;
                std::thread::Builder::new()
                    .stack_size(256 << 10)
                    .spawn_scoped(scope, move || {
                        let message = read_replica_txt(i as i64);
                        start.wait();
                        let reply = match try_post(addr, &message, Some(TOKEN)) {
                            Ok(reply) => reply,
                            Err(e) => return Outcome::Other(format!("the connection failed: {e}")),
                        };
                        let Some(answer) = answer(&reply).filter(|_| reply.status == 200) else {
                            return Outcome::Other(format!("{reply:?}"));
                        };
                        if let Some(name) = text_of(&answer) {
                            return Outcome::Ran(name);
                        }
                        match error_of(&answer) {
                            Some((-32004, data))
                                if data["reason"] == "rate_limited" && data["tool"] == "read_file" =>
                            {
                                Outcome::Limited
                            }
                            _ => Outcome::Other(answer.to_string()),
                        }
                    })
                    .expect("a client thread")
            })
            .collect();
        calls.into_iter().map(|call| call.join().expect("a client thread")).collect()
    });

    let ran: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Ran(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    let limited = outcomes.iter().filter(|o| matches!(o, Outcome::Limited)).count();
    let other: Vec<&str> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Other(what) => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        other.is_empty(),
        "{} of {CALLS} calls got neither a result nor the rate limit, e.g. {:?}\n{}",
        other.len(),
        &other[..other.len().min(5)],
        fleet.logs()
    );
    assert_eq!(
        (ran.len(), limited),
        (MAX as usize, CALLS - MAX as usize),
        "exactly max_calls admitted across the fleet, the rest refused (admitted by: {:?})\n{}",
        tally(ran.clone()),
        fleet.logs()
    );
    // One window for the fleet, in Redis: the ten admissions.
    let window = fleet.redis.command(&["ZCARD", "teaagent:rate:read_file"]).expect("ZCARD");
    assert_eq!(window, Resp::Integer(i64::from(MAX)), "{}", fleet.logs());

    // The calls reached every replica: nginx's access log, one line per request once answered
    // (`STATUS UPSTREAM METHOD URI`), every one of them a 200 from one replica.
    let deadline = Instant::now() + PATIENCE;
    let log = loop {
        let log = fleet.nginx.access_log();
        if log.lines().filter(|l| l.ends_with(" POST /mcp")).count() >= CALLS || Instant::now() > deadline {
            break log;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let posts: Vec<&str> = log.lines().filter(|l| l.ends_with(" POST /mcp")).collect();
    assert_eq!(posts.len(), CALLS, "one access-log line per call:\n{log}");
    assert!(posts.iter().all(|l| l.starts_with("200 ")), "every call answered 200:\n{log}");
    let per_replica: BTreeMap<&str, usize> = fleet
        .replicas
        .iter()
        .map(|r| {
            let upstream = format!(" {} POST", r.addr);
            (r.name.as_str(), posts.iter().filter(|l| l.contains(&upstream)).count())
        })
        .collect();
    assert_eq!(
        per_replica.values().sum::<usize>(),
        CALLS,
        "each call went to one replica: {per_replica:?}\n{log}"
    );
    assert!(per_replica.values().all(|&n| n > 0), "every replica took calls: {per_replica:?}");
}

#[test]
fn through_the_load_balancer_one_caller_cannot_take_every_listen_stream() {
    let fleet = Fleet::start();
    // A `subscriptions/listen` stream through nginx, open: its first message.
    let listen = |id: i64, token: &str| {
        let message = request(id, "subscriptions/listen", json!({"notifications": {}}));
        let body = message.to_string();
        let mut stream = TcpStream::connect(fleet.nginx.addr()).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            fleet.nginx.addr(),
            body.len()
        );
        std::io::Write::write_all(&mut stream, head.as_bytes()).expect("send");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let first = loop {
            line.clear();
            assert!(reader.read_line(&mut line).expect("read") > 0, "ended\n{}", fleet.logs());
            let text = line.trim_end();
            if let Some(json) = text.strip_prefix("data: ").or(text.starts_with('{').then_some(text)) {
                break serde_json::from_str::<Value>(json).expect("JSON");
            }
        };
        (first, reader)
    };
    // The fleet's caller opens streams until one replica refuses (each replica has 16).
    let mut open = Vec::new();
    let refused = loop {
        assert!(open.len() < 48, "one caller took every stream of the fleet");
        let (first, stream) = listen(open.len() as i64, TOKEN);
        if first["method"] != "notifications/subscriptions/acknowledged" {
            break first;
        }
        open.push(stream);
    };
    assert_eq!(refused["error"]["data"]["reason"], "caller_limit", "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], "subscriptions", "{refused}");
    assert!((4..=12).contains(&open.len()), "{} streams before the first refusal", open.len());
    // Another caller still opens one, wherever it lands, and the load balancer's probe answers.
    for id in 0..3 {
        let (first, _stream) = listen(id, OTHER_TOKEN);
        assert_eq!(first["method"], "notifications/subscriptions/acknowledged", "{first}");
    }
    let health = exchange(fleet.nginx.addr(), "GET", "/healthz", &[], b"");
    assert_eq!(health.status, 200, "{health:?}");
}

/// `create_file` of `path`, as a call from a client that can ask its user.
fn create(id: i64, path: &str, content: &str) -> Value {
    asking(id, "tools/call", json!({"name": "create_file", "arguments": {"path": path, "content": content}}))
}

/// `call` again, with `state` and the user's "allow once".
fn retry(call: &Value, state: &Value) -> Value {
    let mut retry = call.clone();
    retry["params"]["requestState"] = state.clone();
    retry["params"]["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"decision": "once"}}});
    retry
}

/// Asks the replica at `addr` for `call`: its question's `requestState`.
fn ask(addr: SocketAddr, call: &Value, logs: &dyn Fn() -> String) -> Value {
    let asked = self::call(addr, call, logs);
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{addr} asks first: {asked}\n{}", logs());
    assert_eq!(result["inputRequests"]["approval"]["method"], "elicitation/create", "{asked}");
    assert!(result["requestState"].is_string(), "{asked}");
    result["requestState"].clone()
}

/// Asserts that `answer` ran its call.
fn ran(answer: &Value, logs: &dyn Fn() -> String) {
    let result = &answer["result"];
    assert!(
        result["resultType"] == "complete" && result["isError"] == json!(false),
        "the call ran: {answer}\n{}",
        logs()
    );
}

/// Asserts that `answer` refuses its state, saying `why`.
fn refused_state(answer: &Value, why: &str, logs: &dyn Fn() -> String) {
    let refusal = error_of(answer);
    assert!(
        refusal.as_ref().is_some_and(|(code, data)| *code == -32602
            && data["reason"] == "invalid_request_state"
            && data["details"].as_str().is_some_and(|d| d.contains(why))),
        "refused as -32602 invalid_request_state, {why:?}: {answer}\n{}",
        logs()
    );
}

#[test]
fn an_approval_asked_on_one_replica_is_answered_on_another_and_its_replay_refused_on_a_third() {
    // One workspace for the three (a state binds the files its call is about).
    let workspace = Tree::new();
    let fleet =
        Fleet::start_with(Setup { mode: Some("prompt"), root: Some(workspace.root()), ..Setup::default() });
    let logs = || fleet.logs();
    // Each step to the replica it is meant for, not through the load balancer.
    let (a, b, c) = (fleet.replicas[0].addr, fleet.replicas[1].addr, fleet.replicas[2].addr);
    let target = workspace.path("ws/approved.txt");

    let call = create(1, "approved.txt", "asked on one, approved on another");
    let state = ask(a, &call, &logs);
    assert!(!target.exists(), "nothing is written before the answer");

    // The user's answer reaches another replica: accepted, the file is written.
    let answered = retry(&call, &state);
    ran(&self::call(b, &answered, &logs), &logs);
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "asked on one, approved on another");

    // The same retry replayed on the third: refused, nothing is written again.
    std::fs::remove_file(&target).expect("remove");
    refused_state(&self::call(c, &answered, &logs), "used already", &logs);
    // ...and on the one that asked, and on the one that ran it.
    refused_state(&self::call(a, &answered, &logs), "used already", &logs);
    refused_state(&self::call(b, &answered, &logs), "used already", &logs);
    assert!(!target.exists(), "a replay wrote the file again");

    // Two replicas handed the same fresh state at once: one runs it, the other refuses it.
    let call = create(2, "raced.txt", "once");
    let state = ask(c, &call, &logs);
    let answered = retry(&call, &state);
    let start = Barrier::new(2);
    let (first, second) = std::thread::scope(|s| {
        let on = |addr| {
            let (start, answered, logs) = (&start, &answered, &logs);
            s.spawn(move || {
                start.wait();
                self::call(addr, answered, logs)
            })
        };
        let (first, second) = (on(a), on(b));
        (first.join().expect("a"), second.join().expect("b"))
    });
    let ran_count = [&first, &second].iter().filter(|a| a["result"]["isError"] == json!(false)).count();
    assert_eq!(ran_count, 1, "one of two concurrent uses runs:\n{first}\n{second}\n{}", logs());
    let refused = if first.get("error").is_some() { &first } else { &second };
    refused_state(refused, "used already", &logs);
    assert_eq!(std::fs::read_to_string(workspace.path("ws/raced.txt")).expect("written"), "once");
}

/// What [`Traffic`] got so far.
#[derive(Clone, Default)]
struct Seen {
    /// Calls that ran.
    ran: usize,
    /// Calls refused with `-32000`, `reason: "state_unavailable"`.
    unavailable: usize,
    /// Anything else (a failed request, another error).
    other: Vec<String>,
}

/// A client calling `read_file` through the load balancer, one call after another, until
/// stopped.
struct Traffic {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Traffic {
    fn start(addr: SocketAddr) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (record, stopped) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for id in 10_000.. {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let outcome = try_post(addr, &read_replica_txt(id), Some(TOKEN))
                    .map_err(|e| e.to_string())
                    .and_then(|reply| answer(&reply).ok_or_else(|| format!("{reply:?}")));
                let mut seen = record.lock().unwrap_or_else(|p| p.into_inner());
                match outcome {
                    Ok(answer) if text_of(&answer).is_some() => seen.ran += 1,
                    Ok(answer)
                        if error_of(&answer).is_some_and(|(code, data)| {
                            code == -32000 && data["reason"] == "state_unavailable"
                        }) =>
                    {
                        seen.unavailable += 1
                    }
                    Ok(answer) => seen.other.push(answer.to_string()),
                    Err(why) => seen.other.push(why),
                }
                drop(seen);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self { seen, stop, thread }
    }

    fn seen(&self) -> Seen {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits until what was seen satisfies `enough` (panics after [`PATIENCE`]).
    fn wait_for(&self, enough: impl Fn(&Seen) -> bool, what: &str, fleet: &Fleet) {
        let deadline = Instant::now() + PATIENCE;
        while !enough(&self.seen()) {
            let seen = self.seen();
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} for {what}: {} ran, {} unavailable, other: {:?}\n{}",
                seen.ran,
                seen.unavailable,
                seen.other,
                fleet.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(self) -> Seen {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().expect("the client thread");
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[test]
fn with_redis_killed_rate_limited_calls_fail_closed_and_the_fleet_recovers_when_it_returns() {
    let mut fleet = Fleet::start_with(Setup {
        config: read_file_limit(100_000),
        // Refused connections fail at once; the timeout only bounds a Redis that hangs. Long
        // enough that a loaded machine does not turn a slow answer into a refusal.
        state_timeout_ms: Some(10_000),
        ..Setup::default()
    });
    // Up: rate-limited calls run, on every replica.
    let before = tally((0..6).map(|id| fleet.which(id)));
    assert_eq!(before.len(), 3, "{before:?}");

    // A client keeps calling through the load balancer all along, so Redis dies and returns
    // under calls in flight.
    let traffic = Traffic::start(fleet.nginx.addr());
    traffic.wait_for(|seen| seen.ran >= 3, "calls to run before Redis is killed", &fleet);
    fleet.redis.kill();
    // Through the load balancer (every replica in turn) and on each replica directly:
    // refused, never admitted unchecked.
    let nginx = fleet.nginx.addr();
    let targets: Vec<SocketAddr> =
        [nginx; 6].into_iter().chain(fleet.replicas.iter().map(|r| r.addr)).collect();
    for (id, addr) in (100..).zip(targets.iter().copied()) {
        let refused = call(addr, &read_replica_txt(id), &|| fleet.logs());
        let (code, data) = error_of(&refused).unwrap_or_else(|| panic!("refused: {refused}"));
        assert_eq!(
            (code, data["reason"].clone(), data["tool"].clone()),
            (-32000, json!("state_unavailable"), json!("read_file")),
            "via {addr}: {refused}\n{}",
            fleet.logs()
        );
    }
    // A tool without a rate limit needs no shared state: served as before.
    for id in 200..206 {
        let info =
            request(id, "tools/call", json!({"name": "file_info", "arguments": {"path": "replica.txt"}}));
        let served = call(nginx, &info, &|| fleet.logs());
        assert_eq!(served["result"]["isError"], json!(false), "{served}\n{}", fleet.logs());
    }
    // Each refusal is logged by the replica that made it.
    for replica in &fleet.replicas {
        assert!(
            replica.stderr().contains("the shared state cannot be reached"),
            "replica {} logs the refusals:\n{}",
            replica.name,
            replica.stderr()
        );
    }

    // Redis back (empty: nothing was persisted): every replica reconnects by itself and admits
    // again. Until it has, a call may still be refused — only ever as `state_unavailable`.
    traffic.wait_for(|seen| seen.unavailable >= 1, "the client's calls to be refused", &fleet);
    fleet.redis.restart();
    for (n, replica) in fleet.replicas.iter().enumerate() {
        let deadline = Instant::now() + PATIENCE;
        let mut id = 1000 * (n as i64 + 1);
        loop {
            id += 1;
            let answer = call(replica.addr, &read_replica_txt(id), &|| fleet.logs());
            if text_of(&answer).as_deref() == Some(replica.name.as_str()) {
                break;
            }
            let refusal = error_of(&answer).map(|(code, data)| (code, data["reason"].clone()));
            assert_eq!(refusal, Some((-32000, json!("state_unavailable"))), "{answer}\n{}", fleet.logs());
            assert!(
                Instant::now() < deadline,
                "replica {} still refuses {PATIENCE:?} after Redis returned: {answer}\n{}",
                replica.name,
                fleet.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let after = tally((300..309).map(|id| fleet.which(id)));
    assert_eq!(after.len(), 3, "{after:?}");
    // The client that called throughout: each call ran or was refused as unavailable, and its
    // calls run again.
    let ran_before = traffic.seen().ran;
    traffic.wait_for(|seen| seen.ran > ran_before, "the client's calls to run again", &fleet);
    let seen = traffic.stop();
    assert!(
        seen.other.is_empty(),
        "neither ran nor refused as unavailable: {:?}\n{}",
        seen.other,
        fleet.logs()
    );
    // The admissions are in the Redis that came back.
    let window = fleet.redis.command(&["ZCARD", "teaagent:rate:read_file"]).expect("ZCARD");
    assert!(matches!(window, Resp::Integer(n) if n >= 9), "{window:?}");
}

/// The key before a rotation, and the one after ([`STATE_KEY`] is neither).
const OLD_KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const NEW_KEY: &str = "2222222222222222222222222222222222222222222222222222222222222222";

#[test]
fn a_rotated_state_key_is_accepted_as_the_previous_key_and_refused_without_it() {
    let redis = Redis::start();
    let workspace = Tree::new();
    let base = Setup {
        redis_url: Some(redis.url()),
        mode: Some("prompt"),
        root: Some(workspace.root()),
        ..Setup::default()
    };
    // A fleet in the middle of a rotation: a replica not yet restarted (the old key), one
    // restarted with the new key and the old one as the previous key, one after the grace
    // period (the new key only).
    let old = Replica::start("old", &Setup { state_key: Some(OLD_KEY), ..base.clone() });
    let rotating = Replica::start(
        "rotating",
        &Setup { state_key: Some(NEW_KEY), previous_key: Some(OLD_KEY), ..base.clone() },
    );
    let new = Replica::start("new", &Setup { state_key: Some(NEW_KEY), ..base });
    let all = [&old, &rotating, &new];
    let logs = || format!("Redis's log:\n{}\n{}", redis.log(), logs_of(all));

    // A state sealed with the old key: refused where only the new key is known (and nothing is
    // reserved by that refusal)...
    let call = create(1, "rotated.txt", "sealed with the old key");
    let state = ask(old.addr, &call, &logs);
    let answered = retry(&call, &state);
    refused_state(&self::call(new.addr, &answered, &logs), "not issued by this server", &logs);
    assert!(!workspace.path("ws/rotated.txt").exists());
    // ...accepted, once, where the old key is the previous one.
    ran(&self::call(rotating.addr, &answered, &logs), &logs);
    assert_eq!(
        std::fs::read_to_string(workspace.path("ws/rotated.txt")).expect("written"),
        "sealed with the old key"
    );
    // Its replay (on the file as it was when asked: the state binds the path's target).
    std::fs::remove_file(workspace.path("ws/rotated.txt")).expect("remove");
    refused_state(&self::call(old.addr, &answered, &logs), "used already", &logs);
    refused_state(&self::call(rotating.addr, &answered, &logs), "used already", &logs);
    assert!(!workspace.path("ws/rotated.txt").exists(), "a replay wrote the file again");

    // The rotating replica seals with the new key: the replicas on it accept its states, the
    // old one cannot.
    let call = create(2, "after.txt", "sealed with the new key");
    let state = ask(rotating.addr, &call, &logs);
    let answered = retry(&call, &state);
    refused_state(&self::call(old.addr, &answered, &logs), "not issued by this server", &logs);
    ran(&self::call(new.addr, &answered, &logs), &logs);
    assert_eq!(
        std::fs::read_to_string(workspace.path("ws/after.txt")).expect("written"),
        "sealed with the new key"
    );
}
