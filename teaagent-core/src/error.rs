//! Every error the server can answer with, and the one mapping from an error to its JSON-RPC
//! code, message and `data` (SPEC §4, "Errors").
//!
//! | variant | code | `data.reason` |
//! |---|---|---|
//! | [`Error::Parse`] | -32700 | `parse_error` |
//! | [`Error::InvalidRequest`] | -32600 | see [`InvalidRequest`] |
//! | [`Error::MethodNotFound`] | -32601 | `unknown_method` |
//! | [`Error::UnknownTool`] | -32601 | `unknown_tool` |
//! | [`Error::InvalidParams`] | -32602 | see [`ParamsProblem`] |
//! | [`Error::InvalidArguments`] | -32602 (from `2025-11-25` on a result, see below) | `invalid_arguments` |
//! | [`Error::PathRefused`] | -32602 | see [`PathRefusal`] |
//! | [`Error::Resource`] | -32602 | see [`ResourceRefusal`] |
//! | [`Error::ApprovalDenied`] | -32001 | `approval_denied` |
//! | [`Error::RateLimited`] | -32002 | `rate_limited` |
//! | [`Error::WorkspaceLocked`] | -32003 | `workspace_locked` |
//! | [`Error::ToolFailed`] | -32000 | see [`Failure`] |
//! | [`Error::CallerLimit`] | -32000 | `caller_limit` (`limit`: see [`CallerShare`]) |
//! | [`Error::Internal`] | -32603 | `internal_error` |
//! | [`Error::HeaderMismatch`] | -32020 | `header_mismatch` |
//!
//! A tool that returns `Err` is *not* an [`Error`]: it is a normal result with `isError: true`.
//!
//! # Arguments a model can fix
//!
//! [`Error::InvalidArguments`] is the one error whose *form* depends on the protocol version the
//! session negotiated (SPEC §4, SEP-1303):
//!
//! | negotiated | answer |
//! |---|---|
//! | `2024-11-05`, `2025-03-26`, `2025-06-18` | a `-32602` error, `data: {tool, reason: "invalid_arguments", errors: [{pointer, message}, ...]}` |
//! | `2025-11-25` and later | a result with `isError: true` whose text is the error's message and whose `_meta` is that same `data` ([`Error::to_tool_result`]) |
//!
//! Why: from `2025-11-25` on, clients hand tool results to the model but may keep protocol
//! errors from it, and a model can only fix arguments it is told about. In both forms the
//! message itself lists every problem with its innermost pointer and, for enums, the allowed
//! values (see [`crate::schema`], "Argument reports"), so a client that shows only the text
//! loses nothing:
//!
//! ```text
//! Invalid arguments for tool 'plan' (3 problems):
//! - /due/days: must be an integer (got a string: "soon")
//! - /priority: must be one of "low", "medium" or "high" (got "urgent")
//! - /title: missing required property `title`
//! ```
//!
//! The same error comes from every place that refuses arguments: the input schema (checked
//! before policy and rate limit, so a refused call uses no budget), the decoding after it
//! (`#[tool]` parameters, a [`Bounded`](crate::Bounded) out of range), and a built-in tool that
//! cannot take an argument at all (a pattern past its limits). A refused `#[path]` argument
//! ([`Error::PathRefused`]) is *not* one of them: SPEC §8 answers it with `-32602` in every
//! version — it is a confinement decision, not a schema mistake, and keeps the form clients and
//! audits already rely on. [`Server::call_once`](crate::Server::call_once) (`teaagent run`) has
//! no session, so it returns the error itself: `teaagent run` prints the message on stderr (the
//! `-32602` object with `--json`) and exits with 1, as for any refused call.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::jsonrpc::ErrorObject;

/// JSON-RPC and MCP error codes used by teaagent.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// JSON that is not a JSON-RPC request or notification.
    pub const INVALID_REQUEST: i32 = -32600;
    /// Unknown method, or `tools/call` of an unknown tool.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Bad params, arguments that fail the schema, refused paths and resources.
    pub const INVALID_PARAMS: i32 = -32602;
    /// A failure inside the server that is not a tool's.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A tool panicked, timed out or failed inside the framework.
    pub const TOOL_FAILED: i32 = -32000;
    /// Denied by the permission policy.
    pub const APPROVAL_DENIED: i32 = -32001;
    /// Over the tool's rate limit.
    pub const RATE_LIMITED: i32 = -32002;
    /// The workspace is held by another live server.
    pub const WORKSPACE_LOCKED: i32 = -32003;
    /// Over the tool's rate limit, in the modern era (`2026-07-28` forbids sending `-32002`).
    pub const RATE_LIMITED_MODERN: i32 = -32004;
    /// Modern era, HTTP: the `MCP-Protocol-Version` header and the request's `_meta` disagree.
    pub const HEADER_MISMATCH: i32 = -32020;
    /// Modern era: handling the request needs a client capability the request did not declare.
    pub const MISSING_CLIENT_CAPABILITY: i32 = -32021;
    /// Modern era: the request names a protocol version this server does not speak.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

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
    /// Modern era: the request needs a client capability it did not declare (`-32021`,
    /// `data: {requiredCapabilities}`).
    #[error("Missing required client capability `{capability}`: {details}")]
    MissingCapability {
        /// The capability (`elicitation`).
        capability: &'static str,
        /// Why it is needed.
        details: String,
    },
}

