//! The running resource server: each request's access token checked (the `token` module) for
//! its caller and required scopes, each call's own scopes, the metadata served, and the refusals
//! with their `WWW-Authenticate` challenges.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};

use super::config::OAuthConfig;
use super::fetch;
use super::keys::{Current, Keys};
use super::token::{self, Scopes};
use crate::error::code;
use crate::jsonrpc::{ErrorObject, RawParams, RequestId, error_line};
use crate::registry::Registry;
use crate::server::http::Authenticated;
use crate::server::http::reply::{json, refused};
use crate::server::http::{Answer, Reply};

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
            // first token (the `oauth` module docs, "Cryptography").
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
            let mut reply = refused(StatusCode::METHOD_NOT_ALLOWED, "the metadata is read with GET");
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
    /// required scopes, or the refusal (the `oauth` module docs' table).
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
            Err(token::TokenRefusal::Invalid(why)) => {
                tracing::info!(reason = why, "refused an access token");
                return Err(Box::new(self.invalid(why)));
            }
            Err(token::TokenRefusal::Unavailable { retry_after }) => {
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
    let mut reply = json(status, error_line(id, &error));
    // Every part was checked when configured (URLs, scopes) or is one of our sentences.
    if let Ok(value) = HeaderValue::from_str(challenge) {
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    reply
}

/// `503` while no key can check a token.
fn unavailable(retry_after: u64) -> Reply {
    let mut reply = refused(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("the authorization server's keys are not loaded yet; try again in {retry_after} s"),
    );
    reply.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    reply
}
