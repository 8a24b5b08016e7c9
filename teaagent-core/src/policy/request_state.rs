//! Sealed `requestState` for approvals through multi round-trip requests (modern era).
//!
//! In the modern era a server cannot ask the client anything: a call that needs the user's
//! approval is answered with `resultType: "input_required"`, one elicitation question and a
//! `requestState`, and the client calls again with the user's answer and the state. The state
//! comes back through the client, so it is treated as hostile: it is **sealed** with
//! HMAC-SHA-256 under a server key and binds
//!
//! - the tool's name,
//! - the digest of the canonical arguments ([`crate::digest::call_digest`]),
//! - what each `#[path]` argument resolved to (its target and the identity of the directory that
//!   holds it), so an answer given about one file cannot approve a call that now leads to another,
//! - the principal (the authenticated client, when the transport has one; empty on stdio),
//! - a random nonce, so each state approves **one** call: opening it reserves the nonce for the
//!   call (a concurrent second use is a replay), the call spends it when it is admitted to run,
//!   and a call refused after the approval (rate limit, workspace lock, overload — or the user's
//!   "no") releases it, so the approval is not lost to a refusal that was not about it (a refused
//!   call uses no approval). Nonces are remembered for longer than a state lives: in this
//!   server's store (`crate::fleet`): in this process, or, for replicas that share a key (below),
//!   in the store they share, so that a state approves one call across every replica,
//! - an expiry, at most [`MAX_LIFETIME`] away.
//!
//! A state that does not verify, has expired, was used already, or is for another call is
//! refused (`-32602`, `reason: "invalid_request_state"`) and the refusal is audited.
//!
//! The format is `ta1.<hex payload>.<hex tag>`; the payload is a JSON object. It is signed, not
//! encrypted: it holds digests, a nonce, times, the round count, and — for a tool or prompt that
//! asks the client questions ([`crate::tool::inputs`]) — the digests of the questions its round
//! asked and the answers of earlier rounds (at most [`MAX_CARRIED`] bytes), which the client gave
//! and sees anyway. The tag is
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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::digest::{fill_random, hex, unhex};
use crate::fleet::{LocalStore, Reserve, Store};

/// The longest a state stays good.
pub const MAX_LIFETIME: Duration = Duration::from_secs(600);

const DOMAIN: &[u8] = b"teaagent/request-state/v1\0";
const PREFIX: &str = "ta1.";
/// Longest `requestState` looked at (an approval's is a few hundred bytes; one that carries
/// answers between rounds, up to about twice [`MAX_CARRIED`]).
const MAX_TOKEN_LEN: usize = 2 * MAX_CARRIED + 4096;

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
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "a request-state key is 64 hex digits (32 random bytes, e.g. `openssl rand -hex 32`); got {} characters{}",
                text.chars().count(),
                if text.len() == 64 { " that are not all hex digits" } else { "" }
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

/// What a state is bound to: everything about the call that the user's answer is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The tool.
    pub tool: String,
    /// [`crate::digest::call_digest`] of the tool and its arguments; `None` when it was not
    /// worked out (a call that carries no state and whose client declared nothing it could be
    /// asked through: it never opens one, and a state sealed for it could never be opened).
    pub digest: Option<String>,
    /// SHA-256 (hex) of what every `#[path]` argument resolved to.
    pub targets: String,
    /// The authenticated client, when there is one.
    pub principal: String,
}

/// Why a state was refused (each is audited; the client gets one error code for all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StateRefusal {
    /// Not a state this server wrote (wrong form, or a tag that does not verify).
    Forged,
    /// Past its expiry.
    Expired,
    /// Accepted once already.
    Replayed,
    /// For another call: `what` differs (tool, arguments, path targets, principal).
    Mismatch(&'static str),
    /// Too many approvals in the last minutes to remember another
    /// ([`MAX_NONCES`](crate::fleet::MAX_NONCES)).
    Busy,
    /// The fleet's shared state, which remembers the states used, cannot be reached.
    Unavailable,
}

