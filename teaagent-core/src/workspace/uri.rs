//! `teaagent://workspace/<percent-encoded relative path>` URIs, written and parsed strictly.
//!
//! Writing encodes every byte of each path segment except RFC 3986's unreserved characters,
//! and joins segments with literal `/`: any file name (spaces, `%`, `#`, non-UTF-8 bytes)
//! round-trips. Parsing refuses, with the reason in `data.reason`, anything else: another scheme
//! or host, userinfo, a port, a query or fragment, an empty segment (`//`), a dot segment (`.`,
//! `..`, also encoded as `%2e`), an encoded separator (`%2f`, `%5c`) or NUL, and malformed escapes.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;

/// The fixed prefix of every workspace URI.
pub const PREFIX: &str = "teaagent://workspace/";

/// The resource template.
pub const TEMPLATE: &str = "teaagent://workspace/{path}";

/// The URI of a workspace-relative path.
pub fn to_uri(relative: &Path) -> String {
    let bytes = relative.as_os_str().as_bytes();
    // Room for the prefix, the path and a few escapes: one allocation for most names.
    let mut uri = String::with_capacity(PREFIX.len() + bytes.len() + 16);
    uri.push_str(PREFIX);
    if bytes.split(|&b| b == b'/').all(|segment| !segment.is_empty() && segment != b".") {
        // Every segment is a name (what a walk or a resolved path gives): the separators stay,
        // the rest is encoded in one pass.
        encode_into(&mut uri, bytes, true);
        return uri;
    }
    for (i, segment) in relative.iter().enumerate() {
        if i > 0 {
            uri.push('/');
        }
        encode_into(&mut uri, segment.as_bytes(), false);
    }
    uri
}

/// RFC 3986's unreserved bytes, by value.
const UNRESERVED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
        b += 1;
    }
    table
};

/// Appends `bytes` with every byte percent-encoded but RFC 3986's unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`), and `/` too with `slashes` (a whole path whose segments are all
/// names). A listing encodes every file's path, so this pushes each run of plain bytes at once
/// instead of going through `percent_encoding`'s iterator of pieces.
fn encode_into(uri: &mut String, bytes: &[u8], slashes: bool) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let kept = |b: u8| UNRESERVED[usize::from(b)] || (slashes && b == b'/');
    let mut rest = bytes;
    while !rest.is_empty() {
        // The run of bytes kept as they are (ASCII, so a `str`), then one escaped.
        let run = rest.iter().position(|&b| !kept(b)).unwrap_or(rest.len());
        let (plain, after) = rest.split_at(run);
        uri.push_str(std::str::from_utf8(plain).unwrap_or_default());
        let Some((&b, after)) = after.split_first() else { break };
        uri.push('%');
        uri.push(char::from(HEX[usize::from(b >> 4)]));
        uri.push(char::from(HEX[usize::from(b & 0xf)]));
        rest = after;
    }
}

/// Why a URI was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UriError {
    /// Not `teaagent://workspace/...`, or with userinfo, port, query or fragment.
    NotAWorkspaceUri,
    /// An empty segment, a dot segment, an encoded separator or NUL, a bad escape.
    BadPath,
}

/// Parses a workspace URI into a relative path.
pub fn parse(uri: &str) -> Result<PathBuf, UriError> {
    let Some(path) = uri.strip_prefix(PREFIX) else {
        return Err(UriError::NotAWorkspaceUri);
    };
    if path.contains(['?', '#']) {
        return Err(UriError::NotAWorkspaceUri);
    }
    if path.is_empty() {
        return Err(UriError::BadPath);
    }
    let mut relative = PathBuf::new();
    for raw in path.split('/') {
        if raw.is_empty() {
            return Err(UriError::BadPath);
        }
        if !well_formed_escapes(raw) {
            return Err(UriError::BadPath);
        }
        let bytes: Vec<u8> = percent_decode_str(raw).collect();
        if bytes == b"." || bytes == b".." || bytes.iter().any(|b| matches!(b, b'/' | b'\\' | 0)) {
            return Err(UriError::BadPath);
        }
        relative.push(OsString::from_vec(bytes));
    }
    Ok(relative)
}

