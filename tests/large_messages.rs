//! Large messages through the real server: a multi-megabyte argument arrives in pieces of any
//! size, leaves the framer without being copied, and comes back byte for byte; the line after it
//! in the same read is still served; stdin's pipe is enlarged so a large message moves in few
//! reads; a line that is not UTF-8 anywhere is a parse error; and a client that does not read
//! its answers cannot make the server hold them.

use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, peak_memory};

fn fixture() -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("RUST_LOG", "off");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

/// Text that needs every kind of escape, and characters of every UTF-8 length.
fn awkward_text(len: usize) -> String {
    let pieces =
        ["plain ascii ", "\"quoted\" ", "back\\slash ", "line\nbreak\r\t", "\u{1}\u{1f} ", "é ", "€ ", "🦀 "];
    let mut text = String::with_capacity(len + 16);
    let mut i = 0;
    while text.len() < len {
        text.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    text
}

#[test]
fn a_large_argument_in_odd_pieces_comes_back_exactly_and_the_next_line_is_served() {
    let mut server = fixture();
    let text = awkward_text(3 << 20);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    let mut bytes = serde_json::to_vec(&call).expect("json");
    bytes.push(b'\n');
    // A short line right behind the long one, in the same write as its end.
    bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
    // Pieces of uneven sizes (1 byte to ~300 KiB), cutting through escapes and characters.
    let mut at = 0;
    let mut size = 1;
    while at < bytes.len() {
        let end = (at + size).min(bytes.len());
        server.send_raw(&bytes[at..end]);
        at = end;
        size = (size * 7 + 13) % 300_000 + 1;
    }
    let echoed = server.response(&json!(7));
    assert_eq!(
        echoed["result"]["content"][0]["text"].as_str(),
        Some(text.as_str()),
        "the text changed on the way"
    );
    assert_eq!(server.response(&json!(8))["result"], json!({}));
    // And again: the framer's buffer was handed over with the first line; a new one works.
    server.send_json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "small"}}}));
    assert_eq!(server.response(&json!(9))["result"]["content"][0]["text"], "small");
    server.finish();
}

#[test]
fn many_lines_in_one_write_are_each_answered_once() {
    let mut server = fixture();
    let mut batch = Vec::new();
    for id in 0..2_000 {
        batch.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes(),
        );
    }
    server.send_raw(&batch);
    let mut seen = vec![false; 2_000];
    for _ in 0..2_000 {
        let answer = server.recv();
        let id = answer["id"].as_u64().expect("an id") as usize;
        assert!(!std::mem::replace(&mut seen[id], true), "answered twice: {id}");
    }
    assert!(server.try_recv(Duration::from_millis(100)).is_none());
    server.finish();
}

#[test]
fn stdin_and_stdout_pipes_are_enlarged_for_large_messages() {
    let mut child = Command::new(Bin::Fixture.path())
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the fixture");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let before = rustix::pipe::fcntl_getpipe_size(stdin.as_fd()).expect("pipe size");
    assert_eq!(before, 64 * 1024, "Linux's default pipe");
    // Once the server answers, it has set its pipes up.
    let mut stdin = stdin;
    std::io::Write::write_all(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
    )
    .expect("write");
    let mut reader = std::io::BufReader::new(stdout);
    let mut line = String::new();
    for id in [1, 2] {
        line.clear();
        std::io::BufRead::read_line(&mut reader, &mut line).expect("answer");
        assert!(serde_json::from_str::<Value>(&line).is_ok_and(|v| v["id"] == id), "{line}");
    }
    for (name, size) in [
        ("stdin", rustix::pipe::fcntl_getpipe_size(stdin.as_fd()).expect("size")),
        ("stdout", rustix::pipe::fcntl_getpipe_size(reader.get_ref().as_fd()).expect("size")),
    ] {
        assert_eq!(size, 256 * 1024, "{name}'s pipe");
    }
    drop(stdin);
    assert!(child.wait().expect("exit").success());
}

#[test]
fn a_line_that_is_not_utf8_anywhere_is_a_parse_error() {
    let mut server = fixture();
    // In a member nobody reads, and in the params: neither is JSON.
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\x28\"}\n"[..],
        &b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\"}}}\n"[..],
    ] {
        server.send_raw(line);
        let answer = server.recv();
        assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32700)), "{answer}");
    }
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server.finish();
}

