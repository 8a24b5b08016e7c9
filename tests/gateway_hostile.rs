//! Hardening round 3, "a hostile allowed server": an external server the user allowed can still
//! misbehave, and the real `teaagent` binary bounds what that costs. Each against `rogue`
//! (`tests/bin/rogue`):
//!
//! - a result larger than the server's `max_result_bytes` is cut with a marker that names the
//!   setting; a reply line too long to read fails its call at once — whether its id comes first
//!   or last, and before the line has even ended — and is never held in memory;
//! - a tool list too large (one page, or all pages together) or nested too deep is refused at
//!   `trust allow`, at once, saying why;
//! - a flood of `notifications/tools/list_changed` reaches the client coalesced;
//! - a server that writes what answers no request, endlessly, is read on the gateway's thread,
//!   not on the one that serves the client;
//! - a server's lines on teaagent's stderr are paced: a flood is cut to 100 lines a second, and
//!   what was dropped is counted;
//! - a client that does not read teaagent's stderr stalls nothing: the lines wait, up to a bound,
//!   then are dropped and counted;
//! - a server that asks teaagent things and does not read the answers cannot make it hold them;
//! - a progress message is passed on cut at 4 KiB, as a log line is;
//! - a flood of progress reaches the client paced, its newest report last and before the result;
//! - a reply means the same however it is spelled (whitespace, member order, escapes, members
//!   named twice, members no reply has), whichever way teaagent reads it; one it cannot read (a
//!   lone surrogate, nesting too deep) fails its call, saying so.

use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::{Bin, peak_memory};

use crate::common::gateway_setup;
use gateway_setup::{Setup, call, text_of, tool_names};

/// Every text block of a `tools/call` response.
fn texts(response: &Value) -> Vec<String> {
    response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("a result: {response}"))
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn results_are_bounded_and_an_unreadable_reply_fails_its_call_at_once() {
    let setup = Setup::new("max_result_bytes = 100000\n");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);

    // Over the limit: cut, with a marker naming the setting.
    let cut = call(&mut server, "rogue__big", json!({"bytes": 250_000}));
    assert_eq!(cut["result"]["isError"], false, "{cut}");
    let parts = texts(&cut);
    assert_eq!(parts[0].len(), 100_000, "the first 100000 bytes are kept");
    assert!(
        parts[1].starts_with("[truncated:")
            && parts[1].contains("250000 bytes")
            && parts[1].contains("[mcp_servers.rogue] max_result_bytes"),
        "{parts:?}"
    );
    let small = call(&mut server, "rogue__big", json!({"bytes": 1000}));
    assert_eq!(texts(&small), ["b".repeat(1000)], "a result within the limit is whole");

    // Lines too long to read (8 MiB at this limit): the call fails now, saying why; id first
    // (most SDKs), id last (the TypeScript SDK's order).
    for id_last in [false, true] {
        let refused = call(&mut server, "rogue__big", json!({"bytes": 20_000_000, "id_last": id_last}));
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let why = text_of(&refused);
        assert!(
            why.contains("the 8388608 bytes teaagent reads")
                && why.contains("[mcp_servers.rogue] max_result_bytes"),
            "{why}"
        );
    }
    // Neither was held: teaagent never took more memory than a fraction of one such line.
    let peak = peak_memory(server.pid());
    assert!(peak < 100 * 1024 * 1024, "teaagent's peak memory was {peak} bytes");
    assert!(tool_names(&mut server).iter().any(|n| n == "rogue__echo"));

    // A reply that passes the limit and then stalls (its line does not end for a minute) fails
    // as soon as it passes the limit: the request would otherwise wait for the whole minute.
    let stalled = call(&mut server, "rogue__hang_long", json!({"bytes": 9_000_000}));
    assert_eq!(stalled["result"]["isError"], true, "{stalled}");
    assert!(text_of(&stalled).contains("passed the 8388608 bytes"), "{stalled}");
    server.finish();
}

