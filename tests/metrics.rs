//! `/metrics` of `teaagent mcp serve --http`, scraped after real calls: the numbers match the
//! calls made (allowed, denied, rate-limited, to unknown names, approvals asked and answered,
//! an external server that crashed and was restarted), a client's made-up tool names
//! create no series, the scrape passes the real `promtool check metrics`, it needs the token
//! `/mcp` needs, and with `--metrics-listen` it is served apart without one. And
//! `--log-format json`: every stderr line a JSON object, stdout the protocol alone.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::prometheus::promtool_check;
use teaagent_tests::{Bin, Tree};

use crate::common::gateway_setup;
use crate::common::http as raw;
use raw::{Http, Reply, exchange, modern_headers, open_session, request};

const TOKEN: &str = "scraper-0123456789abcdef";

/// A server with a token, a rate limit of two calls an hour on `read_file`, JSON logs, and
/// `flags`.
fn server(tree: &Tree, home: &Tree, flags: &[&str]) -> Http {
    tree.write("ws/a.txt", "hello");
    std::fs::write(
        home.base().join("config.toml"),
        "[tools.read_file]\nrate_limit = { max_calls = 2, window_secs = 3600 }\n",
    )
    .expect("config.toml");
    let mut all = vec!["--log-format", "json"];
    all.extend_from_slice(flags);
    Http::teaagent(tree, home, &all, &[("TEAAGENT_HTTP_TOKENS", &format!("scraper:{TOKEN}"))])
}

/// A modern `tools/call` with the token: its JSON-RPC answer.
fn call(server: &Http, id: i64, name: &str, arguments: Value) -> Value {
    let message = request(id, "tools/call", json!({"name": name, "arguments": arguments}));
    let mut headers = modern_headers(&message);
    headers.push(("Authorization".into(), format!("Bearer {TOKEN}")));
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = server.exchange("POST", "/mcp", &refs, message.to_string().as_bytes());
    assert_eq!(r.status, 200, "{r:?}\n{}", server.stderr());
    r.json()
}

fn scrape(addr: SocketAddr, token: Option<&str>) -> Reply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    exchange(addr, "GET", "/metrics", &headers, b"")
}

/// Every sample of a scrape: `name{labels}` as written → its value.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("a sample line");
            (series.to_owned(), value.parse().unwrap_or_else(|_| panic!("a number in {l:?}")))
        })
        .collect()
}

#[track_caller]
fn assert_sample(all: &BTreeMap<String, f64>, series: &str, expected: f64, text: &str) {
    assert_eq!(all.get(series).copied(), Some(expected), "{series} in:\n{text}");
}

