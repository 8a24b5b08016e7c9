//! OAuth 2.1 access tokens (RFC 6750, 9068) against the real `teaagent mcp serve --http
//! … --oauth-*` (the set-up: `common/oauth.rs`): every way a token can be wrong is `401` with
//! `error="invalid_token"` and nothing runs; no token is `401` without an error; a missing scope
//! is `403` naming every scope the call needs; a token in the URL is `400`; a good token calls
//! tools, and the audit names its subject; the official client calls with one.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::client;
use crate::common::http as raw;
use crate::common::oauth;
use oauth::{
    Issuer, KID, METADATA_URL, RESOURCE, call_with, challenge, impostor_key, issuer_jwk, issuer_key, now,
    param, ready, serve, sign, tool_call,
};
use raw::{Reply, in_session, modern_headers, open_session, request};

#[test]
fn every_bad_token_is_refused_before_anything_runs() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &["--permission-mode", "allow"]);
    ready(&server);
    let good = issuer.claims("alice", "mcp:tools mcp:write mcp:exec");
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = good.clone();
        change(&mut claims);
        issuer.token(&claims)
    };
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(good.to_string())
    );
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some(KID.to_owned());
    // The HMAC secret an attacker would try: the issuer's public key material.
    let secret =
        EncodingKey::from_secret(issuer_jwk()["x"].as_str().expect("x").as_bytes()).expect("a secret");
    let hmac = jsonwebtoken::encode(&hs256, &good, &secret).expect("sign");
    let mut wrong_typ = Header::new(Algorithm::ES256);
    wrong_typ.kid = Some(KID.to_owned());
    wrong_typ.typ = Some("id+jwt".to_owned());
    let id_token = jsonwebtoken::encode(&wrong_typ, &good, &issuer_key()).expect("sign");
    let cases: Vec<(&str, String, &str)> = vec![
        ("garbage", "not-a-jwt".into(), "JWT"),
        ("three garbage parts", "a.b.c".into(), "JWT"),
        ("bad signature", sign(&good, &impostor_key(), KID), "signature"),
        ("unknown kid", sign(&good, &issuer_key(), "nobody-knows-this-kid"), "kid"),
        ("wrong iss", with(&|c| c["iss"] = json!("http://127.0.0.1:9/other")), "iss"),
        ("wrong aud", with(&|c| c["aud"] = json!("http://localhost/other-server")), "aud"),
        ("aud list without us", with(&|c| c["aud"] = json!(["a", "b"])), "aud"),
        ("absent aud", with(&|c| drop(c.as_object_mut().expect("object").remove("aud"))), "aud"),
        ("expired", with(&|c| c["exp"] = json!(now() - 120)), "expired"),
        ("nbf in the future", with(&|c| c["nbf"] = json!(now() + 600)), "nbf"),
        ("absent exp", with(&|c| drop(c.as_object_mut().expect("object").remove("exp"))), "exp"),
        ("absent sub", with(&|c| drop(c.as_object_mut().expect("object").remove("sub"))), "sub"),
        ("alg none", unsigned, "JWT"),
        ("HS256", hmac, "algorithm"),
        ("not an access token", id_token, "typ"),
    ];
    for (i, (case, token, says)) in cases.iter().enumerate() {
        let file = format!("case-{i}.txt");
        let r = call_with(
            &server,
            "/mcp",
            &tool_call(1, "write_file", json!({"path": file, "content": "x"})),
            Some(token),
        );
        assert_eq!(r.status, 401, "{case}: {r:?}");
        let params = challenge(&r);
        assert_eq!(param(&params, "error"), Some("invalid_token"), "{case}: {params:?}");
        let description = param(&params, "error_description").unwrap_or_default();
        assert!(description.contains(says), "{case}: {description:?} should say {says:?}");
        assert_eq!(param(&params, "resource_metadata"), Some(METADATA_URL), "{case}");
        assert_eq!(param(&params, "scope"), Some("mcp:tools"), "{case}");
        assert!(
            !r.body.contains(token.as_str()) && !description.contains(token.as_str()),
            "{case}: the token echoed"
        );
        assert!(!tree.path(&format!("ws/{file}")).exists(), "{case}: the call ran");
    }
    // The same token with a good signature is accepted: the cases above failed for their reason.
    let r = call_with(
        &server,
        "/mcp",
        &tool_call(2, "write_file", json!({"path": "ok.txt", "content": "x"})),
        Some(&issuer.token(&good)),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert!(tree.path("ws/ok.txt").exists());

    // No token at all: no `error` (RFC 6750 §3.1), where to learn more, and what is needed.
    let list = request(3, "tools/list", json!({}));
    for headers in [vec![], vec![("Authorization", "Basic YWxpY2U6eA==")]] {
        let mut hs = modern_headers(&list);
        hs.extend(headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let r = server.exchange("POST", "/mcp", &refs, list.to_string().as_bytes());
        assert_eq!(r.status, 401, "{r:?}");
        assert_eq!(
            r.header("www-authenticate"),
            Some(format!(r#"Bearer resource_metadata="{METADATA_URL}", scope="mcp:tools""#).as_str()),
            "{headers:?}"
        );
    }
    // A token in the URL: 400, even a good one (URLs end up in logs), and it is not used.
    let token = issuer.token(&good);
    let r = call_with(&server, &format!("/mcp?access_token={token}"), &list, None);
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(param(&challenge(&r), "error"), Some("invalid_request"));
    let r = call_with(&server, &format!("/mcp?access_token={token}"), &list, Some(&token));
    assert_eq!(r.status, 400, "also beside a header: {r:?}");
    // `Bearer` with nothing after it; two Authorization headers.
    let mut hs = modern_headers(&list);
    hs.push(("Authorization".into(), "Bearer ".into()));
    let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(server.exchange("POST", "/mcp", &refs, list.to_string().as_bytes()).status, 400);
    let mut hs = modern_headers(&list);
    hs.push(("Authorization".into(), format!("Bearer {token}")));
    hs.push(("Authorization".into(), format!("Bearer {token}")));
    let refs: Vec<(&str, &str)> = hs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(server.exchange("POST", "/mcp", &refs, list.to_string().as_bytes()).status, 400);
    // Health needs no token; no token reached the logs.
    assert_eq!(server.exchange("GET", "/healthz", &[], b"").status, 200);
    let logs = server.stderr();
    assert!(!logs.contains(&token) && !logs.contains("eyJ"), "a token in the logs:\n{logs}");
}

#[test]
fn a_good_token_calls_tools_and_the_audit_names_its_subject() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &["--permission-mode", "danger-full-access"]);
    ready(&server);
    let token = issuer.token(&issuer.claims("alice@example.com", "mcp:tools mcp:write mcp:exec"));
    let r =
        call_with(&server, "/mcp", &tool_call(1, "read_file", json!({"path": "src/a.txt"})), Some(&token));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["content"][0]["text"], "hello\n");
    let r = call_with(
        &server,
        "/mcp",
        &tool_call(2, "write_file", json!({"path": "by-alice.txt", "content": "a"})),
        Some(&token),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(std::fs::read_to_string(tree.path("ws/by-alice.txt")).expect("written"), "a");
    // A command's environment never holds the token.
    let r = call_with(&server, "/mcp", &tool_call(3, "shell_exec", json!({"command": "env"})), Some(&token));
    let env = r.json()["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(env.contains("PATH="), "{r:?}");
    assert!(!env.contains(&token) && !env.contains("eyJ"), "the token reached a command");
    // `scp` as a list works as well as `scope`.
    let mut claims = issuer.claims("bob", "");
    claims.as_object_mut().expect("object").remove("scope");
    claims["scp"] = json!(["mcp:tools"]);
    let r = call_with(&server, "/mcp", &request(4, "tools/list", json!({})), Some(&issuer.token(&claims)));
    assert_eq!(r.status, 200, "{r:?}");
    // `aud` as a list that contains this resource.
    let mut claims = issuer.claims("carol", "mcp:tools");
    claims["aud"] = json!(["https://elsewhere.example.com", RESOURCE]);
    let r = call_with(&server, "/mcp", &request(5, "tools/list", json!({})), Some(&issuer.token(&claims)));
    assert_eq!(r.status, 200, "{r:?}");

    let audit = std::fs::read_to_string(home.path("audit.jsonl")).expect("audit");
    let principals: Vec<Value> =
        audit.lines().map(|l| serde_json::from_str::<Value>(l).expect("json")["principal"].clone()).collect();
    assert!(!principals.is_empty() && principals.iter().all(|p| p == "oauth:alice@example.com"), "{audit}");
    assert!(!audit.contains(&token) && !audit.contains("eyJ"), "no token in the audit");
    assert!(!server.stderr().contains(&token), "no token in the logs");
}

#[test]
fn a_missing_scope_is_403_naming_every_scope_the_call_needs() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &["--permission-mode", "danger-full-access"]);
    ready(&server);
    let reader = issuer.token(&issuer.claims("reader", "mcp:tools"));
    let writer = issuer.token(&issuer.claims("writer", "mcp:tools mcp:write"));
    let nothing = issuer.token(&issuer.claims("nobody", "profile"));
    let insufficient = |r: &Reply, scope: &str| {
        assert_eq!(r.status, 403, "{r:?}");
        let params = challenge(r);
        assert_eq!(param(&params, "error"), Some("insufficient_scope"), "{params:?}");
        assert_eq!(param(&params, "scope"), Some(scope), "{params:?}");
        assert_eq!(param(&params, "resource_metadata"), Some(METADATA_URL));
    };
    // Read-only tools and listings: the required scope.
    let r =
        call_with(&server, "/mcp", &tool_call(1, "read_file", json!({"path": "src/a.txt"})), Some(&reader));
    assert_eq!(r.status, 200, "{r:?}");
    // A writing tool needs the write scope too; an executing one all three.
    let write = tool_call(2, "write_file", json!({"path": "w.txt", "content": "x"}));
    let r = call_with(&server, "/mcp", &write, Some(&reader));
    insufficient(&r, "mcp:tools mcp:write");
    assert_eq!(r.json()["id"], 2, "the refusal carries the request's id: {r:?}");
    assert!(!tree.path("ws/w.txt").exists(), "nothing ran");
    assert_eq!(call_with(&server, "/mcp", &write, Some(&writer)).status, 200);
    let exec = tool_call(3, "shell_exec", json!({"command": "touch ran.txt"}));
    insufficient(&call_with(&server, "/mcp", &exec, Some(&writer)), "mcp:tools mcp:write mcp:exec");
    insufficient(
        &call_with(&server, "/mcp", &tool_call(4, "delete_path", json!({"path": "w.txt"})), Some(&writer)),
        "mcp:tools mcp:write mcp:exec",
    );
    assert!(!tree.path("ws/ran.txt").exists() && tree.path("ws/w.txt").exists(), "nothing ran");
    // Without the required scope, nothing at all.
    insufficient(
        &call_with(&server, "/mcp", &request(5, "tools/list", json!({})), Some(&nothing)),
        "mcp:tools",
    );
    // The same rule in a legacy session (its calls go through the same check).
    let auth = format!("Bearer {reader}");
    let session = open_session(&server, &[("Authorization", auth.as_str())], json!({}));
    let legacy_write = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": "legacy.txt", "content": "x"}}});
    insufficient(
        &in_session(&server, &session, &legacy_write, &[("Authorization", auth.as_str())]),
        "mcp:tools mcp:write",
    );
    assert!(!tree.path("ws/legacy.txt").exists());
    // A session belongs to its subject: another subject's token does not find it.
    let other = format!("Bearer {writer}");
    assert_eq!(
        in_session(&server, &session, &legacy_write, &[("Authorization", other.as_str())]).status,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_calls_with_an_access_token() {
    let (tree, home, issuer) = (Tree::new(), Tree::new(), Issuer::start(true));
    let server = serve(&tree, &home, &issuer, false, &[]);
    tokio::task::block_in_place(|| ready(&server));
    let connect = |token: Option<String>| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(server.url());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let recorder = client::Recorder {
            config: rmcp::model::ClientConfig::new(
                rmcp::model::ClientCapabilities::default(),
                rmcp::model::Implementation::new("teaagent-oauth-e2e", "0.1"),
            ),
            events: tokio::sync::mpsc::unbounded_channel().0,
        };
        let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        recorder.serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), mode)
    };
    let refused = client::timely(connect(None)).await;
    assert!(refused.is_err(), "no token, no session");
    let expired = issuer.token(
        &json!({"iss": issuer.url, "aud": RESOURCE, "sub": "x", "scope": "mcp:tools", "exp": now() - 300}),
    );
    assert!(client::timely(connect(Some(expired))).await.is_err(), "an expired token, no session");
    let token = issuer.token(&issuer.claims("rmcp-user", "mcp:tools"));
    let client = client::timely(connect(Some(token))).await.expect("with the token");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "read_file"), "{tools:?}");
    let read = client::timely(
        client.call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(json!({"path": "src/a.txt"}).as_object().cloned().expect("object")),
        ),
    )
    .await
    .expect("read_file");
    assert_eq!(serde_json::to_value(&read).expect("json")["content"][0]["text"], "hello\n");
    client.cancel().await.expect("close");
    let audit = std::fs::read_to_string(home.path("audit.jsonl")).expect("audit");
    assert!(audit.contains(r#""principal":"oauth:rmcp-user""#), "{audit}");
}