#[test]
fn every_spelling_of_a_reply_is_read_alike() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let same = r#"{"content":[{"type":"text","text":"same"}]}"#;
    let other = r#"{"content":[{"type":"text","text":"other"}]}"#;
    let replies = [
        format!(r#"{{"jsonrpc":"2.0","id":ID,"result":{same}}}"#),
        format!("{{ \"result\" :\t{same} ,\r \"id\" : ID , \"jsonrpc\" : \"2.0\" }}"),
        // Escapes in a member's name and in the text.
        r#"{"jsonrpc":"2.0","id":ID,"res\u0075lt":{"content":[{"type":"text","text":"s\u0061me"}]}}"#
            .to_owned(),
        // No `jsonrpc`, a `method` that is null, members no reply has.
        format!(r#"{{"id":ID,"result":{same}}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":null,"id":ID,"result":{same}}}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":ID,"extra":[1,{{"result":{other}}}],"result":{same},"_meta":{{}}}}"#
        ),
        // A member named twice: the last one counts, at the top and inside the result.
        format!(r#"{{"jsonrpc":"2.0","id":ID,"result":{other},"result":{same}}}"#),
        r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"other"}],"content":[{"type":"text","text":"same"}]}}"#
            .to_owned(),
    ];
    for line in &replies {
        let answered = call(&mut server, "rogue__raw", json!({"line": line}));
        assert_eq!(answered["result"]["isError"], false, "{line}: {answered}");
        assert_eq!(texts(&answered), ["same"], "{line}: {answered}");
    }
    // A reply with both a result and an error (`null` counts) is neither.
    for error in [r#"{"code":1,"message":"no"}"#, "null"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":ID,"result":{same},"error":{error}}}"#);
        let answered = call(&mut server, "rogue__raw", json!({"line": line}));
        assert_eq!(answered["result"]["isError"], true, "{line}: {answered}");
        assert!(text_of(&answered).contains("neither result nor error"), "{line}: {answered}");
    }
    // JSON that is no `Value` (a lone surrogate), in a result or an error, and one nested past
    // what is read: the call fails saying so, never answers empty.
    let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
    for line in [
        r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"\ud800"}]}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":ID,"error":{"code":1,"message":"\udfff"}}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":ID,"result":{{"structuredContent":{{"a":{deep}}}}}}}"#),
    ] {
        let answered = call(&mut server, "rogue__raw", json!({"line": line}));
        assert_eq!(answered["result"]["isError"], true, "{line}: {answered}");
        let why = text_of(&answered);
        assert!(
            why.contains("answered, but its reply is not valid JSON") || why.contains("nested more than 128"),
            "{line}: {answered}"
        );
    }
    server.finish();
}

/// `rogue` answering `tools/list` with `raw` as its `tools`.
fn raw_list(raw: &str) -> Setup {
    let setup = Setup::with_rogue_args(Bin::Rogue.path(), &["--raw-list", "RAW"], "");
    let file = setup.home.path("raw-tools.json");
    std::fs::write(&file, raw).expect("raw list");
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    setup.home.write("config.toml", &config.replace("\"RAW\"", &format!("{:?}", file.display().to_string())));
    setup
}

