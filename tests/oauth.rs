//! OAuth 2.1 resource-server mode (SPEC §12; MCP authorization; RFC 9728, 6750, 8707, 9068)
//! against the real `teaagent mcp serve --http … --oauth-*`, with a stand-in authorization
//! server in the test (a thread on a loopback port serving its metadata and its key set) and
//! tokens signed with the committed test-only keys (`tests/oauth_keys/`).
//!
//! Every way a token can be wrong is `401` with `error="invalid_token"` and nothing runs; no
//! token is `401` without an error; a missing scope is `403` naming every scope the call needs;
//! a token in the URL is `400`; no key set is `503` (and `/readyz` says so); the metadata is
//! served at both well-known URLs; a good token calls tools, and the audit names its subject.

#[path = "common/client.rs"]
mod client;
#[path = "common/http.rs"]
mod raw;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use raw::{Http, Reply, in_session, modern_headers, open_session, request};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

/// The resource URL every server here is configured with (what tokens must name in `aud`).
const RESOURCE: &str = "http://localhost/mcp";
/// The `kid` of the committed test-only key.
const KID: &str = "test-only-key-1";

fn key_file(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The test authorization server's signing key.
fn issuer_key() -> EncodingKey {
    EncodingKey::from_ec_pem(key_file("test-only-issuer-es256.pem").as_bytes()).expect("the test key")
}

/// Another key: a token it signs under the issuer's `kid` has a signature that does not verify.
fn impostor_key() -> EncodingKey {
    EncodingKey::from_ec_pem(key_file("test-only-impostor-es256.pem").as_bytes()).expect("the other test key")
}

/// The issuer key's public JWK, as committed.
fn issuer_jwk() -> Value {
    serde_json::from_str(&key_file("test-only-issuer-es256.jwk.json")).expect("the test JWK")
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("time").as_secs()
}

/// A stand-in authorization server: `/.well-known/oauth-authorization-server` and `/jwks`, over
/// plain HTTP or (`start_tls`) over TLS with the test-only `localhost` certificate.
struct Issuer {
    url: String,
    state: Arc<Mutex<IssuerState>>,
}

struct IssuerState {
    /// `false`: every request is answered `503`.
    up: bool,
    keys: Vec<Value>,
    /// The `issuer` its metadata claims (the real one unless a test lies).
    claims_issuer: Option<String>,
    /// Paths requested, in order.
    seen: Vec<String>,
}

impl Issuer {
    fn start(up: bool) -> Self {
        Self::serve(up, None)
    }

    fn start_tls() -> Self {
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys");
        let chain =
            vec![CertificateDer::from_pem_file(dir.join("test-only-localhost-tls.pem")).expect("cert")];
        let key = PrivateKeyDer::from_pem_file(dir.join("test-only-localhost-tls.key")).expect("key");
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_no_client_auth()
                .with_single_cert(chain, key)
                .expect("the test certificate");
        Self::serve(true, Some(Arc::new(config)))
    }

    fn serve(up: bool, tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // The certificate names `localhost`.
        let url = if tls.is_some() {
            format!("https://localhost:{port}")
        } else {
            format!("http://127.0.0.1:{port}")
        };
        let state = Arc::new(Mutex::new(IssuerState {
            up,
            keys: vec![issuer_jwk()],
            claims_issuer: None,
            seen: Vec::new(),
        }));
        let (shared, issuer) = (state.clone(), url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = match &tls {
                    None => Self::answer(stream, &shared, &issuer),
                    Some(config) => tokio_rustls::rustls::ServerConnection::new(config.clone())
                        .map_err(std::io::Error::other)
                        .and_then(|c| {
                            Self::answer(tokio_rustls::rustls::StreamOwned::new(c, stream), &shared, &issuer)
                        }),
                };
            }
        });
        Issuer { url, state }
    }

    fn answer(stream: impl Read + Write, state: &Mutex<IssuerState>, issuer: &str) -> std::io::Result<()> {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let path = line.split(' ').nth(1).unwrap_or("").to_owned();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header == "\r\n" {
                break;
            }
        }
        let (status, body) = {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.seen.push(path.clone());
            if !s.up {
                ("503 Service Unavailable", "down".to_owned())
            } else if path == "/jwks" {
                ("200 OK", json!({"keys": s.keys}).to_string())
            } else if path == "/.well-known/oauth-authorization-server" {
                let claimed = s.claims_issuer.clone().unwrap_or_else(|| issuer.to_owned());
                ("200 OK", json!({"issuer": claimed, "jwks_uri": format!("{issuer}/jwks")}).to_string())
            } else {
                ("404 Not Found", "no".to_owned())
            }
        };
        let stream = reader.get_mut();
        write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        stream.flush()
    }

    /// An issuer at a port that was free a moment ago, with nothing on it now.
    fn nowhere() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let state = IssuerState { up: false, keys: Vec::new(), claims_issuer: None, seen: Vec::new() };
        Issuer { url: format!("http://127.0.0.1:{port}"), state: Arc::new(Mutex::new(state)) }
    }

    fn set(&self, change: impl FnOnce(&mut IssuerState)) {
        change(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    fn seen(&self) -> Vec<String> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).seen.clone()
    }

    /// Claims of a good token: this issuer, this resource, `sub`, `scope`, ten minutes.
    fn claims(&self, sub: &str, scope: &str) -> Value {
        json!({"iss": self.url, "aud": RESOURCE, "sub": sub, "scope": scope, "client_id": "test-client",
               "iat": now(), "exp": now() + 600})
    }

    /// `claims` signed with the issuer's key (`at+jwt`, its `kid`).
    fn token(&self, claims: &Value) -> String {
        sign(claims, &issuer_key(), KID)
    }
}

