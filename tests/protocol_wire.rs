//! Raw-wire tests: lines written to the real server process, lines read back. Each test ends with
//! `finish()`, which closes stdin, expects exit code 0 and fails if stdout ever carried a line
//! that is not a JSON-RPC message.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, peak_memory};

fn fixture(env: &[(&str, &str)]) -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.envs(env.iter().copied());
    RawServer::start(cmd)
}

fn ready(env: &[(&str, &str)]) -> RawServer {
    let mut server = fixture(env);
    server.initialize("2025-06-18");
    server
}

fn call(server: &mut RawServer, name: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": name, "arguments": args}))
}

fn error_of(response: &Value) -> (i64, Value) {
    let error = &response["error"];
    assert!(error.is_object(), "expected an error, got {response}");
    (error["code"].as_i64().expect("code"), error["data"].clone())
}

#[test]
fn initialize_echoes_supported_versions_and_answers_unknown_with_the_newest() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("2099-12-31", "2025-11-25"),
    ] {
        let mut server = fixture(&[]);
        let result = server.initialize(asked);
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert_eq!(result["serverInfo"], json!({"name": "teaagent", "version": env!("CARGO_PKG_VERSION")}));
        // Exactly what is implemented: no resources without a resource provider.
        assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}, "logging": {}}));
        server.finish();
    }
}

