//! Bytes as the server hashes, draws and spells them: SHA-256 digests, the system's randomness,
//! hex; and the digest of a call that preapprovals name ([`call_digest`]).
//!
//! SHA-256 and HMAC-SHA256 come from RustCrypto's `sha2` and `hmac`, which use the CPU's SHA
//! extensions where it has them; everything in the crate hashes through `Sha256` and the two
//! HMAC functions here.

mod call;

pub use call::{call_digest, canonical_json, is_digest};

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// Appends the lowercase hex of `bytes` to `out`: spelled into a buffer on the stack, 32 bytes
/// at a time, and appended as text (a `char` pushed at a time cost ten times as much, and every
/// call's digest is spelled so).
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    let mut spelled = [0u8; 64];
    for chunk in bytes.chunks(32) {
        for (pair, b) in spelled.chunks_exact_mut(2).zip(chunk) {
            pair[0] = DIGITS[usize::from(b >> 4)];
            pair[1] = DIGITS[usize::from(b & 15)];
        }
        // Hex digits: ASCII, always valid UTF-8.
        out.push_str(std::str::from_utf8(&spelled[..chunk.len() * 2]).unwrap_or_default());
    }
}

/// The bytes `text` spells in hex (either case); `None` unless it is an even number of hex
/// digits and nothing else (no sign, no space).
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.as_bytes().chunks(2).map(|pair| Some(hex_value(pair[0])? << 4 | hex_value(pair[1])?)).collect()
}

/// The value of one hex digit.
pub(crate) fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// SHA-256, given its input a piece at a time.
#[derive(Default, Clone)]
pub(crate) struct Sha256(sha2::Sha256);

impl Sha256 {
    /// Adds `bytes` to what is hashed.
    pub(crate) fn update(&mut self, bytes: impl AsRef<[u8]>) {
        sha2::Digest::update(&mut self.0, bytes);
    }

    /// The digest of everything given.
    pub(crate) fn finalize(self) -> [u8; 32] {
        sha2::Digest::finalize(self.0).into()
    }
}

/// The SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::default();
    hash.update(bytes);
    hash.finalize()
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn hmac_of(key: &[u8; 32], parts: &[&[u8]]) -> HmacSha256 {
    use hmac::{KeyInit, Mac};
    // Any key length is valid for HMAC (a 32-byte key is padded to the block), so this cannot fail.
    let Ok(mut mac) = <HmacSha256 as KeyInit>::new_from_slice(key) else {
        unreachable!("HMAC takes any key")
    };
    for part in parts {
        mac.update(part);
    }
    mac
}

/// HMAC-SHA256 of `parts`, one after the other, under `key`.
pub(crate) fn hmac_sha256(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    hmac::Mac::finalize(hmac_of(key, parts)).into_bytes().into()
}

/// Whether `tag` is the HMAC-SHA256 of `parts` under `key`, compared in constant time.
pub(crate) fn hmac_sha256_verify(key: &[u8; 32], parts: &[&[u8]], tag: &[u8; 32]) -> bool {
    hmac::Mac::verify_slice(hmac_of(key, parts), tag).is_ok()
}

/// SHA-256 (hex) of `parts`, each length-prefixed so that no two lists hash alike.
pub(crate) fn digest_of(parts: &[&str]) -> String {
    let mut hash = Sha256::default();
    for part in parts {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hex(&hash.finalize())
}

/// Fills `out` from the operating system's random source.
///
/// # Panics
///
/// When the system has no random source to give (`getrandom` fails), which Linux only does
/// before its pool is initialised at boot: no secret is better than a guessable one.
pub(crate) fn fill_random(out: &mut [u8]) {
    let mut filled = 0;
    while filled < out.len() {
        match rustix::rand::getrandom(&mut out[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => panic!("the system's random source failed: {e}"),
        }
    }
}

/// `n` random bytes, in hex.
#[cfg_attr(
    not(any(feature = "http", feature = "redis", feature = "builtin-tools", feature = "gateway")),
    allow(dead_code)
)]
pub(crate) fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    fill_random(&mut bytes);
    hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let bytes: Vec<u8> = (0..=255).collect();
        let spelled: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&bytes), spelled, "past one buffer of 32 bytes");
        assert_eq!(unhex(&hex(&bytes)), Some(bytes));
        assert_eq!(hex(&[0x0f, 0xa0]), "0fa0");
        assert_eq!(unhex("0FA0"), Some(vec![0x0f, 0xa0]));
        for bad in ["+f", "abc", "g0", " 0", "0 "] {
            assert_eq!(unhex(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lists_hash_apart_and_randomness_differs() {
        assert_ne!(digest_of(&["ab", "c"]), digest_of(&["a", "bc"]));
        assert_eq!(digest_of(&["x"]).len(), 64);
        assert_ne!(random_hex(16), random_hex(16));
        assert_eq!(random_hex(8).len(), 16);
    }
}
