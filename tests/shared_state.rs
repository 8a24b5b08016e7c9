//! The fleet's shared state (`teaagent_core::fleet`) against a real Redis started by
//! the test: two rate limiters stand for two replicas sharing one Redis; the window is exact
//! across them under concurrency, refunds give the budget back fleet-wide, an unreachable Redis
//! refuses (or falls back to the replica's own window when configured), and the limiters recover
//! when Redis comes back.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use teaagent_core::fleet::{RedisOptions, RedisStore};
use teaagent_core::rate_limit::{RateLimiter, RateRefusal};
use teaagent_core::{CallToolResult, Handler, Registry, ToolDef};
use teaagent_tests::RawServer;
use teaagent_tests::services::{Redis, Resp};

use crate::common::http as raw;

fn registry(max: u32, window: Duration) -> Registry {
    let def = ToolDef::builder("limited")
        .description("A tool with a rate limit.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .rate_limit(max, window)
        .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
        .build();
    Registry::builder().tool(def).build().expect("registry")
}

fn replica(redis: &Redis, registry: &Registry, options: RedisOptions) -> Arc<RateLimiter> {
    let state = RedisStore::new(&redis.url(), options).expect("state");
    Arc::new(RateLimiter::new(registry, &HashMap::new(), Arc::new(state)))
}

fn options(prefix: &str) -> RedisOptions {
    RedisOptions { prefix: prefix.into(), timeout: Duration::from_secs(2), ..RedisOptions::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_admit_exactly_the_limit_together_and_refunds_count_for_both() {
    let redis = Redis::start();
    let registry = registry(10, Duration::from_secs(60));
    let (a, b) = (replica(&redis, &registry, options("t1:")), replica(&redis, &registry, options("t1:")));
    assert!(a.is_shared());
    let admitted = Arc::new(AtomicUsize::new(0));
    let mut calls = Vec::new();
    for i in 0..500 {
        let limiter = if i % 2 == 0 { Arc::clone(&a) } else { Arc::clone(&b) };
        let admitted = Arc::clone(&admitted);
        calls.push(tokio::spawn(async move {
            match limiter.admit("limited", None).await {
                Ok(admission) => {
                    admitted.fetch_add(1, Ordering::SeqCst);
                    std::mem::forget(admission); // kept: the call "ran"
                }
                Err(RateRefusal::Limited(limit, retry)) => {
                    assert_eq!(limit.max_calls, 10);
                    assert!(retry <= Duration::from_secs(60), "{retry:?}");
                }
                Err(RateRefusal::Unavailable(why)) => panic!("Redis is up: {why}"),
            }
        }));
    }
    for call in calls {
        call.await.expect("task");
    }
    assert_eq!(admitted.load(Ordering::SeqCst), 10, "exactly max_calls across both replicas");
    let window = redis.command(&["ZCARD", "t1:rate:limited"]).expect("ZCARD");
    assert_eq!(format!("{window:?}"), "Integer(10)", "one sorted set holds the fleet's window");

    // A refund on one replica frees a call for the other (the refund runs in the background).
    assert!(matches!(b.admit("limited", None).await, Err(RateRefusal::Limited(..))));
    let other = registry_with_room(&redis, &registry).await;
    other.refund();
    let mut freed = false;
    for _ in 0..100 {
        if let Ok(admission) = b.admit("limited", None).await {
            std::mem::forget(admission);
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "the refunded admission was given back to the fleet");

    // Another deployment (another prefix) has a window of its own.
    let c = replica(&redis, &registry, options("t2:"));
    assert!(c.admit("limited", None).await.is_ok());
}

/// An admission to refund: a third replica with a window that has room (a fresh prefix would not
/// share the window), so one of the fleet's admissions is taken out by hand and then admitted
/// again by a replica that will refund it.
async fn registry_with_room(redis: &Redis, registry: &Registry) -> teaagent_core::rate_limit::Admission {
    // Make room: remove the oldest admission from the window, then admit through a replica.
    let _ = redis.command(&["ZPOPMIN", "t1:rate:limited"]).expect("ZPOPMIN");
    let store = RedisStore::new(&redis.url(), options("t1:")).expect("state");
    let limiter = RateLimiter::new(registry, &HashMap::new(), Arc::new(store));
    limiter.admit("limited", None).await.expect("room for one")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_redis_refuses_or_falls_back_and_the_fleet_recovers() {
    let mut redis = Redis::start();
    let registry = registry(2, Duration::from_secs(60));
    let strict =
        replica(&redis, &registry, RedisOptions { timeout: Duration::from_millis(300), ..options("t3:") });
    let lenient = replica(
        &redis,
        &registry,
        RedisOptions { timeout: Duration::from_millis(300), fallback_local: true, ..options("t3:") },
    );
    std::mem::forget(strict.admit("limited", None).await.expect("up"));

    redis.kill();
    match strict.admit("limited", None).await {
        Err(RateRefusal::Unavailable(why)) => assert!(!why.is_empty()),
        other => panic!("expected a refusal while Redis is down, got {other:?}"),
    }
    // The fallback: this replica's own window (2 calls), then full.
    std::mem::forget(lenient.admit("limited", None).await.expect("local window"));
    std::mem::forget(lenient.admit("limited", None).await.expect("local window"));
    assert!(matches!(lenient.admit("limited", None).await, Err(RateRefusal::Limited(..))));

    // Redis is back (empty: nothing persisted): the shared window admits again.
    redis.restart();
    let mut back = false;
    for _ in 0..50 {
        match strict.admit("limited", None).await {
            Ok(admission) => {
                std::mem::forget(admission);
                back = true;
                break;
            }
            Err(RateRefusal::Unavailable(_)) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(back, "the replica reconnected to Redis");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_per_principal_when_configured() {
    let redis = Redis::start();
    let registry = registry(1, Duration::from_secs(60));
    let limiter = replica(&redis, &registry, RedisOptions { per_principal: true, ..options("t4:") });
    std::mem::forget(limiter.admit("limited", Some("token:alice")).await.expect("alice"));
    assert!(matches!(limiter.admit("limited", Some("token:alice")).await, Err(RateRefusal::Limited(..))));
    std::mem::forget(limiter.admit("limited", Some("token:bob")).await.expect("bob has a window of his own"));
}

/// A replica: its machine's workspace and home, and the server.
struct Replica {
    ws: teaagent_tests::Tree,
    _home: teaagent_tests::Tree,
    http: raw::Http,
}

/// Two `teaagent mcp serve --http` replicas of one fleet (each with its own workspace, as on two
/// machines): one Redis, one request-state key, `flags` on both.
fn fleet(redis: &Redis, flags: &[&str]) -> (Replica, Replica) {
    let key = "ab".repeat(32);
    let env = [("TEAAGENT_REDIS_URL", redis.url()), ("TEAAGENT_REQUEST_STATE_KEY", key)];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let replica = || {
        let (ws, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
        let http = raw::Http::teaagent(&ws, &home, flags, &env);
        Replica { ws, _home: home, http }
    };
    (replica(), replica())
}

fn write(id: i64, path: &str) -> serde_json::Value {
    raw::request(id, "tools/call", json!({"name": "write_file", "arguments": {"path": path, "content": "x"}}))
}

#[test]
fn a_counted_grant_counts_its_uses_across_the_fleet() {
    let redis = Redis::start();
    let (a, b) = fleet(&redis, &["--grant", "write_file;uses=3"]);
    let mut written = 0;
    let mut refused = Vec::new();
    for i in 0..6 {
        let replica = if i % 2 == 0 { &a } else { &b };
        let answer = replica.http.post(&write(i, &format!("f{i}.txt"))).json();
        match answer["result"]["isError"].as_bool() {
            Some(false) => written += 1,
            _ => refused.push(answer),
        }
    }
    assert_eq!(written, 3, "uses=3 for the whole fleet: {refused:?}");
    for answer in &refused {
        assert_eq!(answer["error"]["code"], -32001, "{answer}");
    }
    let files =
        (0..6).filter(|i| [&a, &b].iter().any(|r| r.ws.path(&format!("ws/f{i}.txt")).exists())).count();
    assert_eq!(files, 3);
}

#[test]
fn an_answer_for_this_session_holds_on_every_replica() {
    let redis = Redis::start();
    let (a, b) = fleet(&redis, &["--permission-mode", "prompt"]);
    let mut call = write(1, "s.txt");
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    // Asked on replica A, answered "for this session" on A.
    let asked = a.http.post(&call).json();
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let mut retry = call.clone();
    retry["params"]["requestState"] = asked["result"]["requestState"].clone();
    retry["params"]["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"decision": "session"}}});
    let done = a.http.post(&retry).json();
    assert_eq!(done["result"]["isError"], false, "{done}");
    // Replica B was never asked: the same call is approved there without a question (the answer
    // reaches Redis in the background, so allow it a moment).
    let mut again = call.clone();
    again["params"]["arguments"]["content"] = json!("y");
    let mut answered = None;
    for _ in 0..50 {
        let answer = b.http.post(&again).json();
        if answer["result"]["resultType"] == "complete" {
            answered = Some(answer);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let answered = answered.expect("replica B knows the session approval");
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    assert_eq!(std::fs::read_to_string(b.ws.path("ws/s.txt")).expect("written"), "y");
}

/// A `redis-server` that takes only TLS connections with a password, for [`rediss_and_a_password_from_the_environment`].
struct TlsRedis {
    child: std::process::Child,
    _dir: tempfile::TempDir,
    tls_port: u16,
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

fn tls_redis(password: &str) -> TlsRedis {
    let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys");
    let dir = tempfile::tempdir().expect("dir");
    let tls_port = free_port();
    let program = ["/usr/bin/redis-server", "/usr/sbin/redis-server"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("redis-server");
    let _installed = Redis::start(); // installs redis-server when missing, like every Redis test
    let child = std::process::Command::new(program)
        .args(["--port", "0", "--tls-port", &tls_port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--requirepass", password, "--tls-auth-clients", "no"])
        .arg("--tls-cert-file")
        .arg(keys.join("test-only-localhost-tls.pem"))
        .arg("--tls-key-file")
        .arg(keys.join("test-only-localhost-tls.key"))
        .arg("--tls-ca-cert-file")
        .arg(keys.join("test-only-ca.pem"))
        .arg("--dir")
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("redis-server");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", tls_port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "redis-server did not listen for TLS");
        std::thread::sleep(Duration::from_millis(50));
    }
    TlsRedis { child, _dir: dir, tls_port }
}

#[test]
fn rediss_and_a_password_from_the_environment() {
    let password = "s3cret/with:odd@chars";
    let redis = tls_redis(password);
    let keys = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys");
    let ca = keys.join("test-only-ca.pem");
    let url = format!("rediss://localhost:{}", redis.tls_port);
    let start = |password: &str| {
        let (ws, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
        let env = [
            ("TEAAGENT_REDIS_URL", url.as_str()),
            ("TEAAGENT_REDIS_PASSWORD", password),
            ("SSL_CERT_FILE", ca.to_str().expect("utf-8")),
        ];
        let http = raw::Http::teaagent(&ws, &home, &["--grant", "write_file;uses=1"], &env);
        Replica { ws, _home: home, http }
    };
    // The right password over TLS: the fleet's count works (one use, then none).
    let replica = start(password);
    let first = replica.http.post(&write(1, "one.txt")).json();
    assert_eq!(first["result"]["isError"], false, "{first}");
    let second = replica.http.post(&write(2, "two.txt")).json();
    assert_eq!(second["error"]["code"], -32001, "{second}");
    // A wrong password: the shared state cannot be used, so the counted grant is refused
    // (fail closed), and the password is not in the answer.
    let wrong = start("not-the-password");
    let refused = wrong.http.post(&write(3, "three.txt")).json();
    assert_eq!(refused["error"]["data"]["reason"], "state_unavailable", "{refused}");
    assert!(!refused.to_string().contains("not-the-password"), "{refused}");
    assert!(!wrong.ws.path("ws/three.txt").exists());
}

/// `teaagent mcp serve` on stdio with a rate-limited `write_file` (the user's own limit), the
/// user's `config` and a workspace whose `.teaagent/config.toml` says `workspace`.
fn serve_limited(
    user_config: &str,
    workspace_config: &str,
) -> (teaagent_tests::Tree, teaagent_tests::Tree, RawServer) {
    let (ws, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    home.write(
        "config.toml",
        &format!("[tools.write_file.rate_limit]\nmax_calls = 100\nwindow_secs = 60\n{user_config}"),
    );
    ws.write("ws/.teaagent/config.toml", workspace_config);
    let mut cmd = std::process::Command::new(teaagent_tests::Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--grant", "write_file", "--root"])
        .arg(ws.root())
        .env("TEAAGENT_HOME", home.base())
        .env_remove("TEAAGENT_REDIS_URL");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    (ws, home, server)
}

/// The keys of the Redis.
fn keys(redis: &Redis) -> Vec<String> {
    match redis.command(&["KEYS", "*"]).expect("KEYS") {
        Resp::Array(Some(keys)) => keys
            .into_iter()
            .map(|k| match k {
                Resp::Bulk(Some(k)) => String::from_utf8_lossy(&k).into_owned(),
                other => panic!("a key that is not a string: {other:?}"),
            })
            .collect(),
        other => panic!("KEYS answered {other:?}"),
    }
}

/// A cloned repository's configuration cannot name the Redis that keeps the fleet's limits (its
/// owner's Redis would then decide them, and learn every call): its `[state]` is ignored with a
/// warning, and the server keeps its own windows. The same section in the user's own file is
/// used (so this test sees it when it is).
#[test]
fn a_workspace_cannot_name_the_shared_state() {
    let redis = Redis::start();
    let section = format!("[state]\nredis_url = \"{}\"\nprefix = \"repo:\"\n", redis.url());

    let (ws, _home, mut server) = serve_limited("", &section);
    let written = server
        .request("tools/call", json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}));
    assert_eq!(written["result"]["isError"], false, "{written}");
    assert!(ws.path("ws/a.txt").exists());
    let warned = server.stderr_once(|s| s.contains("ignored `[state]`"));
    assert!(warned.contains("ignored `[state]`"), "{warned}");
    server.finish();
    assert_eq!(keys(&redis), Vec::<String>::new(), "the workspace's Redis was used");

    // The user's own file: the limit's window is kept in that Redis.
    let (_ws, _home, mut server) = serve_limited(&section, "");
    let written = server
        .request("tools/call", json!({"name": "write_file", "arguments": {"path": "b.txt", "content": "x"}}));
    assert_eq!(written["result"]["isError"], false, "{written}");
    server.finish();
    let kept = keys(&redis);
    assert!(kept.iter().any(|k| k.starts_with("repo:")), "{kept:?}");
}
