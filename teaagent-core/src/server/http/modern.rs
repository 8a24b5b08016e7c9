//! The checks of a protocol 2026-07-28 request before it runs: `_meta` names the version and the
//! client's capabilities, and the `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
//! `Mcp-Param-*` headers say what the body says (the `http` module docs' table, in order).

use std::sync::Arc;

use hyper::StatusCode;
use hyper::header::HeaderMap;
use serde_json::value::RawValue;

use super::callers::Callers;
use super::param_headers::check_param_headers;
use super::request::{McpHeaders, text};
use crate::error::Error;
use crate::jsonrpc::message::NotedMembers;
use crate::jsonrpc::{RawParams, scan};
use crate::mcp::ProtocolVersion;
use crate::mcp::modern::{META_PROTOCOL_VERSION, ModernMeta};
use crate::registry::Registry;
use crate::server::era::{REMOVED_IN_MODERN, modern_caller};
use crate::session::SessionInfo;

/// A 2026-07-28 request as its checks read it.
pub(super) struct ModernRequest<'a> {
    /// All its headers (the `Mcp-Param-*` ones are read from them).
    pub(super) headers: &'a HeaderMap,
    /// Its MCP headers, found in one pass.
    pub(super) mcp: &'a McpHeaders<'a>,
    /// `MCP-Protocol-Version` as text (read once, for the era first).
    pub(super) version: Option<&'a str>,
    pub(super) method: &'a str,
    pub(super) params: Option<&'a RawParams>,
    /// Its params' [`READ_MEMBERS`] as its reading noted them, if it did.
    pub(super) noted: Option<NotedMembers<5>>,
}

/// The modern checks of the `http` module docs' table, in order; the caller's session on
/// success. A `_meta` seen before is not read again: its caller is remembered (`callers.rs`).
pub(super) fn modern_checks(
    request: ModernRequest<'_>,
    registry: &Registry,
    callers: &Callers,
) -> Result<Arc<SessionInfo>, (StatusCode, Error)> {
    let ModernRequest { headers, mcp, version, method, params, noted } = request;
    let bad = |error| (StatusCode::BAD_REQUEST, error);
    let mismatch = |details: String| bad(Error::HeaderMismatch { details });
    // What the message's own reading noted of the params, or one pass over them for everything
    // compared (a large argument is skipped, not built).
    let read = match (params, noted) {
        (Some(params), Some(noted)) => Read::noted(params, noted),
        _ => read_params(params.map(RawParams::get)).map_err(bad)?,
    };
    let invalid = |details: String| {
        bad(Error::InvalidParams { reason: crate::error::ParamsProblem::InvalidMeta, details })
    };
    // The caller this very `_meta` made before (then it passed the checks of `_meta` below), or
    // the `_meta` read now.
    let known = read.meta.and_then(|raw| callers.get(raw));
    let meta = match (&known, read.meta) {
        (None, Some(raw)) => {
            serde_json::from_str::<Option<ModernMeta>>(raw).map_err(|e| invalid(e.to_string()))?
        }
        _ => None,
    };
    let meta_version = match (&known, &meta) {
        (Some(caller), _) => Some(caller.version.as_str()),
        (None, meta) => meta.as_ref().and_then(|m| m.protocol_version.as_deref()),
    };
    // `_meta` first: without it nothing else can be compared.
    let Some(meta_version) = meta_version else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_PROTOCOL_VERSION}\"]`"
        )));
    };
    if meta.as_ref().is_some_and(|m| m.client_capabilities.is_none()) {
        return Err(invalid(
            "every request of protocol 2026-07-28 carries `_meta[\"io.modelcontextprotocol/clientCapabilities\"]` (`{}` for none)".into(),
        ));
    }
    match version {
        None => return Err(mismatch("the MCP-Protocol-Version header is missing".into())),
        Some(v) if v != meta_version => {
            return Err(mismatch(format!("MCP-Protocol-Version is {v:?}, but _meta names {meta_version:?}")));
        }
        Some(_) => {}
    }
    if !ProtocolVersion::MODERN.iter().any(|v| v.as_str() == meta_version) {
        return Err(bad(Error::UnsupportedVersion { requested: meta_version.to_owned() }));
    }
    match text(mcp.method) {
        None => return Err(mismatch("the Mcp-Method header is missing".into())),
        Some(m) if m != method => {
            return Err(mismatch(format!("Mcp-Method is {m:?}, but the body's method is {method:?}")));
        }
        Some(_) => {}
    }
    if matches!(
        method,
        "tools/call" | "resources/read" | "prompts/get" | "tasks/get" | "tasks/update" | "tasks/cancel"
    ) {
        let (key, named) = match method {
            "resources/read" => ("uri", read.uri),
            "tasks/get" | "tasks/update" | "tasks/cancel" => ("taskId", read.task_id),
            _ => ("name", read.name),
        };
        let named = named.and_then(|raw| serde_json::from_str::<String>(raw).ok());
        match (text(mcp.name), named) {
            (None, _) => return Err(mismatch("the Mcp-Name header is missing".into())),
            (Some(h), Some(b)) if h == b => {
                if method == "tools/call" {
                    check_param_headers(headers, registry, &b, read.arguments).map_err(bad)?;
                }
            }
            (Some(h), b) => {
                return Err(mismatch(format!(
                    "Mcp-Name is {h:?}, but the body's {key} is {:?}",
                    b.unwrap_or_default()
                )));
            }
        }
    }
    // A method this server does not have is answered by the pipeline itself (`404` from
    // `status_of`): the router is the one list of methods.
    let not_found = |e: Error| {
        let status = if matches!(e, Error::MethodNotFound { .. }) {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::BAD_REQUEST
        };
        (status, e)
    };
    if let Some(caller) = known {
        return match REMOVED_IN_MODERN.contains(&method) {
            true => Err(not_found(Error::MethodNotFound { method: method.to_owned() })),
            false => Ok(caller),
        };
    }
    let caller = modern_caller(method, meta).map_err(not_found)?;
    if let Some(raw) = read.meta {
        callers.keep(raw, &caller);
    }
    Ok(caller)
}

