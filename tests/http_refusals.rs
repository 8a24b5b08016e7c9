//! What Streamable HTTP (protocol 2026-07-28) refuses, against `teaagent mcp serve
//! --http` over raw HTTP/1.1, with every status code: the path, method, media types, body limit,
//! one message per body, the `_meta` / header checks in order, unknown methods, notifications,
//! the legacy era's refusal; Host and Origin (DNS rebinding) and CORS; strict framing and
//! headers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::http as raw;
use raw::{Http, Reply, meta, modern_headers, request};

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
    // (The caller of a `_meta` is remembered by its exact text: the refusals below with `ok`'s
    // `_meta`, already answered, still meet every header check; one that differs is read again.)
    let mut capless = request(3, "tools/list", json!({}));
    let capabilities = "io.modelcontextprotocol/clientCapabilities";
    capless["params"]["_meta"].as_object_mut().expect("meta").remove(capabilities);
    let r = send(headers(&capless), capless.to_string().as_bytes());
    assert_eq!((r.status, code(&r)), (400, -32602), "no capabilities: {r:?}");
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
    // The status is read from the answer's own `result` or `error`, whatever the ids and the
    // results spell: an id naming either key, or a workspace file shaped as an error answer.
    for id in [json!("\"result\":"), json!("\"error\":{\"code\":-32601}")] {
        let mut m = request(0, "no/such", json!({}));
        m["id"] = id.clone();
        let r = send(headers(&m), m.to_string().as_bytes());
        assert_eq!((r.status, code(&r), r.json()["id"].clone()), (404, -32601, id.clone()), "{r:?}");
        tree.write(
            "ws/looks_failed.json",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m","data":{"reason":"unknown_method"}}}"#,
        );
        let mut read = request(
            0,
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "looks_failed.json"}}),
        );
        read["id"] = id.clone();
        let r = send(headers(&read), read.to_string().as_bytes());
        assert_eq!((r.status, r.json()["result"]["isError"].clone()), (200, json!(false)), "{r:?}");
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

/// The `Mcp-Name` header is compared with the name `serde_json` reads from the body, however the
/// body writes it: escapes in the keys (of the params, or of the envelope, which leaves the
/// params to `serde_json`), escapes in the value, members in any order with any spacing; and a
/// name written twice is refused, whichever one the header repeats.
#[test]
fn the_name_a_header_repeats_is_the_bodys_however_it_is_written() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let call = request(5, "tools/call", json!({"name": "read_file", "arguments": {"path": "src/a.txt"}}));
    let meta = call["params"]["_meta"].to_string();
    let send = |name: &str, body: &str| {
        let mut hs = modern_headers(&call);
        hs.retain(|(k, _)| !k.eq_ignore_ascii_case("Mcp-Name"));
        hs.push(("Mcp-Name".to_owned(), name.to_owned()));
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", "/mcp", &refs, body.as_bytes())
    };
    let code = |r: &Reply| r.json()["error"]["code"].as_i64().unwrap_or(0);
    let args = r#"{"path":"src/a.txt"}"#;
    for body in [
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"n\u0061me":"read_file","arguments":{args},"_meta":{meta}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","p\u0061rams":{{"name":"read\u005ffile","arguments":{args},"_meta":{meta}}}}}"#
        ),
        format!(
            r#" {{ "params" : {{ "_meta" : {meta} , "arguments" : {args} , "name" : "read_file" }} , "method" : "tools/call" , "id" : 5 , "jsonrpc" : "2.0" }} "#
        ),
    ] {
        let r = send("read_file", &body);
        assert_eq!(
            (r.status, r.json()["result"]["content"][0]["text"].clone()),
            (200, json!("hello\n")),
            "{body}: {r:?}"
        );
        let r = send("write_file", &body);
        assert_eq!((r.status, code(&r)), (400, -32020), "{body}: {r:?}");
    }
    let twice = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"write_file","name":"read_file","arguments":{args},"_meta":{meta}}}}}"#
    );
    for name in ["read_file", "write_file"] {
        let r = send(name, &twice);
        assert_eq!((r.status, code(&r)), (400, -32602), "{name}: {r:?}");
    }
}

