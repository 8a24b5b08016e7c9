//! Where the next byte lies that a JSON string cannot hold as it is: `"`, `\`, or a control
//! character. Reading a message's envelope (`jsonrpc/scan.rs`), writing a string into an answer
//! (`jsonrpc/response.rs`) and writing one into a payload digest (`digest/call.rs`) all step over
//! the long runs of plain bytes between those, a word or a block at a time, with this one search
//! ([`next_special`]); the two writers escape the rest with [`escape`].

/// `text` as the inside of a JSON string, as `serde_json` writes it (and RFC 8785 canonical JSON):
/// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`, nothing else
/// escaped. It is handed to `put` a piece at a time: each run of plain text whole (cut only at
/// an ASCII byte, so never inside a character), each escape on its own.
#[inline]
pub(crate) fn escape(text: &str, mut put: impl FnMut(&str)) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    let mut start = 0;
    loop {
        let special = next_special(bytes, start);
        if special > start {
            put(&text[start..special]);
        }
        let Some(&b) = bytes.get(special) else { break };
        let unicode;
        put(match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            _ => {
                unicode = [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]];
                std::str::from_utf8(&unicode).unwrap_or_default()
            }
        });
        start = special + 1;
    }
}

/// Bytes checked together when looking for the end of a long run of plain bytes.
const BLOCK: usize = 64;

/// Where, from `at`, the first byte of `bytes` that a JSON string cannot hold as it is (`"`,
/// `\`, a control character) lies; `bytes.len()` when there is none.
///
/// Eight bytes are looked at together as one `u64` (most strings of a message are shorter than
/// that: inlined); past them, 64 at a time (SSE2 compares on x86-64, where every CPU has them),
/// then eight at a time, and the last few bytes one by one.
#[inline]
pub(crate) fn next_special(bytes: &[u8], at: usize) -> usize {
    match word_at(bytes, at).map(special_bytes) {
        Some(0) => next_special_beyond(bytes, at + 8),
        Some(found) => at + first_byte(found),
        None => next_special_beyond(bytes, at),
    }
}

/// [`next_special`] past its first word (kept apart: the first word is most calls' answer).
fn next_special_beyond(bytes: &[u8], mut at: usize) -> usize {
    while let Some(block) = bytes.get(at..at + BLOCK) {
        if let Some(found) = first_special_in_block(block) {
            return at + found;
        }
        at += BLOCK;
    }
    while let Some(word) = word_at(bytes, at) {
        match special_bytes(word) {
            0 => at += 8,
            found => return at + first_byte(found),
        }
    }
    let rest = bytes.get(at..).unwrap_or_default();
    rest.iter().position(|&b| is_special(b)).map_or(bytes.len(), |i| at + i)
}

/// The first special byte of a [`BLOCK`] of bytes, with SSE2 compares 16 bytes at a time: a 1 MiB
/// string is scanned with about half the instructions the compiler's vectors of the plain loop
/// take.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn first_special_in_block(block: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let block: &[u8; BLOCK] = block.try_into().ok()?;
    #[allow(unsafe_code)]
    // SAFETY: each load reads 16 bytes of `block`, an array of `BLOCK` bytes, from an offset at
    // most `BLOCK - 16` (unaligned loads are allowed); the intrinsics need SSE2, which the `cfg`
    // above requires of the target (every x86-64 CPU has it).
    unsafe {
        // Each byte of a lane all ones where the byte is special: `max(b, 0x1f) == 0x1f` is
        // `b < 0x20`, unsigned.
        let special = |at: usize| -> __m128i {
            let v = _mm_loadu_si128(block.as_ptr().add(at).cast::<__m128i>());
            let control = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"'.cast_signed()));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\'.cast_signed()));
            _mm_or_si128(_mm_or_si128(control, quote), backslash)
        };
        let lanes = [special(0), special(16), special(32), special(48)];
        let any = _mm_or_si128(_mm_or_si128(lanes[0], lanes[1]), _mm_or_si128(lanes[2], lanes[3]));
        if _mm_movemask_epi8(any) == 0 {
            return None;
        }
        let marked = lanes
            .iter()
            .rev()
            .fold(0u64, |marked, &lane| marked << 16 | u64::from(_mm_movemask_epi8(lane).cast_unsigned()));
        Some(marked.trailing_zeros() as usize)
    }
}

/// The first special byte of a [`BLOCK`] of bytes (a loop the compiler turns into vector compares
/// where it can).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn first_special_in_block(block: &[u8]) -> Option<usize> {
    if !block.iter().fold(false, |any, &b| any | is_special(b)) {
        return None;
    }
    block.iter().position(|&b| is_special(b))
}

fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The eight bytes from `at`, the first in the lowest byte.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let eight: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(eight))
}

/// A word with the high bit set in the byte of each special byte of `word` (exact for the
/// lowest one, which is all [`first_byte`] reads: a borrow may mark a byte above it).
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH
}

/// Which byte of a word [`special_bytes`] marked first.
fn first_byte(marked: u64) -> usize {
    (marked.trailing_zeros() / 8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The word-at-a-time search finds what a byte-by-byte one finds, from any start, in text
        /// of any bytes and any length around the block and word sizes.
        #[test]
        fn the_next_special_byte_is_found_wherever_it_is(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![4 => b'a'..=b'z', 1 => proptest::num::u8::ANY],
                0..300,
            ),
            from in 0usize..300,
        ) {
            let from = from.min(bytes.len());
            let expected =
                bytes[from..].iter().position(|&b| is_special(b)).map_or(bytes.len(), |i| from + i);
            proptest::prop_assert_eq!(next_special(&bytes, from), expected);
        }
    }
}
