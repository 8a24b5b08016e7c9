//! Opaque pagination cursors.
//!
//! A cursor names the list it belongs to and a position in it, plus a fingerprint of the list it
//! was issued for, and is encoded so clients treat it as opaque. A cursor from another list,
//! another server build, or made up by the client is refused with `-32602`
//! (`reason: "invalid_cursor"`), never silently restarted.

use crate::error::{Error, ParamsProblem};

/// A decoded cursor: which list, where, and the fingerprint it was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// The list (`tools`, `resources`, ...).
    pub list: String,
    /// The position (an index, or a key such as the last path returned).
    pub position: String,
    /// Fingerprint of the list's contents at issue time (0 when the list has none).
    pub fingerprint: u64,
}

impl Cursor {
    /// Encodes the cursor as an opaque, URL-safe string.
    pub(crate) fn encode(&self) -> String {
        let plain = format!("{}\n{:016x}\n{}", self.list, self.fingerprint, self.position);
        crate::digest::hex(plain.as_bytes())
    }

    /// Decodes a cursor for `list`, checking its fingerprint; any problem is `-32602`.
    pub(crate) fn decode(text: &str, list: &str, fingerprint: u64) -> Result<Self, Error> {
        let invalid = |why: &str| Error::InvalidParams {
            reason: ParamsProblem::InvalidCursor,
            details: format!("cursor {text:?} {why}; start again without a cursor"),
        };
        let bytes = hex_decode(text).ok_or_else(|| invalid("was not issued by this server"))?;
        let plain = String::from_utf8(bytes).map_err(|_| invalid("was not issued by this server"))?;
        let mut parts = plain.splitn(3, '\n');
        let (Some(l), Some(f), Some(position)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(invalid("was not issued by this server"));
        };
        if l != list {
            return Err(invalid(&format!("belongs to another list, not `{list}`")));
        }
        let f = u64::from_str_radix(f, 16).map_err(|_| invalid("was not issued by this server"))?;
        if f != fingerprint {
            return Err(invalid("is stale: the list changed"));
        }
        Ok(Cursor { list: list.to_owned(), position: position.to_owned(), fingerprint })
    }
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() > 16 * 1024 {
        return None;
    }
    crate::digest::unhex(s)
}

/// A stable 64-bit FNV-1a fingerprint of some strings (cursor staleness checks only; not a
/// security boundary).
pub(crate) fn fingerprint<'a>(items: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for item in items {
        for b in item.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let c = Cursor { list: "tools".into(), position: "100".into(), fingerprint: 7 };
        let text = c.encode();
        assert_eq!(Cursor::decode(&text, "tools", 7).expect("valid"), c);
        for (bad, list, fp) in [
            (text.as_str(), "resources", 7),
            (text.as_str(), "tools", 8),
            ("zz", "tools", 7),
            ("abc", "tools", 7),
            ("", "tools", 7),
        ] {
            let e = Cursor::decode(bad, list, fp).expect_err("refused");
            assert_eq!(e.code(), -32602);
        }
    }
}
