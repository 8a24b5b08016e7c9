//! Classifying one incoming JSON value: request, notification, a response to a request of ours,
//! or something that is not a JSON-RPC message at all.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::id::RequestId;
use super::scan::{self, Members};

/// One incoming message, classified.
#[derive(Debug)]
pub enum Incoming {
    /// A request: it gets exactly one response (unless cancelled).
    Request(Request),
    /// A notification: never answered.
    Notification(Notification),
    /// A client's answer to a request the server sent (e.g. `elicitation/create`).
    Response(ResponseFromClient),
}

/// A request from the client.
#[derive(Debug)]
pub struct Request {
    /// The id, echoed byte for byte.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw params (`None` when absent or `null`).
    pub params: Option<RawParams>,
}

/// A notification from the client.
#[derive(Debug)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The raw params (`None` when absent or `null`).
    pub params: Option<RawParams>,
}

/// A message's `params` as the client wrote them: valid JSON, an object or an array.
///
/// They stay where they arrived, in the message's own text: a large argument is not copied out of
/// the line before the method parses it (the text lives as long as the message is handled).
#[derive(Debug)]
pub struct RawParams {
    text: String,
    range: std::ops::Range<usize>,
}

impl RawParams {
    /// The params' JSON text.
    pub fn get(&self) -> &str {
        &self.text[self.range.clone()]
    }

    /// The text of a member [`Incoming::parse_line_noting`] noted (`None`: it was absent).
    #[cfg(any(feature = "http", test))]
    pub(crate) fn member(&self, noted: Option<std::ops::Range<usize>>) -> Option<&str> {
        self.get().get(noted?)
    }
}

/// Where each member [`Incoming::parse_line_noting`] looked for lies in the params' text
/// (`None`: absent).
pub(crate) type NotedMembers<const N: usize> = [Option<std::ops::Range<usize>>; N];

/// A response the client sent to one of the server's requests.
#[derive(Debug)]
pub struct ResponseFromClient {
    /// The id of the server's request.
    pub id: RequestId,
    /// `Ok(result)` or `Err(error object)`, both raw.
    pub outcome: Result<Box<RawValue>, Box<RawValue>>,
}

/// The envelope as `serde_json` reads it, borrowed from the message's text, for the lines
/// [`scan::members`] leaves to it. Every field is optional so that shape errors are ours to
/// report, and `id`/`params` keep `null` apart from "absent".
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    fn members(&self) -> Members<'a> {
        Members {
            jsonrpc: self.jsonrpc.map(RawValue::get),
            id: self.id.map(RawValue::get),
            method: self.method.map(RawValue::get),
            params: self.params.map(RawValue::get),
            result: self.result.map(RawValue::get),
            error: self.error.map(RawValue::get),
        }
    }
}

/// `Some(raw)` whenever the key is present, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// What went wrong with an incoming value, and the id to answer with when one could be read.
#[derive(Debug)]
pub struct MessageRefusal {
    /// The id of the offending request, when it had a valid one; `None` answers with `id: null`.
    pub id: Option<RequestId>,
    /// What is wrong with it (`crate::error::Error` has the answer for each).
    pub reason: Unreadable,
}

/// Why an incoming value is not a message the server can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Not JSON at all (or not UTF-8): the parser's account of it.
    NotJson {
        /// What the parser said.
        details: String,
    },
    /// JSON, but not a request, a notification or a response.
    NotAMessage,
    /// An `id` that is neither a string nor an integer.
    InvalidId,
    /// No `"jsonrpc": "2.0"`.
    WrongVersion,
    /// `params` that is neither an object nor an array.
    InvalidParamsType,
    /// A `method` that is not a string.
    InvalidMethod,
}

impl Incoming {
    /// Classifies one JSON value (an object, normally) given as its raw text.
    ///
    /// Errors: not JSON at all → [`Unreadable::NotJson`]; JSON that is not a message → the
    /// other [`Unreadable`]s, with the id when it could be read.
    pub fn parse(text: &[u8]) -> Result<Self, Box<MessageRefusal>> {
        Self::parse_line(text.to_vec())
    }