#[test]
fn calls_refusals_and_rate_limits_are_counted_and_promtool_accepts_the_scrape() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &[]);
    for id in 1..=3 {
        call(&server, id, "read_file", json!({"path": "a.txt"}));
    }
    // workspace-write: a write needs an approval nobody can give here: denied by the mode.
    let denied = call(&server, 4, "write_file", json!({"path": "b.txt", "content": "x"}));
    assert_eq!(denied["error"]["code"], -32001, "{denied}");
    // Names the server does not have, one of them meant to break a label.
    call(&server, 5, "no_such_tool_1", json!({}));
    call(&server, 6, r#"evil"} teaagent_fake_total 1"#, json!({}));
    let session = open_session(&server, &[("Authorization", &format!("Bearer {TOKEN}"))], json!({}));
    assert!(!session.is_empty());

    let refused = scrape(server.addr, None);
    assert_eq!(refused.status, 401, "/metrics needs the token /mcp needs: {refused:?}");
    let wrong = scrape(server.addr, Some("scraper-0123456789abcdeX"));
    assert_eq!(wrong.status, 401, "{wrong:?}");
    let r = scrape(server.addr, Some(TOKEN));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    let text = &r.body;
    let all = samples(text);
    assert_sample(&all, r#"teaagent_calls_total{tool="read_file",outcome="ok"}"#, 2.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="read_file",outcome="rate_limited"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_rate_limited_total{tool="read_file"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_call_duration_seconds_count{tool="read_file"}"#, 3.0, text);
    assert_sample(&all, r#"teaagent_call_duration_seconds_bucket{tool="read_file",le="+Inf"}"#, 3.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="write_file",outcome="denied"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_refusals_total{reason="denied",rule="permission_mode"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_refusals_total{reason="rate_limited",rule="rate_limit"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_refusals_total{reason="denied",rule="deny_rule"}"#, 0.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="(unknown)",outcome="unknown_tool"}"#, 2.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="list_directory",outcome="ok"}"#, 0.0, text);
    assert_sample(&all, "teaagent_calls_in_flight", 0.0, text);
    assert_sample(&all, "teaagent_sessions_open", 1.0, text);
    assert_sample(&all, r#"teaagent_listen_streams_open{kind="subscriptions"}"#, 0.0, text);
    assert_sample(&all, "teaagent_approvals_asked_total", 0.0, text);
    assert!(
        !text.contains("no_such_tool") && !text.contains("evil") && !text.contains("teaagent_fake"),
        "a client's names make no series:\n{text}"
    );
    // Every tool the server has, and one series for every name it does not: bounded.
    let tools = all.keys().filter(|k| k.starts_with("teaagent_calls_total{")).count();
    assert!(tools < 40, "{tools} call series:\n{text}");
    if let Err(said) = promtool_check(text) {
        panic!("promtool check metrics found problems:\n{said}\nin:\n{text}");
    }
    // Without a Redis or external servers, their families are left out, not faked.
    assert!(!text.contains("teaagent_shared_state") && !text.contains("teaagent_external_server"), "{text}");
}

/// A modern `tools/call` of `create_file` from a client that can show a form (`elicitation`),
/// carrying `answer` and `state` when given: its JSON-RPC answer.
fn create(server: &Http, id: i64, answer: Option<(&Value, Value)>) -> Value {
    let mut message = request(
        id,
        "tools/call",
        json!({"name": "create_file", "arguments": {"path": format!("f{id}.txt"), "content": "x"}}),
    );
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    if let Some((state, response)) = answer {
        message["params"]["requestState"] = state.clone();
        message["params"]["inputResponses"] = json!({"approval": response});
    }
    let mut headers = modern_headers(&message);
    headers.push(("Authorization".into(), format!("Bearer {TOKEN}")));
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = server.exchange("POST", "/mcp", &refs, message.to_string().as_bytes());
    assert_eq!(r.status, 200, "{r:?}\n{}", server.stderr());
    r.json()
}

#[test]
fn approvals_asked_and_answered_are_counted() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &["--permission-mode", "prompt"]);
    let mut states = Vec::new();
    for id in [1, 2] {
        let asked = create(&server, id, None);
        assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
        states.push(asked["result"]["requestState"].clone());
    }
    let allowed =
        create(&server, 1, Some((&states[0], json!({"action": "accept", "content": {"decision": "once"}}))));
    assert_eq!(allowed["result"]["isError"], false, "{allowed}");
    let declined = create(&server, 2, Some((&states[1], json!({"action": "decline"}))));
    assert_eq!(declined["error"]["code"], -32001, "{declined}");

    let r = scrape(server.addr, Some(TOKEN));
    let text = &r.body;
    let all = samples(text);
    assert_sample(&all, "teaagent_approvals_asked_total", 2.0, text);
    assert_sample(&all, r#"teaagent_approvals_answered_total{answer="allowed"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_approvals_answered_total{answer="denied"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_refusals_total{reason="denied",rule="approval"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="create_file",outcome="input_required"}"#, 2.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="create_file",outcome="ok"}"#, 1.0, text);
    assert_sample(&all, r#"teaagent_calls_total{tool="create_file",outcome="denied"}"#, 1.0, text);
}

#[test]
fn metrics_listen_serves_metrics_apart_without_a_token_and_logs_are_json_lines() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &["--metrics-listen", "127.0.0.1:0"]);
    call(&server, 1, "read_file", json!({"path": "a.txt"}));
    let deadline = Instant::now() + Duration::from_secs(20);
    let metrics: SocketAddr = loop {
        const SAYS: &str = "serving metrics at http://";
        let said = server.stderr();
        if let Some(at) = said.find(SAYS) {
            break said[at + SAYS.len()..]
                .split('/')
                .next()
                .expect("an address")
                .parse()
                .expect("an address");
        }
        assert!(Instant::now() < deadline, "no line says where metrics are served:\n{said}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let r = scrape(metrics, None);
    assert_eq!(r.status, 200, "{r:?}");
    let all = samples(&r.body);
    assert_sample(&all, r#"teaagent_calls_total{tool="read_file",outcome="ok"}"#, 1.0, &r.body);
    promtool_check(&r.body).unwrap_or_else(|said| panic!("promtool: {said}\n{}", r.body));
    let other = exchange(metrics, "GET", "/mcp", &[], b"");
    assert_eq!(other.status, 404, "that address serves /metrics only: {other:?}");
    let post = exchange(metrics, "POST", "/metrics", &[], b"");
    assert_eq!(post.status, 405, "{post:?}");
    let main = scrape(server.addr, Some(TOKEN));
    assert_eq!(main.status, 404, "served apart, not next to /mcp: {main:?}");

    // Every line on stderr is one JSON object, with the fields log shippers read.
    let stderr = server.stderr();
    assert!(stderr.lines().count() >= 3, "{stderr}");
    for line in stderr.lines() {
        let object: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        for key in ["time", "level", "target", "message", "fields"] {
            assert!(object.get(key).is_some(), "no `{key}` in {line}");
        }
        assert!(object["fields"].is_object(), "{line}");
    }
    assert!(stderr.contains(r#""message":"serving MCP over Streamable HTTP at http://"#), "{stderr}");
}

#[test]
fn json_logs_over_stdio_leave_stdout_to_the_protocol() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/a.txt", "hello");
    // A server not decided yet: the command's own warning about it is a JSON line too.
    home.write("config.toml", "[mcp_servers.later]\ncommand = \"/bin/true\"\n");
    let mut child = Command::new(Bin::Teaagent.path())
        .args(["mcp", "serve", "--log-format", "json", "--log-level", "debug", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start teaagent");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let calls = [
        init,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}),
    ];
    for message in &calls {
        writeln!(stdin, "{message}").expect("write");
    }
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines = Vec::new();
    while lines.len() < 2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).expect("read") > 0, "stdout ended after {lines:?}");
        lines.push(line);
    }
    drop(stdin);
    let out = child.wait_with_output().expect("ends once stdin ends");
    let rest = String::from_utf8_lossy(&out.stdout);
    assert!(rest.trim().is_empty(), "nothing more on stdout: {rest}");
    for line in &lines {
        let message: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout: not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    assert_eq!(
        serde_json::from_str::<Value>(&lines[1]).expect("json")["result"]["content"][0]["text"],
        "hello"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().count() >= 2, "{stderr}");
    for line in stderr.lines() {
        let object: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("stderr: not JSON ({e}): {line}"));
        assert!(object["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{line}");
        assert!(
            ["ERROR", "WARN", "INFO", "DEBUG", "TRACE"].contains(&object["level"].as_str().unwrap_or("")),
            "{line}"
        );
    }
    assert!(
        stderr
            .lines()
            .any(|l| l.contains(r#""level":"WARN""#) && l.contains("not starting external server `later`")),
        "{stderr}"
    );

    // The error the command stops on is a JSON line as well.
    let out = Command::new(Bin::Teaagent.path())
        .args(["mcp", "serve", "--log-format", "json", "--root"])
        .arg(tree.path("no-such-root"))
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stderr.lines() {
        let object: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("stderr: not JSON ({e}): {line}"));
        assert!(object["level"].is_string(), "{line}");
    }
    assert!(stderr.contains(r#""level":"ERROR""#) && stderr.contains("no-such-root"), "{stderr}");
}

#[test]
fn an_external_server_is_up_and_its_restart_counted() {
    let setup = gateway_setup::Setup::new("");
    setup.allow("rogue");
    let server = Http::teaagent(&setup.tree, &setup.home, &["--permission-mode", "allow"], &[]);
    // Loopback without tokens: /metrics needs nothing, as /mcp.
    let series = |name: &str| {
        let r = scrape(server.addr, None);
        assert_eq!(r.status, 200, "{r:?}");
        (samples(&r.body).get(name).copied(), r.body)
    };
    let up = r#"teaagent_external_server_up{server="rogue"}"#;
    let restarts = r#"teaagent_external_server_restarts_total{server="rogue"}"#;
    gateway_setup::wait_until("rogue up", Duration::from_secs(20), || series(up).0 == Some(1.0));
    assert_eq!(series(restarts).0, Some(0.0));
    let message = request(1, "tools/call", json!({"name": "rogue__crash", "arguments": {}}));
    let crashed = server.post(&message).json();
    assert_eq!(crashed["error"]["data"]["reason"], "external_server_exited", "{crashed}");
    gateway_setup::wait_until("rogue restarted", Duration::from_secs(20), || {
        series(restarts).0 == Some(1.0) && series(up).0 == Some(1.0)
    });
    let (_, text) = series(up);
    assert_sample(
        &samples(&text),
        r#"teaagent_calls_total{tool="rogue__crash",outcome="external_server"}"#,
        1.0,
        &text,
    );
    promtool_check(&text).unwrap_or_else(|said| panic!("promtool: {said}\n{text}"));
}
