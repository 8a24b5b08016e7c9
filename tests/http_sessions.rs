//! Legacy sessions over Streamable HTTP (protocol 2025-11-25), against `teaagent mcp
//! serve --http`: a session opens, serves and ends, and belongs to its principal; approvals are
//! asked on the POST's stream and answered by another POST, and an approval for the session
//! stays in it; a caller that leaks sessions only ends its own.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::http as raw;
use raw::{Http, Streaming, in_session, open_session};

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
