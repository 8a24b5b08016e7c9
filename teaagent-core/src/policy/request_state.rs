//! Sealed `requestState` for approvals through multi round-trip requests (modern era, SPEC
//! §12).
//!
//! In the modern era a server cannot ask the client anything: a call that needs the user's
//! approval is answered with `resultType: "input_required"`, one elicitation question and a
//! `requestState`, and the client calls again with the user's answer and the state. The state
//! comes back through the client, so it is treated as hostile: it is **sealed** with
//! HMAC-SHA-256 under a server key and binds
//!
//! - the tool's name,
//! - the digest of the canonical arguments ([`super::digest::call_digest`]),
//! - what each `#[path]` argument resolved to (its target and the identity of the directory that
//!   holds it), so an answer given about one file cannot approve a call that now leads to another,
//! - the principal (the authenticated client, when the transport has one; empty on stdio),
//! - a random nonce, so each state is accepted **once** (the nonce is recorded until the state
//!   expires; a replay is refused),
//! - an expiry, at most [`MAX_LIFETIME`] away.
//!
//! A state that does not verify, has expired, was used already, or is for another call is
//! refused (`-32602`, `reason: "invalid_request_state"`) and the refusal is audited.
//!
//! The format is `ta1.<hex payload>.<hex tag>`; the payload is a small JSON object. It is signed,
//! not encrypted: it holds digests, a nonce and a time, nothing secret. The tag is
//! `HMAC-SHA-256(key, "teaagent/request-state/v1" ‖ 0 ‖ payload)`.
//!
//! # Keys
//!
//! A process draws a random 32-byte key when its policy is made, so states are good for the
//! process that issued them. Replicas that must accept each other's states (a fleet behind a
//! load balancer) share a key through `TEAAGENT_REQUEST_STATE_KEY` ([`RequestStateKey::parse`]:
//! 64 hex digits); to rotate it, set the new key there and the old one in
//! `TEAAGENT_REQUEST_STATE_PREVIOUS_KEY` for the lifetime of a state (ten minutes at most), after
//! which the previous key can go.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// The longest a state stays good.
pub const MAX_LIFETIME: Duration = Duration::from_secs(600);

const DOMAIN: &[u8] = b"teaagent/request-state/v1\0";
const PREFIX: &str = "ta1.";
/// Longest `requestState` looked at (a real one is a few hundred bytes).
const MAX_TOKEN_LEN: usize = 4096;

/// A key that seals request states: 32 bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestStateKey([u8; 32]);

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestStateKey(…)")
    }
}

impl RequestStateKey {
    /// A fresh key from the operating system's random source.
    ///
    /// # Panics
    ///
    /// When the system has no random source to give (`getrandom` fails), which Linux only does
    /// before its pool is initialised at boot: no key is better than a guessable one.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        fill_random(&mut key);
        Self(key)
    }

    /// A key from its text: exactly 64 hex digits (e.g. `openssl rand -hex 32`).
    ///
    /// ```
    /// use teaagent_core::policy::request_state::RequestStateKey;
    /// assert!(RequestStateKey::parse(&"ab".repeat(32)).is_ok());
    /// assert!(RequestStateKey::parse("secret").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.len() != 64 {
            return Err(format!(
                "a request-state key is 64 hex digits (32 random bytes, e.g. `openssl rand -hex 32`); got {} characters",
                text.chars().count()
            ));
        }
        let mut key = [0u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
                .map_err(|_| "a request-state key is 64 hex digits (0-9, a-f)".to_owned())?;
        }
        Ok(Self(key))
    }
}

fn fill_random(out: &mut [u8]) {
    let mut filled = 0;
    while filled < out.len() {
        match rustix::rand::getrandom(&mut out[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => panic!("the system's random source failed: {e}"),
        }
    }
}

/// What a state is bound to: everything about the call that the user's answer is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The tool.
    pub tool: String,
    /// [`super::digest::call_digest`] of the tool and its arguments.
    pub digest: String,
    /// SHA-256 (hex) of what every `#[path]` argument resolved to.
    pub targets: String,
    /// The authenticated client, when there is one.
    pub principal: String,
}

