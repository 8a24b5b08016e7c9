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
//!
//! [`Tier`]: crate::tool::Tier

mod config;
mod fetch;
mod keys;
mod metadata;
mod resource;
mod token;
mod url;

use jsonwebtoken::Algorithm;

pub use config::{OAuthConfig, OAuthConfigError, ScopeProblem};
pub(crate) use resource::OAuth;
pub(crate) use token::Scopes;
pub use url::UrlProblem;
pub use url::UrlRole;

/// The signature algorithms accepted: RSA (PKCS#1 v1.5 and PSS), ECDSA on P-256, Ed25519.
/// Never `none`, never a shared secret (`HS*`): anyone holding a shared secret could sign.
pub(crate) const ALGORITHMS: [Algorithm; 4] =
    [Algorithm::RS256, Algorithm::ES256, Algorithm::PS256, Algorithm::EdDSA];
