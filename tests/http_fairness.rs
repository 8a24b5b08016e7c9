//! One caller cannot stall the others (README, "Security model and its limits"): the real
//! `teaagent mcp serve --http` over real sockets, with several bearer tokens (callers).
//!
//! - an unanswered approval question of one caller does not hold back another caller's;
//! - a caller has only so many questions open, calls in progress, `subscriptions/listen`
//!   streams and requests (connections) at once; past each, a clear refusal naming the limit,
//!   and a refused call spends nothing;
//! - `/healthz` and `/readyz` answer even when every connection is taken;
//! - without tokens, each client address is a caller of its own (connections from several
//!   loopback addresses).
//!
//! Timeouts here only detect a hang (a question held back behind another one's 120 s).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::http as raw;
use raw::{Http, Reply, connect_from, in_session, modern_headers, request};

/// Long enough for any answer that is not held back; far shorter than the 120 s a question
/// waits for its answer. (A stream's keep-alive comments, every 15 s, do not reset it.)
const HANG: Duration = Duration::from_secs(20);

const TOKENS: &str = "alice:alice-0123456789abcdef\nbob:bob-0123456789abcdef\ncarol:carol-0123456789abcdef\ndave:dave-0123456789abcdef\nerin:erin-0123456789abcdef";

fn bearer(name: &str) -> String {
    format!("Bearer {name}-0123456789abcdef")
}

fn server(tree: &Tree, home: &Tree, flags: &[&str]) -> Http {
    Http::teaagent(tree, home, flags, &[("TEAAGENT_HTTP_TOKENS", TOKENS)])
}

/// A request whose answer is read as it comes: its head, then its SSE events one by one (or
/// its JSON body).
struct Open {
    reader: BufReader<TcpStream>,
    /// Past this, the answer was held back.
    deadline: Instant,
    /// The status and headers, once read.
    head: Option<(u16, Vec<(String, String)>)>,
}

impl Open {
    fn send(server: &Http, method: &str, headers: &[(&str, &str)], body: &str) -> Self {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream.set_read_timeout(Some(HANG)).expect("timeout");
        let mut head =
            format!("{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, body.len());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        stream.write_all(format!("{head}\r\n{body}").as_bytes()).expect("send");
        Open { reader: BufReader::new(stream), head: None, deadline: Instant::now() + HANG }
    }

    /// A legacy session's POST of `message`, answered as a stream when it asks something.
    fn in_session(server: &Http, who: &str, session: &str, message: &Value) -> Self {
        let auth = bearer(who);
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", auth.as_str()),
        ];
        Open::send(server, "POST", &headers, &message.to_string())
    }

    /// A modern POST of `message`.
    fn modern(server: &Http, who: &str, message: &Value) -> Self {
        let auth = bearer(who);
        let mut headers = modern_headers(message);
        headers.push(("Authorization".into(), auth));
        let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Open::send(server, "POST", &refs, &message.to_string())
    }

    /// The status code (the head is read once, up to its blank line).
    fn status(&mut self) -> u16 {
        if self.head.is_none() {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("the status line (held back?)");
            let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            let mut headers = Vec::new();
            loop {
                line.clear();
                let n = self.reader.read_line(&mut line).expect("a header");
                if n == 0 || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                }
            }
            self.head = Some((status, headers));
        }
        self.head.as_ref().map_or(0, |(status, _)| *status)
    }

    fn header(&mut self, name: &str) -> Option<String> {
        self.status();
        let (_, headers) = self.head.as_ref()?;
        headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    /// The next message: the JSON body of a JSON answer, else the next SSE event's data.
    fn next(&mut self) -> Value {
        if self.header("content-type").is_some_and(|t| t.starts_with("application/json")) {
            let length = self.header("content-length").and_then(|l| l.parse().ok()).expect("a length");
            let mut body = vec![0; length];
            self.reader.read_exact(&mut body).expect("the body");
            return serde_json::from_slice(&body).expect("a JSON answer");
        }
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("read the stream (held back?)");
            assert!(n > 0, "the stream ended");
            assert!(Instant::now() < self.deadline, "held back: nothing but keep-alives for {HANG:?}");
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return serde_json::from_str(data).expect("JSON event");
            }
        }
    }
}

fn write_call(id: u32, file: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": file, "content": "ok"}}})
}

