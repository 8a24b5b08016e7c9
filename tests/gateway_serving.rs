//! The gateway end to end: the real `teaagent` binary starts real external servers —
//! the project's `echo` example and `rogue`, a server written to misbehave — and serves their
//! tools under its policy to a real client (rmcp) and to raw wire tests (the set-up:
//! `common/gateway_setup.rs`).
//!
//! Here, serving an allowed server: its tools are listed (`SERVER__tool`, with the pinned text)
//! and callable; progress is passed on, all of it before the result; the child gets only the
//! environment its configuration names; its stdout noise never reaches teaagent's stdout; its
//! stderr comes out prefixed and escaped; an external error code is not mistaken for teaagent's;
//! unknown content blocks are named, not passed raw; cancellation reaches the external server;
//! calls in flight together reach it whole and in order, however large.

use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::Bin;

use crate::common::client;
use crate::common::gateway_setup;
use gateway_setup::{Setup, call, text_of, wait_until};

#[test]
fn an_allowed_server_is_served_under_teaagents_names_with_only_its_own_environment() {
    let setup = Setup::new("");
    let shown = setup.allow("rogue");
    assert!(shown.contains("tool echo") && shown.contains("Echo the text back."), "{shown}");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let echo = tools.iter().find(|t| t["name"] == "rogue__echo").expect("rogue__echo listed");
    assert_eq!(echo["description"], "Echo the text back.");
    // The server's readOnlyHint is not believed: not read-only, open-world, destructive at high.
    assert_eq!(echo["annotations"]["readOnlyHint"], false, "{echo}");
    assert_eq!(echo["annotations"]["openWorldHint"], true, "{echo}");
    assert_eq!(echo["annotations"]["destructiveHint"], true, "{echo}");
    assert!(tools.iter().any(|t| t["name"] == "read_file"), "the built-in tools stay");

    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "hi"}))), "echo: hi");
    // Validated against the pinned schema before it leaves teaagent.
    let bad = call(&mut server, "rogue__echo", json!({"text": 7}));
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(setup.marked("started").len() == 1, "started once");

    let env: Value =
        serde_json::from_str(&text_of(&call(&mut server, "rogue__env", json!({})))).expect("env json");
    // Only the configured variables, the temporary directory of its sandbox, and (where there
    // is no cgroup of its own to contain it) the token that marks its processes.
    let names: Vec<&String> = env
        .as_object()
        .expect("env")
        .keys()
        .filter(|k| !k.starts_with("TEMP") && !k.starts_with("TMP") && *k != "TEAAGENT_CONTAINED")
        .collect();
    assert_eq!(names, ["ROGUE_TOOLS", "ROGUE_VISIBLE"], "only the configured variables: {env}");
    let tmp = env["TMPDIR"].as_str().unwrap_or_else(|| panic!("a TMPDIR of its own: {env}"));
    assert!(
        tmp.contains("teaagent-shell-") && env["TMP"] == env["TMPDIR"] && env["TEMP"] == env["TMPDIR"],
        "{env}"
    );

    // An error code of its own is an isError result, never teaagent's -32001.
    let failed = call(&mut server, "rogue__fail", json!({}));
    assert!(failed.get("error").is_none(), "{failed}");
    assert_eq!(failed["result"]["isError"], true);
    assert!(text_of(&failed).contains("answered error -32001: rogue refuses"), "{failed}");
    let blocks = call(&mut server, "rogue__blocks", json!({}));
    assert_eq!(blocks["result"]["content"][0]["type"], "image", "{blocks}");
    assert_eq!(blocks["result"]["content"][1]["text"], "[a content block of type `hologram` was left out]");

    // Progress is passed on under the client's own token.
    server.send_json(&json!({"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": {
        "name": "rogue__slow", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}}}));
    let done = server.response(&json!("p"));
    assert_eq!(text_of(&done), "done after 3 steps");
    let progress: Vec<Value> = server
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "tok"));
    assert_eq!(progress[2]["params"]["message"], "step 3");

    let stderr = server.stderr_once(|s| s.contains("rogue paints"));
    assert!(stderr.contains("[rogue] rogue started"), "{stderr}");
    assert!(stderr.contains("[rogue] rogue paints \\e[31mred"), "escaped: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "no raw escape reaches the terminal");
    assert!(stderr.contains("not JSON"), "the stdout noise is reported: {stderr}");
    // `finish` fails on any stdout line that is not JSON-RPC: the child's noise stayed out.
    server.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_client_calls_the_example_server_through_teaagent() {
    let setup =
        Setup::new(&format!("[mcp_servers.hello]\ncommand = {:?}\n", Bin::Echo.path().display().to_string()));
    setup.allow("hello");
    let root = setup.tree.root();
    let home = setup.home.base();
    let (client, _events) = client::connect(
        Bin::Teaagent.path(),
        &["mcp", "serve", "--root", root.to_str().expect("utf-8"), "--grant", "hello__*"],
        &[("TEAAGENT_HOME", home.to_str().expect("utf-8"))],
        client::version("2025-11-25"),
    )
    .await;
    let tools = client::timely(client.list_all_tools()).await.expect("tools");
    let echo = tools.iter().find(|t| t.name == "hello__echo").expect("the example's tool, renamed");
    assert!(echo.description.as_deref().is_some_and(|d| d.contains("Echo")), "{echo:?}");
    // rogue is declared but not allowed: not there.
    assert!(!tools.iter().any(|t| t.name.starts_with("rogue__")));
    let result = client::timely(
        client
            .call_tool(rmcp::model::CallToolRequestParams::new("hello__echo").with_arguments(
                json!({"text": "through the gateway"}).as_object().cloned().expect("object"),
            )),
    )
    .await
    .expect("the call");
    let text = serde_json::to_value(&result).expect("json")["content"][0]["text"].clone();
    assert_eq!(text, "through the gateway");
    assert!(setup.marked("started").is_empty(), "rogue was never started");
    client.cancel().await.expect("close");
}

#[test]
fn cancellation_reaches_the_external_server() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    // Started and verified first, so the slow call surely reached it.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "up"}))), "echo: up");
    server.send_json(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "rogue__slow", "arguments": {}}}));
    std::thread::sleep(Duration::from_millis(300));
    server.notify("notifications/cancelled", json!({"requestId": 41, "reason": "user"}));
    wait_until("the external server saw the cancellation", Duration::from_secs(10), || {
        std::fs::read_dir(&setup.markers)
            .expect("markers")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("cancelled-"))
    });
    // No response for a cancelled request; the server stays usable.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "still here"}))), "echo: still here");
    assert!(!server.drain(Duration::from_millis(100)).iter().any(|m| m["id"] == 41));
    server.finish();
}

