//! OAuth 2.1 resource-server mode for Streamable HTTP (feature `oauth`,
//! [`HttpOptions::oauth`](super::HttpOptions::oauth)): the server accepts the access tokens an
//! authorization server issued **for it**, and nothing else (MCP authorization, protocol
//! 2026-07-28; RFC 9728, 6750, 8707, 9068).
//!
//! ```no_run
//! use teaagent_core::server::http::HttpOptions;
//! use teaagent_core::server::http::oauth::OAuthConfig;
//! use teaagent_core::tool::Tier;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let oauth = OAuthConfig::new("https://mcp.example.com/mcp", "https://auth.example.com")?
//!     .required_scope("mcp:tools")?
//!     .tier_scope(Tier::Medium, "mcp:write")?   // tools that write
//!     .tier_scope(Tier::High, "mcp:exec")?;     // tools that execute or reach outside
//! let options = HttpOptions { oauth: Some(oauth), ..HttpOptions::default() };
//! # let _ = options;
//! # Ok(())
//! # }
//! ```
//!
//! # Settings
//!
//! - **The resource URL** ([`OAuthConfig::new`]): this server's URL as its clients use it,
//!   `https://mcp.example.com/mcp` (behind a proxy, the public one). Tokens must name it in
//!   `aud`; clients ask the authorization server for tokens for it (RFC 8707). Configured, never
//!   taken from `Host` or `X-Forwarded-*`. Its host is a `Host` the server answers to.
//! - **The issuer**: the authorization server whose tokens are accepted (`iss`, exactly).
//! - **The key set**: [`OAuthConfig::jwks_uri`], or found in the issuer's metadata
//!   (`keys` module: how keys are fetched, cached and refreshed).
//! - **Scopes** ([`OAuthConfig::scopes_needed`] is the mapping): [`OAuthConfig::required_scope`]s
//!   for every request; [`OAuthConfig::tier_scope`]s, added for `tools/call` of a tool whose
//!   security tier ([`Tier`]) is at least theirs. Scopes add up and none implies another: with
//!   `mcp:tools` required, `mcp:write` for `medium` and `mcp:exec` for `high`, `read_file` (`low`)
//!   needs `mcp:tools`, `write_file` (`medium`) `mcp:tools mcp:write`, and `shell_exec` (`high`)
//!   all three. Listing, reading resources and prompts need the required ones. `offline_access` is
//!   refused: a resource server has no business asking for refresh tokens.
//!
//! Bearer tokens ([`HttpOptions::tokens`](super::HttpOptions::tokens)) and OAuth are not used together: a resource server
//! accepts only the tokens its authorization server issued for it (MCP authorization, "Token
//! Handling"), and one way in is one thing to audit. [`Server::serve_http`](crate::Server::serve_http)
//! refuses both at once; OAuth counts as authentication for an address that is not loopback.
//!
//! # What is served
//!
//! Protected Resource Metadata (RFC 9728), without authentication (`Host` and `Origin` are still
//! checked), at `/.well-known/oauth-protected-resource` followed by the resource URL's path
//! (`…/mcp`, where MCP clients look first) and at `/.well-known/oauth-protected-resource`:
//!
//! ```json
//! {"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://auth.example.com"],
//!  "scopes_supported": ["mcp:tools", "mcp:write", "mcp:exec"], "bearer_methods_supported": ["header"],
//!  "resource_name": "teaagent"}
//! ```
//!
//! # Answers
//!
//! | request | status | `WWW-Authenticate` |
//! |---|---|---|
//! | no `Authorization: Bearer` | `401` | `Bearer resource_metadata="…", scope="<required>"` |
//! | a token that fails a check (`token` module: signature, `kid`, `iss`, `aud`, `exp`, `nbf`, `alg`, …) | `401` | the same, and `error="invalid_token", error_description="…"` |
//! | a token without a scope the request needs | `403` | `Bearer error="insufficient_scope", scope="<every scope it needs>", resource_metadata="…"` |
//! | `access_token` in the query, `Bearer` without a token, two `Authorization` headers | `400` | `Bearer error="invalid_request", …` |
//! | no key set loaded yet (or every refresh failed for 70 minutes since the last load) | `503`, `Retry-After` | – |
//!
//! `/readyz` is `503` until the keys are loaded. A refusal never repeats the token or anything
//! from it.
//!
//! # The token goes nowhere
//!
//! The token is checked and dropped: tools, child processes (their environment is the
//! server's, minus its secrets), logs, the audit and error messages never see it. The audit
//! names the caller: `"principal": "oauth:<sub>"`. Legacy sessions belong to that principal.
//!
//! # Cryptography
//!
//! jsonwebtoken with its RustCrypto backend. If no backend is the process default (both of
//! jsonwebtoken's backends were enabled by some other crate of the program, and none installed),
//! the RustCrypto one is installed at start, so that no check can panic later.