fn answer(ask: &Value, decision: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"decision": decision}}})
}

/// A new legacy session of `who` whose client takes forms (once more when its connection met
/// the server with every slot taken by connections that were just closing).
fn session_of(server: &Http, who: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "raw", "version": "0"}}});
    let auth = bearer(who);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", auth.as_str()),
    ];
    for _ in 0..100 {
        let r = server.exchange("POST", "/mcp", &headers, init.to_string().as_bytes());
        match r.status {
            200 => return r.header("mcp-session-id").expect("a session id").to_owned(),
            503 => std::thread::sleep(Duration::from_millis(20)),
            _ => panic!("initialize: {r:?}"),
        }
    }
    panic!("no slot to initialize");
}

/// `error.data` of a caller-limit refusal of `limit`, checked.
fn assert_caller_limit(error: &Value, limit: &str, max: u64) {
    assert_eq!(error["code"], -32000, "{error}");
    assert_eq!(error["data"]["reason"], "caller_limit", "{error}");
    assert_eq!(error["data"]["limit"], limit, "{error}");
    assert_eq!(error["data"]["max"], max, "{error}");
    assert_eq!(error["data"]["retryAfterSeconds"], 1, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("most one caller")), "{error}");
}

#[test]
fn one_callers_unanswered_question_does_not_hold_back_anothers() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &["--permission-mode", "prompt"]);
    let (alice, bob) = (session_of(&server, "alice"), session_of(&server, "bob"));
    let mut first = Open::in_session(&server, "alice", &alice, &write_call(1, "alice.txt"));
    let alices = first.next();
    assert_eq!(alices["method"], "elicitation/create", "{alices}");
    // Alice does not answer. Bob is asked all the same, at once.
    let mut second = Open::in_session(&server, "bob", &bob, &write_call(2, "bob.txt"));
    let bobs = second.next();
    assert_eq!(bobs["method"], "elicitation/create", "bob's question was held back: {bobs}");
    let r = in_session(&server, &bob, &answer(&bobs, "once"), &[("Authorization", &bearer("bob"))]);
    assert_eq!(r.status, 202, "{r:?}");
    assert!(second.next()["result"].is_object());
    assert!(tree.path("ws/bob.txt").exists());
    // Alice's question is still open, and still hers to answer.
    let r = in_session(&server, &alice, &answer(&alices, "deny"), &[("Authorization", &bearer("alice"))]);
    assert_eq!(r.status, 202, "{r:?}");
    assert_eq!(first.next()["error"]["code"], -32001);
    assert!(!tree.path("ws/alice.txt").exists());
}

#[test]
fn a_caller_with_its_most_questions_open_is_refused_at_once() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &["--permission-mode", "prompt"]);
    // Alice asks four questions (the default share) and answers none.
    let mut open = Vec::new();
    for n in 0..4 {
        let session = session_of(&server, "alice");
        let mut call = Open::in_session(&server, "alice", &session, &write_call(n, &format!("a{n}.txt")));
        let ask = call.next();
        assert_eq!(ask["method"], "elicitation/create");
        open.push((call, session, ask));
    }
    // The fifth is refused at once, naming the limit; nobody is asked.
    let session = session_of(&server, "alice");
    let mut fifth = Open::in_session(&server, "alice", &session, &write_call(9, "a9.txt"));
    let refused = fifth.next();
    assert_caller_limit(&refused["error"], "questions", 4);
    assert_eq!(refused["id"], 9);
    // Bob is asked as usual.
    let bob = session_of(&server, "bob");
    let mut call = Open::in_session(&server, "bob", &bob, &write_call(1, "bob.txt"));
    assert_eq!(call.next()["method"], "elicitation/create");
    // Once one of alice's is answered, she may ask again.
    let (mut first, first_session, first_ask) = open.remove(0);
    let no = in_session(
        &server,
        &first_session,
        &answer(&first_ask, "deny"),
        &[("Authorization", &bearer("alice"))],
    );
    assert_eq!(no.status, 202, "{no:?}");
    assert_eq!(first.next()["error"]["code"], -32001);
    let mut again = Open::in_session(&server, "alice", &session, &write_call(10, "a10.txt"));
    let asked = again.next();
    assert_eq!(asked["method"], "elicitation/create", "an answered question is no longer open: {asked}");
}

