//! Streamable HTTP (SPEC §12, protocol 2026-07-28) against the real binaries: `teaagent mcp
//! serve --http` and the fixture server (`FIXTURE_HTTP`), driven by the official Rust SDK's
//! streamable-HTTP client and by raw HTTP/1.1 for every status code: the path, Host and Origin
//! (DNS rebinding), bearer tokens, method, media types, body limit, one message per body, the
//! `_meta` / header checks in order, unknown methods, notifications, the legacy era's refusal.
//! Streams: progress as SSE events with the response last; a closed connection cancels the call.

#[path = "common/client.rs"]
mod client;
#[path = "common/http.rs"]
mod raw;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use raw::{Http, Reply, in_session, meta, modern_headers, open_session, request};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_speaks_the_modern_era_over_http() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
        ),
        events: tokio::sync::mpsc::unbounded_channel().0,
    };
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = client::timely(recorder.serve_with_lifecycle(transport, mode)).await.expect("discover");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version.as_str(), "2026-07-28");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "read_file"), "{tools:?}");
    let read = client::timely(
        client.call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(json!({"path": "src/a.txt"}).as_object().cloned().expect("object")),
        ),
    )
    .await
    .expect("read_file");
    assert_eq!(serde_json::to_value(&read).expect("json")["content"][0]["text"], "hello\n");
    let unknown = client::timely(client.call_tool(CallToolRequestParams::new("no_such_tool"))).await;
    assert!(
        format!("{unknown:?}").contains("-32601") || format!("{unknown:?}").contains("Unknown tool"),
        "{unknown:?}"
    );
    // Refused by the policy (workspace-write: write_file is destructive), in-band.
    let denied =
        client::timely(client.call_tool(
            CallToolRequestParams::new("write_file").with_arguments(
                json!({"path": "x.txt", "content": "x"}).as_object().cloned().expect("object"),
            ),
        ))
        .await;
    assert!(format!("{denied:?}").contains("32001"), "{denied:?}");
    assert!(!tree.path("ws/x.txt").exists());
    client.cancel().await.expect("close");
}

