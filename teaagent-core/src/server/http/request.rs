//! Reading a request strictly: its header values (`=?base64?…?=` decoded), what it accepts, its
//! query string (percent-decoded), and a POST's media type, length and body.

use std::borrow::Cow;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::StatusCode;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};

use super::Endpoint;
use super::Reply;
use super::reply::refused;

/// A POST's body, read once its media types and declared length are acceptable (the `http`
/// module docs' table, in order: `Content-Type`, `Accept`, the length), with what the client
/// accepts; else the refusal.
pub(super) async fn read_body(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    body: Incoming,
) -> Result<(Accepts, Bytes), Box<Reply>> {
    let json = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return Err(Box::new(refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        )));
    }
    let accepts = Accepts::of(headers);
    if !accepts.json && !accepts.stream {
        return Err(Box::new(refused(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow application/json or text/event-stream",
        )));
    }
    let limit = endpoint.options.max_body_bytes;
    // A declared length over the limit is refused at once, before a byte of the body is read.
    if let Some(declared) =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        && declared > limit as u64
    {
        return Err(Box::new(refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("the body is larger than {limit} bytes"),
        )));
    }
    let reading = tokio::time::timeout(endpoint.options.body_timeout, Limited::new(body, limit).collect());
    let Ok(read) = reading.await else {
        return Err(Box::new(refused(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time")));
    };
    match read {
        Ok(body) => Ok((accepts, body.to_bytes())),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => Err(Box::new(refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("the body is larger than {limit} bytes"),
        ))),
        Err(_) => Err(Box::new(refused(StatusCode::BAD_REQUEST, "the body could not be read"))),
    }
}

/// The `Accept` value the transport tells clients to send, and the same in the other order.
const BOTH: &[u8] = b"application/json, text/event-stream";
const BOTH_STREAM_FIRST: &[u8] = b"text/event-stream, application/json";

/// What the client accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts {
    pub(super) json: bool,
    pub(super) stream: bool,
}

impl Accepts {
    /// What the `Accept` headers allow: every media range of every header whose value is
    /// visible ASCII, its parameters (`;q=…`) set aside; no `Accept` at all allows both.
    /// (Read a byte at a time: every POST asks, and splitting `str`s cost three times as much.)
    pub(super) fn of(headers: &HeaderMap) -> Self {
        let mut sent = headers.get_all(header::ACCEPT).iter();
        // What MCP clients send, recognised whole (reading it range by range cost about 900
        // instructions a request); it reads as both below too.
        if let (Some(only), None) = (sent.next(), sent.next())
            && matches!(only.as_bytes(), BOTH | BOTH_STREAM_FIRST)
        {
            return Self { json: true, stream: true };
        }
        let mut values = headers.get_all(header::ACCEPT).iter().filter(|v| v.to_str().is_ok()).peekable();
        if values.peek().is_none() {
            return Self { json: true, stream: true };
        }
        let mut out = Self { json: false, stream: false };
        for range in values.flat_map(|v| v.as_bytes().split(|&b| b == b',')) {
            let media = range.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
            let is = |name: &str| media.eq_ignore_ascii_case(name.as_bytes());
            if is("*/*") {
                (out.json, out.stream) = (true, true);
            } else if is("application/json") || is("application/*") {
                out.json = true;
            } else if is("text/event-stream") || is("text/*") {
                out.stream = true;
            }
        }
        out
    }
}

/// `Mcp-Session-Id`, named once (a name given as text is parsed again at each use).
pub(super) const SESSION_ID: header::HeaderName = header::HeaderName::from_static("mcp-session-id");

/// The MCP headers of a request (`Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name`), found in one pass over its headers: a look-up by name hashes the name each time,
/// and a request carries a handful of headers. Each is the first of its name; read each as text
/// with [`text`]. A request that sends one of them twice is refused before any is read
/// ([`McpHeaders::repeated`]).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct McpHeaders<'h> {
    pub(super) session_id: Option<&'h HeaderValue>,
    pub(super) protocol_version: Option<&'h HeaderValue>,
    pub(super) method: Option<&'h HeaderValue>,
    pub(super) name: Option<&'h HeaderValue>,
    /// The first of them the request sends more than once, named as the MCP specification
    /// spells it. Two values of one header make the request mean two things: an intermediary
    /// that routes, authorizes or logs by the last of them would see another request than this
    /// server, which would read the first (`Mcp-Param-*` headers are refused the same way, by
    /// the `param_headers` module).
    pub(super) repeated: Option<&'static str>,
}