#[test]
fn a_caller_over_its_calls_is_refused_and_spends_nothing() {
    let (tree, home) = (Tree::new(), Tree::new());
    let flags = ["--permission-mode", "prompt", "--grant", "create_file;uses=1", "--http-caller-calls", "2"];
    let server = server(&tree, &home, &flags);
    std::fs::write(tree.root().join("notes.txt"), "bob's").expect("write");
    // Alice has two calls in progress (each waits for its approval).
    let mut held = Vec::new();
    for n in 0..2 {
        let session = session_of(&server, "alice");
        let mut call = Open::in_session(&server, "alice", &session, &write_call(n, &format!("a{n}.txt")));
        let ask = call.next();
        assert_eq!(ask["method"], "elicitation/create");
        held.push((session, call, ask));
    }
    // A third is refused before anything: the grant's one use stays.
    let create = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "create_file", "arguments": {"path": "granted.txt", "content": "x"}}});
    let (session, mut call, ask) = held.remove(0);
    let refused = Open::in_session(&server, "alice", &session, &create).next();
    assert_caller_limit(&refused["error"], "calls", 2);
    assert!(!tree.path("ws/granted.txt").exists());
    // And `/metrics` counts it.
    let auth = bearer("bob");
    let scrape = raw::exchange(server.addr, "GET", "/metrics", &[("Authorization", auth.as_str())], b"");
    let counted = r#"teaagent_refusals_total{reason="refused",rule="call_share"} 1"#;
    assert!(scrape.body.lines().any(|l| l == counted), "{counted} in:\n{}", scrape.body);
    // Bob's calls run meanwhile.
    let read = request(1, "tools/call", json!({"name": "read_file", "arguments": {"path": "notes.txt"}}));
    let read = Open::modern(&server, "bob", &read).next();
    assert!(read["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("bob's")), "{read}");
    // Alice's first call is answered: she may call again, and her call runs on the grant.
    let r = in_session(&server, &session, &answer(&ask, "once"), &[("Authorization", &bearer("alice"))]);
    assert_eq!(r.status, 202, "{r:?}");
    assert!(call.next()["result"].is_object());
    let ran = Open::in_session(&server, "alice", &session, &create).next();
    assert!(ran["result"].is_object(), "the grant's use was still there: {ran}");
    assert!(tree.path("ws/granted.txt").exists());
}

#[test]
fn one_caller_cannot_take_every_listen_stream() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &[]);
    let listen = |id: i64| request(id, "subscriptions/listen", json!({"notifications": {}}));
    // Alice opens streams until she is refused (the server has 16 in all).
    let mut streams = Vec::new();
    let refused = loop {
        assert!(streams.len() < 16, "alice took every stream");
        let mut stream = Open::modern(&server, "alice", &listen(streams.len() as i64));
        let first = stream.next();
        if first["method"] == "notifications/subscriptions/acknowledged" {
            streams.push(stream);
        } else {
            break first;
        }
    };
    assert_caller_limit(&refused["error"], "subscriptions", 4);
    assert_eq!(streams.len(), 4);
    // Bob opens his.
    let mut bobs = Open::modern(&server, "bob", &listen(1));
    let ack = bobs.next();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
}

/// A GET of a new legacy session's notification stream, open: its `200` head read.
fn notification_stream(server: &Http, who: &str) -> Open {
    let session = session_of(server, who);
    let auth = bearer(who);
    let headers =
        [("Accept", "text/event-stream"), ("Mcp-Session-Id", session.as_str()), ("Authorization", &auth)];
    for _ in 0..100 {
        let mut stream = Open::send(server, "GET", &headers, "");
        match stream.status() {
            200 => return stream,
            // A connection of an exchange just finished may still hold its slot: once more.
            503 => std::thread::sleep(Duration::from_millis(20)),
            other => panic!("GET stream: {other}"),
        }
    }
    panic!("no slot for a stream");
}

fn head_only(server: &Http, path: &str) -> Reply {
    let mut stream = TcpStream::connect(server.addr).expect("connect");
    stream.set_read_timeout(Some(HANG)).expect("timeout");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", server.addr)
        .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("an answer (not accepted?)");
    Reply::parse(&raw).expect("a response")
}