#[test]
fn ids_are_echoed_byte_for_byte() {
    let mut server = ready(&[]);
    for raw_id in [
        r#""é中文🦀""#,
        r#""caf\u00e9""#,
        r#""a\"b\\c""#,
        "0",
        "-17",
        "9007199254740993",
        "123456789012345678901234567890",
    ] {
        server.send(&format!(r#"{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}"#));
        // One request at a time, so the next line is its answer.
        let line = server.recv_raw();
        assert_eq!(line, format!("{{\"jsonrpc\":\"2.0\",\"id\":{raw_id},\"result\":{{}}}}\n"));
    }
    server.finish();
}

#[test]
fn non_json_lines_get_parse_errors_and_the_server_keeps_serving() {
    let mut server = ready(&[]);
    for garbage in [
        "{nope",
        "\u{0}\u{1}binary",
        "{\"jsonrpc\":\"2.0\",",
        "][",
        "tru",
        // Broken deep inside params (a method that never reads them still gets -32700).
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":01}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1,]}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"tab\there\"}}",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
    ] {
        server.send(garbage);
        let response = server.recv();
        assert_eq!(response["id"], Value::Null, "{garbage}");
        assert_eq!(response["error"]["code"], -32700, "{garbage}");
        assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    }
    // Invalid UTF-8 inside a string is not JSON either.
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}\n");
    assert_eq!(server.recv()["error"]["code"], -32700);
    server.finish();
}

#[test]
fn every_spelling_of_a_message_is_read_alike() {
    let mut server = ready(&[]);
    for (line, id) in [
        // Read by the quick reader of envelopes...
        (r#" { "params" : { } , "method" : "ping" , "id" : 1 , "jsonrpc" : "2.0" } "#, "1"),
        (r#"{"jsonrpc":"2.0","id":2,"method":"ping","x":[{"y":"\"},\u0000"}],"params":{"_meta":{}}}"#, "2"),
        // ...and left to serde_json: an escape in a member's name or a method's.
        (r#"{"jsonrpc":"2.0","id":3,"\u006dethod":"ping"}"#, "3"),
        (r#"{"jsonrpc":"2.0","id":4,"method":"p\u0069ng"}"#, "4"),
        (r#"{"jsonr\u0070c":"2.0","id":5,"method":"ping"}"#, "5"),
    ] {
        server.send(line);
        assert_eq!(
            server.recv_raw(),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n"),
            "{line}"
        );
    }
    server.finish();
}

#[test]
fn json_that_is_not_a_message_is_an_invalid_request() {
    let mut server = ready(&[]);
    for (line, reason, id) in [
        ("5", "not_a_message", Value::Null),
        (r#""ping""#, "not_a_message", Value::Null),
        (r#"{"foo":1}"#, "wrong_jsonrpc_version", Value::Null),
        (r#"{"jsonrpc":"2.0"}"#, "not_a_message", Value::Null),
        (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, "wrong_jsonrpc_version", json!(3)),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, "invalid_id", Value::Null),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, "invalid_id", Value::Null),
        (r#"{"jsonrpc":"2.0","id":4,"method":42}"#, "invalid_method", json!(4)),
        (r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#, "invalid_params_type", json!(5)),
        (r#"{"jsonrpc":"2.0","id":6,"id":7,"method":"ping"}"#, "not_a_message", Value::Null),
        (r#"{"jsonrpc":"2.0","id":8,"method":"p\u0069ng","jsonrpc":"2.0"}"#, "not_a_message", Value::Null),
    ] {
        server.send(line);
        let response = server.recv();
        assert_eq!(response["id"], id, "{line}");
        assert_eq!(response["error"]["code"], -32600, "{line}");
        assert_eq!(response["error"]["data"]["reason"], reason, "{line}");
    }
    server.finish();
}

#[test]
fn unknown_methods_and_tools_are_method_not_found() {
    let mut server = ready(&[]);
    let (code, data) = error_of(&server.request("tools/nope", json!({})));
    assert_eq!((code, data), (-32601, json!({"reason": "unknown_method", "method": "tools/nope"})));
    // No resource provider: the resource methods do not exist here.
    assert_eq!(error_of(&server.request("resources/list", json!({}))).0, -32601);
    let (code, data) = error_of(&call(&mut server, "no_such_tool", json!({})));
    assert_eq!((code, data), (-32601, json!({"tool": "no_such_tool", "reason": "unknown_tool"})));
    server.finish();
}

#[test]
fn malformed_params_are_invalid_params() {
    let mut server = ready(&[]);
    let (code, data) = error_of(&server.request("tools/call", json!({"name": 5})));
    assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_params")));
    let (code, data) = error_of(&server.request("tools/call", json!({"name": "echo", "arguments": [1]})));
    assert_eq!(code, -32602);
    assert_eq!(data["reason"], "invalid_arguments");
    assert_eq!(data["errors"][0]["pointer"], "");
    let (code, data) = error_of(&server.request("logging/setLevel", json!({"level": "loud"})));
    assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_params")));
    server.finish();
}

#[test]
fn tool_errors_are_results_with_is_error() {
    let mut server = ready(&[]);
    let response = call(&mut server, "fail", json!({"message": "no such file: a.txt"}));
    assert_eq!(
        response["result"],
        json!({"content": [{"type": "text", "text": "no such file: a.txt"}], "isError": true})
    );
    server.finish();
}

#[test]
fn a_panicking_tool_still_gets_its_answer() {
    let mut server = ready(&[]);
    for tool in ["panic", "panic_blocking"] {
        let (code, data) = error_of(&call(&mut server, tool, json!({})));
        assert_eq!(code, -32000);
        assert_eq!(data["tool"], tool);
        assert_eq!(data["reason"], "panic");
        assert!(data["details"].as_str().is_some_and(|d| d.contains("panicked on purpose")), "{data}");
    }
    assert_eq!(
        call(&mut server, "echo", json!({"text": "still here"}))["result"]["content"][0]["text"],
        "still here"
    );
    // A thread collects stderr: it may lag behind the answers on stdout.
    let stderr = server.stderr_once(|e| e.contains("panicked on purpose"));
    assert!(stderr.contains("panicked on purpose"), "the panic is logged on stderr:\n{stderr}");
    server.finish();
}

#[test]
fn a_call_past_its_timeout_is_a_tool_failure() {
    let mut server = ready(&[("FIXTURE_TIMEOUT_MS", "200")]);
    let (code, data) = error_of(&call(&mut server, "slow", json!({"ms": 5000})));
    assert_eq!(
        (code, data["reason"].clone(), data["tool"].clone()),
        (-32000, json!("timeout"), json!("slow"))
    );
    server.finish();
}

#[test]
fn oversized_lines_are_refused_without_buffering_and_the_server_keeps_serving() {
    let max = 64 * 1024;
    let mut server = ready(&[("FIXTURE_MAX_LINE", &max.to_string())]);
    // Exactly the maximum is fine.
    let text = "x".repeat(max - r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":""}}}"#.len());
    server.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}"}}}}}}"#));
    assert_eq!(
        server.response(&json!(1))["result"]["content"][0]["text"].as_str().map(str::len),
        Some(text.len())
    );
    // One byte more, arriving whole with its newline: refused.
    server.send(&format!(r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}x"}}}}}}"#));
    let response = server.recv();
    assert_eq!(
        (response["id"].clone(), response["error"]["data"]["reason"].clone()),
        (Value::Null, json!("line_too_long"))
    );
    // 64 MiB in one line: refused, and the server never held it.
    let chunk = vec![b'a'; 1024 * 1024];
    server.send_raw(
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#,
    );
    for _ in 0..64 {
        server.send_raw(&chunk);
    }
    server.send_raw(b"\"}}}\n");
    let response = server.recv();
    assert_eq!(response["id"], Value::Null);
    assert_eq!(response["error"]["code"], -32600);
    assert_eq!(response["error"]["data"]["reason"], "line_too_long");
    let peak_kib = peak_memory(server.pid()) / 1024;
    assert!(peak_kib < 48 * 1024, "peak RSS {peak_kib} KiB: the long line was buffered");
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server.finish();
}

#[test]
fn notifications_are_never_answered() {
    let mut server = ready(&[]);
    server.notify("notifications/initialized", json!({}));
    server.notify("notifications/whatever", json!({"x": 1}));
    server.notify("notifications/cancelled", json!({"requestId": 999_999}));
    server.send(r#"{"jsonrpc":"2.0","method":"ping"}"#);
    server
        .send(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#);
    server.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    let next = server.recv();
    assert_eq!(next["id"], "p", "the first message after the notifications is the ping's answer: {next}");
    assert!(server.drain(Duration::from_millis(300)).is_empty());
    server.finish();
}

#[test]
fn a_slow_call_never_delays_ping() {
    let mut server = ready(&[]);
    server.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow","arguments":{"ms":3000}}}"#);
    // Blocking (sync) tools too: more of them than the runtime has worker threads.
    for i in 0..4 {
        server.send(&format!(r#"{{"jsonrpc":"2.0","id":"block-{i}","method":"tools/call","params":{{"name":"blocking","arguments":{{"ms":3000}}}}}}"#));
    }
    server.send(r#"{"jsonrpc":"2.0","id":"ping","method":"ping"}"#);
    let first = server.recv();
    assert_eq!(first["id"], "ping", "ping answered before the slow calls: {first}");
    assert_eq!(server.response(&json!("slow"))["result"]["content"][0]["text"], "slept 3000 ms");
    for i in 0..4 {
        assert_eq!(server.response(&json!(format!("block-{i}")))["result"]["content"][0]["text"], "done");
    }
    server.finish();
}

#[test]
fn a_cancelled_request_gets_no_response() {
    let mut server = ready(&[]);
    server.send(r#"{"jsonrpc":"2.0","id":"c\u00e9","method":"tools/call","params":{"name":"slow","arguments":{"ms":1500}}}"#);
    server.send(r#"{"jsonrpc":"2.0","id":"other","method":"tools/call","params":{"name":"slow","arguments":{"ms":1500}}}"#);
    // The cancellation spells the id differently; it is the same id.
    server.notify("notifications/cancelled", json!({"requestId": "cé", "reason": "user pressed stop"}));
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    assert_eq!(server.response(&json!("other"))["result"]["content"][0]["text"], "slept 1500 ms");
    let late = server.drain(Duration::from_millis(1000));
    assert!(late.iter().all(|m| m["id"] != "cé"), "the cancelled request was answered: {late:?}");
    server.finish();
}

#[test]
fn requests_before_initialize_are_refused_but_ping_works() {
    let mut server = fixture(&[]);
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    let (code, data) = error_of(&server.request("tools/list", json!({})));
    assert_eq!((code, data["reason"].clone()), (-32600, json!("not_initialized")));
    server.initialize("2025-06-18");
    let again = server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}),
    );
    assert_eq!(error_of(&again).1["reason"], "already_initialized");
    server.finish();
}

#[test]
fn duplicate_in_flight_ids_are_refused() {
    let mut server = ready(&[]);
    server.send(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}"#,
    );
    server.send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    let first = server.recv();
    assert_eq!(
        (first["id"].clone(), first["error"]["data"]["reason"].clone()),
        (json!(7), json!("duplicate_id"))
    );
    assert_eq!(server.recv()["result"]["content"][0]["text"], "slept 800 ms");
    // The same id spelled another way (an escape) is the same id.
    server.send(
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}"#,
    );
    server.send(r#"{"jsonrpc":"2.0","id":"\u0078","method":"ping"}"#);
    let first = server.recv();
    assert_eq!(
        (first["id"].clone(), first["error"]["data"]["reason"].clone()),
        (json!("x"), json!("duplicate_id"))
    );
    assert_eq!(server.recv()["result"]["content"][0]["text"], "slept 800 ms");
    server.finish();
}

#[test]
fn batches_only_under_2025_03_26() {
    let mut server = fixture(&[]);
    server.initialize("2025-03-26");
    server.send(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},7]"#,
    );
    let batch = server.recv();
    let items = batch.as_array().expect("a batch answer is an array");
    assert_eq!(items.len(), 3, "{batch}");
    let by_id = |id: Value| items.iter().find(|m| m["id"] == id).cloned().unwrap_or(Value::Null);
    assert_eq!(by_id(json!(1))["result"], json!({}));
    assert_eq!(by_id(json!(2))["result"]["content"][0]["text"], "b");
    assert_eq!(by_id(Value::Null)["error"]["code"], -32600);
    // Only notifications: nothing comes back.
    server.send(r#"[{"jsonrpc":"2.0","method":"notifications/x"}]"#);
    server.send("[]");
    let empty = server.recv();
    assert_eq!(
        (empty["error"]["code"].clone(), empty["error"]["data"]["reason"].clone()),
        (json!(-32600), json!("empty_batch"))
    );
    server.finish();

    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut server = fixture(&[]);
        server.initialize(version);
        server.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        let refused = server.recv();
        assert_eq!(refused["error"]["data"]["reason"], "batch_not_supported", "{version}");
        server.finish();
    }
}

#[test]
fn tools_list_pages_with_opaque_cursors() {
    let mut server = ready(&[("FIXTURE_EXTRA_TOOLS", "250"), ("FIXTURE_PAGE_SIZE", "100")]);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let result = server.request("tools/list", params)["result"].clone();
        pages += 1;
        names.extend(
            result["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|t| t["name"].as_str().expect("name").to_owned()),
        );
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "no tool listed twice");
    assert!((0..250).all(|i| unique.contains(&format!("extra_{i:03}"))), "every extra tool is listed");
    assert_eq!(pages, names.len().div_ceil(100));
    assert!(pages >= 3);
    for bad in ["nonsense", "", "00", &"f".repeat(64)] {
        let (code, data) = error_of(&server.request("tools/list", json!({"cursor": bad})));
        assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_cursor")), "{bad}");
    }
    server.finish();
}

#[test]
fn progress_is_reported_when_the_request_asks_for_it() {
    let mut server = ready(&[]);
    let with = server.request(
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 300, "steps": 3}, "_meta": {"progressToken": "tok-é"}}),
    );
    assert_eq!(with["result"]["content"][0]["text"], "slept 300 ms");
    let progress: Vec<Value> = server
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["params"]["progressToken"], "tok-é");
        assert_eq!(p["params"]["progress"], json!((i + 1) as f64));
        assert_eq!(p["params"]["total"], json!(3.0));
    }
    let without = call(&mut server, "slow", json!({"ms": 100, "steps": 3}));
    assert!(without["result"].is_object());
    assert!(server.drain(Duration::from_millis(100)).is_empty(), "no token, no progress");
    server.finish();
}

#[test]
fn logs_reach_the_client_at_or_above_its_level_and_stderr_always() {
    let mut server = ready(&[("RUST_LOG", "trace")]);
    call(&mut server, "log", json!({"level": "error", "message": "before any level"}));
    assert!(server.drain(Duration::from_millis(100)).iter().all(|m| m["method"] != "notifications/message"));
    assert_eq!(server.request("logging/setLevel", json!({"level": "warning"}))["result"], json!({}));
    call(&mut server, "log", json!({"level": "info", "message": "too quiet"}));
    call(&mut server, "log", json!({"level": "error", "message": "loud enough"}));
    let messages: Vec<Value> = server
        .drain(Duration::from_millis(100))
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["params"]["level"], "error");
    assert_eq!(messages[0]["params"]["logger"], "fixture");
    assert_eq!(messages[0]["params"]["data"]["message"], "loud enough");
    let stderr = server.stderr_once(|e| e.contains("too quiet") && e.contains("loud enough"));
    assert!(
        stderr.contains("too quiet") && stderr.contains("loud enough"),
        "stderr gets every log:\n{stderr}"
    );
    server.finish();
}

#[test]
fn overload_is_refused_not_queued_forever() {
    let mut server = ready(&[("FIXTURE_MAX_IN_FLIGHT", "1"), ("FIXTURE_MAX_QUEUED", "1")]);
    for id in 1..=3 {
        server.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":700}}}}}}"#));
        // Let each call take its place before the next one arrives.
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    let (code, data) = error_of(&server.response(&json!(3)));
    assert_eq!((code, data["reason"].clone()), (-32000, json!("overloaded")));
    assert!(server.response(&json!(1))["result"].is_object());
    assert!(server.response(&json!(2))["result"].is_object());
    server.finish();
}

#[test]
fn eof_drains_in_flight_calls_and_exits_zero() {
    let mut server = ready(&[]);
    server.send(r#"{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"slow","arguments":{"ms":500}}}"#);
    server.close_stdin();
    assert_eq!(server.response(&json!("last"))["result"]["content"][0]["text"], "slept 500 ms");
    assert!(server.wait(Duration::from_secs(10)).success());
    assert!(server.violations().is_empty());
}

#[test]
fn sigterm_and_sigint_drain_and_exit_zero() {
    for signal in ["TERM", "INT"] {
        let mut server = ready(&[]);
        server.send(r#"{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"slow","arguments":{"ms":500}}}"#);
        // The call is running once its progress-free sleep has begun; ping proves the line was read.
        assert_eq!(server.request("ping", json!({}))["result"], json!({}));
        server.signal(signal);
        assert_eq!(
            server.response(&json!("last"))["result"]["content"][0]["text"],
            "slept 500 ms",
            "{signal}"
        );
        let status = server.wait(Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "SIG{signal}: {status}");
        let received = format!("SIG{signal} received");
        assert!(server.stderr_once(|e| e.contains(&received)).contains(&received));
    }
}

#[test]
fn calls_still_running_after_the_grace_period_are_cut_off() {
    let mut server = ready(&[("FIXTURE_GRACE_MS", "200")]);
    server.send(r#"{"jsonrpc":"2.0","id":"endless","method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}"#);
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server.close_stdin();
    assert!(server.wait(Duration::from_secs(10)).success());
    assert!(server.drain(Duration::from_millis(50)).iter().all(|m| m["id"] != "endless"));
}

#[test]
fn stdout_carries_only_protocol_even_with_every_log_enabled() {
    let mut server = ready(&[("RUST_LOG", "trace")]);
    server.request("logging/setLevel", json!({"level": "debug"}));
    for level in ["error", "warn", "info", "debug"] {
        call(&mut server, "log", json!({"level": level, "message": format!("{level} line\nwith a newline")}));
    }
    call(&mut server, "panic", json!({}));
    server.send("not json");
    server.drain(Duration::from_millis(200));
    assert!(!server.stderr().is_empty(), "logs went to stderr");
    server.finish();
}