/// Each MCP header is sent once or the request is refused before anything reads it: a second
/// value (the same or another, its name in any case) would let an intermediary route, authorize
/// or log one request while this server reads another. Modern requests, a legacy session's
/// POST, GET and DELETE alike; the refused request changes nothing (the session still serves).
#[test]
fn an_mcp_header_sent_twice_is_refused_before_anything_reads_it() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let refused = |r: &Reply, header: &str, what: &str| {
        assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32600)), "{what}: {r:?}");
        let message = r.json()["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert_eq!(message, format!("send one {header} header, not several"), "{what}");
        assert!(r.json().get("result").is_none(), "{what}: {r:?}");
    };
    // A modern call: the header sent again in another case, with the same value or another one.
    let call = request(5, "tools/call", json!({"name": "read_file", "arguments": {"path": "src/a.txt"}}));
    let send = |extra: &[(&str, &str)]| {
        let mut hs = modern_headers(&call);
        hs.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        server.exchange("POST", "/mcp", &refs, call.to_string().as_bytes())
    };
    let served = send(&[]);
    assert_eq!(served.json()["result"]["content"][0]["text"], "hello\n", "{served:?}");
    for (header, again) in [
        ("Mcp-Name", ("mcp-name", "write_file")),
        ("Mcp-Name", ("MCP-NAME", "read_file")),
        ("Mcp-Method", ("mcp-method", "tools/list")),
        ("Mcp-Method", ("Mcp-Method", "tools/call")),
        ("MCP-Protocol-Version", ("mcp-protocol-version", "2025-11-25")),
        ("MCP-Protocol-Version", ("Mcp-Protocol-Version", "2026-07-28")),
        ("Mcp-Session-Id", ("Mcp-Session-Id", "a")),
    ] {
        let mut extra = vec![again];
        if header == "Mcp-Session-Id" {
            extra.push(("mcp-session-id", "b"));
        }
        refused(&send(&extra), header, &format!("{again:?}"));
    }

    // A legacy session: its id or its version twice, on POST, GET and DELETE.
    let session = raw::open_session(&server, &[], json!({}));
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for again in [("mcp-session-id", session.as_str()), ("MCP-SESSION-ID", "another")] {
        refused(
            &raw::in_session(&server, &session, &list, &[again]),
            "Mcp-Session-Id",
            &format!("{again:?}"),
        );
    }
    let r = raw::in_session(&server, &session, &list, &[("mcp-protocol-version", "2025-11-25")]);
    refused(&r, "MCP-Protocol-Version", "the version twice");
    for method in ["GET", "DELETE"] {
        let headers = [
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", session.as_str()),
            ("mcp-session-id", session.as_str()),
        ];
        refused(&server.exchange(method, "/mcp", &headers, b""), "Mcp-Session-Id", method);
    }
    let r = raw::in_session(&server, &session, &list, &[]);
    assert_eq!(r.status, 200, "the session outlived the refused DELETE: {r:?}");
    let listed = if r.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
        r.events().into_iter().next().unwrap_or_default()
    } else {
        r.json()
    };
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
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

/// Requests one after another on one kept-alive connection, each with its own secrets in its
/// headers: no answer carries a header of any request, its own or one before it on the
/// connection (hyper reads a request into the header map of the answer before it).
#[test]
fn answers_carry_none_of_the_requests_headers() {
    let (tree, home) = (Tree::new(), Tree::new());
    let token = "ci-token-0123456789abcdef";
    let server = Http::teaagent(&tree, &home, &[], &[("TEAAGENT_HTTP_TOKENS", &format!("ci:{token}"))]);
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    let mut pending = Vec::new();
    for i in 0..4 {
        let ping = json!({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": meta()}});
        let body = ping.to_string();
        let mut head =
            format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, body.len());
        head.push_str(&format!("Authorization: Bearer {token}\r\nCookie: session=secret-cookie-{i}\r\n"));
        for n in 0..(3 * i) {
            head.push_str(&format!("X-Secret-{n}: secret-value-{i}-{n}\r\n"));
        }
        for (k, v) in modern_headers(&ping) {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("send head");
        stream.write_all(body.as_bytes()).expect("send body");
        let reply = read_kept_alive(&mut stream, &mut pending);
        assert_eq!(reply.status, 200, "request {i}: {reply:?}");
        assert_eq!(reply.json()["id"], i, "request {i}: {reply:?}");
        let names: Vec<&str> = reply.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["content-type", "content-length", "date"], "request {i}: {reply:?}");
        assert!(!reply.headers.iter().any(|(_, v)| v.contains("secret")), "request {i}: {reply:?}");
    }
}

/// The next whole response on a kept-alive connection (its body as long as `Content-Length`
/// says); `pending` holds what was read past it.
fn read_kept_alive(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Reply {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = Reply::parse(&pending[..end + 4]).expect("a head");
            let length: usize = head.header("content-length").and_then(|l| l.parse().ok()).expect("a length");
            if pending.len() >= end + 4 + length {
                let whole: Vec<u8> = pending.drain(..end + 4 + length).collect();
                return Reply::parse(&whole).expect("a response");
            }
        }
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "the connection closed mid-answer");
        pending.extend_from_slice(&chunk[..n]);
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