#[test]
fn every_refusal_has_its_status_and_code() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let ok = request(1, "tools/list", json!({}));
    let good = server.post(&ok);
    assert_eq!(good.status, 200, "{good:?}");
    assert!(good.header("content-length").is_some(), "a JSON answer has a length: {good:?}");
    assert_eq!(good.header("content-type"), Some("application/json"));

    let headers = |message: &Value| modern_headers(message);
    let send = |hs: Vec<(String, String)>, body: &[u8]| {
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", "/mcp", &refs, body)
    };
    let without = |message: &Value, name: &str| {
        headers(message).into_iter().filter(|(k, _)| !k.eq_ignore_ascii_case(name)).collect::<Vec<_>>()
    };
    let with = |message: &Value, name: &str, value: &str| {
        let mut hs = without(message, name);
        hs.push((name.to_owned(), value.to_owned()));
        hs
    };
    let code = |r: &Reply| r.json()["error"]["code"].as_i64().unwrap_or(0);
    let body = ok.to_string();

    // Paths and methods.
    assert_eq!(server.exchange("GET", "/elsewhere", &[], b"").status, 404);
    assert_eq!(server.exchange("GET", "/healthz", &[], b"").status, 200);
    assert_eq!(server.exchange("GET", "/readyz", &[], b"").status, 200);
    for method in ["GET", "DELETE", "PUT"] {
        let r = server.exchange(method, "/mcp", &[], b"");
        assert_eq!((r.status, r.header("allow")), (405, Some("POST")), "{method}: {r:?}");
    }
    // Media types and size.
    let r = send(with(&ok, "Content-Type", "text/plain"), body.as_bytes());
    assert_eq!(r.status, 415, "{r:?}");
    let r = send(with(&ok, "Accept", "text/html"), body.as_bytes());
    assert_eq!(r.status, 406, "{r:?}");
    let r = send(without(&ok, "Accept"), body.as_bytes());
    assert_eq!(r.status, 200, "no Accept means anything: {r:?}");
    // Larger than the limit: refused on its declared length, before the body is sent (a client
    // that sends it anyway meets a closed connection: `framing_and_headers_are_strict`).
    let huge =
        request(2, "tools/call", json!({"name": "read_file", "arguments": {"path": "x".repeat(5 << 20)}}));
    let status = status_of_head_only(&server, &modern_headers(&huge), huge.to_string().len());
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    // One parsable message.
    let r = send(headers(&ok), b"{not json");
    assert_eq!((r.status, code(&r)), (400, -32700), "{r:?}");
    let r = send(headers(&ok), format!("[{body}]").as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32600), "{r:?}");
    // `_meta`, then the version header, then the version, then method and name.
    let bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    let r = send(headers(&bare), bare.to_string().as_bytes());
    assert_eq!((r.status, code(&r), r.json()["id"].clone()), (400, -32602, json!(3)), "{r:?}");
    let r = send(with(&ok, "MCP-Protocol-Version", "2026-01-01"), body.as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "header and _meta disagree: {r:?}");
    let r = send(without(&ok, "MCP-Protocol-Version"), body.as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "{r:?}");
    let mut future = request(4, "tools/list", json!({}));
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = send(with(&future, "MCP-Protocol-Version", "2099-01-01"), future.to_string().as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32022), "{r:?}");
    assert_eq!(r.json()["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "2099-01-01"}));
    let r = send(with(&ok, "Mcp-Method", "tools/call"), body.as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "{r:?}");
    let r = send(without(&ok, "Mcp-Method"), body.as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "{r:?}");
    let call = request(5, "tools/call", json!({"name": "read_file", "arguments": {"path": "src/a.txt"}}));
    let r = send(with(&call, "Mcp-Name", "write_file"), call.to_string().as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "{r:?}");
    let r = send(without(&call, "Mcp-Name"), call.to_string().as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32020), "{r:?}");
    // A name in base64 (`=?base64?…?=`) is decoded before comparing.
    let r = send(with(&call, "Mcp-Name", "=?base64?cmVhZF9maWxl?="), call.to_string().as_bytes());
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "hello\n");
    // Methods this era does not have.
    for method in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"] {
        let m = request(6, method, json!({}));
        let r = send(headers(&m), m.to_string().as_bytes());
        assert_eq!((r.status, code(&r)), (404, -32601), "{method}: {r:?}");
    }
    // A notification is accepted and has no answer.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": meta()}});
    let r = send(headers(&note), note.to_string().as_bytes());
    assert_eq!((r.status, r.body.as_str()), (202, ""), "{r:?}");
    // A legacy message without a session.
    let legacy = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let r = server.exchange(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        legacy.to_string().as_bytes(),
    );
    assert_eq!((r.status, r.json()["error"]["data"]["reason"].clone()), (400, json!("no_session")), "{r:?}");
    // Pipeline errors are in-band.
    let bad = request(
        8,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "../outside/secret.txt"}}),
    );
    let r = server.post(&bad);
    assert_eq!((r.status, code(&r)), (200, -32602), "{r:?}");
    assert!(!r.body.contains("top secret"));
}

#[test]
fn dns_rebinding_is_refused_by_host_and_origin() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &["--http-allow-origin", "https://app.example.com"], &[]);
    let message = request(1, "tools/list", json!({}));
    let mut base = modern_headers(&message);
    let send = |extra: &[(&str, &str)]| {
        let mut hs: Vec<(String, String)> = base.clone();
        hs.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", "/mcp", &refs, message.to_string().as_bytes())
    };
    let port = server.addr.port();
    assert_eq!(send(&[("Host", "evil.example.com")]).status, 403);
    assert_eq!(send(&[("Host", &format!("evil.example.com:{port}"))]).status, 403);
    assert_eq!(send(&[("Origin", "http://evil.example.com")]).status, 403);
    assert_eq!(send(&[("Origin", "null")]).status, 403);
    assert_eq!(send(&[("Origin", &format!("http://localhost:{}", port + 1))]).status, 403, "another port");
    assert_eq!(send(&[("Origin", &format!("http://localhost:{port}"))]).status, 200);
    assert_eq!(send(&[("Origin", &format!("http://127.0.0.1:{port}"))]).status, 200);
    assert_eq!(send(&[("Origin", "https://app.example.com")]).status, 200, "configured");
    assert_eq!(send(&[("Host", &format!("localhost:{port}"))]).status, 200);
    for host in ["localhost.evil.com", "127.0.0.1.nip.io"] {
        assert_eq!(send(&[("Host", host)]).status, 403, "Host {host:?}");
    }
    // Not a host name at all (RFC 9112: 400).
    for host in ["localhost@evil.com", "[::1]evil.com", "[::1]:x", "", "localhost:evil.com"] {
        assert_eq!(send(&[("Host", host)]).status, 400, "Host {host:?}");
    }
    // Every method of the endpoint, not only POST.
    for method in ["GET", "DELETE"] {
        let r = server.exchange(
            method,
            "/mcp",
            &[("Origin", "http://evil.example.com"), ("Mcp-Session-Id", "x")],
            b"",
        );
        assert_eq!(r.status, 403, "{method}");
    }
    // CORS: an allowed browser origin gets its preflight and the headers it needs.
    let pre = server.exchange(
        "OPTIONS",
        "/mcp",
        &[("Origin", "https://app.example.com"), ("Access-Control-Request-Method", "POST")],
        b"",
    );
    assert_eq!(pre.status, 204, "{pre:?}");
    assert!(
        pre.header("access-control-allow-headers")
            .is_some_and(|h| h.contains("mcp-session-id") && h.contains("authorization"))
    );
    assert_eq!(pre.header("access-control-allow-origin"), Some("https://app.example.com"));
    let foreign = server.exchange("OPTIONS", "/mcp", &[("Origin", "https://evil.example.com")], b"");
    assert_eq!(foreign.status, 403);
    assert!(foreign.header("access-control-allow-origin").is_none());
    let r = send(&[("Origin", "https://app.example.com")]);
    assert_eq!(r.header("access-control-allow-origin"), Some("https://app.example.com"));
    assert!(r.header("access-control-expose-headers").is_some_and(|h| h.contains("mcp-session-id")));
    base.clear();
}

