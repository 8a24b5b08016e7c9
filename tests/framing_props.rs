//! Property tests on the framing, through the real server process: whatever bytes arrive, the
//! server never crashes, never writes anything but JSON-RPC, never answers a line more than once,
//! and answers every valid request exactly once.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;
use teaagent_tests::{Bin, RawServer};

/// One input line.
#[derive(Debug, Clone)]
enum Line {
    /// A valid `ping` request; its id is its position.
    Ping,
    /// A valid `tools/call` of `echo`.
    Echo(String),
    /// A notification (never answered).
    Notification,
    /// Arbitrary bytes without a newline.
    Garbage(Vec<u8>),
    /// Valid JSON that is not a message.
    NotAMessage(i64),
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        3 => Just(Line::Ping),
        2 => "\\PC{0,40}".prop_map(Line::Echo),
        1 => Just(Line::Notification),
        3 => proptest::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..400).prop_map(Line::Garbage),
        1 => any::<i64>().prop_map(Line::NotAMessage),
    ]
}

fn encode(i: usize, line: &Line) -> Vec<u8> {
    match line {
        Line::Ping => format!(r#"{{"jsonrpc":"2.0","id":"p{i}","method":"ping"}}"#).into_bytes(),
        Line::Echo(text) => serde_json::json!({
            "jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}
        })
        .to_string()
        .into_bytes(),
        Line::Notification => br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#.to_vec(),
        Line::Garbage(bytes) => bytes.clone(),
        Line::NotAMessage(n) => n.to_string().into_bytes(),
    }
}

fn run(input: &[u8]) -> Vec<Value> {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_MAX_LINE", "256").env("RUST_LOG", "off");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-03-26");
    server.send_raw(input);
    server.close_stdin();
    let status = server.wait(Duration::from_secs(20));
    assert!(status.success(), "the server died: {status}\n{}", server.stderr());
    let out = server.drain(Duration::from_millis(20));
    assert!(server.violations().is_empty(), "non-protocol stdout: {:?}", server.violations());
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_valid_request_is_answered_once_and_nothing_else_is_answered_twice(
        lines in proptest::collection::vec(line(), 1..40),
    ) {
        let mut input = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            input.extend(encode(i, l));
            input.push(b'\n');
        }
        let out = run(&input);
        prop_assert!(out.len() <= lines.len(), "{} answers to {} lines", out.len(), lines.len());
        let mut answers: HashMap<String, usize> = HashMap::new();
        for message in &out {
            prop_assert!(message.get("method").is_none(), "only responses: {message}");
            if !message["id"].is_null() {
                *answers.entry(message["id"].to_string()).or_default() += 1;
            }
        }
        for (i, l) in lines.iter().enumerate() {
            let id = match l {
                Line::Ping => format!("\"p{i}\""),
                Line::Echo(text) if encode(i, l).len() <= 256 => {
                    let _ = text;
                    i.to_string()
                }
                _ => continue,
            };
            prop_assert_eq!(answers.get(&id).copied(), Some(1), "request {} on line {}", id, i);
        }
        prop_assert!(answers.values().all(|n| *n == 1));
    }

    #[test]
    fn arbitrary_bytes_never_crash_the_server(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count();
        let out = run(&bytes);
        prop_assert!(out.len() <= lines, "{} answers to {} lines", out.len(), lines);
    }
}