#[test]
fn a_caller_over_its_connections_is_refused_and_health_always_answers() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = server(&tree, &home, &[]);
    // Alice holds 64 requests (the default share): open notification streams.
    let mut streams: Vec<Open> = (0..64).map(|_| notification_stream(&server, "alice")).collect();
    // One more is refused with 429, naming the limit, and its connection is closed.
    let list = request(1, "tools/list", json!({}));
    let mut headers = modern_headers(&list);
    headers.push(("Authorization".into(), bearer("alice")));
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = server.exchange("POST", "/mcp", &refs, list.to_string().as_bytes());
    assert_eq!(r.status, 429, "{r:?}");
    assert_eq!(r.header("retry-after"), Some("1"), "{r:?}");
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    assert_caller_limit(&r.json()["error"], "requests", 64);
    // Bob is served, and so is the load balancer.
    let bobs = Open::modern(&server, "bob", &list).next();
    assert!(bobs["result"]["tools"].is_array(), "{bobs}");
    assert_eq!(head_only(&server, "/healthz").status, 200);
    // Three more callers take the server's other 192 connections: every one (256) is held.
    for who in ["carol", "dave", "erin"] {
        streams.extend((0..64).map(|_| notification_stream(&server, who)));
    }
    assert_eq!(streams.len(), 256);
    // Health checks still answer; anything else is told to come back.
    let healthz = head_only(&server, "/healthz");
    assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok\n"), "{healthz:?}");
    assert_eq!(head_only(&server, "/readyz").status, 200);
    let r = server.exchange("POST", "/mcp", &[], b"{}");
    assert_eq!(r.status, 503, "{r:?}");
    assert_eq!(r.header("retry-after"), Some("1"), "{r:?}");
    assert!(r.body.contains("most connections"), "{r:?}");
    // A stream given up frees its connection for bob.
    drop(streams.pop());
    let mut served = false;
    for _ in 0..200 {
        let mut bobs = Open::modern(&server, "bob", &list);
        if bobs.status() == 200 {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(served, "a freed connection serves again");
}

/// `message` as a modern POST from `source`, its body cut after `sent` bytes (all of it: the
/// answer is read, the connection closed by the server).
fn post_from(
    server: &Http,
    source: &str,
    message: &Value,
    sent: Option<usize>,
) -> (TcpStream, Option<Reply>) {
    let mut stream = connect_from(source, server.addr);
    stream.set_read_timeout(Some(HANG)).expect("timeout");
    let body = message.to_string();
    let headers = modern_headers(message);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let sent = sent.unwrap_or(body.len());
    let head = raw::head(server.addr, "POST", "/mcp", &headers, body.len());
    stream.write_all(format!("{head}{}", &body[..sent]).as_bytes()).expect("send");
    if sent < body.len() {
        return (stream, None);
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("an answer");
    (stream, Some(Reply::parse(&raw).expect("a response")))
}

/// Without authentication a caller is a client's address: one address holding its share of
/// requests (here 2, their bodies still to come) is refused one more, while another address is
/// served; its requests given up, it is served again.
#[test]
fn without_tokens_each_address_is_a_caller_of_its_own() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &["--http-caller-connections", "2"], &[]);
    let list = request(1, "tools/list", json!({}));
    let held: Vec<TcpStream> = (0..2).map(|_| post_from(&server, "127.0.0.2", &list, Some(5)).0).collect();
    // The held requests are admitted as the server reads their heads: until then one more may
    // still be served.
    let deadline = Instant::now() + HANG;
    let refused = loop {
        let reply = post_from(&server, "127.0.0.2", &list, None).1.expect("a reply");
        if reply.status == 429 {
            break reply;
        }
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(Instant::now() < deadline, "127.0.0.2 was never refused past its share");
    };
    assert_caller_limit(&refused.json()["error"], "requests", 2);
    let other = post_from(&server, "127.0.0.3", &list, None).1.expect("a reply");
    assert_eq!(other.status, 200, "another address is served: {other:?}");
    assert!(other.json()["result"]["tools"].is_array(), "{other:?}");
    drop(held);
    let deadline = Instant::now() + HANG;
    while post_from(&server, "127.0.0.2", &list, None).1.expect("a reply").status != 200 {
        assert!(Instant::now() < deadline, "127.0.0.2's shares were never given back");
        std::thread::sleep(Duration::from_millis(25));
    }
}
