//! The life of `teaagent mcp serve --http`: stdout stays empty and stdin is not the
//! protocol; stopping ends open streams, and commands never see the server's secrets; a call still
//! running when the server stops, or a body still arriving, is cut off after the grace period;
//! `/readyz` waits for the external servers behind the gateway.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::http as raw;
use crate::common::processes;
use raw::{Http, Streaming, in_session, modern_headers, open_session, request};

#[test]
fn stdout_stays_empty_over_http() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = Http::teaagent(&tree, &home, &[], &[]);
    let r = server.post(&request(
        1,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "src/a.txt"}}),
    ));
    assert_eq!(r.status, 200);
    let (status, _) = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}\n{}", server.stderr());
    let mut out = String::new();
    server.child.stdout.take().expect("stdout").read_to_string(&mut out).expect("read");
    assert!(out.is_empty(), "nothing on stdout over HTTP: {out}");
}

#[test]
fn over_http_stdin_is_not_the_protocol() {
    let (tree, home) = (Tree::new(), Tree::new());
    // An `initialize` already waiting on stdin (the pipe is written before teaagent runs): over
    // HTTP it is not answered: stdin is not the protocol there.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}"#;
    let child = Command::new("sh")
        .arg("-c")
        .arg(r#"mkfifo "$2"; { printf '%s\n' "$1"; sleep 5; } > "$2" & exec "$3" mcp serve --http 127.0.0.1:0 --root "$4" < "$2""#)
        .arg("sh")
        .arg(init)
        .arg(home.path("stdin"))
        .arg(Bin::Teaagent.path())
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    std::thread::sleep(Duration::from_millis(800));
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let out = child.wait_with_output().expect("exit");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn stopping_ends_open_streams_and_commands_never_see_the_servers_secrets() {
    let (tree, home) = (Tree::new(), Tree::new());
    let key = "ab".repeat(32);
    let mut server = Http::teaagent(
        &tree,
        &home,
        &["--permission-mode", "danger-full-access"],
        &[("TEAAGENT_HTTP_TOKENS", "ops:ops-0123456789abcdef"), ("TEAAGENT_REQUEST_STATE_KEY", &key)],
    );
    let auth = [("Authorization", "Bearer ops-0123456789abcdef")];
    let session = open_session(&server, &auth, json!({}));
    let env = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shell_exec", "arguments": {"command": "env"}}});
    let out = in_session(&server, &session, &env, &auth);
    let text = out.json()["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("PATH="), "{out:?}");
    assert!(
        !text.contains("ops-0123456789abcdef") && !text.contains(&key),
        "secrets reached a command: {text}"
    );
    // An open notification stream does not hold a stopping server.
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .write_all(
            format!(
                "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nAuthorization: Bearer ops-0123456789abcdef\r\n\r\n",
                server.addr
            )
            .as_bytes(),
        )
        .expect("get");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("status");
    assert_eq!(&head, b"HTTP/1.1 200");
    let (status, _) = server.terminate(Duration::from_secs(8));
    assert!(status.success(), "{status:?}\n{}", server.stderr());
}

/// Calls still running when the server is told to stop have the grace period (3 s), then are
/// cancelled, in either era: the server exits, and the commands they started are gone (a command
/// does not watch the call's cancellation token: its call's run must end).
#[test]
fn calls_still_running_after_the_grace_period_are_cut_off_in_either_era() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = Http::teaagent(&tree, &home, &["--permission-mode", "danger-full-access"], &[]);
    // Unique to this test process: another test's commands never match them. One call of each
    // era: a 2026-07-28 request, and one in a legacy session.
    let modern = format!("sleep 241.{}", std::process::id() % 1000);
    let legacy = format!("sleep 242.{}", std::process::id() % 1000);
    let call = request(1, "tools/call", json!({"name": "shell_exec", "arguments": {"command": modern}}));
    let headers = modern_headers(&call);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let _modern = Streaming::post(&server, &headers, &call);
    let session = open_session(&server, &[], json!({}));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "shell_exec", "arguments": {"command": legacy}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let _legacy = Streaming::post(&server, &headers, &call);
    let deadline = Instant::now() + Duration::from_secs(20);
    for marker in [&modern, &legacy] {
        while processes::with_marker(marker).is_empty() {
            assert!(Instant::now() < deadline, "`{marker}` never started:\n{}", server.stderr());
            std::thread::sleep(Duration::from_millis(25));
        }
    }
    // The grace period (3 s), then the calls are cut off: not waited for until they end.
    let (status, took) = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(took >= Duration::from_secs(2), "the calls had their grace period: {took:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    for marker in [&modern, &legacy] {
        while !processes::with_marker(marker).is_empty() {
            assert!(Instant::now() < deadline, "left behind: {:?}", processes::with_marker(marker));
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// A client that never finishes sending its request (its headers in, its body not all there)
/// does not hold a stopping server past the grace period either: the server exits, without
/// waiting for the body's own timeout (30 s).
#[test]
fn a_body_that_never_arrives_does_not_hold_a_stopping_server() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = Http::teaagent(&tree, &home, &[], &[]);
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
        server.addr
    );
    stream.write_all(head.as_bytes()).expect("send");
    std::thread::sleep(Duration::from_millis(300));
    // Not the body's own timeout (30 s): the grace period (3 s), then the connection is closed.
    let (status, _) = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status:?}\n{}", server.stderr());
}

/// A call still waiting on a thread of the blocking pool when the server stops (here a write's
/// attempt at the workspace lock, waiting for the lock registry's file lock, which this test
/// holds) does not hold the server either: the call is cut off after the grace period, and the
/// process exits without waiting for the thread that still waits.
#[test]
fn a_call_waiting_for_a_lock_does_not_hold_a_stopping_server() {
    let (tree, home) = (Tree::new(), Tree::new());
    // Another server holds the workspace lock, so each write asks for it again, on a thread of
    // the blocking pool.
    let mut holder = Command::new(Bin::Teaagent.path());
    holder.args(["mcp", "serve", "--permission-mode", "allow", "--root"]).arg(tree.root());
    holder.env("TEAAGENT_HOME", home.base());
    let mut holder = RawServer::start(holder);
    holder.initialize("2025-06-18");
    // A lock held by another process is waited for up to a minute: longer than this test.
    let mut server =
        Http::teaagent(&tree, &home, &["--permission-mode", "allow"], &[("TEAAGENT_LOCK_WAIT", "60s")]);
    // Answered: the server has settled the lock (not its own) and handles the signals.
    assert_eq!(server.post(&request(1, "tools/list", json!({}))).status, 200);
    let registry = std::fs::File::create(home.base().join("workspace_registry.lock")).expect("lock file");
    rustix::fs::flock(&registry, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    let call = request(
        2,
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}),
    );
    let headers = modern_headers(&call);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let _call = Streaming::post(&server, &headers, &call);
    processes::wait_until_waiting_for_a_lock(|| server.stderr());
    let (status, took) = server.terminate(Duration::from_secs(15));
    assert!(status.success(), "{status:?} after {took:?}\n{}", server.stderr());
    assert!(took >= Duration::from_secs(2), "the call had its grace period: {took:?}");
    assert!(!tree.path("ws/a.txt").exists(), "the write never ran");
    drop(registry);
    holder.finish();
}

/// Hardening round 3, "Truthful readiness": `/readyz` says ready only once the external servers
/// behind the gateway are up (`503` naming them while they start), and `/healthz` answers all
/// the while.
#[test]
fn readyz_waits_for_the_external_servers() {
    let (tree, home) = (Tree::new(), Tree::new());
    let rogue = teaagent_tests::Bin::Rogue.path().display().to_string();
    home.write(
        "config.toml",
        &format!(
            "[mcp_servers.slowpoke]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"sleep 2; exec {rogue}\"]\n"
        ),
    );
    let allowed = Command::new(teaagent_tests::Bin::Teaagent.path())
        .args(["mcp", "trust", "allow", "slowpoke"])
        .env("TEAAGENT_HOME", home.base())
        .stdin(Stdio::null())
        .output()
        .expect("allow");
    assert!(allowed.status.success(), "{}", String::from_utf8_lossy(&allowed.stderr));
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let first = server.exchange("GET", "/readyz", &[], b"");
    assert_eq!(first.status, 503, "{first:?}");
    assert!(first.body.contains("slowpoke"), "{first:?}");
    assert_eq!(server.exchange("GET", "/healthz", &[], b"").status, 200);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = server.exchange("GET", "/readyz", &[], b"");
        if ready.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "never ready: {ready:?}\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
}
