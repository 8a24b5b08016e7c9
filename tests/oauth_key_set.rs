//! The authorization server's key set (RFC 8414) as the real `teaagent mcp serve --http
//! … --oauth-*` loads it (the set-up: `common/oauth.rs`): no key set is `503` (and `/readyz`
//! says so) until the issuer answers; the key set is found through the issuer's metadata, which
//! must name that issuer; an https issuer is verified against the trust store; a new `kid`
//! fetches the key set again, at most so often.

use std::time::Duration;

use jsonwebtoken::Algorithm;
use serde_json::json;
use teaagent_tests::Tree;

use crate::common::http as raw;
use crate::common::oauth;
use oauth::{Issuer, RESOURCE, call_with, impostor_key, issuer_key, ready, serve, sign};
use raw::{Http, request};

#[test]
fn no_key_set_is_503_until_the_issuer_answers() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(false));
    let server = serve(&tree, &home, &issuer, false, &[]);
    let token = issuer.token(&issuer.claims("alice", "mcp:tools"));
    let list = request(1, "tools/list", json!({}));
    // Long enough for a few attempts.
    std::thread::sleep(Duration::from_millis(1500));
    let r = server.exchange("GET", "/readyz", &[], b"");
    assert_eq!(r.status, 503, "{r:?}");
    let r = call_with(&server, "/mcp", &list, Some(&token));
    assert_eq!(r.status, 503, "{r:?}");
    let retry: u64 = r.header("retry-after").and_then(|v| v.parse().ok()).expect("Retry-After in seconds");
    assert!((1..=30).contains(&retry), "{retry}");
    assert!(issuer.seen().iter().filter(|p| *p == "/jwks").count() >= 2, "retried: {:?}", issuer.seen());
    // Not a token problem: a request without one is still told to bring one.
    assert_eq!(call_with(&server, "/mcp", &list, None).status, 401);
    let stderr = server.stderr_once(|e| e.contains("cannot load the authorization server's keys"));
    assert!(stderr.contains("cannot load the authorization server's keys"), "{stderr}");
    // Once the issuer answers, the server gets ready and calls go through.
    issuer.set(|s| s.up = true);
    ready(&server);
    assert_eq!(call_with(&server, "/mcp", &list, Some(&token)).status, 200);
}

#[test]
fn an_issuer_nobody_listens_at_is_503_and_not_ready() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::nowhere());
    let server = serve(&tree, &home, &issuer, false, &[]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.exchange("GET", "/readyz", &[], b"").status, 503);
    let r = call_with(
        &server,
        "/mcp",
        &request(1, "tools/list", json!({})),
        Some(&issuer.token(&issuer.claims("a", "mcp:tools"))),
    );
    assert_eq!(r.status, 503, "{r:?}");
    assert!(r.header("retry-after").is_some());
    assert_eq!(server.exchange("GET", "/healthz", &[], b"").status, 200, "alive, not ready");
}

#[test]
fn the_key_set_is_found_through_the_issuers_metadata() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, true, &[]);
    ready(&server);
    let token = issuer.token(&issuer.claims("alice", "mcp:tools"));
    assert_eq!(call_with(&server, "/mcp", &request(1, "tools/list", json!({})), Some(&token)).status, 200);
    assert_eq!(issuer.seen()[..2], ["/.well-known/oauth-authorization-server", "/jwks"]);

    // Metadata that names another issuer is not believed: never ready.
    let (tree, home, liar) = (Tree::new(), Tree::new(), Issuer::start(true));
    liar.set(|s| s.claims_issuer = Some("https://someone-else.example.com".into()));
    let server = serve(&tree, &home, &liar, true, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server.exchange("GET", "/readyz", &[], b"").status, 503);
    assert!(!liar.seen().contains(&"/jwks".to_owned()), "its key set was fetched: {:?}", liar.seen());
    let stderr = server.stderr_once(|e| e.contains("someone-else.example.com"));
    assert!(stderr.contains("someone-else.example.com"), "{stderr}");
}

#[test]
fn an_https_issuer_is_verified_against_the_trust_store() {
    let issuer = Issuer::start_tls();
    let ca = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys/test-only-ca.pem");
    let jwks = format!("{}/jwks", issuer.url);
    let flags = ["--oauth-issuer", &issuer.url, "--oauth-resource", RESOURCE, "--oauth-jwks-uri", &jwks];
    // The test CA in the trust store (SSL_CERT_FILE, as on any machine with a private CA).
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &flags, &[("SSL_CERT_FILE", ca.to_str().expect("utf-8"))]);
    ready(&server);
    let token = issuer.token(&issuer.claims("tls-user", ""));
    assert_eq!(call_with(&server, "/mcp", &request(1, "tools/list", json!({})), Some(&token)).status, 200);
    // Without it, the issuer's certificate is not trusted: no keys, never ready.
    let leaf = ca.with_file_name("test-only-localhost-tls.pem");
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &flags, &[("SSL_CERT_FILE", leaf.to_str().expect("utf-8"))]);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(server.exchange("GET", "/readyz", &[], b"").status, 503);
    let stderr = server.stderr_once(|e| e.contains("TLS failed"));
    assert!(stderr.contains("TLS failed"), "{stderr}");
}

#[test]
fn a_new_kid_fetches_the_key_set_again() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &[]);
    ready(&server);
    let fetched = || issuer.seen().iter().filter(|p| *p == "/jwks").count();
    let before = fetched();
    // The issuer rotates: a second key, under a new kid, signs from now on.
    let mut rotated =
        jsonwebtoken::jwk::Jwk::from_encoding_key(&impostor_key(), Algorithm::ES256).expect("jwk");
    rotated.common.key_id = Some("rotated".into());
    let rotated = serde_json::to_value(rotated).expect("json");
    issuer.set(|s| s.keys.push(rotated));
    let token = sign(&issuer.claims("alice", "mcp:tools"), &impostor_key(), "rotated");
    let r = call_with(&server, "/mcp", &request(1, "tools/list", json!({})), Some(&token));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(fetched(), before + 1, "fetched once more");
    // More unknown kids within 30 s do not make it fetch again.
    for n in 0..5 {
        let stranger = sign(&issuer.claims("alice", "mcp:tools"), &issuer_key(), &format!("stranger-{n}"));
        assert_eq!(
            call_with(&server, "/mcp", &request(2, "tools/list", json!({})), Some(&stranger)).status,
            401
        );
    }
    assert_eq!(fetched(), before + 1, "no fetch per unknown kid");
}
