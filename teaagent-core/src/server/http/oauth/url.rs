//! The URLs OAuth settings name — this server's resource URL, the issuer, the key set — checked
//! once, when the settings are made, and split into what the server needs from them.
//!
//! No general URL parser: these are absolute `http`/`https` URLs an operator typed, and every
//! rule below is one the server relies on. A URL of each role:
//!
//! | rule | resource | issuer | key set (`jwks_uri`) |
//! |---|---|---|---|
//! | `https`, or `http` with a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`) | ✓ | ✓ | ✓ |
//! | no user name or password, no fragment, visible ASCII without `"`, `\`, `<`, `>` | ✓ | ✓ | ✓ |
//! | lowercase scheme and host (RFC 8707's canonical form: tokens name it exactly) | ✓ | – | – |
//! | no query | ✓ | ✓ | – |
//! | no trailing `/` | ✓ | – | – |
//!
//! The characters are limited because the resource URL is quoted in `WWW-Authenticate` headers
//! and every URL is written into a request line. Plain `http` to another machine is refused:
//! anyone on the way could then serve their own keys, and sign any token.

use std::fmt;

/// A checked absolute URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    /// As given (it passed every check, so it is also what goes on the wire).
    text: String,
    pub(crate) https: bool,
    /// The host as written (an IPv6 literal with its brackets).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// `scheme://host[:port]`.
    origin_len: usize,
    /// Where the path ends and the query (`?…`, if any) begins.
    path_end: usize,
}

/// What is wrong with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlProblem {
    /// Not `http://` or `https://`, or no host.
    NotAbsolute,
    /// `http` to a host that is not loopback.
    PlainHttp,
    /// `user@` or `user:password@` before the host.
    UserInfo,
    /// A `#fragment`.
    Fragment,
    /// A `?query` where none may be.
    Query,
    /// A `/` at the end (the resource's canonical form has none).
    TrailingSlash,
    /// Upper case in the scheme or the host.
    NotLowercase,
    /// A space, a control character, a non-ASCII one, or one of `"`, `\`, `<`, `>`.
    Character,
    /// A port that is not a number from 1 to 65535.
    Port,
}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlProblem::NotAbsolute => "is not an absolute http(s) URL with a host, e.g. `https://mcp.example.com/mcp`",
            UrlProblem::PlainHttp => {
                "must use https: plain http is only allowed to a loopback host (localhost, 127.0.0.1, [::1])"
            }
            UrlProblem::UserInfo => "must not carry a user name or password",
            UrlProblem::Fragment => "must not have a fragment (`#…`)",
            UrlProblem::Query => "must not have a query (`?…`)",
            UrlProblem::TrailingSlash => "must not end with `/` (write it as clients will: `https://mcp.example.com/mcp`)",
            UrlProblem::NotLowercase => "must have a lowercase scheme and host (its canonical form, which tokens name)",
            UrlProblem::Character => {
                "may only hold visible ASCII characters, and none of `\"`, `\\`, `<`, `>` (percent-encode them)"
            }
            UrlProblem::Port => "has a port that is not a number from 1 to 65535",
        })
    }
}

/// Which setting a URL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlRole {
    /// This server's resource URL ([`OAuthConfig::new`](super::OAuthConfig::new)'s `resource`).
    Resource,
    /// The authorization server's issuer identifier.
    Issuer,
    /// The authorization server's key set ([`OAuthConfig::jwks_uri`](super::OAuthConfig::jwks_uri)).
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