#[test]
fn bearer_tokens_guard_the_endpoint_and_name_the_principal() {
    let (tree, home) = (Tree::new(), Tree::new());
    let tokens = home.path("tokens");
    std::fs::write(&tokens, "# who may call\nalice:alice-0123456789abcdef\n").expect("tokens");
    let server = Http::teaagent(
        &tree,
        &home,
        &["--http-token-file", tokens.to_str().expect("utf-8"), "--permission-mode", "allow"],
        &[("TEAAGENT_HTTP_TOKENS", "bob:bob-0123456789abcdef01")],
    );
    let write = request(
        1,
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": "by-alice.txt", "content": "a"}}),
    );
    let mut hs = modern_headers(&write);
    let send = |hs: &[(String, String)]| {
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", "/mcp", &refs, write.to_string().as_bytes())
    };
    let r = send(&hs);
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(r.header("www-authenticate"), Some(r#"Bearer realm="teaagent""#), "no error without a token");
    hs.push(("Authorization".into(), "Bearer alice-0123456789abcdeX".into()));
    let r = send(&hs);
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some_and(|h| h.contains(r#"error="invalid_token""#)), "{r:?}");
    assert!(!tree.path("ws/by-alice.txt").exists(), "nothing ran");
    hs.pop();
    hs.push(("Authorization".into(), "Basic YWxpY2U6eA==".into()));
    assert_eq!(send(&hs).status, 401, "only bearer");
    hs.pop();
    hs.push(("Authorization".into(), "Bearer alice-0123456789abcdef".into()));
    let r = send(&hs);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(std::fs::read_to_string(tree.path("ws/by-alice.txt")).expect("written"), "a");
    hs.pop();
    hs.push(("Authorization".into(), "bearer bob-0123456789abcdef01".into()));
    assert_eq!(send(&hs).status, 200, "from the environment too; the scheme in any case");
    let audit = std::fs::read_to_string(home.path("audit.jsonl")).expect("audit");
    let principals: Vec<Value> =
        audit.lines().map(|l| serde_json::from_str::<Value>(l).expect("json")["principal"].clone()).collect();
    assert!(
        principals.contains(&json!("token:alice")) && principals.contains(&json!("token:bob")),
        "{audit}"
    );
    assert!(!audit.contains("0123456789abcdef"), "no token in the audit");
    assert!(!server.stderr().contains("0123456789abcdef"), "no token in the logs");
    // A token in the URL is refused, not used (URLs end up in logs).
    let headers = modern_headers(&write);
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = server.exchange(
        "POST",
        "/mcp?access_token=alice-0123456789abcdef",
        &refs,
        write.to_string().as_bytes(),
    );
    assert_eq!(r.status, 400, "{r:?}");
    // Health needs no token.
    assert_eq!(server.exchange("GET", "/healthz", &[], b"").status, 200);
}

#[test]
fn a_public_address_needs_tokens() {
    let (tree, home) = (Tree::new(), Tree::new());
    let out = Command::new(Bin::Teaagent.path())
        .args(["mcp", "serve", "--http", "0.0.0.0:0", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to serve HTTP on 0.0.0.0") && err.contains("token"), "{err}");
    assert!(out.stdout.is_empty());
    let server = Http::teaagent(
        &tree,
        &home,
        &["--http", "0.0.0.0:0"],
        &[("TEAAGENT_HTTP_TOKENS", "ops:ops-0123456789abcdef")],
    );
    let loopback: SocketAddr = format!("127.0.0.1:{}", server.addr.port()).parse().expect("addr");
    let r = TcpStream::connect(loopback).and_then(|mut s| {
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
        let mut out = String::new();
        s.read_to_string(&mut out)?;
        Ok(out)
    });
    assert!(r.expect("health").starts_with("HTTP/1.1 200"));
}

#[test]
fn progress_streams_as_events_and_a_closed_stream_cancels_the_call() {
    let home = Tree::new();
    let server = Http::fixture(&home);
    // Progress: the answer becomes a stream, the response its last event.
    let mut slow = request(1, "tools/call", json!({"name": "slow", "arguments": {"ms": 300, "steps": 3}}));
    slow["params"]["_meta"]["progressToken"] = json!("p1");
    let r = server.post(&slow);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-type"), Some("text/event-stream"), "{r:?}");
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    let events = r.events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        events[..3]
            .iter()
            .all(|e| e["method"] == "notifications/progress" && e["params"]["progressToken"] == "p1")
    );
    assert_eq!(events[3]["id"], 1);
    assert_eq!(events[3]["result"]["content"][0]["text"], "slept 300 ms");
    // A client that takes JSON only gets JSON (its progress is dropped).
    let mut hs = modern_headers(&slow);
    hs.retain(|(k, _)| k != "Accept");
    hs.push(("Accept".into(), "application/json".into()));
    let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = server.exchange("POST", "/mcp", &refs, slow.to_string().as_bytes());
    assert_eq!((r.status, r.header("content-type")), (200, Some("application/json")), "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "slept 300 ms");

    // A call that runs until cancelled: closing the connection cancels it.
    for accept in ["application/json, text/event-stream", "application/json"] {
        let marker = home.path(&format!("cancelled-{}", accept.len()));
        let hold = request(
            2,
            "tools/call",
            json!({"name": "hold", "arguments": {"marker": marker.to_str().expect("utf-8")}}),
        );
        let mut hs = modern_headers(&hold);
        hs.retain(|(k, _)| k != "Accept");
        hs.push(("Accept".into(), accept.into()));
        let body = hold.to_string();
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        let mut head =
            format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, body.len());
        for (k, v) in &hs {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        stream.write_all(format!("{head}\r\n{body}").as_bytes()).expect("send");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "{accept}: still running");
        drop(stream);
        server.cancelled(&marker);
    }
}

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
    let _ = Command::new("kill").arg("-TERM").arg(server.child.id().to_string()).status();
    let status = server.child.wait().expect("exit");
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}\n{}", server.stderr());
    let mut out = String::new();
    server.child.stdout.take().expect("stdout").read_to_string(&mut out).expect("read");
    assert!(out.is_empty(), "nothing on stdout over HTTP: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_calls_with_a_token() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server =
        Http::teaagent(&tree, &home, &[], &[("TEAAGENT_HTTP_TOKENS", "ci:ci-token-0123456789abcdef")]);
    let connect = |token: Option<&str>| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(server.url());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let recorder = client::Recorder {
            config: rmcp::model::ClientConfig::new(
                rmcp::model::ClientCapabilities::default(),
                rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
            ),
            events: tokio::sync::mpsc::unbounded_channel().0,
        };
        let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        recorder.serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), mode)
    };
    assert!(client::timely(connect(None)).await.is_err(), "no token, no session");
    let client = client::timely(connect(Some("ci-token-0123456789abcdef"))).await.expect("with the token");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "search_text"));
    client.cancel().await.expect("close");
}