/// The versions a modern request may name.
fn supported_versions() -> Vec<&'static str> {
    crate::mcp::ProtocolVersion::MODERN.iter().map(|v| v.as_str()).collect()
}

macro_rules! reasons {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal, $text:literal;)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// The `data.reason` string sent on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire,)* }
            }

            /// A short description for the error message.
            pub fn describe(self) -> &'static str {
                match self { $(Self::$variant => $text,)* }
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

reasons! {
    /// Why a message is an invalid request (-32600).
    InvalidRequest {
        /// Valid JSON, but not a request, notification or response.
        NotAMessage => "not_a_message", "not a JSON-RPC 2.0 request or notification";
        /// `jsonrpc` is missing or not `"2.0"`.
        WrongVersion => "wrong_jsonrpc_version", "`jsonrpc` must be \"2.0\"";
        /// The id is not a string or an integer.
        InvalidId => "invalid_id", "`id` must be a string or an integer";
        /// The method is not a string.
        InvalidMethod => "invalid_method", "`method` must be a string";
        /// Params that are neither an object nor an array.
        InvalidParamsType => "invalid_params_type", "`params` must be an object";
        /// A line longer than the configured maximum.
        LineTooLong => "line_too_long", "the line is longer than the server's maximum";
        /// An empty batch.
        EmptyBatch => "empty_batch", "an empty batch";
        /// A batch when the negotiated version does not allow them.
        BatchNotSupported => "batch_not_supported", "batches are accepted only under protocol version 2025-03-26";
        /// An id already in use by a request still in flight.
        DuplicateId => "duplicate_id", "a request with this id is still in flight";
        /// A request before `initialize`.
        NotInitialized => "not_initialized", "the session is not initialized: send `initialize` first";
        /// A second `initialize`.
        AlreadyInitialized => "already_initialized", "the session is already initialized";
        /// `initialize` in a process whose first message chose the modern era.
        ModernEra => "era_modern", "this process serves protocol 2026-07-28, chosen by its first message: there is no `initialize`; start a new process to use the legacy handshake";
        /// More `subscriptions/listen` streams than the server keeps open at once.
        TooManyListeners => "too_many_subscriptions", "too many `subscriptions/listen` streams are open; cancel one first";
        /// Streamable HTTP: a message that belongs to no session and names no modern protocol
        /// version.
        NoSession => "no_session", "send `initialize` first and then the Mcp-Session-Id it answers with (protocol 2025-11-25 and before), or write protocol 2026-07-28 (`_meta` and the MCP-Protocol-Version header on every request)";
        /// Streamable HTTP: a session's messages name another protocol version than it
        /// negotiated.
        SessionVersion => "session_version_mismatch", "the MCP-Protocol-Version header differs from the version this session negotiated";
        /// A modern request in a process whose first message was `initialize`.
        LegacyEra => "era_legacy", "this process serves the version negotiated by `initialize`: a request written in protocol 2026-07-28 (`_meta` naming a protocol version, or `server/discover`) is refused; start a new process for the modern era";
    }
}

reasons! {
    /// Why params are invalid (-32602).
    ParamsProblem {
        /// The params do not have the method's shape.
        Malformed => "invalid_params", "malformed params";
        /// A pagination cursor this server did not issue (or no longer accepts).
        InvalidCursor => "invalid_cursor", "invalid cursor";
        /// Modern era: `_meta` lacks a required key or has a malformed one.
        InvalidMeta => "invalid_meta", "invalid request `_meta`";
        /// Modern era: a `requestState` that is tampered with, expired, already used, or for
        /// another call.
        InvalidRequestState => "invalid_request_state", "invalid `requestState`";
        /// `prompts/get` or `completion/complete` names a prompt the server does not have.
        UnknownPrompt => "unknown_prompt", "unknown prompt";
        /// A prompt's arguments: a required one missing, one that is not a string, or one the
        /// prompt does not take.
        InvalidPromptArguments => "invalid_prompt_arguments", "invalid prompt arguments";
    }
}