fn sign(claims: &Value, key: &EncodingKey, kid: &str) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

/// `teaagent mcp serve --http 127.0.0.1:0` with OAuth from `issuer` (its key set named, unless
/// `discover`), `mcp:tools` required, `mcp:write` for writing tools, `mcp:exec` for executing
/// ones; `extra` flags after.
fn serve(tree: &Tree, home: &Tree, issuer: &Issuer, discover: bool, extra: &[&str]) -> Http {
    let jwks = format!("{}/jwks", issuer.url);
    let mut flags = vec![
        "--oauth-issuer",
        issuer.url.as_str(),
        "--oauth-resource",
        RESOURCE,
        "--oauth-scope",
        "mcp:tools",
        "--oauth-write-scope",
        "mcp:write",
        "--oauth-exec-scope",
        "mcp:exec",
    ];
    if !discover {
        flags.extend(["--oauth-jwks-uri", jwks.as_str()]);
    }
    flags.extend_from_slice(extra);
    Http::teaagent(tree, home, &flags, &[])
}

/// Waits until `/readyz` is `200` (the keys are loaded).
fn ready(server: &Http) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = server.exchange("GET", "/readyz", &[], b"");
        if r.status == 200 {
            return;
        }
        assert!(Instant::now() < deadline, "never ready: {r:?}\n{}", server.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A modern POST of `message`, with `Authorization: Bearer token` when given, to `path`.
fn call_with(server: &Http, path: &str, message: &Value, token: Option<&str>) -> Reply {
    let mut headers = modern_headers(message);
    if let Some(token) = token {
        headers.push(("Authorization".into(), format!("Bearer {token}")));
    }
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    server.exchange("POST", path, &refs, message.to_string().as_bytes())
}

fn tool_call(id: i64, name: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({"name": name, "arguments": arguments}))
}

/// The parameters of a `Bearer` challenge.
fn challenge(reply: &Reply) -> Vec<(String, String)> {
    let header = reply.header("www-authenticate").unwrap_or_else(|| panic!("no WWW-Authenticate: {reply:?}"));
    let params = header.strip_prefix("Bearer ").unwrap_or_else(|| panic!("not Bearer: {header}"));
    let mut out = Vec::new();
    let mut rest = params;
    while let Some((key, after)) = rest.split_once("=\"") {
        let (value, next) = after.split_once('"').expect("a closed quote");
        out.push((key.trim_start_matches([',', ' ']).to_owned(), value.to_owned()));
        rest = next;
    }
    out
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

const METADATA_URL: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

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
    assert!(server.stderr().contains("cannot load the authorization server's keys"), "{}", server.stderr());
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
    assert!(server.stderr().contains("someone-else.example.com"), "{}", server.stderr());
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
    assert!(server.stderr().contains("TLS failed"), "{}", server.stderr());
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
