//! The settings of OAuth resource-server mode ([`OAuthConfig`]), each checked when it is set, and
//! the scopes a request needs under them.

use super::url::{Url, UrlProblem, UrlRole};
use crate::tool::Tier;

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
/// How the server acts as an OAuth 2.1 resource server (the `oauth` module docs). Every value
/// is checked when it is set.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    pub(super) resource: Url,
    pub(super) issuer: Url,
    pub(super) jwks_uri: Option<Url>,
    required: Vec<String>,
    tiers: Vec<(Tier, String)>,
    supported: Vec<String>,
    pub(super) resource_name: String,
}

impl OAuthConfig {
    /// Tokens from `issuer` for `resource`, this server's URL as clients use it (e.g.
    /// `https://mcp.example.com/mcp`: `https` unless the host is loopback, lowercase scheme and
    /// host, no query, no fragment, no trailing `/`). The issuer is compared with each token's
    /// `iss` exactly as given here.
    pub fn new(resource: &str, issuer: &str) -> Result<Self, OAuthConfigError> {
        Ok(OAuthConfig {
            resource: parse_url(resource, UrlRole::Resource)?,
            issuer: parse_url(issuer, UrlRole::Issuer)?,
            jwks_uri: None,
            required: Vec::new(),
            tiers: Vec::new(),
            supported: Vec::new(),
            resource_name: "teaagent".into(),
        })
    }

    /// The issuer's key set, instead of the one its metadata names.
    pub fn jwks_uri(mut self, uri: &str) -> Result<Self, OAuthConfigError> {
        self.jwks_uri = Some(parse_url(uri, UrlRole::JwksUri)?);
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

/// [`Url::parse`], its problem told as the configuration error that names the URL and its role.
pub(crate) fn parse_url(text: &str, role: UrlRole) -> Result<Url, OAuthConfigError> {
    Url::parse(text, role).map_err(|problem| OAuthConfigError::Url { role, url: text.to_owned(), problem })
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
}