    /// [`Incoming::parse`] of a line the caller gives away: the params stay in it (no copy).
    pub fn parse_line(line: Vec<u8>) -> Result<Self, Box<MessageRefusal>> {
        match String::from_utf8(line) {
            Ok(text) => Self::parse_text(text),
            // Not UTF-8 is not JSON: let the parser say where, as it does for any other line.
            Err(e) => Err(not_json(serde_json::from_slice::<Envelope<'_>>(e.as_bytes()).err())),
        }
    }

    /// [`Incoming::parse_line`], and in the same pass the members `names` of its params (an
    /// object), each where it lies in [`RawParams::get`]'s text, as [`RawParams::member`] reads
    /// it; `None` when this reading leaves them to the caller (escaped or repeated names, a line
    /// that `serde_json` reads: see `jsonrpc/scan.rs`).
    #[cfg(any(feature = "http", test))]
    pub(crate) fn parse_line_noting<const N: usize>(
        line: Vec<u8>,
        names: [&[u8]; N],
    ) -> Result<(Self, Option<NotedMembers<N>>), Box<MessageRefusal>> {
        match String::from_utf8(line) {
            Ok(text) => Self::parse_text_noting(text, names),
            Err(e) => Err(not_json(serde_json::from_slice::<Envelope<'_>>(e.as_bytes()).err())),
        }
    }

    /// Classifies a raw value that is already known to be valid JSON (a batch element).
    pub fn from_raw(raw: &RawValue) -> Result<Self, Box<MessageRefusal>> {
        Self::parse_text(raw.get().to_owned())
    }

    /// Classifies one JSON text, which becomes the home of the message's params.
    fn parse_text(text: String) -> Result<Self, Box<MessageRefusal>> {
        Self::parse_text_noting(text, []).map(|(incoming, _)| incoming)
    }

    /// [`Incoming::parse_text`], noting the params' members `names` (see
    /// [`Incoming::parse_line_noting`]).
    fn parse_text_noting<const N: usize>(
        text: String,
        names: [&[u8]; N],
    ) -> Result<(Self, Option<NotedMembers<N>>), Box<MessageRefusal>> {
        let (members, noted) = match scan::members_noting_params(&text, names) {
            Some(read) => read,
            None => match serde_json::from_str::<Envelope<'_>>(&text) {
                Ok(envelope) => (envelope.members(), None),
                Err(e) if e.is_data() => return Err(reject(None, Unreadable::NotAMessage)),
                Err(e) => return Err(not_json(Some(e))),
            },
        };
        let (incoming, params) = Self::classify(members)?;
        let noted = params
            .zip(noted)
            .map(|(params, noted)| noted.map(|member| member.map(|raw| range_within(params, raw))));
        let range = params.map(|p| range_within(&text, p));
        Ok((incoming.with_params(range.map(|range| RawParams { text, range })), noted))
    }

    /// Sets the params of a request or notification ([`Incoming::classify`] leaves them out).
    fn with_params(mut self, raw: Option<RawParams>) -> Self {
        match &mut self {
            Incoming::Request(r) => r.params = raw,
            Incoming::Notification(n) => n.params = raw,
            Incoming::Response(_) => {}
        }
        self
    }

    /// The message without its params, and the params (checked: an object or an array) to be
    /// kept in the text.
    fn classify(env: Members<'_>) -> Result<(Self, Option<&str>), Box<MessageRefusal>> {
        let id = match env.id {
            None | Some("null") => None,
            Some(raw) => match RequestId::from_text(raw) {
                Some(id) => Some(id),
                None => return Err(reject(None, Unreadable::InvalidId)),
            },
        };
        if env.jsonrpc != Some("\"2.0\"") {
            return Err(reject(id, Unreadable::WrongVersion));
        }
        let params = match env.params {
            Some("null") | None => None,
            Some(raw) if matches!(raw.as_bytes().first(), Some(b'{' | b'[')) => Some(raw),
            Some(_) => return Err(reject(id, Unreadable::InvalidParamsType)),
        };
        if let Some(method) = env.method {
            let Some(method) = string_value(method) else {
                return Err(reject(id, Unreadable::InvalidMethod));
            };
            let message = match id {
                Some(id) => Incoming::Request(Request { id, method, params: None }),
                None => Incoming::Notification(Notification { method, params: None }),
            };
            return Ok((message, params));
        }
        match (id, env.result, env.error) {
            (Some(id), Some(result), None) => {
                Ok((Incoming::Response(ResponseFromClient { id, outcome: Ok(raw_value(result)?) }), None))
            }
            (Some(id), None, Some(error)) => {
                Ok((Incoming::Response(ResponseFromClient { id, outcome: Err(raw_value(error)?) }), None))
            }
            (id, _, _) => Err(reject(id, Unreadable::NotAMessage)),
        }
    }
}

/// Where `raw`, borrowed from `text`, lies in it.
fn range_within(text: &str, raw: &str) -> std::ops::Range<usize> {
    let start = raw.as_ptr() as usize - text.as_ptr() as usize;
    start..start + raw.len()
}

/// The text of a JSON string (`None`: another value); without escapes, taken as it is.
fn string_value(raw: &str) -> Option<String> {
    match raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        // (Valid JSON: a string's inside holds no bare quote, only an escaped one.)
        Some(plain) if !plain.contains('\\') => Some(plain.to_owned()),
        _ => serde_json::from_str(raw).ok(),
    }
}

/// A member's JSON text, owned (a response's `result` or `error`).
fn raw_value(raw: &str) -> Result<Box<RawValue>, Box<MessageRefusal>> {
    RawValue::from_string(raw.to_owned()).map_err(|e| not_json(Some(e)))
}

/// A line that is not JSON; `error` is the parser's account of it.
fn not_json(error: Option<serde_json::Error>) -> Box<MessageRefusal> {
    let details = error.map_or_else(|| "not UTF-8".to_owned(), |e| e.to_string());
    Box::new(MessageRefusal { id: None, reason: Unreadable::NotJson { details } })
}

fn reject(id: Option<RequestId>, reason: Unreadable) -> Box<MessageRefusal> {
    Box::new(MessageRefusal { id, reason })
}

#[cfg(test)]
mod envelope_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Incoming, Box<MessageRefusal>> {
        Incoming::parse(s.as_bytes())
    }

    #[test]
    fn requests_and_notifications() {
        let Ok(Incoming::Request(r)) = parse(r#"{"jsonrpc":"2.0","id":"é","method":"ping"}"#) else {
            panic!("a request")
        };
        assert_eq!((r.id.raw(), r.method.as_str()), (r#""é""#, "ping"));
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#),
            Ok(Incoming::Notification(n)) if n.params.is_none()
        ));
    }

    #[test]
    fn shapes_that_are_not_messages() {
        let not_json = parse("{nope").expect_err("not json");
        assert!(matches!(not_json.reason, Unreadable::NotJson { .. }));
        for (line, reason) in [
            (r#"5"#, Unreadable::NotAMessage),
            (r#"{"id":1,"method":"ping"}"#, Unreadable::WrongVersion),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, Unreadable::WrongVersion),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Unreadable::InvalidId),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, Unreadable::InvalidMethod),
            (r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#, Unreadable::InvalidParamsType),
            (r#"{"jsonrpc":"2.0","id":1}"#, Unreadable::NotAMessage),
            (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, Unreadable::NotAMessage),
        ] {
            let rejected = parse(line).expect_err(line);
            assert!(rejected.reason == reason, "{line}: {:?}", rejected.reason);
        }
    }

    #[test]
    fn the_id_is_kept_when_the_rest_is_wrong() {
        let rejected = parse(r#"{"jsonrpc":"2.0","id":42,"method":null}"#).expect_err("bad method");
        assert_eq!(rejected.id.map(|id| id.raw().to_owned()).as_deref(), Some("42"));
    }

    #[test]
    fn the_params_members_noted_are_read_from_the_params_text() {
        let names: [&[u8]; 3] = [b"name", b"arguments", b"uri"];
        let noted = |line: &str| {
            let (message, noted) = Incoming::parse_line_noting(line.as_bytes().to_vec(), names).expect(line);
            let Incoming::Request(request) = message else { panic!("a request: {line}") };
            let params = request.params.expect("params");
            noted.map(|noted| noted.map(|at| params.member(at).map(str::to_owned)))
        };
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{ "name" : "echo","arguments":{"name":"x"} }}"#;
        assert_eq!(noted(call), Some([Some(r#""echo""#.into()), Some(r#"{"name":"x"}"#.into()), None]));
        // Left to the caller: a name written twice or escaped, a line serde_json reads.
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"n\u0061me":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"a"},"\u0078":1}"#,
        ] {
            assert_eq!(noted(line), None, "{line}");
        }
        // Params that are no object have no members.
        let (_, none) = Incoming::parse_line_noting(
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#.to_vec(),
            names,
        )
        .expect("read");
        assert_eq!(none, None);
    }

    #[test]
    fn responses_to_server_requests() {
        let Ok(Incoming::Response(r)) =
            parse(r#"{"jsonrpc":"2.0","id":"teaagent-1","result":{"action":"accept"}}"#)
        else {
            panic!("a response")
        };
        assert!(r.outcome.is_ok());
    }
}