#[test]
fn over_http_stdin_is_not_the_protocol() {
    let (tree, home) = (Tree::new(), Tree::new());
    // An `initialize` already waiting on stdin (the pipe is written before teaagent runs): over
    // HTTP it is not answered (the early answer of stdio serving must not fire).
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
fn legacy_sessions_open_serve_and_end() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(
        &tree,
        &home,
        &[],
        &[("TEAAGENT_HTTP_TOKENS", "a:aaaa-0123456789abcdef\nb:bbbb-0123456789abcdef")],
    );
    let alice = [("Authorization", "Bearer aaaa-0123456789abcdef")];
    let bob = [("Authorization", "Bearer bbbb-0123456789abcdef")];
    let session = open_session(&server, &alice, json!({}));
    let other = open_session(&server, &alice, json!({}));
    assert_ne!(session, other, "every session its own id");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let r = in_session(&server, &session, &list, &alice);
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.json()["result"]["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "read_file"))
    );
    assert!(r.json()["result"].get("resultType").is_none(), "legacy results carry no modern members");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "src/a.txt"}}});
    assert_eq!(
        in_session(&server, &session, &call, &alice).json()["result"]["content"][0]["text"],
        "hello\n"
    );
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    assert_eq!(in_session(&server, &session, &ping, &alice).json()["result"], json!({}));
    // Another principal does not see it; a wrong version header is refused.
    assert_eq!(in_session(&server, &session, &list, &bob).status, 404);
    let headers = [
        ("Content-Type", "application/json"),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
        alice[0],
    ];
    let r = server.exchange("POST", "/mcp", &headers, list.to_string().as_bytes());
    assert_eq!(
        (r.status, r.json()["error"]["data"]["reason"].clone()),
        (400, json!("session_version_mismatch")),
        "{r:?}"
    );
    // The session's GET and DELETE need the token like any request.
    assert_eq!(
        server
            .exchange("GET", "/mcp", &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &session)], b"")
            .status,
        401
    );
    assert_eq!(server.exchange("DELETE", "/mcp", &[("Mcp-Session-Id", &session)], b"").status, 401);
    // Protocol 2026-07-28 inside a legacy session is refused, as on stdio.
    let discover = json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover"});
    assert_eq!(
        in_session(&server, &session, &discover, &alice).json()["error"]["data"]["reason"],
        "era_legacy"
    );
    // A second initialize in the session is refused; notifications and responses are accepted.
    let again = json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}});
    assert_eq!(in_session(&server, &session, &again, &alice).status, 400);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(in_session(&server, &session, &note, &alice).status, 202);
    // The notification stream: one at a time.
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .write_all(
            format!("GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nAuthorization: Bearer aaaa-0123456789abcdef\r\n\r\n", server.addr)
                .as_bytes(),
        )
        .expect("get");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("status");
    assert_eq!(&head, b"HTTP/1.1 200");
    let second = server.exchange(
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &session), alice[0]],
        b"",
    );
    assert_eq!(second.status, 409, "{second:?}");
    // DELETE ends it, and its open stream with it; it is unknown afterwards.
    let r = server.exchange("DELETE", "/mcp", &[("Mcp-Session-Id", &session), alice[0]], b"");
    assert_eq!(r.status, 204, "{r:?}");
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).expect("the stream ends");
    assert_eq!(in_session(&server, &session, &list, &alice).status, 404);
    assert_eq!(in_session(&server, &other, &list, &alice).status, 200, "the other session lives on");
    assert_eq!(in_session(&server, "0123456789abcdef0123456789abcdef", &list, &alice).status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_speaks_the_legacy_era_over_http() {
    let home = Tree::new();
    let server = Http::fixture(&home);
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel::<client::Event>();
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25),
        events: events_tx,
    };
    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let client = client::timely(rmcp::ServiceExt::serve(recorder, transport)).await.expect("initialize");
    assert_eq!(client.peer_info().expect("info").protocol_version.as_str(), "2025-11-25");
    let echo = client::timely(
        client.call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(json!({"text": "legacy"}).as_object().cloned().expect("object")),
        ),
    )
    .await
    .expect("echo");
    assert_eq!(serde_json::to_value(&echo).expect("json")["content"][0]["text"], "legacy");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "slow"));
    let _ = events.try_recv();
    client.cancel().await.expect("close");
}