mod fetch;
mod keys;
mod token;
mod url;

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};
use jsonwebtoken::Algorithm;

pub use url::UrlProblem;

use self::keys::{Current, Keys};
use self::url::Url;
use super::{Answer, Authenticated, Reply};
use crate::error::code;
use crate::jsonrpc::{ErrorObject, RawParams, RequestId, error_line};
use crate::registry::Registry;
use crate::tool::Tier;

/// The signature algorithms accepted: RSA (PKCS#1 v1.5 and PSS), ECDSA on P-256, Ed25519.
/// Never `none`, never a shared secret (`HS*`): anyone holding a shared secret could sign.
pub(crate) const ALGORITHMS: [Algorithm; 4] =
    [Algorithm::RS256, Algorithm::ES256, Algorithm::PS256, Algorithm::EdDSA];

/// The well-known path of Protected Resource Metadata.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Which setting a URL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlRole {
    /// This server's resource URL ([`OAuthConfig::new`]'s `resource`).
    Resource,
    /// The authorization server's issuer identifier.
    Issuer,
    /// The authorization server's key set ([`OAuthConfig::jwks_uri`]).
    JwksUri,
}

impl std::fmt::Display for UrlRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UrlRole::Resource => "resource URL",
            UrlRole::Issuer => "issuer",
            UrlRole::JwksUri => "key set URL (jwks_uri)",
        })
    }
}

/// What is wrong with a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopeProblem {
    /// Empty.
    Empty,
    /// A space, a control character, a non-ASCII one, `"` or `\` (RFC 6749's `scope-token`).
    Character,
    /// `offline_access`: refresh tokens are the client's business, never asked for here.
    OfflineAccess,
}

impl std::fmt::Display for ScopeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScopeProblem::Empty => "is empty",
            ScopeProblem::Character => {
                "may only hold visible ASCII characters other than `\"` and `\\` (one scope a value, no spaces)"
            }
            ScopeProblem::OfflineAccess => {
                "is not one a resource server asks for (refresh tokens are between the client and the authorization server)"
            }
        })
    }
}

/// A setting of [`OAuthConfig`] that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// A URL (`role` says which).
    #[error("the {role} `{url}` {problem}")]
    Url {
        /// Which setting.
        role: UrlRole,
        /// As given.
        url: String,
        /// What is wrong with it.
        problem: UrlProblem,
    },
    /// A scope.
    #[error("the scope `{scope}` {problem}")]
    Scope {
        /// As given.
        scope: String,
        /// What is wrong with it.
        problem: ScopeProblem,
    },
}

/// How the server acts as an OAuth 2.1 resource server (module docs). Every value is checked
/// when it is set.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    resource: Url,
    issuer: Url,
    jwks_uri: Option<Url>,
    required: Vec<String>,
    tiers: Vec<(Tier, String)>,
    supported: Vec<String>,
    resource_name: String,
}

