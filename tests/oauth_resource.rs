//! The OAuth 2.1 resource server as configured (RFC 9728) — the real `teaagent mcp serve
//! --http … --oauth-*` (the set-up: `common/oauth.rs`): the protected resource metadata is served
//! at both well-known URLs; the `--oauth-*` flags are checked, and OAuth counts as
//! authentication.

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};

use serde_json::json;
use teaagent_tests::{Bin, Tree};

use crate::common::http as raw;
use crate::common::oauth;
use oauth::{Issuer, RESOURCE, serve};
use raw::Http;

#[test]
fn protected_resource_metadata_is_served_at_both_well_known_urls() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &[]);
    let expected = json!({
        "resource": RESOURCE,
        "authorization_servers": [issuer.url],
        "scopes_supported": ["mcp:tools", "mcp:write", "mcp:exec"],
        "bearer_methods_supported": ["header"],
        "resource_name": "teaagent"
    });
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let r = server.exchange("GET", path, &[], b"");
        assert_eq!(r.status, 200, "{path}: {r:?}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
        assert_eq!(r.body, expected.to_string(), "{path}: exactly this document, in this order");
        assert!(!r.body.contains("offline_access"));
        // No token needed, but Host and Origin are still checked; read with GET only.
        assert_eq!(server.exchange("GET", path, &[("Host", "evil.example.com")], b"").status, 403);
        assert_eq!(server.exchange("GET", path, &[("Origin", "http://evil.example.com")], b"").status, 403);
        let post = server.exchange("POST", path, &[], b"");
        assert_eq!((post.status, post.header("allow")), (405, Some("GET")), "{path}");
    }
    // Nothing else under the well-known prefix.
    assert_eq!(server.exchange("GET", "/.well-known/oauth-protected-resource/other", &[], b"").status, 404);
}

#[test]
fn oauth_flags_are_checked_and_oauth_counts_as_authentication() {
    let (tree, home) = (Tree::new(), Tree::new());
    let run = |args: &[&str], env: &[(&str, &str)]| {
        Command::new(Bin::Teaagent.path())
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--root"])
            .arg(tree.root())
            .args(args)
            .env("TEAAGENT_HOME", home.base())
            .env_remove("TEAAGENT_HTTP_TOKENS")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("run")
    };
    let issuer = ["--oauth-issuer", "https://auth.example.com"];
    for (flags, says) in [
        (
            vec!["--oauth-resource", "http://mcp.example.com/mcp"],
            "--oauth-resource: the resource URL `http://mcp.example.com/mcp` must use https",
        ),
        (vec!["--oauth-resource", "https://mcp.example.com/mcp/"], "must not end with `/`"),
        (vec!["--oauth-resource", "https://mcp.example.com/mcp#x"], "fragment"),
        (
            vec!["--oauth-resource", "https://mcp.example.com/mcp", "--oauth-scope", "offline_access"],
            "--oauth-scope: the scope `offline_access`",
        ),
        (
            vec![
                "--oauth-resource",
                "https://mcp.example.com/mcp",
                "--oauth-jwks-uri",
                "http://keys.example.com/jwks",
            ],
            "--oauth-jwks-uri",
        ),
    ] {
        let out = run(&[&issuer[..], &flags].concat(), &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = run(
        &["--oauth-issuer", "http://auth.example.com", "--oauth-resource", "https://mcp.example.com/mcp"],
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--oauth-issuer: the issuer"), "{out:?}");
    // Each needs the other.
    assert_eq!(run(&issuer, &[]).status.code(), Some(2));
    assert_eq!(run(&["--oauth-resource", "https://mcp.example.com/mcp"], &[]).status.code(), Some(2));
    // Tokens or OAuth, not both.
    let both = [&issuer[..], &["--oauth-resource", "https://mcp.example.com/mcp"]].concat();
    let out = run(&[&both[..], &["--http-token-file", "/dev/null"]].concat(), &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = run(&both, &[("TEAAGENT_HTTP_TOKENS", "ops:ops-0123456789abcdef")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not both"), "{out:?}");
    // OAuth is authentication: a public address is served.
    let issuer = Issuer::start(true);
    let jwks = format!("{}/jwks", issuer.url);
    let server = Http::teaagent(
        &tree,
        &home,
        &[
            "--http",
            "0.0.0.0:0",
            "--oauth-issuer",
            &issuer.url,
            "--oauth-resource",
            RESOURCE,
            "--oauth-jwks-uri",
            &jwks,
        ],
        &[],
    );
    let loopback = format!("127.0.0.1:{}", server.addr.port());
    let mut s = TcpStream::connect(loopback).expect("connect");
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut s, &mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}
