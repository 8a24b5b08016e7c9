//! The authorization server's signing keys: where they are (the configured `jwks_uri`, or the
//! one the issuer's metadata names), fetched, kept, and fetched again.
//!
//! - **Found once.** Without a configured `jwks_uri`, the issuer's metadata is read
//!   ([`metadata_urls`]: RFC 8414's `oauth-authorization-server`, then OpenID Connect's
//!   `openid-configuration`), and used only if its `issuer` is exactly the configured one (a
//!   document for another issuer would hand this server someone else's keys).
//! - **Loaded in the background** at start, retried after 1, 2, 4 … up to 30 s while the issuer
//!   cannot be reached; until a first load `/readyz` says `503`, and calls are answered `503`
//!   with `Retry-After` (no key, no way to tell a good token from a forged one).
//! - **Kept [`TTL`]**, then fetched again. A failed refresh keeps the keys it has, for at most
//!   [`MAX_AGE`] since they were loaded; older keys are not used (fail closed: a key the issuer
//!   withdrew must stop working even if its key set cannot be read).
//! - **An unknown `kid`** (the issuer rotated its keys) fetches the set again at once, at most
//!   once every [`UNKNOWN_KID_PAUSE`]: a stream of tokens with made-up `kid`s cannot make the
//!   server hammer the issuer (the pause counts from the last fetch an unknown `kid` caused, so
//!   a rotation right after a scheduled load is still noticed).
//! - Only signing keys are kept: no `oct` (shared secret) key, none whose `use` is not `sig` or
//!   whose `key_ops` lack `verify`, none with an algorithm outside [`super::ALGORITHMS`]. One
//!   fetch at a time.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio_util::sync::CancellationToken;

use super::fetch::{FetchError, Fetcher};
use super::url::Url;
use super::{ALGORITHMS, UrlRole};

/// How long a loaded key set is used before it is fetched again.
pub(crate) const TTL: Duration = Duration::from_secs(10 * 60);
/// Keys loaded longer ago than this (every refresh since failed) are not used.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(70 * 60);
/// The shortest time between two fetches caused by unknown `kid`s.
pub(crate) const UNKNOWN_KID_PAUSE: Duration = Duration::from_secs(30);
/// The longest pause between two attempts while the issuer cannot be reached.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Why the keys could not be loaded (logged; said at no client).
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeysError {
    #[error("GET {url}: {source}")]
    Fetch { url: String, source: FetchError },
    #[error("{url}: {why}")]
    Document { url: String, why: String },
    #[error("the issuer's metadata names no usable key set: {0}")]
    Discovery(String),
}

/// The keys, as far as they are known.
pub(crate) struct Keys {
    issuer: Url,
    configured: Option<Url>,
    fetcher: Fetcher,
    state: Mutex<State>,
    /// Held by the one fetch in progress.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// Configured, or found in the issuer's metadata.
    jwks_uri: Option<Url>,
    set: Option<Arc<KeySet>>,
    loaded_at: Option<Instant>,
    /// The last fetch an unknown `kid` caused.
    kid_fetch_at: Option<Instant>,
    /// When the background loader tries next (for `Retry-After`).
    next_attempt: Option<Instant>,
    /// Counts loads, so a request that waited for another's fetch sees it happened.
    generation: u64,
}