reasons! {
    /// Why a `#[path]` argument was refused (-32602).
    PathRefusal {
        /// It resolves outside the workspace root.
        OutsideWorkspace => "outside_workspace", "is outside the workspace";
        /// A FIFO, socket or device.
        SpecialFile => "special_file", "is not a regular file or directory";
        /// A write to a file with more than one hard link.
        HardLinked => "hard_linked", "has more than one hard link, so writing it could change a file outside the workspace";
        /// A symlink loop or too many symlinks.
        SymlinkLoop => "symlink_loop", "has too many levels of symbolic links";
        /// Not a valid path (empty, NUL byte, not UTF-8).
        InvalidPath => "invalid_path", "is not a valid path";
    }
}

reasons! {
    /// Why a resource was refused (-32602).
    ResourceRefusal {
        /// No resource at that URI.
        NotFound => "not_found", "no such resource";
        /// The URI resolves outside the workspace.
        OutsideWorkspace => "outside_workspace", "resolves outside the workspace";
        /// The URI is not of the accepted form.
        InvalidUri => "invalid_uri", "not a valid teaagent://workspace/ URI";
        /// Larger than the read cap.
        TooLarge => "too_large", "larger than the resource size cap";
        /// A FIFO, socket, device or directory.
        SpecialFile => "special_file", "not a regular file";
        /// A path the permission policy hides (a deny rule on paths).
        Hidden => "hidden_by_policy", "hidden by the permission policy (a deny rule on its path)";
    }
}

reasons! {
    /// How a tool failed inside the framework (-32000).
    Failure {
        /// It panicked.
        Panic => "panic", "panicked";
        /// It ran past its timeout.
        Timeout => "timeout", "timed out";
        /// Something in the framework failed around it.
        Internal => "internal", "failed inside the framework";
        /// Too many calls were already waiting for a turn.
        Overloaded => "overloaded", "was refused because the server is overloaded";
        /// Its external server (the gateway's) exited during the call; it is being restarted.
        ExternalExited => "external_server_exited", "failed because its external server exited during the call";
        /// Its external server is not running (starting, restarting, or failed to start).
        ExternalUnavailable => "external_server_unavailable", "is unavailable because its external server is not running";
        /// Its external server's tools are withheld (its tool list changed since the user
        /// allowed it, or it is no longer trusted) until the user allows it again.
        Withheld => "withheld", "is withheld until the user allows its external server again";
        /// The state a fleet shares (Redis, `teaagent_core::fleet`, feature `redis`) could not be reached, and the
        /// call needs it (a rate limit): refused rather than admitted unchecked.
        StoreUnavailable => "state_unavailable", "was refused because the fleet's shared state (Redis) cannot be reached";
    }
}

reasons! {
    /// What one caller holds too much of ([`Error::CallerLimit`]'s `data.limit`).
    CallerShare {
        /// Calls in progress (`tools/call`, `resources/read`, `prompts/get`).
        Calls => "calls", "calls in progress";
        /// Approval questions open: asked, or waiting for their turn to be asked.
        Questions => "questions", "approval questions open";
        /// `subscriptions/listen` streams open.
        Subscriptions => "subscriptions", "`subscriptions/listen` streams open";
        /// Streamable HTTP requests in progress (each holds its connection).
        Requests => "requests", "HTTP requests in progress";
    }
}

impl CallerShare {
    /// What the caller can do about it.
    fn advice(self) -> &'static str {
        match self {
            CallerShare::Questions => "answer one first",
            CallerShare::Subscriptions => "cancel one first",
            _ => "retry when one has finished",
        }
    }
}

/// One schema violation of a tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentError {
    /// A JSON pointer into the arguments (`""` is the whole object), as deep as the problem:
    /// `/due/days`, not `/due`.
    pub pointer: String,
    /// What is wrong there and what would be accepted, e.g. `must be one of "low", "high"
    /// (got "urgent")`.
    pub message: String,
}

impl ArgumentError {
    /// Longest message kept, in characters (a message quoting a value it was given, such as
    /// serde's `invalid type: string "…"`, is cut there).
    pub const MAX_MESSAGE_CHARS: usize = 400;

    /// A problem at `pointer`, with a message from elsewhere (a deserializer, a tool): escaped
    /// ([`crate::visible::escape`]) and cut to [`Self::MAX_MESSAGE_CHARS`], since it may quote
    /// what the client sent.
    ///
    /// ```
    /// use teaagent_core::error::ArgumentError;
    /// let e = ArgumentError::new("/n", format!("invalid value: {}\u{1b}", "9".repeat(1000)));
    /// assert!(e.message.ends_with("more characters⟫"));
    /// assert!(!e.message.contains('\u{1b}'));
    /// ```
    pub fn new(pointer: impl Into<String>, message: impl AsRef<str>) -> Self {
        Self {
            pointer: pointer.into(),
            message: crate::visible::bounded(message.as_ref(), Self::MAX_MESSAGE_CHARS),
        }
    }
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
            Error::HeaderMismatch { .. } => code::HEADER_MISMATCH,
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
            Error::MissingCapability { capability, details } => json!({
                "requiredCapabilities": { *capability: {} },
                "reason": "missing_client_capability",
                "details": details,
            }),
        }
    }

    /// The tool result that stands for this error where the protocol wants a result
    /// (SEP-1303): `isError: true`, the message as text, `data` as `_meta`. `Some` only for
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