#[test]
fn a_client_that_does_not_read_its_answers_cannot_make_the_server_hold_them() {
    // A 900 KB file, read 500 times: 450 MB of answers (three times the bound), from calls (which
    // wait for their turn).
    let read = json!({"name": "read_file", "arguments": {"path": "big.txt"}});
    let peak = unread_answers("tools/call", read, 500);
    assert!(peak < 150 << 20, "the server held {} MiB of unread answers", peak >> 20);
    // 12,000 tool lists: 200 MB of answers to requests that are not calls (answered as read).
    let peak = unread_answers("tools/list", json!({}), 12_000);
    assert!(peak < 150 << 20, "the server held {} MiB of unread answers", peak >> 20);
}

/// Sends `count` requests of `method` to `teaagent mcp serve` and reads none of the answers for
/// three seconds; then reads them all (each must be a result). Returns the server's peak memory
/// before the answers were read.
fn unread_answers(method: &str, params: Value, count: u64) -> u64 {
    use std::io::BufRead;
    let (tree, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    let (mut child, mut stdout, writer) = flood(&tree, &home, Stdio::null(), method, params, count);
    let mut line = String::new();
    // Long enough for the server to have read and answered everything, had it kept reading.
    std::thread::sleep(Duration::from_secs(3));
    let peak = peak_memory(child.id());
    // Nothing is lost: once read, every request is answered.
    let mut answered = 0;
    while answered < count {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the server stopped after {answered} answers"
        );
        // Read as text (the answers are large, their contents plain): a response is a result.
        if line.starts_with(r#"{"jsonrpc":"2.0","id":"#) {
            assert!(line.contains(r#""result":{"#) && !line.contains(r#""isError":true"#), "{line:.200}");
            answered += 1;
        }
    }
    drop(writer.join().expect("writer"));
    assert!(child.wait().expect("exit").success());
    peak
}

/// `teaagent mcp serve` on `tree` (with a 900 KB `big.txt`), after its handshake, with a thread
/// that sends `count` requests of `method` (blocking once the server stops reading) and gives
/// stdin back when done.
fn flood(
    tree: &teaagent_tests::Tree,
    home: &teaagent_tests::Tree,
    stderr: Stdio,
    method: &str,
    params: Value,
    count: u64,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    std::thread::JoinHandle<Option<std::process::ChildStdin>>,
) {
    use std::io::{BufRead, BufReader, Write};
    tree.write("ws/big.txt", &format!("{}\n", "x".repeat(99)).repeat(9000));
    let mut child = Command::new(Bin::Teaagent.path())
        .args(["mcp", "serve", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start teaagent");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    writeln!(stdin, "{hello}").expect("write");
    stdout.read_line(&mut String::new()).expect("initialize answered");
    let method = method.to_owned();
    let writer = std::thread::spawn(move || {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).ok()?;
        for id in 1..=count {
            let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            // Blocks once the server stops reading: it is waiting for this client to read.
            writeln!(stdin, "{request}").ok()?;
        }
        Some(stdin) // kept open until the answers are read
    });
    (child, stdout, writer)
}

#[test]
fn a_client_that_goes_away_unread_does_not_hold_the_server_for_its_grace_period() {
    // 400 reads of 900 KB: past the unread bound, calls wait for the client to read. It closes
    // both pipes instead: what waited goes on at once (its answers go nowhere), and the server
    // ends before its grace period (3 s) would cancel anything.
    let (tree, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    let read = json!({"name": "read_file", "arguments": {"path": "big.txt"}});
    let (mut child, stdout, writer) = flood(&tree, &home, Stdio::piped(), "tools/call", read, 400);
    std::thread::sleep(Duration::from_secs(2));
    drop(stdout);
    drop(writer.join().expect("writer"));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).expect("stderr");
    assert!(child.wait().expect("exit").success(), "{stderr}");
    assert!(stderr.contains("the client is gone"), "the client went away unread: {stderr}");
    assert!(!stderr.contains("grace period over"), "calls were held until the grace period: {stderr}");
}
