//! Payload digests for preapprovals: `sha256:` + the SHA-256 of the RFC 8785 (JCS) canonical
//! JSON of `{"name": NAME, "arguments": ARGUMENTS}`.
//!
//! Canonical JSON sorts object keys by their UTF-16 code units, writes numbers as ECMAScript
//! does (`1.0` and `1e0` are both `1`; exponents from `1e21` up and below `1e-6`), writes
//! strings with only `"`, `\` and control characters escaped (so `"\u00e9"` and `"é"` are the
//! same), and has no whitespace. Two spellings of one call have one digest; any change of an
//! argument changes it.
//!
//! The canonical text is written straight into the hash (small pieces gathered first, a long
//! run of unescaped bytes as it is): a call's digest copies neither its arguments nor a long text.

use serde_json::Value;

use super::Sha256;
use crate::json_escapes::escape;

/// The digest of a call, as the `--preapprove` flag takes it: `sha256:<64 hex digits>`.
pub fn call_digest(name: &str, arguments: &Value) -> String {
    // `{"arguments": ..., "name": ...}`: the two keys in canonical order.
    let mut out = Hashing { hash: Sha256::default(), pending: String::with_capacity(Hashing::PENDING) };
    out.put("{\"arguments\":");
    write(arguments, &mut out);
    out.put(",\"name\":");
    string(name, &mut out);
    out.put("}");
    let mut digest = String::with_capacity(71);
    digest.push_str("sha256:");
    super::push_hex(&mut digest, &out.finish());
    digest
}

/// Whether `text` is a well-formed digest (`sha256:` and 64 lowercase hex digits).
pub fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// RFC 8785 canonical JSON.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// Where canonical text goes: a string, or a hash.
trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// Canonical text on its way into a hash: small pieces are gathered first (each update of the
/// hash has a cost of its own), a long run goes in as it is.
struct Hashing {
    hash: Sha256,
    pending: String,
}

impl Hashing {
    const PENDING: usize = 1024;

    fn finish(mut self) -> [u8; 32] {
        self.hash.update(&self.pending);
        self.hash.finalize()
    }
}

impl Sink for Hashing {
    fn put(&mut self, text: &str) {
        if self.pending.len() + text.len() <= Self::PENDING {
            self.pending.push_str(text);
            return;
        }
        self.hash.update(&self.pending);
        self.pending.clear();
        if text.len() < Self::PENDING {
            self.pending.push_str(text);
        } else {
            self.hash.update(text);
        }
    }
}

fn write(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(b) => out.put(if *b { "true" } else { "false" }),
        Value::Number(n) => out.put(&number(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write(item, out);
            }
            out.put("]");
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.put("{");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                string(key, out);
                out.put(":");
                write(&map[key], out);
            }
            out.put("}");
        }
    }
}

/// `s` as a JSON string: only `"`, `\` and control characters escaped. The bytes between
/// escapes go out as one piece (no byte of a multi-byte character is below 0x80, so cutting at
/// an ASCII byte never splits one).
fn string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    escape(s, |piece| out.put(piece));
    out.put("\"");
}

/// A double as ECMAScript's `Number.prototype.toString` writes it (what RFC 8785 requires).
fn number(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        // JSON has no such numbers; serde_json never produces them.
        return "null".into();
    }
    // Shortest round-trip digits and the decimal exponent: d.ddd × 10^e.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32; // number of significant digits
    let n = exp + 1; // position of the decimal point
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_as_ecmascript_writes_them() {
        for (x, text) in [
            (1.0, "1"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.5e-9, "-1.5e-9"),
            // RFC 8785's example: the literal 333333333.33333329 parses to this double.
            ("333333333.33333329".parse().unwrap_or_default(), "333333333.3333333"),
            (9007199254740993.0, "9007199254740992"),
            (4.5e300, "4.5e+300"),
        ] {
            assert_eq!(number(x), text, "{x}");
        }
    }

    #[test]
    fn spellings_of_one_call_have_one_digest() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1.0, "\u00e9", {"y": 1, "x": 2}], "a": 1e2}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"a":100,"b":[1,"é",{"x":2,"y":1}]}"#).expect("json");
        assert_eq!(call_digest("t", &a), call_digest("t", &b));
        assert_ne!(
            call_digest("t", &a),
            call_digest("t", &json!({"a": 101, "b": [1, "é", {"x": 2, "y": 1}]}))
        );
        assert_ne!(call_digest("t", &a), call_digest("u", &a));
        assert!(is_digest(&call_digest("t", &a)));
    }

    #[test]
    fn the_digest_is_the_sha256_of_the_canonical_call() {
        // `printf '%s' '{"arguments":{"text":"hi"},"name":"echo"}' | sha256sum`: digests given to
        // `--preapprove` before stay valid whatever computes SHA-256 here.
        assert_eq!(
            call_digest("echo", &json!({"text": "hi"})),
            "sha256:3b360b58747c76ce79013e8ddb2b82d76d8f183a6239651c9c474c4edc277caa"
        );
        // FIPS 180-2's two-block example (56 bytes: the padding needs a second block).
        assert_eq!(
            super::super::sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            *b"\x24\x8d\x6a\x61\xd2\x06\x38\xb8\xe5\xc0\x26\x93\x0c\x3e\x60\x39\xa3\x3c\xe4\x59\x64\xff\x21\x67\xf6\xec\xed\xd4\x19\xdb\x06\xc1"
        );
    }

    #[test]
    fn strings_escape_as_json_does_and_the_streamed_digest_is_the_digest_of_the_text() {
        let every_kind = "a\"b\\c\u{8}\t\n\u{c}\r\u{0}\u{1f}\u{7f} é €😀 \u{202e}end";
        let long = format!("{}\n{}", "x".repeat(1500), every_kind.repeat(40));
        for text in [every_kind, "", "\"", "plain", "\n\n", "😀\u{1}", &long, &"y".repeat(1023)] {
            assert_eq!(canonical_json(&json!(text)), serde_json::to_string(text).expect("json"), "{text:?}");
            let args = json!({"z": [text, 1.5, null, true], "a": {"k": text}});
            let object = json!({"name": text, "arguments": args});
            let whole = format!(
                "sha256:{}",
                crate::digest::hex(&crate::digest::sha256(canonical_json(&object).as_bytes()))
            );
            assert_eq!(call_digest(text, &args), whole, "{text:?}");
        }
    }

    proptest::proptest! {
        /// Any string, with runs of plain text of any length between escapes, is written as
        /// `serde_json` writes it.
        #[test]
        fn any_string_is_written_as_serde_json_writes_it(
            text in proptest::string::string_regex(r#"([a-zé😀\x7f]{0,40}["\\\x00-\x1f]?){0,6}"#).expect("regex"),
        ) {
            proptest::prop_assert_eq!(canonical_json(&json!(text)), serde_json::to_string(&text).expect("json"));
        }
    }

    #[test]
    fn rfc_8785_example_key_order() {
        // Keys sort by UTF-16 code units: "\u{20ac}" (0x20AC) before "\u{1f600}" (0xD83D ...).
        let v = json!({"\u{1f600}": 1, "\u{20ac}": 2, "a": 3, "\r": 4});
        assert_eq!(canonical_json(&v), "{\"\\r\":4,\"a\":3,\"\u{20ac}\":2,\"\u{1f600}\":1}");
    }
}