/// A POST whose answer is read as it streams: its SSE events, one by one.
struct Streaming {
    reader: BufReader<TcpStream>,
}

impl Streaming {
    fn post(server: &Http, headers: &[(&str, &str)], body: &Value) -> Self {
        let body = body.to_string();
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let mut head =
            format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, body.len());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        stream.write_all(format!("{head}\r\n{body}").as_bytes()).expect("send");
        Streaming { reader: BufReader::new(stream) }
    }

    /// The next `data:` line's JSON (chunk sizes and other lines skipped).
    fn next_event(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("read the stream");
            assert!(n > 0, "the stream ended");
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return serde_json::from_str(data).expect("JSON event");
            }
        }
    }
}

#[test]
fn approvals_are_asked_on_the_posts_stream_and_answered_by_another_post() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &["--permission-mode", "prompt"], &[]);
    let session = open_session(&server, &[], json!({"elicitation": {}}));
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    for (answer, written) in [("once", true), ("deny", false)] {
        let file = format!("approved-{answer}.txt");
        let call = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
            "params": {"name": "write_file", "arguments": {"path": file, "content": "ok"}}});
        let mut stream = Streaming::post(&server, &headers, &call);
        let ask = stream.next_event();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        assert!(ask["params"]["message"].as_str().is_some_and(|m| m.contains("write_file")), "{ask}");
        let reply = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"decision": answer}}});
        let r = in_session(&server, &session, &reply, &[]);
        assert_eq!(r.status, 202, "{r:?}");
        let result = stream.next_event();
        assert_eq!(result["id"], 10, "{result}");
        assert_eq!(tree.path(&format!("ws/{file}")).exists(), written, "{answer}: {result}");
        if !written {
            assert_eq!(result["error"]["code"], -32001, "{result}");
        }
    }
}