#[test]
fn a_tool_list_too_large_or_too_deep_is_refused_at_allow_saying_why() {
    let deep = format!(
        "[{{\"name\":\"deep\",\"inputSchema\":{{\"type\":\"object\",\"properties\":{{\"x\":{}1{}}}}}}}]",
        "{\"not\":".repeat(1000),
        "}".repeat(1000)
    );
    let one_page = format!("[{{\"name\":\"huge\",\"description\":\"{}\"}}]", "d".repeat(20_000_000));
    let cases = [
        (raw_list(&deep), "nested more than 128 levels"),
        (raw_list(&one_page), "the 8388608 bytes teaagent reads"),
        // Pages each within the line limit, together over the list's.
        (
            {
                let setup = Setup::with_rogue_args(Bin::Rogue.path(), &["--page-size", "1"], "");
                let tools: Vec<Value> = (0..3)
                    .map(|i| json!({"name": format!("t{i}"), "description": "x".repeat(7_000_000), "inputSchema": {"type": "object"}}))
                    .collect();
                setup.set_tools(&Value::Array(tools));
                setup
            },
            "larger than 16 MiB",
        ),
    ];
    for (setup, why) in cases {
        let out = setup.run(&["mcp", "trust", "allow", "rogue"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{why}: allowed anyway");
        assert!(
            stderr.contains("cannot read the tools of `rogue`") && stderr.contains(why),
            "{why}: {stderr}"
        );
        assert!(!stderr.contains("within 30 s"), "{why}: it waited for the timeout: {stderr}");
    }
}

/// The CPU time each thread of process `pid` has used, in clock ticks, by thread id.
fn thread_ticks(pid: u32) -> std::collections::HashMap<u32, (String, u64)> {
    let mut ticks = std::collections::HashMap::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks").flatten() {
        let Ok(tid) = task.file_name().to_string_lossy().parse::<u32>() else { continue };
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(task.path().join("comm")),
            std::fs::read_to_string(task.path().join("stat")),
        ) else {
            continue;
        };
        // After the command's closing parenthesis: state, then utime and stime at 12 and 13.
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, f)| f.split_whitespace().collect()).unwrap_or_default();
        let used =
            fields.get(11..13).map(|t| t.iter().filter_map(|v| v.parse::<u64>().ok()).sum()).unwrap_or(0);
        ticks.insert(tid, (comm.trim().to_owned(), used));
    }
    ticks
}

#[test]
fn a_server_that_writes_what_nobody_asked_for_is_read_off_the_serving_thread() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    // A call first, so the child's stdout is read where calls are made; then the flood.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "hi"}))), "echo: hi");
    // A large reply answers a request, however large: it is no reason to move.
    for _ in 0..3 {
        assert_eq!(text_of(&call(&mut server, "rogue__big", json!({"bytes": 600_000}))).len(), 600_000);
    }
    assert!(!server.stderr().contains("from now on"), "moved for replies: {}", server.stderr());
    assert_eq!(text_of(&call(&mut server, "rogue__spew", json!({}))), "spewing");
    let pid = server.pid();
    // The serving thread is the main one; the gateway's has its own name.
    let spent = |before: &std::collections::HashMap<u32, (String, u64)>| {
        let now = thread_ticks(pid);
        let used = |tid: u32| now.get(&tid).map_or(0, |t| t.1) - before.get(&tid).map_or(0, |t| t.1);
        let gateway = now
            .iter()
            .filter(|(_, (comm, _))| comm.starts_with("teaagent-gatew"))
            .map(|(&tid, _)| used(tid))
            .sum::<u64>();
        (used(pid), gateway)
    };
    std::thread::sleep(Duration::from_millis(300));
    let before = thread_ticks(pid);
    // Until the flood has cost half a second of some thread's time (10 s at most).
    let started = std::time::Instant::now();
    let (serving, gateway) = loop {
        let (serving, gateway) = spent(&before);
        if serving.max(gateway) >= 50 || started.elapsed() > Duration::from_secs(10) {
            break (serving, gateway);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        serving * 5 < gateway,
        "during the flood the serving thread used {serving} ticks, the gateway's {gateway}: {}",
        server.stderr()
    );
    let said = server.stderr_once(|e| e.contains("it is read on the gateway's thread from now on"));
    assert!(said.contains("it is read on the gateway's thread from now on"), "said why: {said}");
    // And the client is still served, while the flood goes on.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "still"}))), "echo: still");
    assert!(server.request("ping", json!({}))["result"].is_object());
    server.finish();
}