/// What the checks read of a request's params: its `_meta`, the `name`, `uri` or `taskId` the
/// `Mcp-Name` header must repeat, and a call's `arguments` its `Mcp-Param-*` headers must (kept
/// raw: another method may give them another type, and most calls mirror nothing). Each is the
/// member's JSON text, borrowed from the params' text (nothing is copied out of it); a `null`
/// reads as absent.
#[derive(Debug, Default, PartialEq, Eq)]
struct Read<'a> {
    meta: Option<&'a str>,
    name: Option<&'a str>,
    uri: Option<&'a str>,
    arguments: Option<&'a str>,
    task_id: Option<&'a str>,
}

/// [`Read`] as `serde_json` reads it, for params the quick reading leaves to it.
#[derive(Default, serde::Deserialize)]
struct ReadBySerde<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<&'a RawValue>,
    #[serde(default, borrow)]
    name: Option<&'a RawValue>,
    #[serde(default, borrow)]
    uri: Option<&'a RawValue>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "taskId")]
    task_id: Option<&'a RawValue>,
}

/// The members of the params [`Read`] holds, in its order: what the message's reading notes
/// (`Incoming::parse_line_noting`) for [`modern_checks`].
pub(super) const READ_MEMBERS: [&[u8]; 5] = [b"_meta", b"name", b"uri", b"arguments", b"taskId"];

impl<'a> Read<'a> {
    /// The members found where they were noted in `params`' text.
    fn noted(params: &'a RawParams, noted: NotedMembers<5>) -> Self {
        let [meta, name, uri, arguments, task_id] = noted.map(|at| scan::unless_null(params.member(at)));
        Read { meta, name, uri, arguments, task_id }
    }
}

/// One pass over the params: `jsonrpc::scan`'s where it is sure to read them as `serde_json`
/// does (most requests: a third of the instructions), `serde_json`'s otherwise, with its errors.
fn read_params(params: Option<&str>) -> Result<Read<'_>, Error> {
    let Some(params) = params else { return Ok(Read::default()) };
    if let Some(found) = scan::object_members(params, READ_MEMBERS) {
        let [meta, name, uri, arguments, task_id] = found.map(scan::unless_null);
        return Ok(Read { meta, name, uri, arguments, task_id });
    }
    let read: ReadBySerde<'_> = serde_json::from_str(params).map_err(|e| Error::InvalidParams {
        reason: crate::error::ParamsProblem::InvalidMeta,
        details: e.to_string(),
    })?;
    Ok(read.into())
}

impl<'a> From<ReadBySerde<'a>> for Read<'a> {
    fn from(read: ReadBySerde<'a>) -> Self {
        Read {
            meta: read.meta.map(RawValue::get),
            name: read.name.map(RawValue::get),
            uri: read.uri.map(RawValue::get),
            arguments: read.arguments.map(RawValue::get),
            task_id: read.task_id.map(RawValue::get),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The params as `serde_json` alone reads them, or its error.
    fn by_serde(text: &str) -> Result<Read<'_>, String> {
        serde_json::from_str::<ReadBySerde<'_>>(text).map(Read::from).map_err(|e| e.to_string())
    }

    fn agree(text: &str) {
        let quick = read_params(Some(text)).map_err(|e| match e {
            Error::InvalidParams { details, .. } => details,
            other => other.to_string(),
        });
        assert_eq!(quick, by_serde(text), "{text}");
    }

    #[test]
    fn params_read_as_serde_json_reads_them() {
        for text in [
            r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#" { "uri" : "teaagent://workspace/a" , "taskId" : 7 } "#,
            r#"{"name":null,"_meta":null,"arguments":null,"other":{"name":"inner"}}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"n\u0061me":"a","name":"b"}"#,
            r#"{"n\u0061me":"a"}"#,
            r#"{"other":1,"other":2,"name":"x"}"#,
            r#"["name","echo"]"#,
            r#"{"name":"echo"} x"#,
            r#"{"name":"\ud800"}"#,
            r#"{}"#,
        ] {
            agree(text);
        }
        // Nesting at the quick reading's limit and past it (past it, and past `serde_json`'s
        // own, the reading and its error are `serde_json`'s).
        for depth in [crate::jsonrpc::scan::MAX_DEPTH - 2, crate::jsonrpc::scan::MAX_DEPTH, 200] {
            agree(&format!(r#"{{"name":"a","_meta":{}1{}}}"#, "[".repeat(depth), "]".repeat(depth)));
        }
    }

    proptest! {
        /// Whatever the members, their values and their order, both readings agree.
        #[test]
        fn any_params_read_as_serde_json_reads_them(
            members in prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(vec!["_meta", "name", "uri", "arguments", "taskId", r"n\u0061me"])
                            .prop_map(str::to_owned),
                        "[a-z_]{0,6}",
                    ],
                    crate::jsonrpc::arbitrary::any_json_value(),
                ),
                0..6,
            ),
            pretty in any::<bool>(),
        ) {
            let members: Vec<String> = members
                .iter()
                .map(|(name, value)| {
                    let value = match pretty {
                        true => serde_json::to_string_pretty(value),
                        false => serde_json::to_string(value),
                    };
                    format!("\"{name}\": {}", value.unwrap_or_default())
                })
                .collect();
            agree(&format!("{{{}}}", members.join(",")));
        }
    }
}