impl<'h> McpHeaders<'h> {
    pub(super) fn of(headers: &'h HeaderMap) -> Self {
        let mut found = Self::default();
        for (name, value) in headers {
            let (slot, spelled) = match name.as_str() {
                "mcp-session-id" => (&mut found.session_id, "Mcp-Session-Id"),
                "mcp-protocol-version" => (&mut found.protocol_version, "MCP-Protocol-Version"),
                "mcp-method" => (&mut found.method, "Mcp-Method"),
                "mcp-name" => (&mut found.name, "Mcp-Name"),
                _ => continue,
            };
            if slot.is_some() {
                found.repeated.get_or_insert(spelled);
            } else {
                *slot = Some(value);
            }
        }
        found
    }
}

/// A header's value as text, with `=?base64?…?=` decoded, trimmed (borrowed from the headers
/// unless it was encoded).
pub(super) fn text(value: Option<&HeaderValue>) -> Option<Cow<'_, str>> {
    let raw = value?.to_str().ok()?.trim();
    if let Some(encoded) = raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        return decode_base64(encoded).and_then(|bytes| String::from_utf8(bytes).ok()).map(Cow::Owned);
    }
    Some(Cow::Borrowed(raw))
}

/// Standard base64, with or without padding.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    LENIENT.decode(text).ok()
}

/// Whether a query string carries `access_token` (RFC 6750 §2.3's form, refused here), in any
/// spelling: pairs split at `&` or `;`, each percent-decoded (`%61ccess_token`,
/// `access_token%3D…`) before its name is compared, case-insensitively, spaces (and `+`) around
/// it ignored.
pub(super) fn names_access_token(query: &str) -> bool {
    query.split(['&', ';']).any(|pair| {
        let decoded = percent_decoded(pair).replace('+', " ");
        let key = decoded.split('=').next().unwrap_or("");
        key.trim().eq_ignore_ascii_case("access_token")
    })
}

/// `text` with every `%XX` decoded (invalid escapes kept as they are; bytes that are not UTF-8
/// replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).copied().and_then(crate::digest::hex_value);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2))
        {
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn base64_header_values_decode() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("4pyTIMOgIGxhIG1vZGU=").map(String::from_utf8),
            Some(Ok("✓ à la mode".into()))
        );
        assert_eq!(decode_base64("a$=="), None);
    }

    #[test]
    fn a_token_in_the_query_is_noticed() {
        assert!(names_access_token("access_token=abc"));
        assert!(names_access_token("x=1&ACCESS_TOKEN=abc"));
        assert!(names_access_token("access%5Ftoken=abc"));
        assert!(!names_access_token("token=abc&access_tokens=1"));
        for spelling in [
            "%61ccess_token=abc",
            "access_token%3Dabc",
            "x=1;access_token=abc",
            "Access%5FToken=a",
            "%20access_token=a",
            "access_token",
        ] {
            assert!(names_access_token(spelling), "{spelling}");
        }
        assert!(!names_access_token("tokens=access_token"));
    }

    #[test]
    fn accept_headers() {
        let mut h = HeaderMap::new();
        let a = Accepts::of(&h);
        assert!(a.json && a.stream);
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        let a = Accepts::of(&h);
        assert!(a.json && a.stream);
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
        let a = Accepts::of(&h);
        assert!(!a.json && !a.stream);
        // Ranges in any case, with parameters and spaces, over several headers.
        h.insert(header::ACCEPT, HeaderValue::from_static("text/html, TEXT/* ; q=0.5"));
        h.append(header::ACCEPT, HeaderValue::from_static(" Application/JSON;q=1,image/png"));
        let a = Accepts::of(&h);
        assert!(a.json && a.stream);
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*;q=0.1"));
        assert!(Accepts::of(&h).json && Accepts::of(&h).stream);
        // A value that is not visible ASCII is set aside, as if absent.
        h.insert(header::ACCEPT, HeaderValue::from_bytes(b"application/json, \xff").expect("value"));
        h.append(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
        let a = Accepts::of(&h);
        assert!(!a.json && a.stream);
        // Near misses are nothing.
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/jsonx, text/event-streams, applicationjson"),
        );
        let a = Accepts::of(&h);
        assert!(!a.json && !a.stream);
    }

    /// The values recognised whole read as the range-by-range reading reads them: alone, in
    /// another case, or beside another header.
    #[test]
    fn the_common_accept_values_read_as_every_other() {
        for value in [BOTH, BOTH_STREAM_FIRST] {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_bytes(value).expect("value"));
            let whole = Accepts::of(&h);
            h.insert(header::ACCEPT, HeaderValue::from_bytes(&value.to_ascii_uppercase()).expect("value"));
            let read = Accepts::of(&h);
            assert_eq!((whole.json, whole.stream), (read.json, read.stream));
            assert!(whole.json && whole.stream);
            // Beside a second header, the second is read too.
            h.insert(header::ACCEPT, HeaderValue::from_bytes(value).expect("value"));
            h.append(header::ACCEPT, HeaderValue::from_static("text/html"));
            let both = Accepts::of(&h);
            assert!(both.json && both.stream);
        }
    }
}
