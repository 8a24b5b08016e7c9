//! Tasks (`io.modelcontextprotocol/tasks`, protocol 2026-07-28) against the real `teaagent mcp
//! serve`: `shell_exec` runs as a task for a client that declares tasks and as a plain call for
//! one that does not; a task is polled to its result, and a task cancelled midway leaves none of
//! its processes behind. And a tool whose body goes on as a task (`task_start = "body"`, in the
//! conformance fixture): its question is a plain round trip, the retry becomes the task. One
//! caller's tasks that are not over are bounded (32), in the fixture too. (The
//! conformance suite's `tasks-*` scenarios run against the fixture in tests/conformance.rs.)

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::http;
use http::Http;

/// The modern `_meta`, declaring tasks or not.
fn meta(tasks: bool) -> Value {
    let capabilities = match tasks {
        true => json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        false => json!({}),
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"}
    })
}

fn request(server: &mut RawServer, method: &str, mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    server.request(method, params)
}

/// `teaagent mcp serve` on a fresh workspace that runs commands without asking.
fn serve(tree: &Tree, home: &Tree) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base());
    RawServer::start(cmd)
}

/// Polls with `get` (a `tasks/get`) until the task is over; its last answer.
fn settled_by(mut get: impl FnMut() -> Value) -> Value {
    let start = Instant::now();
    loop {
        let got = get();
        let status = got["result"]["status"].as_str().unwrap_or_default().to_owned();
        if matches!(status.as_str(), "completed" | "failed" | "cancelled") {
            return got["result"].clone();
        }
        assert!(status == "working", "{got}");
        assert!(start.elapsed() < Duration::from_secs(20), "still {status}: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Polls `tasks/get` over stdio until the task is over; its last answer.
fn settled(server: &mut RawServer, task: &str) -> Value {
    settled_by(|| request(server, "tasks/get", json!({"taskId": task}), true))
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet: it runs nothing).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn shell_exec_is_a_task_for_a_client_with_tasks_and_a_plain_call_without() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(&tree, &home);

    let discover = request(&mut server, "server/discover", json!({}), false);
    assert_eq!(discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"], json!({}));

    // Without the extension: answered when the command is done, as always.
    let plain = request(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": "echo plain-call"}}),
        false,
    );
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert!(
        plain["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("plain-call")),
        "{plain}"
    );
    // Nor may such a client poll.
    let refused = request(&mut server, "tasks/get", json!({"taskId": "x"}), false);
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    // With it: a handle at once, then the result by polling.
    let started = Instant::now();
    let created = request(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": "sleep 1; echo task-done"}}),
        true,
    );
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert!(started.elapsed() < Duration::from_secs(1), "the call waited for the command: {created}");
    assert!(result.get("content").is_none() && result["ttlMs"].as_u64().is_some(), "{created}");
    let task = result["taskId"].as_str().expect("taskId").to_owned();
    let working = request(&mut server, "tasks/get", json!({"taskId": task}), true);
    assert_eq!(working["result"]["status"], "working", "{working}");
    let done = settled(&mut server, &task);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(done["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("task-done")), "{done}");
    // Fetched again: the same result (kept until its time to live passes).
    let again = request(&mut server, "tasks/get", json!({"taskId": task}), true);
    assert_eq!(again["result"]["result"], done["result"]);

    let unknown = request(&mut server, "tasks/get", json!({"taskId": "no-such-task"}), true);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    server.finish();
}

#[test]
fn a_task_cancelled_midway_leaves_no_process_behind() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(&tree, &home);
    let pids = tree.root().join("pids");
    let command =
        format!("sleep 300 & echo $! > {0}.tmp; echo $$ >> {0}.tmp; mv {0}.tmp {0}; wait", pids.display());
    let created = request(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": command}}),
        true,
    );
    let task = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}")).to_owned();
    let start = Instant::now();
    let pids: Vec<u32> = loop {
        if let Ok(text) = std::fs::read_to_string(&pids) {
            break text.lines().map(|l| l.trim().parse().expect("a pid")).collect();
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the command did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| !gone(p)), "both run before the cancel");

    let ack = request(&mut server, "tasks/cancel", json!({"taskId": task}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none(), "an empty acknowledgement: {ack}");
    let over = settled(&mut server, &task);
    assert_eq!(over["status"], "cancelled", "{over}");
    assert!(over.get("result").is_none(), "{over}");
    let start = Instant::now();
    while !pids.iter().all(|&p| gone(p)) {
        assert!(start.elapsed() < Duration::from_secs(10), "processes survived the cancel: {pids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Cancelling what is over changes nothing.
    let again = request(&mut server, "tasks/cancel", json!({"taskId": task}), true);
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    assert_eq!(settled(&mut server, &task)["status"], "cancelled");
    server.finish();
}

/// `params` of a legacy request (no `_meta`).
fn legacy_call(server: &mut RawServer, method: &str, params: Value) -> Value {
    server.request(method, params)
}

#[test]
fn protocol_2025_11_25_runs_shell_exec_as_a_task_when_the_client_asks() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(&tree, &home);
    let init = server.initialize("2025-11-25");
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let list = legacy_call(&mut server, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let execution = |name: &str| tools.iter().find(|t| t["name"] == name).map(|t| t["execution"].clone());
    assert_eq!(execution("shell_exec"), Some(json!({"taskSupport": "optional"})));
    assert_eq!(execution("read_file"), Some(Value::Null), "a tool that never runs as a task says nothing");

    // Asked without `task`: a plain call, as before.
    let plain = legacy_call(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": "echo plain"}}),
    );
    assert!(plain["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("plain")), "{plain}");
    // A tool that never runs as a task refuses to.
    let refused = legacy_call(
        &mut server,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "x"}, "task": {"ttl": 1000}}),
    );
    assert_eq!(refused["error"]["code"], -32601, "{refused}");

    let created = legacy_call(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": "sleep 1; echo legacy-done"}, "task": {"ttl": 60000}}),
    );
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert!(task["ttl"].as_u64().is_some() && task.get("ttlMs").is_none(), "{created}");
    let id = task["taskId"].as_str().expect("taskId").to_owned();
    let got = legacy_call(&mut server, "tasks/get", json!({"taskId": id}));
    assert_eq!(
        (got["result"]["taskId"].as_str(), got["result"].get("result")),
        (Some(id.as_str()), None),
        "{got}"
    );
    let listed = legacy_call(&mut server, "tasks/list", json!({}));
    assert!(
        listed["result"]["tasks"].as_array().is_some_and(|t| t.iter().any(|t| t["taskId"] == id.as_str())),
        "{listed}"
    );
    // `tasks/result` waits for the end and answers what the call would have.
    let result = legacy_call(&mut server, "tasks/result", json!({"taskId": id}));
    assert!(
        result["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("legacy-done")),
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str(),
        "{result}"
    );
    let after = legacy_call(&mut server, "tasks/get", json!({"taskId": id}));
    assert_eq!(after["result"]["status"], "completed", "{after}");
    // And the client was told, unasked, when it was over.
    let told = server.drain(Duration::from_millis(200));
    let status = told
        .iter()
        .find(|m| m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == id.as_str());
    assert_eq!(status.map(|m| &m["params"]["status"]), Some(&json!("completed")), "{told:?}");
    let late = legacy_call(&mut server, "tasks/cancel", json!({"taskId": id}));
    assert_eq!(late["error"]["code"], -32602, "a task that is over cannot be cancelled: {late}");

    // Cancelled midway: the answer is the task, now cancelled.
    let long = legacy_call(
        &mut server,
        "tools/call",
        json!({"name": "shell_exec", "arguments": {"command": "sleep 300"}, "task": {}}),
    );
    let long_id = long["result"]["task"]["taskId"].as_str().expect("taskId").to_owned();
    let cancelled = legacy_call(&mut server, "tasks/cancel", json!({"taskId": long_id}));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let unknown = legacy_call(&mut server, "tasks/get", json!({"taskId": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    server.finish();
}

/// The approval is decided before the task exists: in `prompt` mode `shell_exec` needs one,
/// so the first answer is the question (no task yet), a refusal creates none, and the approved
/// retry is answered with the task.
#[test]
fn the_approval_is_asked_before_the_task_exists() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    let with_form = |mut params: Value| {
        params["_meta"] = meta(true);
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
        params
    };
    let marker = tree.root().join("ran");
    let call = with_form(
        json!({"name": "shell_exec", "arguments": {"command": format!("touch {}; echo approved-run", marker.display())}}),
    );
    let asked = server.request("tools/call", call.clone());
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(asked["result"].get("taskId").is_none(), "{asked}");
    assert!(asked["result"]["inputRequests"]["approval"].is_object(), "{asked}");
    let state = asked["result"]["requestState"].clone();

    // Declined: refused, no task, nothing ran.
    let mut declined = call.clone();
    declined["requestState"] = state.clone();
    declined["inputResponses"] = json!({"approval": {"action": "decline"}});
    let refused = server.request("tools/call", declined);
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert!(!marker.exists(), "nothing ran");

    // Asked again and approved: now the task.
    let asked = server.request("tools/call", call.clone());
    let mut approved = call;
    approved["requestState"] = asked["result"]["requestState"].clone();
    approved["inputResponses"] = json!({"approval": {"action": "accept", "content": {"decision": "once"}}});
    let created = server.request("tools/call", approved);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().expect("taskId").to_owned();
    let done = settled(&mut server, &task);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        done["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("approved-run")),
        "{done}"
    );
    assert!(marker.exists());
    server.finish();
}

/// One modern request to the conformance suite's server over Streamable HTTP, from a client
/// that can be asked questions (elicitation), with tasks or not; its JSON-RPC answer (the last
/// event of a stream).
fn post(server: &Http, method: &str, mut params: Value, tasks: bool) -> Value {
    params["_meta"] = meta(tasks);
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = http::modern_headers(&message);
    if let Some(task) = message["params"]["taskId"].as_str() {
        headers.push(("Mcp-Name".to_owned(), task.to_owned()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // (A refusal comes with its HTTP status, e.g. 400 for `-32021`: the body says which.)
    let reply = server.exchange("POST", "/mcp", &headers, message.to_string().as_bytes());
    match reply.header("content-type") {
        Some(t) if t.starts_with("text/event-stream") => reply.events().pop().expect("an answer"),
        _ => reply.json(),
    }
}

/// Polls `tasks/get` over HTTP until the task is over; its last answer.
fn settled_over_http(server: &Http, task: &str) -> Value {
    settled_by(|| post(server, "tasks/get", json!({"taskId": task}), true))
}

/// `test_tool_with_task` with `arguments`: its first round (a plain `input_required` with the
/// name question), then the retry with the name; the retry's answer.
fn asked_then_retried(server: &Http, arguments: Value) -> Value {
    let call = json!({"name": "test_tool_with_task", "arguments": arguments});
    let first = post(server, "tools/call", call.clone(), true);
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "a plain round trip first: {first}");
    assert!(result.get("taskId").is_none(), "no task yet: {first}");
    assert_eq!(result["inputRequests"]["name"]["method"], "elicitation/create", "{first}");
    let mut retry = call;
    retry["inputResponses"] = json!({"name": {"action": "accept", "content": {"name": "Grace"}}});
    if let Some(state) = result.get("requestState") {
        retry["requestState"] = state.clone();
    }
    post(server, "tools/call", retry, true)
}

#[test]
fn a_tool_asks_in_a_plain_round_trip_then_goes_on_as_a_task() {
    let server = Http::conformance();
    // Declared `task = "required"`: a client without tasks is refused before anything runs.
    let refused = post(&server, "tools/call", json!({"name": "test_tool_with_task", "arguments": {}}), false);
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    let created = asked_then_retried(&server, json!({}));
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "the retry became a task: {created}");
    assert!(result.get("requestState").is_none() && result.get("inputRequests").is_none(), "{created}");
    let task = result["taskId"].as_str().unwrap_or_else(|| panic!("a task id: {created}")).to_owned();
    let over = settled_over_http(&server, &task);
    assert_eq!(over["status"], "completed", "{over}");
    let text = over["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Grace") && text.contains("from the task"), "{over}");

    // A question the tool asks once it is a task waits on the task (`input_required`, answered
    // with `tasks/update`), not in a round trip of the call.
    let created = asked_then_retried(&server, json!({"ask_again": true}));
    let task = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}")).to_owned();
    let start = Instant::now();
    let waiting = loop {
        let got = post(&server, "tasks/get", json!({"taskId": task}), true);
        if got["result"]["status"] == "input_required" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        assert!(start.elapsed() < Duration::from_secs(20), "never asked: {got}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let key = waiting["result"]["inputRequests"]
        .as_object()
        .and_then(|q| q.keys().next().cloned())
        .unwrap_or_else(|| panic!("a question on the task: {waiting}"));
    assert_eq!(waiting["result"]["inputRequests"][&key]["method"], "elicitation/create", "{waiting}");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let ack = post(&server, "tasks/update", json!({"taskId": task, "inputResponses": {key: answer}}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let over = settled_over_http(&server, &task);
    assert_eq!(over["status"], "completed", "{over}");
    let text = over["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Grace") && text.contains("Ada"), "both answers: {over}");

    // One that works for minutes: the request that created it is long over (its connection
    // closed) and the task still works, until it is cancelled midway.
    let created = asked_then_retried(&server, json!({"seconds": 300}));
    let task = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}")).to_owned();
    std::thread::sleep(Duration::from_millis(300));
    let running = post(&server, "tasks/get", json!({"taskId": task}), true);
    assert_eq!(running["result"]["status"], "working", "{running}");
    let ack = post(&server, "tasks/cancel", json!({"taskId": task}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let over = settled_over_http(&server, &task);
    assert_eq!(over["status"], "cancelled", "{over}");
    assert!(over.get("result").is_none(), "{over}");
    assert!(!server.stderr().contains("panicked"), "{}", server.stderr());
}

#[test]
fn one_caller_has_at_most_32_tasks_that_are_not_over() {
    let server = Http::conformance();
    let start = |n: usize| {
        let call = json!({"name": "slow_compute", "arguments": {"seconds": 300, "label": format!("t{n}")}});
        post(&server, "tools/call", call, true)
    };
    let mut tasks = Vec::new();
    for n in 0..32 {
        let created = start(n);
        assert_eq!(created["result"]["resultType"], "task", "task {n}: {created}");
        tasks.push(created["result"]["taskId"].as_str().expect("an id").to_owned());
    }
    let refused = start(32);
    assert_eq!(refused["error"]["code"], -32000, "the 33rd: {refused}");
    assert_eq!(refused["error"]["data"]["limit"], "tasks", "{refused}");
    // A task that is over no longer counts.
    let ack = post(&server, "tasks/cancel", json!({"taskId": tasks[0]}), true);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let again = start(33);
    assert_eq!(again["result"]["resultType"], "task", "room again after a cancel: {again}");
    // A plain call is not a task: it is never refused for them.
    let plain = post(&server, "tools/call", json!({"name": "greet", "arguments": {"name": "Ada"}}), true);
    assert_eq!(plain["result"]["content"][0]["text"], "Hello, Ada!", "{plain}");
}