impl std::fmt::Display for StateRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateRefusal::Forged => f.write_str("it was not issued by this server or was altered"),
            StateRefusal::Expired => f.write_str("it has expired; call again to be asked again"),
            StateRefusal::Replayed => {
                f.write_str("it was used already, or is in use (an answer approves one call)")
            }
            StateRefusal::Mismatch(what) => write!(f, "it was issued for a call with other {what}"),
            StateRefusal::Busy => {
                f.write_str("too many approvals were given in the last minutes; try again later")
            }
            StateRefusal::Unavailable => f.write_str(
                "whether it was used already cannot be checked: the fleet's shared state (Redis) cannot be reached",
            ),
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
    /// Answers of earlier rounds (questions a tool or prompt asked, `crate::tool::inputs`), by
    /// key: `{"q": <digest of the question>, "a": <answer>}`.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    a: serde_json::Map<String, serde_json::Value>,
    /// The questions the round that issued this state asked, by key: the digest of each (the
    /// approval's is [`APPROVAL_ASKED`]). Only answers to these are taken from the retry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    q: BTreeMap<String, String>,
    /// Until when (Unix milliseconds) the user's approval of an earlier round holds; fixed at
    /// the approval, never extended by later rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<u64>,
    /// Rounds so far.
    #[serde(default)]
    r: u32,
}

/// The digest recorded for the approval question ([`Payload::q`]).
pub(crate) const APPROVAL_ASKED: &str = "approval";

/// What a state carries from one round of a call to the next.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Carried {
    /// Answers given in earlier rounds, by question key: `{"q": digest, "a": answer}`.
    pub answers: serde_json::Map<String, serde_json::Value>,
    /// What the round that issued the state asked, by key: the question's digest.
    pub asked: BTreeMap<String, String>,
    /// Until when (Unix milliseconds) an approval given in an earlier round holds.
    pub approved_until: Option<u64>,
    /// Rounds so far.
    pub round: u32,
}

impl Carried {
    /// Whether the user approved this call in an earlier round, and that approval still holds.
    pub(crate) fn approved(&self) -> bool {
        self.approved_until.is_some_and(|until| now_ms() < until)
    }
}

/// When an approval given now stops holding for the later rounds of its call.
pub(crate) fn approval_deadline(lifetime: Duration) -> u64 {
    now_ms().saturating_add(lifetime.min(MAX_LIFETIME).as_millis() as u64)
}

/// Most rounds of one call (a tool asking question after question).
pub const MAX_ROUNDS: u32 = 16;

pub use crate::tool::inputs::MAX_CARRIED;

/// The keys, and the store that remembers the nonces of states in use or used.
#[derive(Debug)]
pub(crate) struct RequestStates {
    key: RequestStateKey,
    previous: Option<RequestStateKey>,
    store: Arc<dyn Store>,
}

/// How long a nonce is remembered: longer than any state lives.
const KEEP: Duration = Duration::from_secs(MAX_LIFETIME.as_secs() + 60);

/// A state's approval, held by the call it was opened for: [`Reservation::spend`] when the call
/// is admitted to run; dropped unspent (the call refused later — rate limit, workspace lock,
/// overload — or denied), the state may be used again until it expires.
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    states: &'a RequestStates,
    nonce: String,
    spent: bool,
    /// What the state carried from the call's earlier round.
    pub(crate) carried: Carried,
}

impl<'a> Reservation<'a> {
    /// The reservation of an opened state's nonce, with what the state carried.
    fn of(states: &'a RequestStates, payload: Payload) -> Self {
        Reservation {
            states,
            nonce: payload.n,
            spent: false,
            carried: Carried {
                answers: payload.a,
                asked: payload.q,
                approved_until: payload.ok,
                round: payload.r,
            },
        }
    }

    /// The call runs: the state is used up.
    pub(crate) fn spend(mut self) {
        self.states.store.spend(&self.nonce, KEEP);
        self.spent = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.spent {
            self.states.store.release(&self.nonce);
        }
    }
}

impl Default for RequestStates {
    fn default() -> Self {
        Self::new(RequestStateKey::random(), None, Arc::new(LocalStore::new()))
    }
}

impl RequestStates {
    /// States sealed with `key` (and accepted under `previous` too), their nonces in `store`.
    pub(crate) fn new(
        key: RequestStateKey,
        previous: Option<RequestStateKey>,
        store: Arc<dyn Store>,
    ) -> Self {
        Self { key, previous, store }
    }