impl Url {
    /// Checks `text` as a URL of `role` (module docs' table).
    pub(crate) fn parse(text: &str, role: UrlRole) -> Result<Url, UrlProblem> {
        if text.bytes().any(|b| !b.is_ascii_graphic() || matches!(b, b'"' | b'\\' | b'<' | b'>')) {
            return Err(UrlProblem::Character);
        }
        if text.contains('#') {
            return Err(UrlProblem::Fragment);
        }
        let (scheme, rest) = text.split_once("://").ok_or(UrlProblem::NotAbsolute)?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return Err(UrlProblem::NotAbsolute),
        };
        let authority_len = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        if authority.contains('@') {
            return Err(UrlProblem::UserInfo);
        }
        let (host, port) = split_host_port(authority).ok_or(UrlProblem::Port)?;
        if host.is_empty() || host == "[]" {
            return Err(UrlProblem::NotAbsolute);
        }
        let port = port.unwrap_or(if https { 443 } else { 80 });
        let origin_len = scheme.len() + 3 + authority_len;
        let path_end = text[origin_len..].find('?').map_or(text.len(), |at| origin_len + at);
        let url = Url { text: text.to_owned(), https, host: host.to_owned(), port, origin_len, path_end };
        if !https && !url.is_loopback() {
            return Err(UrlProblem::PlainHttp);
        }
        if role == UrlRole::Resource
            && (scheme.bytes().any(|b| b.is_ascii_uppercase())
                || host.bytes().any(|b| b.is_ascii_uppercase()))
        {
            return Err(UrlProblem::NotLowercase);
        }
        if role != UrlRole::JwksUri && url.path_end != text.len() {
            return Err(UrlProblem::Query);
        }
        if role == UrlRole::Resource && text.ends_with('/') {
            return Err(UrlProblem::TrailingSlash);
        }
        Ok(url)
    }

    /// The URL as given.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// `scheme://host[:port]`, as written.
    pub(crate) fn origin(&self) -> &str {
        &self.text[..self.origin_len]
    }

    /// The path as written: empty, or starting with `/`.
    pub(crate) fn path(&self) -> &str {
        &self.text[self.origin_len..self.path_end]
    }

    /// The path and query, as a request line takes them (`/` for none).
    pub(crate) fn target(&self) -> &str {
        match &self.text[self.origin_len..] {
            "" => "/",
            target => target,
        }
    }

    /// The host without an IPv6 literal's brackets, as a socket address or TLS name takes it.
    pub(crate) fn bare_host(&self) -> &str {
        self.host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(&self.host)
    }

    /// `host[:port]` for the `Host` header, as written.
    pub(crate) fn authority(&self) -> &str {
        &self.origin()[self.origin().find("://").map_or(0, |at| at + 3)..]
    }

    /// Whether the host is this machine: `localhost` or a loopback address.
    pub(crate) fn is_loopback(&self) -> bool {
        self.host.eq_ignore_ascii_case("localhost")
            || self.bare_host().parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// A URL on the same origin with another path (no query).
    pub(crate) fn with_path(&self, path: &str) -> Url {
        let text = format!("{}{path}", self.origin());
        Url { path_end: text.len(), text, ..self.clone() }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `host` and its port, if any (`None`: the port is not a number from 1 to 65535, or an IPv6
/// literal is not closed).
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        match &authority[end + 1..] {
            "" => (&authority[..=end], None),
            rest => (&authority[..=end], Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse::<u16>().ok().filter(|p| *p != 0)?),
        Some(_) => return None,
    };
    Some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str, role: UrlRole) -> Option<UrlProblem> {
        Url::parse(text, role).err()
    }

    #[test]
    fn a_resource_url_is_canonical() {
        let url = Url::parse("https://mcp.example.com/mcp", UrlRole::Resource).expect("valid");
        assert_eq!((url.origin(), url.path(), url.port), ("https://mcp.example.com", "/mcp", 443));
        let url = Url::parse("http://127.0.0.1:8787/team/mcp", UrlRole::Resource).expect("loopback");
        assert_eq!((url.path(), url.authority(), url.port), ("/team/mcp", "127.0.0.1:8787", 8787));
        let url = Url::parse("https://mcp.example.com", UrlRole::Resource).expect("no path");
        assert_eq!((url.path(), url.target()), ("", "/"));
        for (text, expected) in [
            ("http://mcp.example.com/mcp", UrlProblem::PlainHttp),
            ("http://127.0.0.1.nip.io/mcp", UrlProblem::PlainHttp),
            ("https://mcp.example.com/mcp/", UrlProblem::TrailingSlash),
            ("https://mcp.example.com/mcp#x", UrlProblem::Fragment),
            ("https://mcp.example.com/mcp?a=b", UrlProblem::Query),
            ("https://MCP.example.com/mcp", UrlProblem::NotLowercase),
            ("HTTPS://mcp.example.com/mcp", UrlProblem::NotLowercase),
            ("https://u:p@mcp.example.com/mcp", UrlProblem::UserInfo),
            ("https://mcp.example.com/m\"cp", UrlProblem::Character),
            ("https://mcp.example.com/m cp", UrlProblem::Character),
            ("https://mcp.example.com:0/mcp", UrlProblem::Port),
            ("https://mcp.example.com:99999/mcp", UrlProblem::Port),
            ("https://[::1/mcp", UrlProblem::Port),
            ("mcp.example.com/mcp", UrlProblem::NotAbsolute),
            ("ftp://mcp.example.com/mcp", UrlProblem::NotAbsolute),
            ("https:///mcp", UrlProblem::NotAbsolute),
        ] {
            assert_eq!(problem(text, UrlRole::Resource), Some(expected), "{text}");
        }
    }

    #[test]
    fn issuers_may_end_with_a_slash_and_key_sets_may_have_a_query() {
        assert_eq!(problem("https://tenant.auth.example/", UrlRole::Issuer), None);
        assert_eq!(problem("https://auth.example.com/realms/x?y", UrlRole::Issuer), Some(UrlProblem::Query));
        let url = Url::parse("https://Auth.example.com/keys?v=2", UrlRole::JwksUri).expect("valid");
        assert_eq!((url.target(), url.path()), ("/keys?v=2", "/keys"));
        let url = Url::parse("http://[::1]:9000/jwks", UrlRole::JwksUri).expect("v6 loopback");
        assert_eq!((url.bare_host(), url.port, url.authority()), ("::1", 9000, "[::1]:9000"));
        assert!(Url::parse("http://localhost/jwks", UrlRole::JwksUri).expect("localhost").is_loopback());
    }
}
