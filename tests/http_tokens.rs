//! Bearer tokens over Streamable HTTP, against `teaagent mcp serve --http`: tokens
//! guard the endpoint and name the principal in the audit; a public address needs them; a token
//! file that is no regular file is refused, not read.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

use crate::common::http as raw;
use raw::{Http, modern_headers, request};

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