/// Why a state was refused (each is audited; the client gets one error code for all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not a state this server wrote (wrong form, or a tag that does not verify).
    Forged,
    /// Past its expiry.
    Expired,
    /// Accepted once already.
    Replayed,
    /// For another call: `what` differs (tool, arguments, path targets, principal).
    Mismatch(&'static str),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Forged => f.write_str("it was not issued by this server or was altered"),
            Refusal::Expired => f.write_str("it has expired; call again to be asked again"),
            Refusal::Replayed => f.write_str("it was used already (an answer approves one call)"),
            Refusal::Mismatch(what) => write!(f, "it was issued for a call with other {what}"),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// Tool.
    t: String,
    /// Arguments digest.
    d: String,
    /// Path targets digest.
    p: String,
    /// Principal.
    c: String,
    /// Nonce (hex).
    n: String,
    /// Expiry, Unix milliseconds.
    e: u64,
}

/// The keys and the nonces already used.
#[derive(Debug)]
pub(crate) struct RequestStates {
    key: RequestStateKey,
    previous: Option<RequestStateKey>,
    used: Mutex<HashMap<String, u64>>,
}

impl Default for RequestStates {
    fn default() -> Self {
        Self::new(RequestStateKey::random(), None)
    }
}

impl RequestStates {
    pub(crate) fn new(key: RequestStateKey, previous: Option<RequestStateKey>) -> Self {
        Self { key, previous, used: Mutex::new(HashMap::new()) }
    }

    /// A sealed state for `binding`, good for `lifetime` (at most [`MAX_LIFETIME`]).
    pub(crate) fn seal(&self, binding: &Binding, lifetime: Duration) -> String {
        let mut nonce = [0u8; 16];
        fill_random(&mut nonce);
        let payload = Payload {
            t: binding.tool.clone(),
            d: binding.digest.clone(),
            p: binding.targets.clone(),
            c: binding.principal.clone(),
            n: hex(&nonce),
            e: now_ms().saturating_add(lifetime.min(MAX_LIFETIME).as_millis() as u64),
        };
        let payload = serde_json::to_vec(&payload).unwrap_or_default();
        let tag = tag(&self.key, &payload);
        format!("{PREFIX}{}.{}", hex(&payload), hex(&tag))
    }

    /// Verifies `token` for `binding` and, when it is good, records its nonce (so it is
    /// accepted once).
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<(), Refusal> {
        let payload = self.verified(token).ok_or(Refusal::Forged)?;
        let payload: Payload = serde_json::from_slice(&payload).map_err(|_| Refusal::Forged)?;
        let now = now_ms();
        if now >= payload.e {
            return Err(Refusal::Expired);
        }
        if payload.t != binding.tool {
            return Err(Refusal::Mismatch("tool"));
        }
        if payload.d != binding.digest {
            return Err(Refusal::Mismatch("arguments"));
        }
        if payload.p != binding.targets {
            return Err(Refusal::Mismatch("path targets (a path now leads elsewhere)"));
        }
        if payload.c != binding.principal {
            return Err(Refusal::Mismatch("client identity"));
        }
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, expiry| *expiry > now);
        if used.insert(payload.n, payload.e).is_some() {
            return Err(Refusal::Replayed);
        }
        Ok(())
    }

    /// The payload of a well-formed token whose tag verifies under the key or the previous one.
    fn verified(&self, token: &str) -> Option<Vec<u8>> {
        if token.len() > MAX_TOKEN_LEN {
            return None;
        }
        let (payload, tag) = token.strip_prefix(PREFIX)?.split_once('.')?;
        let payload = unhex(payload)?;
        let tag: [u8; 32] = unhex(tag)?.try_into().ok()?;
        let good = |key: &RequestStateKey| {
            let mut mac = hmac_sha256::HMAC::new(key.0);
            mac.update(DOMAIN);
            mac.update(&payload);
            mac.finalize_verify(&tag)
        };
        // Both keys are tried, whatever the first says (no early exit to time).
        let current = good(&self.key);
        let previous = self.previous.as_ref().is_some_and(good);
        (current | previous).then_some(payload)
    }
}