#[test]
fn a_legacy_client_cancels_with_a_notification() {
    let home = Tree::new();
    let server = Http::fixture(&home);
    let session = open_session(&server, &[], json!({}));
    let marker = home.path("held");
    let hold = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "hold", "arguments": {"marker": marker.to_str().expect("utf-8")}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let _held = Streaming::post(&server, &headers, &hold);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!marker.exists(), "still running");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}});
    assert_eq!(in_session(&server, &session, &cancel, &[]).status, 202);
    server.cancelled(&marker);
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
    let started = Instant::now();
    let _ = Command::new("kill").arg("-TERM").arg(server.child.id().to_string()).status();
    let status = server.child.wait().expect("exit");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(started.elapsed() < Duration::from_secs(8), "stopped in {:?}", started.elapsed());
}

#[test]
fn approvals_for_the_session_stay_in_their_session() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &["--permission-mode", "prompt"], &[]);
    let call = |n: u32| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "write_file", "arguments": {"path": "shared.txt", "content": format!("{n}")}}})
    };
    let one = open_session(&server, &[], json!({"elicitation": {}}));
    let two = open_session(&server, &[], json!({"elicitation": {}}));
    let streaming = |session: &str, message: &Value| {
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", session),
        ];
        Streaming::post(&server, &headers, message)
    };
    // Session one approves "for this session".
    let mut first = streaming(&one, &call(1));
    let ask = first.next_event();
    assert_eq!(ask["method"], "elicitation/create");
    let yes = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"decision": "session"}}});
    assert_eq!(in_session(&server, &one, &yes, &[]).status, 202);
    assert!(first.next_event()["result"].is_object());
    // Session one is not asked again…
    let again = in_session(&server, &one, &call(2), &[]);
    assert!(again.json()["result"].is_object(), "{again:?}");
    // …session two is.
    let mut other = streaming(&two, &call(3));
    let ask = other.next_event();
    assert_eq!(ask["method"], "elicitation/create", "another session's approval is not this one's: {ask}");
    let no = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}});
    assert_eq!(in_session(&server, &two, &no, &[]).status, 202);
    assert_eq!(other.next_event()["error"]["code"], -32001);
    assert_eq!(std::fs::read_to_string(tree.path("ws/shared.txt")).expect("written"), "2");
}

#[test]
fn a_request_id_is_free_again_once_its_client_left() {
    let home = Tree::new();
    let server = Http::fixture(&home);
    let session = open_session(&server, &[], json!({}));
    let marker = home.path("left");
    let hold = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "hold", "arguments": {"marker": marker.to_str().expect("utf-8")}}});
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let held = Streaming::post(&server, &headers, &hold);
    std::thread::sleep(Duration::from_millis(500));
    drop(held);
    server.cancelled(&marker);
    let echo = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}});
    let r = in_session(&server, &session, &echo, &[]);
    assert_eq!(r.json()["result"]["content"][0]["text"], "again", "{r:?}");
}

