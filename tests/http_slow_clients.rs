//! A client that sends slowly cannot keep a connection (each one holds a slot of the server's
//! and of its caller's, `HttpOptions::max_connections` and `max_connections_per_caller`):
//! against the fixture server over real sockets, its timeouts shortened to 800 ms
//! (`FIXTURE_HEADER_TIMEOUT_MS`, `FIXTURE_BODY_TIMEOUT_MS`; 10 s and 30 s by default).
//!
//! - headers never all sent: the connection is closed once the header timeout is past;
//! - a body never all sent, or sent a byte at a time: `408`, and the connection is closed;
//! - while each waits, another client is answered.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_tests::Tree;

use crate::common::http::{Http, Reply, head, request};

/// The fixture's timeouts here.
const TIMEOUT_MS: &str = "800";

/// Only detects a hang: far longer than the timeouts, far shorter than their defaults' 30 s.
const HANG: Duration = Duration::from_secs(20);

fn server(home: &Tree) -> Http {
    Http::fixture_with(
        home,
        &[("FIXTURE_HEADER_TIMEOUT_MS", TIMEOUT_MS), ("FIXTURE_BODY_TIMEOUT_MS", TIMEOUT_MS)],
    )
}

/// The head of a JSON POST to `/mcp` whose body is `length` bytes long.
fn json_post(server: &Http, length: usize) -> String {
    let headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    head(server.addr, "POST", "/mcp", &headers, length)
}

/// A connection that sent `sent`, read until the server closes it (at most [`HANG`]): what came
/// back, and how long the server took.
fn left_waiting(server: &Http, sent: &[u8], meanwhile: impl FnOnce(&mut TcpStream)) -> (Vec<u8>, Duration) {
    let mut slow = TcpStream::connect(server.addr).expect("connect");
    slow.set_read_timeout(Some(HANG)).expect("timeout");
    slow.write_all(sent).expect("send");
    let started = Instant::now();
    meanwhile(&mut slow);
    let mut back = Vec::new();
    match slow.read_to_end(&mut back) {
        Ok(_) => {}
        // Closed with unread bytes: a reset is a close too.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => {
            panic!("the server kept the connection {:?} ({e}):\n{}", started.elapsed(), server.stderr())
        }
    }
    (back, started.elapsed())
}

/// Another client's request, answered while a slow one waits.
fn answered(server: &Http) {
    let listed: Reply = server.post(&request(1, "tools/list", json!({})));
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(listed.json()["result"]["tools"].is_array(), "{listed:?}");
}

#[test]
fn headers_never_all_sent_lose_the_connection() {
    let home = Tree::new();
    let server = server(&home);
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: appl", server.addr);
    let (back, took) = left_waiting(&server, head.as_bytes(), |_| answered(&server));
    assert!(back.is_empty(), "nothing is answered to half a request: {}", String::from_utf8_lossy(&back));
    assert!(took >= Duration::from_millis(500), "closed before its timeout: {took:?}");
    answered(&server);
}

#[test]
fn a_body_never_all_sent_is_answered_408() {
    let home = Tree::new();
    let server = server(&home);
    let sent = format!("{}{{\"jsonrpc\"", json_post(&server, 200));
    let (back, took) = left_waiting(&server, sent.as_bytes(), |_| answered(&server));
    let reply = Reply::parse(&back).expect("a response");
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(took >= Duration::from_millis(500), "refused before its timeout: {took:?}");
    answered(&server);
}

/// Dribbling the body (a byte every 200 ms, each well within the timeout of the one before)
/// does not stretch the timeout: it bounds the whole body, which would take ~47 s at this pace.
#[test]
fn a_body_sent_a_byte_at_a_time_is_answered_408() {
    let home = Tree::new();
    let server = server(&home);
    let body = request(1, "tools/list", json!({})).to_string();
    let head = json_post(&server, body.len());
    let (back, _) = left_waiting(&server, head.as_bytes(), |slow| {
        slow.set_read_timeout(Some(Duration::from_millis(1))).expect("timeout");
        for byte in body.as_bytes() {
            std::thread::sleep(Duration::from_millis(200));
            // Until the server answers (or closes): then what it said is read below.
            if slow.peek(&mut [0]).is_ok() || slow.write_all(&[*byte]).is_err() {
                break;
            }
        }
        slow.set_read_timeout(Some(HANG)).expect("timeout");
    });
    let reply = Reply::parse(&back).expect("a response");
    assert_eq!(reply.status, 408, "{reply:?}");
    answered(&server);
}