/// Hardening round 3, "complete progress": progress an external server sends right before its
/// reply reaches the client, and before the result.
#[test]
fn progress_sent_before_a_reply_reaches_the_client_before_the_result() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    for n in 0..40 {
        let id = format!("p{n}");
        server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "rogue__slow", "arguments": {"steps": 3, "pause_ms": 0}, "_meta": {"progressToken": id}}}));
        let mut seen = 0;
        loop {
            let message = server.recv();
            if message["method"] == "notifications/progress"
                && message["params"]["progressToken"] == json!(id)
            {
                seen += 1;
            } else if message["id"] == json!(id) {
                assert_eq!(text_of(&message), "done after 3 steps");
                break;
            }
        }
        assert_eq!(seen, 3, "call {n}: the result came before all its progress");
    }
    server.finish();
}

#[test]
fn calls_in_flight_together_reach_the_server_whole_and_in_order_however_large() {
    // Arguments larger than a pipe holds (64 KiB on Linux) cannot be written at once: what does
    // not fit waits, and the calls sent after it wait behind it.
    let setup = Setup::new("max_result_bytes = 4000000\n");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let texts: Vec<String> = (0..12u8)
        .map(|i| {
            let size = if i % 3 == 0 { 3_000_000 } else { 10 + usize::from(i) };
            char::from(b'a' + i).to_string().repeat(size)
        })
        .collect();
    for (i, text) in texts.iter().enumerate() {
        server.send_json(&json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
            "params": {"name": "rogue__echo", "arguments": {"text": text}}}));
    }
    for (i, text) in texts.iter().enumerate() {
        let answered = server.response(&json!(100 + i));
        let echoed = answered["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            echoed.len() == text.len() + 6 && echoed == format!("echo: {text}"),
            "call {i}: {} bytes back for {} sent",
            echoed.len(),
            text.len()
        );
    }
    server.finish();
}

/// Replies are read on the thread that serves the calls once calls come (the reader moves
/// there, and back when the server's runtime ends): a server that made calls through the
/// gateway still stops cleanly, its external server stopped once and never taken for crashed.
#[test]
fn a_server_that_called_through_the_gateway_stops_without_restarting_it() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    for i in 0..5 {
        assert_eq!(
            text_of(&call(&mut server, "rogue__echo", json!({"text": i.to_string()}))),
            format!("echo: {i}")
        );
    }
    server.close_stdin();
    let status = server.wait(Duration::from_secs(20));
    assert!(status.success(), "exit status {status}; stderr:\n{}", server.stderr());
    let stderr = server.stderr();
    assert!(!stderr.contains("exited") && !stderr.contains("restart"), "{stderr}");
    assert!(!stderr.contains("cannot read") && !stderr.contains("cannot move"), "{stderr}");
    assert_eq!(setup.marked("started").len(), 1, "started once: {stderr}");
}
