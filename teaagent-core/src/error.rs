//! Every error the server can answer with, and the one mapping from an error to its JSON-RPC
//! code, message and `data`.
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
//! | [`Error::ParamHeaderMismatch`] | -32020 | `param_header_mismatch` (`problem`: see [`ParamHeaderProblem`]) |
//!
//! A tool that returns `Err` is *not* an [`Error`]: it is a normal result with `isError: true`.
//!
//! # Arguments a model can fix
//!
//! [`Error::InvalidArguments`] is the one error whose *form* depends on the protocol version the
//! session negotiated:
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
//! ([`Error::PathRefused`]) is *not* one of them: it is answered with `-32602` in every
//! version — it is a confinement decision, not a schema mistake, and keeps the form clients and
//! audits already rely on. [`Server::call_once`](crate::Server::call_once) (`teaagent run`) has
//! no session, so it returns the error itself: `teaagent run` prints the message on stderr (the
//! `-32602` object with `--json`) and exits with 1, as for any refused call.

mod answer;
mod arguments;
pub mod code;
mod reasons;
#[cfg(test)]
mod tests;

pub use answer::Error;
pub use arguments::ArgumentError;
pub use reasons::{
    CallerShare, Failure, InvalidRequest, ParamHeaderProblem, ParamsProblem, PathRefusal, ResourceRefusal,
};