    /// The same keys, with the nonces in `store`.
    pub(crate) fn with_store(self, store: Arc<dyn Store>) -> Self {
        Self { store, ..self }
    }

    /// A sealed state for `binding`, good for `lifetime` (at most [`MAX_LIFETIME`]), for a round
    /// that asked the approval question only.
    #[cfg(test)]
    pub(crate) fn seal(&self, binding: &Binding, lifetime: Duration) -> String {
        let asked = BTreeMap::from([(APPROVAL_ASKED.to_owned(), APPROVAL_ASKED.to_owned())]);
        self.seal_payload(binding, lifetime, Carried { asked, ..Carried::default() })
    }

    /// A sealed state that also carries `carried` to the call's next round; `Err` with the size
    /// when the answers are more than [`MAX_CARRIED`] bytes of JSON.
    pub(crate) fn seal_carrying(
        &self,
        binding: &Binding,
        lifetime: Duration,
        carried: Carried,
    ) -> Result<String, usize> {
        let size = serde_json::to_vec(&carried.answers).map_or(usize::MAX, |v| v.len());
        if size > MAX_CARRIED {
            return Err(size);
        }
        Ok(self.seal_payload(binding, lifetime, carried))
    }

    fn seal_payload(&self, binding: &Binding, lifetime: Duration, carried: Carried) -> String {
        let mut nonce = [0u8; 16];
        fill_random(&mut nonce);
        let payload = Payload {
            t: binding.tool.clone(),
            d: binding.digest.clone().unwrap_or_default(),
            p: binding.targets.clone(),
            c: binding.principal.clone(),
            n: hex(&nonce),
            e: now_ms().saturating_add(lifetime.min(MAX_LIFETIME).as_millis() as u64),
            a: carried.answers,
            q: carried.asked,
            ok: carried.approved_until,
            r: carried.round,
        };
        let payload = serde_json::to_vec(&payload).unwrap_or_default();
        let tag = tag(&self.key, &payload);
        format!("{PREFIX}{}.{}", hex(&payload), hex(&tag))
    }

    /// Verifies `token` for `binding` and, when it is good, reserves its nonce for this call in
    /// the store (a second use while reserved, or after it was spent, is a replay).
    pub(crate) async fn open(&self, token: &str, binding: &Binding) -> Result<Reservation<'_>, StateRefusal> {
        let payload = self.checked(token, binding)?;
        match self.store.reserve(&payload.n, KEEP).await {
            Ok(Reserve::Reserved) => Ok(Reservation::of(self, payload)),
            Ok(Reserve::Taken) => Err(StateRefusal::Replayed),
            Ok(Reserve::Full) => Err(StateRefusal::Busy),
            Err(_) => Err(StateRefusal::Unavailable),
        }
    }

    /// The payload of `token` when it verifies, has not expired and is for `binding`.
    fn checked(&self, token: &str, binding: &Binding) -> Result<Payload, StateRefusal> {
        let payload = self.verified(token).ok_or(StateRefusal::Forged)?;
        let payload: Payload = serde_json::from_slice(&payload).map_err(|_| StateRefusal::Forged)?;
        if now_ms() >= payload.e {
            return Err(StateRefusal::Expired);
        }
        if payload.t != binding.tool {
            return Err(StateRefusal::Mismatch("tool"));
        }
        // A state sealed without a digest (empty) opens for no call, and a binding without one
        // opens no state.
        if payload.d.is_empty() || binding.digest.as_deref() != Some(payload.d.as_str()) {
            return Err(StateRefusal::Mismatch("arguments"));
        }
        if payload.p != binding.targets {
            return Err(StateRefusal::Mismatch("path targets (a path now leads elsewhere)"));
        }
        if payload.c != binding.principal {
            return Err(StateRefusal::Mismatch("client identity"));
        }
        Ok(payload)
    }

    /// The payload of a well-formed token whose tag verifies under the key or the previous one.
    fn verified(&self, token: &str) -> Option<Vec<u8>> {
        if token.len() > MAX_TOKEN_LEN {
            return None;
        }
        let (payload, tag) = token.strip_prefix(PREFIX)?.split_once('.')?;
        let payload = unhex(payload)?;
        let tag: [u8; 32] = unhex(tag)?.try_into().ok()?;
        let good =
            |key: &RequestStateKey| crate::digest::hmac_sha256_verify(&key.0, &[DOMAIN, &payload], &tag);
        // Both keys are tried, whatever the first says (no early exit to time).
        let current = good(&self.key);
        let previous = self.previous.as_ref().is_some_and(good);
        (current | previous).then_some(payload)
    }
}

