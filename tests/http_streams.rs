//! Streams over Streamable HTTP, against the fixture server (`FIXTURE_HTTP`): progress
//! as SSE events with the response last; a closed connection cancels the call, and so does a
//! legacy client's `notifications/cancelled`; a request id is free again once its client left.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;
use teaagent_tests::Tree;

use crate::common::http as raw;
use raw::{Http, Streaming, in_session, modern_headers, open_session, request};

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