/// The keys now, or how long until there may be some.
pub(crate) enum Current {
    Keys { set: Arc<KeySet>, generation: u64 },
    Unavailable { retry_after: Duration },
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl Keys {
    pub(crate) fn new(issuer: Url, configured: Option<Url>, fetcher: Fetcher) -> Self {
        Keys {
            issuer,
            configured,
            fetcher,
            state: Mutex::new(State::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The keys, when a set was loaded and is not too old.
    pub(crate) fn current(&self) -> Current {
        let state = lock(&self.state);
        match (&state.set, state.loaded_at) {
            (Some(set), Some(at)) if at.elapsed() <= MAX_AGE => {
                Current::Keys { set: set.clone(), generation: state.generation }
            }
            _ => {
                let wait = state
                    .next_attempt
                    .map_or(Duration::from_secs(5), |at| at.saturating_duration_since(Instant::now()));
                Current::Unavailable { retry_after: wait.clamp(Duration::from_secs(1), RETRY_MAX) }
            }
        }
    }

    /// A token named a key the set `generation` did not have: the set again, fetched now unless
    /// a fetch was tried less than [`UNKNOWN_KID_PAUSE`] ago. `None`: no newer set.
    pub(crate) async fn after_unknown_kid(&self, generation: u64) -> Option<Arc<KeySet>> {
        let _one = self.fetching.lock().await;
        {
            let state = lock(&self.state);
            // Another request's fetch finished while this one waited.
            if state.generation != generation {
                return state.set.clone();
            }
            if state.kid_fetch_at.is_some_and(|at| at.elapsed() < UNKNOWN_KID_PAUSE) {
                return None;
            }
        }
        lock(&self.state).kid_fetch_at = Some(Instant::now());
        match self.load().await {
            Ok(set) => {
                tracing::info!(
                    keys = set.len(),
                    "fetched the authorization server's keys again (a token named a key not in the set)"
                );
                Some(set)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot fetch the authorization server's keys");
                None
            }
        }
    }

    /// Loads the keys at start and keeps them fresh until `stop` (module docs).
    pub(crate) async fn keep_fresh(self: Arc<Self>, stop: CancellationToken) {
        let mut pause = Duration::from_secs(1);
        let mut first = true;
        loop {
            let loaded = {
                let _one = self.fetching.lock().await;
                self.load().await
            };
            let wait = match loaded {
                Ok(set) => {
                    if first {
                        tracing::info!(keys = set.len(), issuer = %self.issuer, "loaded the authorization server's keys");
                    } else {
                        tracing::debug!(keys = set.len(), "refreshed the authorization server's keys");
                    }
                    first = false;
                    pause = Duration::from_secs(1);
                    TTL
                }
                Err(e) => {
                    let wait = pause;
                    pause = (pause * 2).min(RETRY_MAX);
                    tracing::warn!(error = %e, retry_in_secs = wait.as_secs(), "cannot load the authorization server's keys");
                    wait
                }
            };
            lock(&self.state).next_attempt = Some(Instant::now() + wait);
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// One load: the key set's URL (found first if need be), its keys. The caller holds
    /// `fetching`.
    async fn load(&self) -> Result<Arc<KeySet>, KeysError> {
        let known = lock(&self.state).jwks_uri.clone();
        let jwks_uri = match known.or_else(|| self.configured.clone()) {
            Some(url) => url,
            None => {
                let found = self.discover().await?;
                lock(&self.state).jwks_uri = Some(found.clone());
                found
            }
        };
        let body = self
            .fetcher
            .get(&jwks_uri)
            .await
            .map_err(|source| KeysError::Fetch { url: jwks_uri.to_string(), source })?;
        let set = Arc::new(
            KeySet::parse(&body).map_err(|why| KeysError::Document { url: jwks_uri.to_string(), why })?,
        );
        let mut state = lock(&self.state);
        state.set = Some(set.clone());
        state.loaded_at = Some(Instant::now());
        state.generation += 1;
        Ok(set)
    }

    /// The `jwks_uri` of the issuer's metadata: the first document that is there and is the
    /// issuer's own.
    async fn discover(&self) -> Result<Url, KeysError> {
        /// The two members used (the rest is skipped).
        #[derive(serde::Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let mut tried = Vec::new();
        for url in metadata_urls(&self.issuer) {
            let body = match self.fetcher.get(&url).await {
                Ok(body) => body,
                Err(e) => {
                    tried.push(format!("GET {url}: {e}"));
                    continue;
                }
            };
            let problem = match serde_json::from_slice::<Metadata>(&body) {
                Err(e) => format!("not authorization server metadata ({e})"),
                Ok(m) if m.issuer != self.issuer.as_str() => {
                    format!("names the issuer {:?}, not {:?}", m.issuer, self.issuer.as_str())
                }
                Ok(Metadata { jwks_uri: None, .. }) => "names no jwks_uri".into(),
                Ok(Metadata { jwks_uri: Some(jwks), .. }) => {
                    match super::config::parse_url(&jwks, UrlRole::JwksUri) {
                        Ok(jwks) => {
                            tracing::info!(metadata = %url, jwks_uri = %jwks, "found the authorization server's key set");
                            return Ok(jwks);
                        }
                        Err(e) => e.to_string(),
                    }
                }
            };
            tried.push(format!("{url}: {problem}"));
        }
        Err(KeysError::Discovery(tried.join("; ")))
    }
}

/// Where the issuer's metadata may be, in the order tried (MCP's authorization server
/// discovery): for an issuer with a path, RFC 8414's path insertion, then OpenID Connect's
/// path insertion and path appending; for one without, the two well-known documents at its
/// root.
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            issuer.with_path("/.well-known/oauth-authorization-server"),
            issuer.with_path("/.well-known/openid-configuration"),
        ];
    }
    vec![
        issuer.with_path(&format!("/.well-known/oauth-authorization-server{path}")),
        issuer.with_path(&format!("/.well-known/openid-configuration{path}")),
        issuer.with_path(&format!("{path}/.well-known/openid-configuration")),
    ]
}

/// The usable keys of one key set.
pub(crate) struct KeySet {
    keys: Vec<Key>,
}

struct Key {
    kid: Option<String>,
    alg: Option<Algorithm>,
    key: DecodingKey,
}

impl KeySet {
    /// `{"keys": [...]}`: each key that is a usable signing key (module docs); a key this
    /// server cannot read is skipped, not fatal (an issuer may publish kinds it does not use).
    pub(crate) fn parse(body: &[u8]) -> Result<KeySet, String> {
        #[derive(serde::Deserialize)]
        struct Document {
            keys: Vec<serde_json::Value>,
        }
        let document: Document =
            serde_json::from_slice(body).map_err(|e| format!("not a JSON Web Key Set ({e})"))?;
        let total = document.keys.len();
        let keys: Vec<Key> = document.keys.into_iter().filter_map(Key::usable).collect();
        if keys.is_empty() {
            return Err(format!(
                "none of its {total} keys is a signing key this server accepts (RS256, PS256, ES256, EdDSA)"
            ));
        }
        Ok(KeySet { keys })
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The key a token with `kid` signed with `alg` is checked with: the one with that `kid`
    /// (and, when the key names one, that algorithm); without a `kid`, the only key for `alg`.
    pub(crate) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<&DecodingKey> {
        let fits = |k: &&Key| k.alg.is_none_or(|a| a == alg) && k.key.family() == alg.family();
        match kid {
            Some(kid) => {
                self.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).find(fits).map(|k| &k.key)
            }
            None => {
                let mut fitting = self.keys.iter().filter(fits);
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Some(&only.key),
                    _ => None,
                }
            }
        }
    }
}

impl Key {
    fn usable(value: serde_json::Value) -> Option<Key> {
        let jwk: Jwk = serde_json::from_value(value).ok()?;
        if jwk.common.public_key_use.as_ref().is_some_and(|u| *u != PublicKeyUse::Signature) {
            return None;
        }
        if jwk.common.key_operations.as_ref().is_some_and(|ops| !ops.contains(&KeyOperations::Verify)) {
            return None;
        }
        if !matches!(
            jwk.algorithm,
            AlgorithmParameters::RSA(_)
                | AlgorithmParameters::EllipticCurve(_)
                | AlgorithmParameters::OctetKeyPair(_)
        ) {
            return None;
        }
        let alg = match jwk.common.key_algorithm {
            None => None,
            Some(named) => {
                Some(named.to_string().parse::<Algorithm>().ok().filter(|a| ALGORITHMS.contains(a))?)
            }
        };
        let key = DecodingKey::from_jwk(&jwk).ok()?;
        Some(Key { kid: jwk.common.key_id, alg, key })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_mcp_clients_look() {
        let root = Url::parse("https://auth.example.com", UrlRole::Issuer).expect("issuer");
        let urls: Vec<String> = metadata_urls(&root).iter().map(|u| u.to_string()).collect();
        assert_eq!(
            urls,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        let tenant = Url::parse("https://auth.example.com/realms/x/", UrlRole::Issuer).expect("issuer");
        let urls: Vec<String> = metadata_urls(&tenant).iter().map(|u| u.to_string()).collect();
        assert_eq!(
            urls,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/realms/x",
                "https://auth.example.com/.well-known/openid-configuration/realms/x",
                "https://auth.example.com/realms/x/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn only_signing_keys_are_kept() {
        let ec = |extra: serde_json::Value| {
            let mut key = serde_json::json!({
                "kty": "EC", "crv": "P-256", "kid": "k1",
                "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
            });
            key.as_object_mut().expect("object").extend(extra.as_object().cloned().unwrap_or_default());
            key
        };
        let set = |keys: Vec<serde_json::Value>| {
            KeySet::parse(serde_json::json!({ "keys": keys }).to_string().as_bytes())
        };
        let one = set(vec![ec(serde_json::json!({"alg": "ES256", "use": "sig"}))]).expect("usable");
        assert!(one.find(Some("k1"), Algorithm::ES256).is_some());
        assert!(one.find(None, Algorithm::ES256).is_some(), "the only key");
        assert!(one.find(Some("k2"), Algorithm::ES256).is_none());
        assert!(one.find(Some("k1"), Algorithm::RS256).is_none(), "another family");
        for refused in [
            serde_json::json!({"use": "enc"}),
            serde_json::json!({"key_ops": ["encrypt"]}),
            serde_json::json!({"alg": "ES384"}),
        ] {
            assert!(set(vec![ec(refused.clone())]).is_err(), "{refused}");
        }
        let secret = serde_json::json!({"kty": "oct", "k": "c2VjcmV0", "kid": "k1", "alg": "HS256"});
        assert!(set(vec![secret.clone()]).is_err(), "no shared secret");
        let mixed =
            set(vec![secret, serde_json::json!({"kty": "weird"}), ec(serde_json::json!({}))]).expect("one");
        assert_eq!(mixed.len(), 1);
        assert!(KeySet::parse(b"[]").is_err());
    }
}