impl OAuthConfig {
    /// Tokens from `issuer` for `resource`, this server's URL as clients use it (e.g.
    /// `https://mcp.example.com/mcp`: `https` unless the host is loopback, lowercase scheme and
    /// host, no query, no fragment, no trailing `/`). The issuer is compared with each token's
    /// `iss` exactly as given here.
    pub fn new(resource: &str, issuer: &str) -> Result<Self, OAuthConfigError> {
        Ok(OAuthConfig {
            resource: Url::parse(resource, UrlRole::Resource)?,
            issuer: Url::parse(issuer, UrlRole::Issuer)?,
            jwks_uri: None,
            required: Vec::new(),
            tiers: Vec::new(),
            supported: Vec::new(),
            resource_name: "teaagent".into(),
        })
    }

    /// The issuer's key set, instead of the one its metadata names.
    pub fn jwks_uri(mut self, uri: &str) -> Result<Self, OAuthConfigError> {
        self.jwks_uri = Some(Url::parse(uri, UrlRole::JwksUri)?);
        Ok(self)
    }

    /// A scope every request needs.
    pub fn required_scope(mut self, scope: &str) -> Result<Self, OAuthConfigError> {
        let scope = checked_scope(scope)?;
        if !self.required.contains(&scope) {
            self.required.push(scope);
        }
        Ok(self)
    }

    /// A scope `tools/call` needs, besides the required ones, for every tool of tier `tier` or
    /// above (`Tier::Medium`: tools that write; `Tier::High`: tools that execute or write
    /// outside the workspace).
    pub fn tier_scope(mut self, tier: Tier, scope: &str) -> Result<Self, OAuthConfigError> {
        let scope = checked_scope(scope)?;
        if !self.tiers.iter().any(|(t, s)| *t == tier && *s == scope) {
            self.tiers.push((tier, scope));
        }
        Ok(self)
    }

    /// A scope to list in the metadata's `scopes_supported` besides the ones this configuration
    /// asks for (which are always listed).
    pub fn supported_scope(mut self, scope: &str) -> Result<Self, OAuthConfigError> {
        let scope = checked_scope(scope)?;
        if !self.supported.contains(&scope) {
            self.supported.push(scope);
        }
        Ok(self)
    }

    /// The metadata's `resource_name` (default `teaagent`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = name.into();
        self
    }

    /// This server's resource URL.
    pub fn resource(&self) -> &str {
        self.resource.as_str()
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        self.issuer.as_str()
    }

    /// Every scope a request needs: the required ones, and for `tools/call` of a tool of
    /// `tier` (`Some`), those of every [`OAuthConfig::tier_scope`] at or below that tier, in the
    /// order they were configured. `None`: any other request (or a tool this server does not
    /// have, which the call then reports).
    pub fn scopes_needed(&self, tier: Option<Tier>) -> Vec<&str> {
        let mut needed: Vec<&str> = self.required.iter().map(String::as_str).collect();
        if let Some(tier) = tier {
            for (at, scope) in &self.tiers {
                if *at <= tier && !needed.contains(&scope.as_str()) {
                    needed.push(scope);
                }
            }
        }
        needed
    }

    /// `scopes_supported` of the metadata: the required scopes, the tiers' scopes, then the
    /// [`OAuthConfig::supported_scope`]s.
    pub fn scopes_supported(&self) -> Vec<&str> {
        let mut all: Vec<&str> = Vec::new();
        let every = self.required.iter().chain(self.tiers.iter().map(|(_, s)| s)).chain(&self.supported);
        for scope in every {
            if !all.contains(&scope.as_str()) {
                all.push(scope);
            }
        }
        all
    }

    /// The Protected Resource Metadata document (module docs).
    pub fn metadata(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "resource": self.resource.as_str(),
            "authorization_servers": [self.issuer.as_str()],
        });
        let supported = self.scopes_supported();
        if !supported.is_empty() {
            doc["scopes_supported"] = serde_json::json!(supported);
        }
        doc["bearer_methods_supported"] = serde_json::json!(["header"]);
        doc["resource_name"] = serde_json::json!(self.resource_name);
        doc
    }

    /// Where the metadata is served: the path form for the resource URL (RFC 9728 §3.1), then
    /// the root form (the same when the resource URL has no path).
    pub fn metadata_paths(&self) -> [String; 2] {
        [format!("{METADATA_PATH}{}", self.resource.path()), METADATA_PATH.to_owned()]
    }

    /// The metadata's URL, as challenges name it: the resource's origin and the path form.
    pub fn metadata_url(&self) -> String {
        format!("{}{METADATA_PATH}{}", self.resource.origin(), self.resource.path())
    }
}

