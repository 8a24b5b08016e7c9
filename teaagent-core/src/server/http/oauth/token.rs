//! One access token, checked (OAuth 2.1 §5.2, RFC 9068, RFC 8707), in this order:
//!
//! 1. a JWS in compact form whose header parses, with no `crit` this server does not know;
//! 2. `alg` in [`super::ALGORITHMS`] (never `none`, never a shared-secret `HS*`);
//! 3. `typ`, when present, `at+jwt` (RFC 9068) or `JWT`;
//! 4. the key its `kid` names in the issuer's key set (an unknown `kid` fetches the set again,
//!    [`super::keys`]); no key set yet → unavailable (`503`), not invalid. Keys come from the
//!    issuer's key set only: `jwk`, `jku` and `x5u` in a token's header are never used (whoever
//!    made the token would choose the key that checks it);
//! 5. the signature;
//! 6. `iss` is the issuer, exactly; `exp` has not passed and `nbf` has come, each with
//!    [`LEEWAY`] of clock skew; `aud` is present and is (or, as a list, contains) this server's
//!    resource URL: a token the issuer made for another server is refused, so no token is
//!    ever accepted here that was not meant for here;
//! 7. `sub` names the caller (at most [`MAX_SUBJECT`] bytes, no control characters): the
//!    principal is `oauth:<sub>`.
//!
//! Scopes come from `scope` (space-separated, RFC 9068) or `scp` (a list, or a string, as some
//! issuers write it). What a refusal says ([`TokenRefusal::Invalid`]) is a fixed sentence: never
//! the token, nothing of its contents (the description goes into a header, and to whoever sent
//! the token, who may not be its owner).

use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use super::ALGORITHMS;
use super::keys::{Current, KeySet, Keys};

/// Clock skew allowed on `exp` and `nbf`, in seconds.
pub(crate) const LEEWAY: u64 = 60;
/// The longest `sub` accepted, in bytes.
pub(crate) const MAX_SUBJECT: usize = 256;

/// A token that passed every check.
#[derive(Debug)]
pub(crate) struct Verified {
    pub(crate) subject: String,
    pub(crate) scopes: Scopes,
}

/// Why a token is not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenRefusal {
    /// `401`, `error="invalid_token"`, with this description.
    Invalid(&'static str),
    /// `503`: no keys to check it with (yet); try again after this many seconds.
    Unavailable { retry_after: u64 },
}

/// The claims read (the rest is skipped). `iss`, `aud`, `exp`, `nbf` are jsonwebtoken's.
#[derive(serde::Deserialize)]
struct Claims {
    /// Optional here so that a missing `sub` is jsonwebtoken's "missing claim", not a parse error.
    sub: Option<String>,
    scope: Option<String>,
    scp: Option<ScopeList>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ScopeList {
    List(Vec<String>),
    Text(String),
}

/// What every token is checked against, built once.
pub(crate) struct Checks {
    validation: Validation,
}

impl Checks {
    pub(crate) fn new(issuer: &str, resource: &str) -> Self {
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[resource]);
        // `aud` too: jsonwebtoken checks an audience only when the token has one.
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.leeway = LEEWAY;
        Checks { validation }
    }

    /// Checks `token` (module docs' order).
    pub(crate) async fn check(&self, token: &str, keys: &Keys) -> Result<Verified, TokenRefusal> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            TokenRefusal::Invalid(
                "the token is not a signed JWT this server reads (RS256, ES256, PS256 or EdDSA)",
            )
        })?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(TokenRefusal::Invalid(
                "the token is signed with an algorithm this server does not accept (RS256, ES256, PS256 or EdDSA)",
            ));
        }
        if header.typ.as_deref().is_some_and(|t| {
            !["at+jwt", "application/at+jwt", "JWT"].iter().any(|ok| t.eq_ignore_ascii_case(ok))
        }) {
            return Err(TokenRefusal::Invalid(
                "the token's typ is not at+jwt or JWT: it is not an access token",
            ));
        }
        let (set, generation) = match keys.current() {
            Current::Keys { set, generation } => (set, generation),
            Current::Unavailable { retry_after } => {
                return Err(TokenRefusal::Unavailable { retry_after: retry_after.as_secs().max(1) });
            }
        };
        let kid = header.kid.as_deref();
        let verified = match set.find(kid, header.alg) {
            Some(key) => self.verify(token, key, header.alg),
            None => {
                let newer: Option<Arc<KeySet>> = keys.after_unknown_kid(generation).await;
                match newer.as_ref().and_then(|set| set.find(kid, header.alg)) {
                    Some(key) => self.verify(token, key, header.alg),
                    None => Err(TokenRefusal::Invalid(
                        "the token is signed with a key the issuer does not publish (kid)",
                    )),
                }
            }
        }?;
        Ok(verified)
    }

    fn verify(&self, token: &str, key: &DecodingKey, alg: Algorithm) -> Result<Verified, TokenRefusal> {
        let mut validation = self.validation.clone();
        validation.algorithms = vec![alg];
        let claims =
            jsonwebtoken::decode::<Claims>(token, key, &validation).map_err(|e| refusal(e.kind()))?.claims;
        let subject = claims.sub.unwrap_or_default();
        if subject.is_empty() || subject.len() > MAX_SUBJECT || subject.chars().any(char::is_control) {
            return Err(TokenRefusal::Invalid(
                "the token's subject (sub) is empty, too long, or holds control characters",
            ));
        }
        let mut scopes: Vec<String> = Vec::new();
        if let Some(scope) = &claims.scope {
            scopes.extend(scope.split_ascii_whitespace().map(str::to_owned));
        }
        match claims.scp {
            Some(ScopeList::List(list)) => scopes.extend(list),
            Some(ScopeList::Text(text)) => scopes.extend(text.split_ascii_whitespace().map(str::to_owned)),
            None => {}
        }
        Ok(Verified { subject, scopes: Scopes(scopes) })
    }
}

/// The description of a token jsonwebtoken refused.
fn refusal(kind: &ErrorKind) -> TokenRefusal {
    TokenRefusal::Invalid(match kind {
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::ExpiredSignature => "the token has expired (exp)",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server (iss)",
        ErrorKind::InvalidAudience => "the token was issued for another resource (aud)",
        ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
            "aud" => "the token names no audience (aud): it must name this resource",
            "exp" => "the token has no expiry (exp)",
            "iss" => "the token names no issuer (iss)",
            _ => "the token names no subject (sub)",
        },
        ErrorKind::InvalidClaimFormat(_) => "a claim of the token is malformed",
        ErrorKind::InvalidAlgorithm
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => "the token's algorithm does not fit the issuer's key (kid)",
        ErrorKind::Json(_) => "the token's claims are malformed (scope must be a string, scp a list)",
        _ => "the token is not a well-formed signed JWT",
    })
}

/// The scopes a token grants.
#[derive(Debug, Default)]
pub(crate) struct Scopes(pub(crate) Vec<String>);

impl Scopes {
    pub(super) fn lacks_any(&self, needed: &[&str]) -> bool {
        needed.iter().any(|n| !self.0.iter().any(|s| s == n))
    }
}