#[test]
fn a_client_that_leaks_sessions_only_ends_its_own() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(
        &tree,
        &home,
        &[],
        &[("TEAAGENT_HTTP_TOKENS", "leaky:leaky-0123456789abcdef\ncareful:careful-0123456789abcdef")],
    );
    let careful = [("Authorization", "Bearer careful-0123456789abcdef")];
    let leaky = [("Authorization", "Bearer leaky-0123456789abcdef")];
    let kept = open_session(&server, &careful, json!({}));
    let first_leaked = open_session(&server, &leaky, json!({}));
    // Twice the per-caller quota (64).
    for _ in 0..130 {
        open_session(&server, &leaky, json!({}));
    }
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    assert_eq!(in_session(&server, &kept, &list, &careful).status, 200, "another caller's session lives on");
    assert_eq!(
        in_session(&server, &first_leaked, &list, &leaky).status,
        404,
        "the leaker's oldest was ended"
    );
    // And the careful caller can still open more.
    open_session(&server, &careful, json!({}));
}

#[test]
fn a_token_file_that_is_no_regular_file_is_refused_not_read() {
    let (tree, home) = (Tree::new(), Tree::new());
    let fifo = home.path("tokens.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    for file in [fifo.to_str().expect("utf-8"), "/dev/zero", "/nonexistent/tokens"] {
        let out = Command::new(Bin::Teaagent.path())
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--http-token-file", file, "--root"])
            .arg(tree.root())
            .env("TEAAGENT_HOME", home.base())
            .stdin(Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot read") || err.contains("does not exist"), "{file}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Framing and headers (hardening round 3, "HTTP strictness"): a declared length over the limit
/// is refused at once; a request needs exactly one well-formed `Host`; tokens come in exactly
/// one `Authorization` header and never in the URL, in any spelling.
#[test]
fn framing_and_headers_are_strict() {
    let (tree, home) = (Tree::new(), Tree::new());
    let token = "ci-token-0123456789abcdef";
    let server = Http::teaagent(&tree, &home, &[], &[("TEAAGENT_HTTP_TOKENS", &format!("ci:{token}"))]);
    let bearer = format!("Bearer {token}");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let body = ping.to_string();
    let mut headers = modern_headers(&ping);
    headers.push(("Authorization".to_owned(), bearer.clone()));
    let with = |extra: &[(&str, &str)]| -> Vec<(String, String)> {
        let mut all = headers.clone();
        all.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        all
    };
    let send = |path: &str, all: &[(String, String)]| {
        let refs: Vec<(&str, &str)> = all.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", path, &refs, body.as_bytes())
    };
    assert_eq!(send("/mcp", &headers).status, 200, "the well-formed request is served");

    // A declared length of 10^12 with one byte sent: 413 at once, not after waiting for it.
    let started = Instant::now();
    let status = status_of_head_only(&server, &headers, 1_000_000_000_000);
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    assert!(started.elapsed() < Duration::from_secs(5), "answered after {:?}", started.elapsed());

    let host = server.addr.to_string();
    for (what, extra) in [
        ("a port that is not a number", vec![("Host", "localhost:evil.com")]),
        ("two Host headers", vec![("Host", host.as_str()), ("Host", "evil.example")]),
        ("a Host with a space", vec![("Host", "local host")]),
        ("two Authorization headers", vec![("Authorization", "Bearer another-0123456789abcdef")]),
    ] {
        let reply = send("/mcp", &with(&extra));
        assert_eq!(reply.status, 400, "{what}: {reply:?}");
    }
    for query in [
        "access_token=x",
        "%61ccess_token=x",
        "access_token%3Dx",
        "x=1;access_token=x",
        "ACCESS%5fTOKEN=x",
        "+access_token=x",
    ] {
        let reply = send(&format!("/mcp?{query}"), &headers);
        assert_eq!(reply.status, 400, "?{query}: {reply:?}");
    }
}

/// Sends a POST's head declaring `length` bytes of body and one byte of it, and returns the
/// start of the answer (the status line).
fn status_of_head_only(server: &Http, headers: &[(String, String)], length: usize) -> String {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {length}\r\n", server.addr);
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n{");
    stream.write_all(head.as_bytes()).expect("send");
    let mut answer = [0u8; 64];
    let n = stream.read(&mut answer).expect("an answer");
    String::from_utf8_lossy(&answer[..n]).into_owned()
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