/// RFC 6749's `scope-token`: visible ASCII except `"` and `\`.
fn checked_scope(scope: &str) -> Result<String, OAuthConfigError> {
    let fail = |problem| OAuthConfigError::Scope { scope: scope.to_owned(), problem };
    if scope.is_empty() {
        return Err(fail(ScopeProblem::Empty));
    }
    if scope.bytes().any(|b| !b.is_ascii_graphic() || b == b'"' || b == b'\\') {
        return Err(fail(ScopeProblem::Character));
    }
    if scope == "offline_access" {
        return Err(fail(ScopeProblem::OfflineAccess));
    }
    Ok(scope.to_owned())
}

/// The scopes a token grants.
#[derive(Debug, Default)]
pub(crate) struct Scopes(pub(crate) Vec<String>);

impl Scopes {
    fn lacks_any(&self, needed: &[&str]) -> bool {
        needed.iter().any(|n| !self.0.iter().any(|s| s == n))
    }
}

/// The running resource server: the settings, the keys, what is answered.
pub(crate) struct OAuth {
    config: OAuthConfig,
    pub(crate) keys: Arc<Keys>,
    checks: token::Checks,
    metadata: Bytes,
    metadata_url: String,
}

impl OAuth {
    /// Checks what can be checked before serving: a crypto backend for jsonwebtoken, and a
    /// trust store when a URL is `https`. The keys are loaded by [`Keys::keep_fresh`].
    pub(crate) fn start(config: &OAuthConfig) -> io::Result<OAuth> {
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            // Both backends compiled in, none chosen: choose ours now rather than panic at the
            // first token (module docs, "Cryptography").
            let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        }
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            return Err(io::Error::other("jsonwebtoken has no crypto provider: tokens cannot be checked"));
        }
        let fetcher = fetch::Fetcher::default();
        if config.issuer.https || config.jwks_uri.as_ref().is_some_and(|u| u.https) {
            fetcher.tls().map_err(|e| io::Error::other(format!("OAuth: {e}")))?;
        }
        Ok(OAuth {
            checks: token::Checks::new(config.issuer.as_str(), config.resource.as_str()),
            keys: Arc::new(Keys::new(config.issuer.clone(), config.jwks_uri.clone(), fetcher)),
            metadata: Bytes::from(config.metadata().to_string()),
            metadata_url: config.metadata_url(),
            config: config.clone(),
        })
    }

    /// Whether `path` is one the metadata is served at.
    pub(crate) fn serves_metadata(&self, path: &str) -> bool {
        self.config.metadata_paths().iter().any(|p| p == path)
    }

    /// The metadata (GET; anything else `405`).
    pub(crate) fn metadata(&self, method: &Method) -> Reply {
        if method != Method::GET {
            let mut reply = super::refused(StatusCode::METHOD_NOT_ALLOWED, "the metadata is read with GET");
            reply.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
            return reply;
        }
        let mut reply = hyper::Response::new(Answer::Full(Full::new(self.metadata.clone())));
        let h = reply.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
        reply
    }

    /// Whether keys are loaded (`/readyz`).
    pub(crate) fn ready(&self) -> bool {
        matches!(self.keys.current(), Current::Keys { .. })
    }

    /// Whether `host` (without its port) is the resource URL's.
    pub(crate) fn is_resource_host(&self, host: &str) -> bool {
        self.config.resource.host.eq_ignore_ascii_case(host)
    }

    /// The caller of a request, from its `Authorization` header: a valid token with the
    /// required scopes, or the refusal (module docs' table).
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<Authenticated, Box<Reply>> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Box::new(if headers.contains_key(header::AUTHORIZATION) {
                self.bad_request("send one Authorization header")
            } else {
                self.missing()
            }));
        };
        let Some((scheme, token)) = value.to_str().ok().map(|v| v.split_once(' ').unwrap_or((v, ""))) else {
            return Err(Box::new(self.bad_request("the Authorization header is not ASCII")));
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            // Another scheme is no bearer credential at all (RFC 6750 §3.1: no error code).
            return Err(Box::new(self.missing()));
        }
        let token = token.trim();
        if token.is_empty() {
            return Err(Box::new(self.bad_request("`Authorization: Bearer` names no token")));
        }
        let verified = match self.checks.check(token, &self.keys).await {
            Ok(verified) => verified,
            Err(token::Rejected::Invalid(why)) => {
                tracing::info!(reason = why, "refused an access token");
                return Err(Box::new(self.invalid(why)));
            }
            Err(token::Rejected::Unavailable { retry_after }) => {
                return Err(Box::new(unavailable(retry_after)));
            }
        };
        let required = self.config.scopes_needed(None);
        if verified.scopes.lacks_any(&required) {
            return Err(Box::new(self.insufficient(&required, None)));
        }
        Ok(Authenticated {
            principal: Some(Arc::from(format!("oauth:{}", verified.subject))),
            caller: None,
            scopes: Some(Arc::new(verified.scopes)),
        })
    }

    /// A request's own scopes, checked before it runs: a `tools/call` needs those of its tool's
    /// tier ([`OAuthConfig::scopes_needed`]). `403` when the token lacks one.
    pub(crate) fn authorize(
        &self,
        registry: &Registry,
        scopes: &Scopes,
        id: &RequestId,
        method: &str,
        params: Option<&RawParams>,
    ) -> Result<(), Box<Reply>> {
        if method != "tools/call" {
            return Ok(());
        }
        /// Only the tool's name is read.
        #[derive(serde::Deserialize)]
        struct Named {
            name: Option<String>,
        }
        let tier = params
            .and_then(|p| serde_json::from_str::<Named>(p.get()).ok())
            .and_then(|n| n.name)
            .and_then(|name| registry.get(&name).map(|tool| tool.tier()));
        let needed = self.config.scopes_needed(tier);
        if scopes.lacks_any(&needed) {
            return Err(Box::new(self.insufficient(&needed, Some(id))));
        }
        Ok(())
    }

    /// `401` without an error: no token was sent.
    fn missing(&self) -> Reply {
        let mut challenge = format!(r#"Bearer resource_metadata="{}""#, self.metadata_url);
        push_scope(&mut challenge, &self.config.scopes_needed(None));
        let message = format!(
            "an access token is required (Authorization: Bearer …); the authorization server and scopes are in {}",
            self.metadata_url
        );
        challenged(StatusCode::UNAUTHORIZED, None, &message, &challenge)
    }

    /// `401`, `invalid_token`.
    fn invalid(&self, why: &'static str) -> Reply {
        let mut challenge = format!(
            r#"Bearer error="invalid_token", error_description="{why}", resource_metadata="{}""#,
            self.metadata_url
        );
        push_scope(&mut challenge, &self.config.scopes_needed(None));
        challenged(
            StatusCode::UNAUTHORIZED,
            None,
            &format!("the access token is not accepted: {why}"),
            &challenge,
        )
    }

    /// `403`, `insufficient_scope`, naming every scope the request needs.
    fn insufficient(&self, needed: &[&str], id: Option<&RequestId>) -> Reply {
        let scope = needed.join(" ");
        let challenge = format!(
            r#"Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="{scope}", resource_metadata="{}""#,
            self.metadata_url
        );
        let message = format!("the access token lacks a scope this request needs (it needs: {scope})");
        challenged(StatusCode::FORBIDDEN, id, &message, &challenge)
    }

    /// `400`, `invalid_request`.
    fn bad_request(&self, why: &'static str) -> Reply {
        let challenge = format!(
            r#"Bearer error="invalid_request", error_description="{why}", resource_metadata="{}""#,
            self.metadata_url
        );
        challenged(StatusCode::BAD_REQUEST, None, why, &challenge)
    }

    /// `400` for a token in the query string (RFC 6750 §2.3 is not supported: URLs are logged).
    pub(crate) fn token_in_query(&self) -> Reply {
        self.bad_request("send the access token in the Authorization header, never in the URL")
    }
}

