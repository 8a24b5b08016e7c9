//! A blocking async tool, against the real `author` binary (the README's
//! `run_stdio()` shape: a single-threaded runtime): the first call that blocks is named on stderr
//! with the fix, and its later calls run on a thread of their own, so `ping` is answered while
//! they sleep.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::wire::WAIT;
use teaagent_tests::{Bin, RawServer, Tree};

fn author(home: &Tree) -> RawServer {
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG").env_remove("AUTHOR_MODE");
    RawServer::start(cmd)
}

/// Waits (bounded) until `path` exists.
fn wait_for(path: &std::path::Path) {
    let deadline = Instant::now() + WAIT;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The ids of the next `n` responses, in the order they arrived.
fn next_ids(server: &mut RawServer, n: usize) -> Vec<Value> {
    let mut ids = Vec::new();
    while ids.len() < n {
        let message = server.recv();
        if message.get("id").is_some() {
            ids.push(message["id"].clone());
        }
    }
    ids
}

#[test]
fn a_blocking_async_tool_is_named_once_and_then_isolated_from_ping() {
    let home = Tree::new();
    let work = Tree::new();
    let mut server = author(&home);
    server.initialize("2025-06-18");

    // First call: it blocks the server's only thread (unavoidable: nothing can take a thread
    // back from code that does not yield); a ping sent while it runs waits for it.
    let first = work.path("first");
    server.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "nap", "arguments": {"ms": 800, "started": first}}}));
    wait_for(&first);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(next_ids(&mut server, 2), [json!(1), json!(2)], "the first stall delays ping");

    let stderr = server.stderr_once(|s| s.contains("`nap` blocked the server's thread"));
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains("`nap` blocked the server's thread"))
        .unwrap_or_else(|| panic!("no warning naming the tool:\n{stderr}"));
    for fix in ["plain `fn`", "tokio::task::spawn_blocking", "tokio::time::sleep"] {
        assert!(warning.contains(fix), "the warning names the fix {fix}: {warning}");
    }

    // Later calls run isolated: ping, sent while the call sleeps, is answered first.
    let second = work.path("second");
    server.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "nap", "arguments": {"ms": 1500, "started": second}}}));
    wait_for(&second);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(next_ids(&mut server, 2), [json!(4), json!(3)], "ping is no longer delayed");

    // Its result is intact, and the warning was given once.
    let called = server.request("tools/call", json!({"name": "nap", "arguments": {"ms": 1}}));
    assert_eq!(called["result"]["content"][0]["text"], "slept 1 ms", "{called}");
    let stderr = server.stderr_once(|e| e.contains("`nap` blocked the server's thread"));
    assert_eq!(stderr.matches("`nap` blocked the server's thread").count(), 1, "{stderr}");
    server.finish();
}

#[test]
fn tools_that_do_not_block_are_not_named() {
    let home = Tree::new();
    let mut server = author(&home);
    server.initialize("2025-06-18");
    for _ in 0..20 {
        let called = server.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
        if called.get("error").is_some() {
            break; // echo's rate limit (3 per minute): enough calls were made
        }
    }
    let called = server.request("tools/call", json!({"name": "nap", "arguments": {"ms": 1}}));
    assert_eq!(called["result"]["content"][0]["text"], "slept 1 ms", "{called}");
    let stderr = server.stderr();
    assert!(!stderr.contains("blocked the server's thread"), "{stderr}");
    server.finish();
}

/// A prompt's handler is watched as a tool is: the first `prompts/get` that blocks is named on
/// stderr, and its later runs are on a thread of their own, so `ping` is answered while they
/// sleep.
#[test]
fn a_blocking_prompt_handler_is_named_once_and_then_isolated_from_ping() {
    let home = Tree::new();
    let work = Tree::new();
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG").env("AUTHOR_MODE", "blocking-prompt");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let get = |id: i64, ms: u64, started: &std::path::Path| {
        json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get",
            "params": {"name": "nap", "arguments": {"ms": ms.to_string(), "started": started}}})
    };

    let first = work.path("first");
    server.send_json(&get(1, 800, &first));
    wait_for(&first);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(next_ids(&mut server, 2), [json!(1), json!(2)], "the first stall delays ping");
    let named = "the handler of prompt `nap` blocked the server's thread";
    let stderr = server.stderr_once(|s| s.contains(named));
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains(named))
        .unwrap_or_else(|| panic!("no warning naming the prompt:\n{stderr}"));
    assert!(warning.contains("tokio::task::spawn_blocking"), "the warning names the fix: {warning}");

    let second = work.path("second");
    server.send_json(&get(3, 1500, &second));
    wait_for(&second);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(next_ids(&mut server, 2), [json!(4), json!(3)], "ping is no longer delayed");

    let got = server.request("prompts/get", json!({"name": "nap", "arguments": {"ms": "1"}}));
    assert_eq!(got["result"]["messages"][0]["content"]["text"], "slept 1 ms", "{got}");
    assert_eq!(server.stderr().matches(named).count(), 1, "{}", server.stderr());
    server.finish();
}
