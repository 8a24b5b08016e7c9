//! Authentication: who sent a request. Bearer tokens (each kept as its SHA-256, compared in
//! constant time), OAuth access tokens (the `oauth` module), or none on a loopback bind; and the
//! checks before it (`Host` and `Origin`, no token in the URL).

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, StatusCode};

use super::Authenticated;
use super::Endpoint;
use super::Reply;
use super::host::allowed_here;
use super::reply::refused;
use super::request::names_access_token;

/// One accepted bearer token: its name (the principal the audit names) and the SHA-256 of the
/// token (the token itself is not kept).
#[derive(Clone)]
pub struct BearerToken {
    name: String,
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerToken").field("name", &self.name).finish_non_exhaustive()
    }
}

impl BearerToken {
    /// A token named `name`.
    pub fn new(name: impl Into<String>, token: &str) -> Self {
        Self { name: name.into(), digest: crate::digest::sha256(token.as_bytes()) }
    }

    /// Tokens from text, one a line: `NAME:TOKEN`, or a bare `TOKEN` (named `token-N`, its line).
    /// Blank lines and lines starting with `#` are skipped. A token shorter than 16 characters is
    /// refused (guessable).
    pub fn parse_lines(text: &str) -> Result<Vec<BearerToken>, String> {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, token) = match line.split_once(':') {
                // A name is letters, digits, `_`, `-`, `.`: a bare token keeps its `:`s.
                Some((name, token))
                    if !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) =>
                {
                    (name.to_owned(), token.trim())
                }
                _ => (format!("token-{}", i + 1), line),
            };
            if token.len() < 16 || token.contains(char::is_whitespace) {
                return Err(format!(
                    "line {}: a token is at least 16 characters without spaces (use e.g. `openssl rand -hex 32`)",
                    i + 1
                ));
            }
            out.push(BearerToken::new(name, token));
        }
        Ok(out)
    }
}

/// Host, Origin, authentication (before the method: nothing is revealed to a stranger). The
/// caller, when requests authenticate.
pub(super) async fn checked(
    endpoint: &Endpoint,
    request: &Request<Incoming>,
) -> Result<Authenticated, Box<Reply>> {
    let headers = request.headers();
    allowed_here(endpoint, headers)?;
    if request.uri().query().is_some_and(names_access_token) {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &endpoint.oauth {
            return Err(Box::new(oauth.token_in_query()));
        }
        return Err(Box::new(refused(
            StatusCode::BAD_REQUEST,
            "send the token in the Authorization header, never in the URL",
        )));
    }
    // Boxed: checking a JWT (and maybe fetching the issuer's keys) is a future of about 4.8 KB,
    // and held here it made every request's future that large, OAuth or not.
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &endpoint.oauth {
        return Box::pin(oauth.authenticate(headers)).await;
    }
    if !endpoint.options.tokens.is_empty() {
        if headers.get_all(header::AUTHORIZATION).iter().count() > 1 {
            return Err(Box::new(refused(
                StatusCode::BAD_REQUEST,
                "send one Authorization header, not several",
            )));
        }
        let presented = headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
        let token = presented.and_then(|h| {
            let (scheme, token) = h.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
        let known = token.and_then(|token| {
            let digest = crate::digest::sha256(token.as_bytes());
            // Every digest is compared, each in constant time: no early exit tells which.
            endpoint
                .options
                .tokens
                .iter()
                .fold(None, |found, t| if constant_time_eq(&t.digest, &digest) { Some(t) } else { found })
        });
        if let Some(token) = known {
            return Ok(Authenticated::named(format!("token:{}", token.name)));
        }
        let challenge = if presented.is_some() {
            r#"Bearer realm="teaagent", error="invalid_token""#
        } else {
            r#"Bearer realm="teaagent""#
        };
        let mut reply =
            refused(StatusCode::UNAUTHORIZED, "a valid bearer token is required (Authorization: Bearer …)");
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        return Err(Box::new(reply));
    }
    Ok(Authenticated::default())
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_parse_one_a_line_and_short_ones_are_refused() {
        let tokens =
            BearerToken::parse_lines("# comment\nalice:0123456789abcdef0123\n\nfedcba9876543210fedcba\n")
                .expect("ok");
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].name, "alice");
        assert_eq!(tokens[1].name, "token-4");
        assert!(BearerToken::parse_lines("bob:short").expect_err("short").contains("line 1"));
    }
}
