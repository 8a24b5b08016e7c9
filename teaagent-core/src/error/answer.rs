//! [`Error`]: every error the server answers with, and its one mapping to a JSON-RPC code,
//! message and `data`.

use std::time::Duration;

use serde_json::{Value, json};

use super::arguments::{ArgumentError, report};
use super::code;
use super::reasons::{
    CallerShare, Failure, InvalidRequest, ParamHeaderProblem, ParamsProblem, PathRefusal, ResourceRefusal,
};
use crate::jsonrpc::ErrorObject;

/// An error answered to the client as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The line is not JSON.
    #[error("Parse error: {details}")]
    Parse {
        /// What the JSON parser said.
        details: String,
    },
    /// JSON that is not a JSON-RPC message, or a message not acceptable now.
    #[error("Invalid request: {}", reason.describe())]
    InvalidRequest {
        /// Why.
        reason: InvalidRequest,
    },
    /// No such method.
    #[error("Method not found: {method}")]
    MethodNotFound {
        /// The method asked for.
        method: String,
    },
    /// `tools/call` named a tool that is not registered.
    #[error("Unknown tool: {tool}")]
    UnknownTool {
        /// The name asked for.
        tool: String,
    },
    /// The params of a method are malformed.
    #[error("Invalid params: {details}")]
    InvalidParams {
        /// The kind of problem.
        reason: ParamsProblem,
        /// What exactly.
        details: String,
    },
    /// A tool's arguments fail its input schema (every violation is listed, in `errors` and in
    /// the message). `-32602` up to protocol `2025-06-18`, an `isError` result from `2025-11-25`
    /// on (see the module docs).
    #[error("Invalid arguments for tool '{tool}'{}", report(errors))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Every violation found.
        errors: Vec<ArgumentError>,
    },
    /// A `#[path]` argument was refused by workspace confinement.
    #[error("Path refused for tool '{tool}': '{path}' {}", reason.describe())]
    PathRefused {
        /// The tool.
        tool: String,
        /// The argument (parameter name) that carried the path.
        argument: String,
        /// The path exactly as given.
        path: String,
        /// Why it was refused.
        reason: PathRefusal,
    },
    /// A resource URI was refused or names nothing.
    #[error("Resource error for '{uri}': {}", reason.describe())]
    Resource {
        /// The URI as given.
        uri: String,
        /// Why.
        reason: ResourceRefusal,
    },
    /// The permission policy denied the call. The message carries the first way to allow it
    /// (SDKs and clients show the message; `data.details` has every way).
    #[error("Approval denied for tool '{tool}': {rule}; {}", first_fix(details))]
    ApprovalDenied {
        /// The tool.
        tool: String,
        /// The rule that blocked the call.
        rule: String,
        /// How to allow it.
        details: String,
    },
    /// Over the tool's rate limit.
    #[error("Rate limit exceeded for tool '{tool}': {max_calls} calls per {}", seconds(*window))]
    RateLimited {
        /// The tool.
        tool: String,
        /// Calls admitted per window.
        max_calls: u32,
        /// The window.
        window: Duration,
        /// When the next call would be admitted.
        retry_after: Duration,
    },
    /// Another live server holds the workspace lock.
    #[error("Workspace is locked by another teaagent server (pid {owner_pid}, since {acquired_at})")]
    WorkspaceLocked {
        /// The tool.
        tool: String,
        /// The owner's process id.
        owner_pid: u32,
        /// When the owner acquired the lock (RFC 3339).
        acquired_at: String,
    },
    /// A tool panicked, timed out or failed inside the framework.
    #[error("Tool '{tool}' {}: {details}", reason.describe())]
    ToolFailed {
        /// The tool.
        tool: String,
        /// What happened.
        reason: Failure,
        /// Details for a human.
        details: String,
    },
    /// One caller (a token, an OAuth subject, a client's address) already holds its share of
    /// the server ([`crate::server::CallerLimits`]): refused at once, before anything was
    /// looked at or spent, so the other callers keep theirs.
    #[error("Caller limit: {max} {} is the most one caller may have at once; {}", share.describe(), share.advice())]
    CallerLimit {
        /// What the caller holds too much of.
        share: CallerShare,
        /// How much of it one caller may hold.
        max: usize,
    },
    /// A failure of the server itself.
    #[error("Internal error: {details}")]
    Internal {
        /// What failed.
        details: String,
    },
    /// Modern era: the request names a protocol version this server does not speak (`-32022`,
    /// `data: {supported, requested}`).
    #[error("Unsupported protocol version: {requested:?} (supported: {})", supported_versions().join(", "))]
    UnsupportedVersion {
        /// The version the request named.
        requested: String,
    },
    /// Streamable HTTP, modern era: a required header is missing, or disagrees with the body
    /// (`-32020`, HTTP `400`).
    #[error("Header mismatch: {details}")]
    HeaderMismatch {
        /// Which header, and what it and the body say.
        details: String,
    },
    /// Streamable HTTP, modern era: a `tools/call` argument its tool mirrors into a header
    /// (`x-mcp-header`, [`crate::schema::headers`]) is in the body, and its `Mcp-Param-*` header
    /// is missing or says something else (`-32020`, HTTP `400`). The header's value is never
    /// repeated back: it is the client's, and may be anything.
    #[error("Header mismatch: the argument `{argument}` of tool '{tool}' is mirrored into the header {header}, which {}", problem.describe())]
    ParamHeaderMismatch {
        /// The tool called.
        tool: String,
        /// The argument (the input schema's property).
        argument: String,
        /// The header, as the tool's schema names it (`Mcp-Param-Region`).
        header: String,
        /// What is wrong with it.
        problem: ParamHeaderProblem,
    },
    /// Modern era: the request needs a client capability it did not declare (`-32021`,
    /// `data: {requiredCapabilities}`).
    #[error("Missing required client capability `{capability}`: {details}")]
    MissingCapability {
        /// The capability (`elicitation`), or an extension's identifier
        /// (`io.modelcontextprotocol/tasks`: `data.requiredCapabilities.extensions`).
        capability: &'static str,
        /// Why it is needed.
        details: String,
    },
}