fn push_scope(challenge: &mut String, scopes: &[&str]) {
    if !scopes.is_empty() {
        challenge.push_str(&format!(r#", scope="{}""#, scopes.join(" ")));
    }
}

/// A refusal with its challenge; the body is a JSON-RPC error (the request's id when known).
fn challenged(status: StatusCode, id: Option<&RequestId>, message: &str, challenge: &str) -> Reply {
    let error = ErrorObject { code: code::INVALID_REQUEST, message: message.to_owned(), data: None };
    let mut reply = super::json(status, error_line(id, &error));
    // Every part was checked when configured (URLs, scopes) or is one of our sentences.
    if let Ok(value) = HeaderValue::from_str(challenge) {
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    reply
}

/// `503` while no key can check a token.
fn unavailable(retry_after: u64) -> Reply {
    let mut reply = super::refused(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("the authorization server's keys are not loaded yet; try again in {retry_after} s"),
    );
    reply.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> OAuthConfig {
        OAuthConfig::new("https://mcp.example.com/mcp", "https://auth.example.com")
            .and_then(|c| c.required_scope("mcp:tools"))
            .and_then(|c| c.tier_scope(Tier::Medium, "mcp:write"))
            .and_then(|c| c.tier_scope(Tier::High, "mcp:exec"))
            .expect("valid")
    }

    #[test]
    fn scopes_add_up_by_tier() {
        let c = config();
        assert_eq!(c.scopes_needed(None), ["mcp:tools"]);
        assert_eq!(c.scopes_needed(Some(Tier::Low)), ["mcp:tools"]);
        assert_eq!(c.scopes_needed(Some(Tier::Medium)), ["mcp:tools", "mcp:write"]);
        assert_eq!(c.scopes_needed(Some(Tier::High)), ["mcp:tools", "mcp:write", "mcp:exec"]);
        assert_eq!(c.scopes_needed(Some(Tier::Critical)), ["mcp:tools", "mcp:write", "mcp:exec"]);
        let c = c.supported_scope("profile").and_then(|c| c.supported_scope("mcp:tools")).expect("valid");
        assert_eq!(c.scopes_supported(), ["mcp:tools", "mcp:write", "mcp:exec", "profile"]);
    }

    #[test]
    fn bad_scopes_are_refused() {
        let c = config();
        for (scope, problem) in [
            ("", ScopeProblem::Empty),
            ("two words", ScopeProblem::Character),
            ("quo\"te", ScopeProblem::Character),
            ("offline_access", ScopeProblem::OfflineAccess),
        ] {
            match c.clone().required_scope(scope) {
                Err(OAuthConfigError::Scope { problem: p, .. }) => assert_eq!(p, problem, "{scope:?}"),
                other => panic!("{scope:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_metadata_and_where_it_is() {
        let c = config();
        assert_eq!(
            c.metadata().to_string(),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp:tools","mcp:write","mcp:exec"],"bearer_methods_supported":["header"],"resource_name":"teaagent"}"#
        );
        assert_eq!(
            c.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
        );
        assert_eq!(c.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        let bare = OAuthConfig::new("https://mcp.example.com", "https://auth.example.com").expect("valid");
        assert_eq!(bare.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert!(bare.metadata().get("scopes_supported").is_none(), "no empty list");
    }
}