#[test]
fn a_server_that_asks_and_does_not_read_the_answers_is_not_queued_for() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "hi"}))), "echo: hi");
    let before = peak_memory(server.pid());
    // 200 requests, each answer 300 KB (its id), while rogue reads nothing: 60 MB of answers
    // if they were kept for it.
    let asked = call(&mut server, "rogue__ask_unread", json!({"count": 200, "id_bytes": 300_000}));
    assert_eq!(text_of(&asked), "asked 200");
    let grew = peak_memory(server.pid()).saturating_sub(before);
    assert!(grew < 30 * 1024 * 1024, "teaagent's peak memory grew by {grew} bytes");
    // The server is still served, and answered.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "still"}))), "echo: still");
    server.finish();
}

#[test]
fn a_progress_message_is_passed_on_cut_at_four_kib() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    server.send_json(&json!({"jsonrpc": "2.0", "id": "big", "method": "tools/call", "params": {
        "name": "rogue__slow", "arguments": {"steps": 2, "pause_ms": 0, "message_bytes": 100_000},
        "_meta": {"progressToken": "tok"}}}));
    assert_eq!(text_of(&server.response(&json!("big"))), "done after 2 steps");
    let messages: Vec<String> = server
        .drain(Duration::from_millis(200))
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(!messages.is_empty(), "no progress passed on");
    for message in &messages {
        assert!(message.starts_with("step ") && message.len() < 4200, "{} bytes", message.len());
        assert!(message.ends_with(" more bytes⟫"), "says it was cut: …{}", &message[message.len() - 40..]);
    }
    server.finish();
}

#[test]
fn a_flood_of_progress_reaches_the_client_paced_and_its_newest_report_before_the_result() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let steps = 100_000;
    let started = std::time::Instant::now();
    server.send_json(&json!({"jsonrpc": "2.0", "id": "flood", "method": "tools/call", "params": {
        "name": "rogue__slow", "arguments": {"steps": steps, "pause_ms": 0},
        "_meta": {"progressToken": "tok"}}}));
    let mut passed = Vec::new();
    loop {
        let message = server.recv();
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "tok", "{message}");
            passed.push(message["params"]["progress"].as_f64().expect("a number"));
        } else if message["id"] == "flood" {
            assert_eq!(text_of(&message), format!("done after {steps} steps"));
            break;
        }
    }
    let took = started.elapsed().as_secs_f64();
    // 32 at once, then 20 a second, and the newest at the end: not 100,000.
    let most = 32.0 + 20.0 * took + 2.0;
    assert!((passed.len() as f64) <= most, "{} reports passed in {took:.2} s", passed.len());
    assert!(passed.windows(2).all(|w| w[0] < w[1]), "in order: {passed:?}");
    assert_eq!(passed.last().copied(), Some(f64::from(steps)), "the newest, before the result");
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "still"}))), "echo: still");
    server.finish();
}

#[test]
fn a_flood_on_stderr_reaches_teaagents_stderr_paced_and_counted() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__stderr_flood", json!({"lines": 5000}))), "wrote 5000");
    // A line in a later second says how many were dropped.
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(text_of(&call(&mut server, "rogue__stderr_flood", json!({"lines": 1}))), "wrote 1");
    let said = server.stderr_once(|e| e.contains("lines dropped"));
    let passed = |said: &str| said.lines().filter(|l| l.starts_with("[rogue] flood line ")).count();
    let dropped = |said: &str| -> usize {
        said.lines()
            .filter_map(|l| {
                l.strip_prefix("[rogue] ⟪")?.split_once(" lines dropped: more than 100 a second⟫")
            })
            .map(|(n, _)| n.parse::<usize>().expect("a count"))
            .sum()
    };
    // The flood is read in a second or two at most: 100 lines a second of it (less the server's
    // own first lines, in its first second), the rest counted.
    assert!((50..=300).contains(&passed(&said)), "{} of the 5000 lines passed", passed(&said));
    assert!(said.contains("[rogue] flood line 0\n"), "the first lines pass: {said}");
    // Every line of the first flood is either written or counted (the second's one line may be
    // written or not yet).
    let accounted = |said: &str| passed(said) + dropped(said);
    assert!(
        (5000..=5001).contains(&accounted(&said)),
        "{} written, {} counted",
        passed(&said),
        dropped(&said)
    );
    // What is dropped just before the stream ends is said when it ends: another flood, then
    // the server exits.
    assert_eq!(text_of(&call(&mut server, "rogue__stderr_flood", json!({"lines": 5000}))), "wrote 5000");
    let _ = call(&mut server, "rogue__crash", json!({}));
    let said = server.stderr_once(|e| accounted(e) == 10_001);
    assert_eq!(accounted(&said), 10_001, "{} written, {} counted", passed(&said), dropped(&said));
    server.finish();
}

