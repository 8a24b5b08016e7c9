//! The set-up of the OAuth 2.1 resource-server tests (`oauth_*.rs`; MCP authorization;
//! RFC 9728, 6750, 8707, 9068): a stand-in authorization server (a thread on a loopback port
//! serving its metadata and its key set), tokens signed with the committed test-only keys
//! (`tests/oauth_keys/`), and the real `teaagent mcp serve --http … --oauth-*` that checks them.
//!
//! The requests go through `common/http.rs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::http::{Http, Reply, modern_headers, request};

/// The resource URL every server here is configured with (what tokens must name in `aud`).
pub(crate) const RESOURCE: &str = "http://localhost/mcp";

/// The `kid` of the committed test-only key.
pub(crate) const KID: &str = "test-only-key-1";

pub(crate) fn key_file(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth_keys").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The test authorization server's signing key.
pub(crate) fn issuer_key() -> EncodingKey {
    EncodingKey::from_ec_pem(key_file("test-only-issuer-es256.pem").as_bytes()).expect("the test key")
}

/// Another key: a token it signs under the issuer's `kid` has a signature that does not verify.
pub(crate) fn impostor_key() -> EncodingKey {
    EncodingKey::from_ec_pem(key_file("test-only-impostor-es256.pem").as_bytes()).expect("the other test key")
}

/// The issuer key's public JWK, as committed.
pub(crate) fn issuer_jwk() -> Value {
    serde_json::from_str(&key_file("test-only-issuer-es256.jwk.json")).expect("the test JWK")
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("time").as_secs()
}

/// A stand-in authorization server: `/.well-known/oauth-authorization-server` and `/jwks`, over
/// plain HTTP or (`start_tls`) over TLS with the test-only `localhost` certificate.
pub(crate) struct Issuer {
    pub(crate) url: String,
    state: Arc<Mutex<IssuerState>>,
}

pub(crate) struct IssuerState {
    /// `false`: every request is answered `503`.
    pub(crate) up: bool,
    pub(crate) keys: Vec<Value>,
    /// The `issuer` its metadata claims (the real one unless a test lies).
    pub(crate) claims_issuer: Option<String>,
    /// Paths requested, in order.
    pub(crate) seen: Vec<String>,
}

impl Issuer {
    pub(crate) fn start(up: bool) -> Self {
        Self::serve(up, None)
    }

    pub(crate) fn start_tls() -> Self {
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
    pub(crate) fn nowhere() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let state = IssuerState { up: false, keys: Vec::new(), claims_issuer: None, seen: Vec::new() };
        Issuer { url: format!("http://127.0.0.1:{port}"), state: Arc::new(Mutex::new(state)) }
    }

    pub(crate) fn set(&self, change: impl FnOnce(&mut IssuerState)) {
        change(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub(crate) fn seen(&self) -> Vec<String> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).seen.clone()
    }

    /// Claims of a good token: this issuer, this resource, `sub`, `scope`, ten minutes.
    pub(crate) fn claims(&self, sub: &str, scope: &str) -> Value {
        json!({"iss": self.url, "aud": RESOURCE, "sub": sub, "scope": scope, "client_id": "test-client",
               "iat": now(), "exp": now() + 600})
    }

    /// `claims` signed with the issuer's key (`at+jwt`, its `kid`).
    pub(crate) fn token(&self, claims: &Value) -> String {
        sign(claims, &issuer_key(), KID)
    }
}

pub(crate) fn sign(claims: &Value, key: &EncodingKey, kid: &str) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, claims, key).expect("sign")
}

/// `teaagent mcp serve --http 127.0.0.1:0` with OAuth from `issuer` (its key set named, unless
/// `discover`), `mcp:tools` required, `mcp:write` for writing tools, `mcp:exec` for executing
/// ones; `extra` flags after.
pub(crate) fn serve(tree: &Tree, home: &Tree, issuer: &Issuer, discover: bool, extra: &[&str]) -> Http {
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
pub(crate) fn ready(server: &Http) {
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
pub(crate) fn call_with(server: &Http, path: &str, message: &Value, token: Option<&str>) -> Reply {
    let mut headers = modern_headers(message);
    if let Some(token) = token {
        headers.push(("Authorization".into(), format!("Bearer {token}")));
    }
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    server.exchange("POST", path, &refs, message.to_string().as_bytes())
}

pub(crate) fn tool_call(id: i64, name: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({"name": name, "arguments": arguments}))
}

/// The parameters of a `Bearer` challenge.
pub(crate) fn challenge(reply: &Reply) -> Vec<(String, String)> {
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

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

pub(crate) const METADATA_URL: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";
