//! The scanner of envelopes (`scan.rs`) against `serde_json`: whenever the scanner reads a line,
//! `serde_json` reads the same members from it.

use proptest::prelude::*;

use super::Envelope;
use crate::jsonrpc::scan::{Members, members, members_noting_params, object_members, tests::MESSAGES};

/// What `serde_json` makes of `text`'s envelope (`None`: it refuses the line).
fn by_serde(text: &str) -> Option<Members<'_>> {
    serde_json::from_str::<Envelope<'_>>(text).ok().map(|e| e.members())
}

/// The property the scanner keeps: when it answers, `serde_json` reads the same members. Says
/// whether the scanner answered.
fn agrees(text: &str) -> bool {
    let ours = members(text);
    if ours.is_some() {
        assert_eq!(ours, by_serde(text), "the scanner read {text:?} otherwise than serde_json");
    }
    notes_alike(text);
    ours.is_some()
}

/// The params' members noted while reading the envelope are what [`object_members`] reads of
/// the params' own text (both `None` where it leaves them to `serde_json`), and the envelope is
/// the one [`members`] reads.
fn notes_alike(text: &str) {
    const NAMES: [&[u8]; 4] = [b"name", b"arguments", b"_meta", b"x"];
    let read = members_noting_params(text, NAMES);
    assert_eq!(read.map(|(envelope, _)| envelope), members(text), "{text:?}");
    if let Some((envelope, noted)) = read {
        let params = envelope.params.filter(|p| p.starts_with('{'));
        assert_eq!(noted, params.and_then(|p| object_members(p, NAMES)), "the params of {text:?}");
    }
}

#[test]
fn the_messages_read_alike() {
    for text in MESSAGES {
        assert!(agrees(text), "{text:?}");
    }
}

/// Every message above with each byte removed, replaced or preceded by each of the bytes that
/// matter to JSON's grammar: the scanner either leaves the result to `serde_json` or agrees.
#[test]
fn mangled_messages_never_read_otherwise() {
    const BYTES: &[u8] = b"\"\\{}[],:-+.0129eEtfnulx \t\n\r\x01/";
    let (mut tried, mut read) = (0, 0);
    for text in MESSAGES {
        let bytes = text.as_bytes();
        for at in 0..=bytes.len() {
            let mut variants = Vec::new();
            if at < bytes.len() {
                variants.push([&bytes[..at], &bytes[at + 1..]].concat());
            }
            for &b in BYTES {
                variants.push([&bytes[..at], &[b], &bytes[at..]].concat());
                if at < bytes.len() {
                    variants.push([&bytes[..at], &[b], &bytes[at + 1..]].concat());
                }
            }
            for variant in variants {
                if let Ok(text) = std::str::from_utf8(&variant) {
                    read += usize::from(agrees(text));
                    tried += 1;
                }
            }
        }
    }
    // Most variants are broken JSON, left to serde_json; enough are still read to test.
    assert!(tried > 10_000 && read > 1_000, "{read} of {tried} variants read by the scanner");
}

/// Nesting in the params at the envelope reading's limit and past it: the members noted (or
/// not) are still what `object_members` reads, and past the limit `serde_json` reads the line.
#[test]
fn params_nested_at_and_past_the_limit_are_noted_alike() {
    use crate::jsonrpc::scan::MAX_DEPTH;
    for depth in [MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, 150] {
        let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"name":"a","x":{nested}}}}}"#);
        agrees(&text);
        let noted = members_noting_params(&text, [b"name".as_slice()]).and_then(|(_, noted)| noted);
        assert_eq!(noted.is_some(), depth <= MAX_DEPTH - 2, "depth {depth}");
    }
}

proptest! {
    #[test]
    fn any_text_of_json_tokens_is_read_as_serde_json_reads_it(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "{", "}", "[", "]", ",", ":", "\"jsonrpc\"", "\"2.0\"", "\"id\"", "\"method\"",
                "\"params\"", "\"result\"", "\"error\"", "\"x\"", "\"\\u00e9\"", "\"\\\"\"", "1",
                "-0.5e3", "null", "true", " ", "\n",
            ]),
            0..40,
        )
    ) {
        agrees(&parts.concat());
    }

    #[test]
    fn any_params_are_read_as_serde_json_reads_them(params in "[ -~]{0,60}") {
        agrees(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#));
    }
}