/// Longest pointer shown in a message, in characters (`data.errors` has it whole).
const MAX_POINTER_CHARS: usize = 200;

/// Most problems listed in a message (`data.errors` has them all).
const MAX_LISTED_PROBLEMS: usize = 50;

/// The rest of an invalid-arguments message: `: /p: what` for one problem, else
/// ` (N problems):` and one `- /p: what` line each.
fn report(errors: &[ArgumentError]) -> String {
    let line = |e: &ArgumentError| {
        if e.pointer.is_empty() {
            e.message.clone()
        } else {
            format!("{}: {}", crate::visible::bounded(&e.pointer, MAX_POINTER_CHARS), e.message)
        }
    };
    match errors {
        [] => String::new(),
        [one] => format!(": {}", line(one)),
        many => {
            let mut text = format!(" ({} problems):", many.len());
            for e in many.iter().take(MAX_LISTED_PROBLEMS) {
                text.push_str("\n- ");
                text.push_str(&line(e));
            }
            if many.len() > MAX_LISTED_PROBLEMS {
                text.push_str(&format!(
                    "\n- and {} more (data.errors lists them all)",
                    many.len() - MAX_LISTED_PROBLEMS
                ));
            }
            text
        }
    }
}

/// The first of the ways to allow a call that `details` lists (`…, or …`): the one a message has
/// room for.
fn first_fix(details: &str) -> &str {
    details.split(", or ").next().unwrap_or(details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_words_an_unserializable_result_as_an_internal_error() {
        let internal = Error::Internal { details: "the result could not be serialized".into() };
        assert_eq!(crate::jsonrpc::response::internal_serialization_error(), internal.to_error_object());
    }

    #[test]
    fn rate_limit_message_is_the_specs() {
        let e = Error::RateLimited {
            tool: "shell_exec".into(),
            max_calls: 10,
            window: Duration::from_secs(60),
            retry_after: Duration::from_millis(1500),
        };
        let o = e.to_error_object();
        assert_eq!(o.code, -32002);
        assert_eq!(o.message, "Rate limit exceeded for tool 'shell_exec': 10 calls per 60s");
        assert_eq!(
            o.data,
            Some(json!({"tool": "shell_exec", "reason": "rate_limited", "retryAfterSeconds": 2}))
        );
    }

    #[test]
    fn invalid_arguments_list_every_problem_in_the_message() {
        let at = |pointer: &str, message: &str| ArgumentError::new(pointer, message);
        let one = Error::InvalidArguments {
            tool: "plan".into(),
            errors: vec![at("/due/days", "must be an integer")],
        };
        assert_eq!(one.to_string(), "Invalid arguments for tool 'plan': /due/days: must be an integer");
        let two = Error::InvalidArguments {
            tool: "plan".into(),
            errors: vec![at("", "`arguments` must be an object"), at("/a\u{202e}", "bad")],
        };
        assert_eq!(
            two.to_string(),
            "Invalid arguments for tool 'plan' (2 problems):\n- `arguments` must be an object\n- /a\\u{202e}: bad"
        );
        let many = Error::InvalidArguments {
            tool: "plan".into(),
            errors: (0..60).map(|i| at(&format!("/p{i}"), "unknown property")).collect(),
        };
        let text = many.to_string();
        assert!(
            text.starts_with("Invalid arguments for tool 'plan' (60 problems):\n- /p0: unknown property\n")
        );
        assert!(
            text.contains("\n- /p49: unknown property\n- and 10 more (data.errors lists them all)"),
            "{text}"
        );
        assert_eq!(many.data()["errors"].as_array().map(Vec::len), Some(60));
        // Only argument errors have a result form.
        assert!(many.to_tool_result().is_some_and(|r| r.is_error));
        let path = Error::PathRefused {
            tool: "read_file".into(),
            argument: "path".into(),
            path: "/etc".into(),
            reason: PathRefusal::OutsideWorkspace,
        };
        assert_eq!(path.to_tool_result(), None);
    }

    #[test]
    fn every_reason_has_a_snake_case_wire_name() {
        for r in [InvalidRequest::NotAMessage, InvalidRequest::LineTooLong] {
            assert!(r.as_str().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
        assert_eq!(Failure::Timeout.as_str(), "timeout");
    }
}