fn tag(key: &RequestStateKey, payload: &[u8]) -> [u8; 32] {
    let mut mac = hmac_sha256::HMAC::new(key.0);
    mac.update(DOMAIN);
    mac.update(payload);
    mac.finalize()
}

/// SHA-256 (hex) of `parts`, each length-prefixed so no two lists hash alike.
pub(crate) fn digest_of(parts: &[&str]) -> String {
    let mut hash = hmac_sha256::Hash::new();
    for part in parts {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hex(&hash.finalize())
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            tool: "t".into(),
            digest: "sha256:aa".into(),
            targets: digest_of(&["x"]),
            principal: String::new(),
        }
    }

    #[test]
    fn a_state_is_accepted_once_for_its_own_call_only() {
        let states = RequestStates::default();
        let token = states.seal(&binding(), Duration::from_secs(60));
        let other = Binding { digest: "sha256:bb".into(), ..binding() };
        assert_eq!(states.open(&token, &other), Err(Refusal::Mismatch("arguments")));
        let other = Binding { tool: "u".into(), ..binding() };
        assert_eq!(states.open(&token, &other), Err(Refusal::Mismatch("tool")));
        assert_eq!(states.open(&token, &binding()), Ok(()));
        assert_eq!(states.open(&token, &binding()), Err(Refusal::Replayed));
    }

    #[test]
    fn altered_expired_and_foreign_states_are_refused() {
        let states = RequestStates::default();
        let token = states.seal(&binding(), Duration::from_secs(60));
        // Flip one hex digit of the payload, then of the tag.
        for at in [PREFIX.len() + 3, token.len() - 2] {
            let mut bytes = token.clone().into_bytes();
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            let altered = String::from_utf8(bytes).expect("ascii");
            assert_eq!(states.open(&altered, &binding()), Err(Refusal::Forged));
        }
        for junk in ["", "ta1.", "ta1..", "ta1.zz.zz", "xx1.00.00", &"a".repeat(10_000)] {
            assert_eq!(states.open(junk, &binding()), Err(Refusal::Forged));
        }
        let elsewhere = RequestStates::default();
        assert_eq!(elsewhere.open(&token, &binding()), Err(Refusal::Forged));
        let expired = states.seal(&binding(), Duration::ZERO);
        assert_eq!(states.open(&expired, &binding()), Err(Refusal::Expired));
    }

    #[test]
    fn a_shared_key_and_its_predecessor_are_accepted() {
        let old = RequestStateKey::parse(&"1f".repeat(32)).expect("key");
        let new = RequestStateKey::parse(&"2e".repeat(32)).expect("key");
        let before = RequestStates::new(old.clone(), None);
        let token = before.seal(&binding(), Duration::from_secs(60));
        let replica = RequestStates::new(new.clone(), Some(old));
        assert_eq!(replica.open(&token, &binding()), Ok(()));
        let after = RequestStates::new(new, None);
        let token = before.seal(&binding(), Duration::from_secs(60));
        assert_eq!(after.open(&token, &binding()), Err(Refusal::Forged));
    }

    #[test]
    fn lifetimes_are_capped() {
        let states = RequestStates::default();
        let token = states.seal(&binding(), Duration::from_secs(86_400));
        let payload = states.verified(&token).expect("verifies");
        let payload: Payload = serde_json::from_slice(&payload).expect("json");
        assert!(payload.e <= now_ms() + MAX_LIFETIME.as_millis() as u64);
    }
}