/// Every `%` starts a two-hex-digit escape.
fn well_formed_escapes(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

/// The display name of a relative path (`/`-separated, lossy for non-UTF-8 names).
pub fn display(relative: &Path) -> String {
    into_display(relative.to_path_buf())
}

/// [`display`] of a path given up: a UTF-8 path becomes the text without a copy.
pub fn into_display(relative: PathBuf) -> String {
    match relative.into_os_string().into_string() {
        Ok(text) => text,
        Err(raw) => String::from_utf8_lossy(raw.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};

    use super::*;

    /// What [`encode_into`] keeps in a segment, as `percent_encoding` spells it.
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

    /// And in a whole path of names.
    const PATH: &AsciiSet = &SEGMENT.remove(b'/');

    #[test]
    fn the_encoder_encodes_as_the_sets_say() {
        let every: Vec<u8> = (0..=255).collect();
        for (set, slashes) in [(SEGMENT, false), (PATH, true)] {
            let mut ours = String::new();
            encode_into(&mut ours, &every, slashes);
            assert_eq!(ours, percent_encode(&every, set).to_string());
        }
    }

    #[test]
    fn round_trip_of_awkward_names() {
        for name in ["a b/c#d%e", "src/main.rs", "ünï/çødé", "x?y/z&w", "~/.hidden"] {
            let uri = to_uri(Path::new(name));
            assert!(!uri[PREFIX.len()..].contains(['?', '#', ' ', '%']) || uri.contains('%'));
            assert_eq!(parse(&uri), Ok(PathBuf::from(name)), "{uri}");
        }
        let raw = OsString::from_vec(vec![b'a', 0xff, b'b']);
        assert_eq!(parse(&to_uri(Path::new(&raw))), Ok(PathBuf::from(raw)));
    }

    #[test]
    fn strict_refusals() {
        for (uri, why) in [
            ("file:///etc/passwd", UriError::NotAWorkspaceUri),
            ("teaagent://other/x", UriError::NotAWorkspaceUri),
            ("teaagent://x@workspace/a", UriError::NotAWorkspaceUri),
            ("teaagent://workspace:80/a", UriError::NotAWorkspaceUri),
            ("TEAAGENT://workspace/a", UriError::NotAWorkspaceUri),
            ("teaagent://workspace/a?x=1", UriError::NotAWorkspaceUri),
            ("teaagent://workspace/a#frag", UriError::NotAWorkspaceUri),
            ("teaagent://workspace/", UriError::BadPath),
            ("teaagent://workspace//etc/passwd", UriError::BadPath),
            ("teaagent://workspace/a//b", UriError::BadPath),
            ("teaagent://workspace/../x", UriError::BadPath),
            ("teaagent://workspace/a/./b", UriError::BadPath),
            ("teaagent://workspace/%2e%2e/x", UriError::BadPath),
            ("teaagent://workspace/%2E%2e%2fetc", UriError::BadPath),
            ("teaagent://workspace/a%2fb", UriError::BadPath),
            ("teaagent://workspace/a%5cb", UriError::BadPath),
            ("teaagent://workspace/a%00b", UriError::BadPath),
            ("teaagent://workspace/a%zz", UriError::BadPath),
            ("teaagent://workspace/a%2", UriError::BadPath),
        ] {
            assert_eq!(parse(uri), Err(why), "{uri}");
        }
    }

    /// The URI each component of the path gives, encoded on its own: what [`to_uri`]'s one-pass
    /// encoding of plain paths must agree with.
    fn by_components(relative: &Path) -> String {
        let segments: Vec<String> =
            relative.iter().map(|s| percent_encode(s.as_bytes(), SEGMENT).to_string()).collect();
        format!("{PREFIX}{}", segments.join("/"))
    }

    proptest::proptest! {
        #[test]
        fn one_pass_encoding_agrees_with_encoding_each_segment(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'Z', b'0', b'/', b'.', b'%', b' ', b'~', b'-', 0xc3, 0xff]),
                0..24,
            )
        ) {
            let path = PathBuf::from(OsString::from_vec(bytes));
            proptest::prop_assert_eq!(to_uri(&path), by_components(&path));
            if !path.as_os_str().is_empty() && path.iter().all(|s| s != "." && s != "..") && !path.has_root() {
                proptest::prop_assert_eq!(parse(&to_uri(&path)), Ok(path.iter().collect::<PathBuf>()));
            }
        }
    }
}