#[test]
fn a_client_that_does_not_read_stderr_stalls_nothing_and_is_told_what_it_missed() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve_stderr_unread(&["--permission-mode", "allow"]);
    // 100 lines a second reach teaagent's stderr, 4 KiB each: the pipe (64 KiB) is full at once,
    // and what may wait for it (256 KiB) soon after.
    for _ in 0..3 {
        let flood = call(&mut server, "rogue__stderr_flood", json!({"lines": 200, "line_bytes": 4000}));
        assert_eq!(text_of(&flood), "wrote 200");
        std::thread::sleep(Duration::from_millis(1050));
    }
    // Neither the gateway's thread nor the serving one waits for the pipe.
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "still"}))), "echo: still");
    server.read_stderr();
    let said = server.stderr_once(|e| e.contains("lines dropped: stderr was not read"));
    let notice = said
        .lines()
        .find_map(|l| l.strip_prefix("teaagent: ⟪")?.strip_suffix(" lines dropped: stderr was not read⟫"))
        .unwrap_or_else(|| panic!("what was dropped is said: {}", &said[said.len().saturating_sub(500)..]));
    assert!(notice.parse::<u64>().is_ok_and(|n| n > 0), "{notice}");
    // Whole lines: each flood line written is all there, its number and its 4000 bytes.
    let flood: Vec<&str> = said.lines().filter_map(|l| l.strip_prefix("[rogue] flood line ")).collect();
    assert!(flood.len() >= 20, "{} flood lines written", flood.len());
    for line in &flood {
        let padding = line.trim_start_matches(|c: char| c.is_ascii_digit());
        assert!(padding.len() == 4000 && padding.bytes().all(|b| b == b'p'), "a whole line: {line:.60}…");
    }
    server.finish();
}

#[test]
fn with_json_logs_a_servers_lines_are_json_events_too() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow", "--log-format", "json"]);
    assert_eq!(text_of(&call(&mut server, "rogue__stderr_flood", json!({"lines": 3}))), "wrote 3");
    let said = server.stderr_once(|e| e.contains("flood line 2"));
    for line in said.lines() {
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if event["message"].as_str().is_some_and(|m| m.starts_with("flood line ")) {
            assert_eq!(event["fields"]["server"], "rogue", "{line}");
        }
    }
    server.finish();
}

#[test]
fn a_flood_of_list_changed_reaches_the_client_coalesced() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    // 2000 notifications over about a second.
    assert_eq!(
        text_of(&call(&mut server, "rogue__flood", json!({"count": 2000, "interval_us": 500}))),
        "sent 2000"
    );
    let told = server
        .drain(Duration::from_millis(2500))
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .count();
    // One reading of the list a second at most, each passed on once: a handful, not 2000.
    assert!((1..=5).contains(&told), "the client was told {told} times");
    assert!(tool_names(&mut server).iter().any(|n| n == "rogue__echo"), "still served");
    server.finish();
}