fn tag(key: &RequestStateKey, payload: &[u8]) -> [u8; 32] {
    crate::digest::hmac_sha256(&key.0, &[DOMAIN, payload])
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::digest_of;

    /// [`RequestStates::open`], whose answer the store in this process gives at once.
    fn opened<'a>(
        states: &'a RequestStates,
        token: &str,
        binding: &Binding,
    ) -> Result<Reservation<'a>, StateRefusal> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(states.open(token, binding))
    }

    fn binding() -> Binding {
        Binding {
            tool: "t".into(),
            digest: Some("sha256:aa".into()),
            targets: digest_of(&["x"]),
            principal: String::new(),
        }
    }

    #[test]
    fn a_state_is_accepted_once_for_its_own_call_only() {
        let states = RequestStates::default();
        let token = states.seal(&binding(), Duration::from_secs(60));
        let other = Binding { digest: Some("sha256:bb".into()), ..binding() };
        assert_eq!(opened(&states, &token, &other).err(), Some(StateRefusal::Mismatch("arguments")));
        let other = Binding { digest: None, ..binding() };
        assert_eq!(opened(&states, &token, &other).err(), Some(StateRefusal::Mismatch("arguments")));
        let unbound = states.seal(&Binding { digest: None, ..binding() }, Duration::from_secs(60));
        for digest in [None, Some(String::new())] {
            let any = Binding { digest, ..binding() };
            assert_eq!(opened(&states, &unbound, &any).err(), Some(StateRefusal::Mismatch("arguments")));
        }
        let other = Binding { tool: "u".into(), ..binding() };
        assert_eq!(opened(&states, &token, &other).err(), Some(StateRefusal::Mismatch("tool")));
        let reservation = opened(&states, &token, &binding()).expect("good");
        // In use: a concurrent second retry is a replay.
        assert_eq!(opened(&states, &token, &binding()).err(), Some(StateRefusal::Replayed));
        // Released (the call was refused later): good again; spent (it ran): never again.
        drop(reservation);
        opened(&states, &token, &binding()).expect("released").spend();
        assert_eq!(opened(&states, &token, &binding()).err(), Some(StateRefusal::Replayed));
    }

    #[test]
    fn key_text_is_hex_only() {
        assert!(RequestStateKey::parse(&"é".repeat(32)).is_err());
        assert!(RequestStateKey::parse(&"+f".repeat(32)).is_err());
        assert!(RequestStateKey::parse(&"AB".repeat(32)).is_ok());
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
            assert_eq!(opened(&states, &altered, &binding()).err(), Some(StateRefusal::Forged));
        }
        for junk in ["", "ta1.", "ta1..", "ta1.zz.zz", "xx1.00.00", &"a".repeat(10_000)] {
            assert_eq!(opened(&states, junk, &binding()).err(), Some(StateRefusal::Forged));
        }
        let elsewhere = RequestStates::default();
        assert_eq!(opened(&elsewhere, &token, &binding()).err(), Some(StateRefusal::Forged));
        let expired = states.seal(&binding(), Duration::ZERO);
        assert_eq!(opened(&states, &expired, &binding()).err(), Some(StateRefusal::Expired));
    }

    #[test]
    fn a_shared_key_and_its_predecessor_are_accepted() {
        let old = RequestStateKey::parse(&"1f".repeat(32)).expect("key");
        let new = RequestStateKey::parse(&"2e".repeat(32)).expect("key");
        let before = RequestStates::new(old.clone(), None, Arc::new(LocalStore::new()));
        let token = before.seal(&binding(), Duration::from_secs(60));
        let replica = RequestStates::new(new.clone(), Some(old), Arc::new(LocalStore::new()));
        assert!(opened(&replica, &token, &binding()).is_ok());
        let after = RequestStates::new(new, None, Arc::new(LocalStore::new()));
        let token = before.seal(&binding(), Duration::from_secs(60));
        assert_eq!(opened(&after, &token, &binding()).err(), Some(StateRefusal::Forged));
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