/// The versions a modern request may name.
fn supported_versions() -> Vec<&'static str> {
    crate::mcp::ProtocolVersion::MODERN.iter().map(|v| v.as_str()).collect()
}

impl Error {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            Error::Parse { .. } => code::PARSE_ERROR,
            Error::InvalidRequest { .. } => code::INVALID_REQUEST,
            Error::MethodNotFound { .. } | Error::UnknownTool { .. } => code::METHOD_NOT_FOUND,
            Error::InvalidParams { .. }
            | Error::InvalidArguments { .. }
            | Error::PathRefused { .. }
            | Error::Resource { .. } => code::INVALID_PARAMS,
            Error::ApprovalDenied { .. } => code::APPROVAL_DENIED,
            Error::RateLimited { .. } => code::RATE_LIMITED,
            Error::WorkspaceLocked { .. } => code::WORKSPACE_LOCKED,
            Error::ToolFailed { .. } | Error::CallerLimit { .. } => code::TOOL_FAILED,
            Error::Internal { .. } => code::INTERNAL_ERROR,
            Error::UnsupportedVersion { .. } => code::UNSUPPORTED_PROTOCOL_VERSION,
            Error::MissingCapability { .. } => code::MISSING_CLIENT_CAPABILITY,
            Error::HeaderMismatch { .. } | Error::ParamHeaderMismatch { .. } => code::HEADER_MISMATCH,
        }
    }

    /// The `data` member.
    pub fn data(&self) -> Value {
        match self {
            Error::Parse { details } => json!({ "reason": "parse_error", "details": details }),
            Error::InvalidRequest { reason } => json!({ "reason": reason }),
            Error::MethodNotFound { method } => json!({ "reason": "unknown_method", "method": method }),
            Error::UnknownTool { tool } => json!({ "tool": tool, "reason": "unknown_tool" }),
            Error::InvalidParams { reason, details } => json!({ "reason": reason, "details": details }),
            Error::InvalidArguments { tool, errors } => {
                json!({ "tool": tool, "reason": "invalid_arguments", "errors": errors })
            }
            Error::PathRefused { tool, argument, path, reason } => {
                json!({ "tool": tool, "reason": reason, "argument": argument, "path": path })
            }
            Error::Resource { uri, reason } => json!({ "uri": uri, "reason": reason }),
            Error::ApprovalDenied { tool, rule, details } => {
                json!({ "tool": tool, "reason": "approval_denied", "rule": rule, "details": details })
            }
            Error::RateLimited { tool, retry_after, .. } => json!({
                "tool": tool,
                "reason": "rate_limited",
                "retryAfterSeconds": retry_after.as_secs_f64().ceil() as u64,
            }),
            Error::WorkspaceLocked { tool, owner_pid, acquired_at } => json!({
                "tool": tool,
                "reason": "workspace_locked",
                "ownerPid": owner_pid,
                "acquiredAt": acquired_at,
            }),
            Error::ToolFailed { tool, reason, details } => {
                json!({ "tool": tool, "reason": reason, "details": details })
            }
            Error::CallerLimit { share, max } => json!({
                "reason": "caller_limit",
                "limit": share,
                "max": max,
                "retryAfterSeconds": 1,
            }),
            Error::Internal { details } => json!({ "reason": "internal_error", "details": details }),
            Error::UnsupportedVersion { requested } => {
                json!({ "supported": supported_versions(), "requested": requested })
            }
            Error::HeaderMismatch { details } => json!({ "reason": "header_mismatch", "details": details }),
            Error::ParamHeaderMismatch { tool, argument, header, problem } => json!({
                "tool": tool,
                "reason": "param_header_mismatch",
                "argument": argument,
                "header": header,
                "problem": problem,
            }),
            // An extension (`io.modelcontextprotocol/tasks`) is declared under `extensions`.
            Error::MissingCapability { capability, details } if capability.contains('/') => json!({
                "requiredCapabilities": { "extensions": { *capability: {} } },
                "reason": "missing_client_capability",
                "details": details,
            }),
            Error::MissingCapability { capability, details } => json!({
                "requiredCapabilities": { *capability: {} },
                "reason": "missing_client_capability",
                "details": details,
            }),
        }
    }

    /// The tool result that stands for this error where the protocol wants a result:
    /// `isError: true`, the message as text, `data` as `_meta`. `Some` only for
    /// [`Error::InvalidArguments`], and used only from protocol `2025-11-25` on (see the module
    /// docs); every other error stays a JSON-RPC error in every version.
    ///
    /// ```
    /// use teaagent_core::error::{ArgumentError, Error};
    /// let e = Error::InvalidArguments {
    ///     tool: "plan".into(),
    ///     errors: vec![ArgumentError::new("/due/days", "must be an integer (got a string: \"soon\")")],
    /// };
    /// let result = e.to_tool_result().expect("argument errors have a result form");
    /// assert!(result.is_error);
    /// let meta = serde_json::Value::Object(result.meta.clone().expect("_meta"));
    /// assert_eq!(meta, e.data());
    /// let json = serde_json::to_value(&result).expect("json");
    /// assert_eq!(
    ///     json["content"][0]["text"],
    ///     "Invalid arguments for tool 'plan': /due/days: must be an integer (got a string: \"soon\")"
    /// );
    /// assert_eq!(json["_meta"]["reason"], "invalid_arguments");
    /// ```
    pub fn to_tool_result(&self) -> Option<crate::CallToolResult> {
        match self {
            Error::InvalidArguments { .. } => {
                let Value::Object(data) = self.data() else { return None };
                Some(crate::CallToolResult::error(self.to_string()).with_meta(data))
            }
            _ => None,
        }
    }

    /// The whole JSON-RPC error object.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject { code: self.code(), message: self.to_string(), data: Some(self.data()) }
    }

    /// [`Error::to_error_object`] for a peer of the modern era, where the rate limit is
    /// `-32004` (`2026-07-28` forbids `-32002`); every other code is the same in both eras.
    ///
    /// ```
    /// use std::time::Duration;
    /// use teaagent_core::error::{Error, code};
    /// let e = Error::RateLimited {
    ///     tool: "t".into(), max_calls: 1, window: Duration::from_secs(60), retry_after: Duration::from_secs(3),
    /// };
    /// assert_eq!(e.to_error_object_for(false).code, code::RATE_LIMITED);
    /// let modern = e.to_error_object_for(true);
    /// assert_eq!(modern.code, code::RATE_LIMITED_MODERN);
    /// assert_eq!(modern.data.unwrap()["retryAfterSeconds"], 3);
    /// ```
    pub fn to_error_object_for(&self, modern: bool) -> ErrorObject {
        let mut object = self.to_error_object();
        if modern && object.code == code::RATE_LIMITED {
            object.code = code::RATE_LIMITED_MODERN;
        }
        object
    }
}

impl From<&crate::jsonrpc::Unreadable> for Error {
    /// The answer to an incoming value that is not a message: `-32700` for what is not JSON,
    /// `-32600` for the rest.
    fn from(reason: &crate::jsonrpc::Unreadable) -> Self {
        use crate::jsonrpc::Unreadable as U;
        let reason = match reason {
            U::NotJson { details } => return Error::Parse { details: details.clone() },
            U::NotAMessage => InvalidRequest::NotAMessage,
            U::InvalidId => InvalidRequest::InvalidId,
            U::WrongVersion => InvalidRequest::WrongVersion,
            U::InvalidParamsType => InvalidRequest::InvalidParamsType,
            U::InvalidMethod => InvalidRequest::InvalidMethod,
        };
        Error::InvalidRequest { reason }
    }
}

/// `60s`, `0.5s`: whole seconds without a fraction.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 { format!("{}s", d.as_secs()) } else { format!("{}s", d.as_secs_f64()) }
}

/// The first of the ways to allow a call that `details` lists (`…, or …`): the one a message has
/// room for.
fn first_fix(details: &str) -> &str {
    details.split(", or ").next().unwrap_or(details)
}
