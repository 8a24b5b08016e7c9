//! JSON-RPC 2.0 as MCP uses it: request ids, incoming messages, outgoing responses.
//!
//! One file per wire concept: [`id`] keeps a client's id exactly as it was written, [`message`]
//! classifies an incoming line (its envelope read first by `scan`, for the common case),
//! [`response`] writes the bytes of an answer, and `value` reads a large request's params the way
//! `serde_json` does, faster. The gateway reads its external servers' replies with `scan` too.

#[cfg(test)]
pub(crate) mod arbitrary;
pub mod id;
pub mod message;
pub mod response;
pub(crate) mod scan;
pub(crate) mod value;

pub use id::{IdKey, RequestId};
pub use message::{
    Incoming, MessageRefusal, Notification, RawParams, Request, ResponseFromClient, Unreadable,
};
pub use response::{ErrorObject, error_line, notification_line, result_line, result_line_sized};

/// The only `jsonrpc` version this server speaks.
pub const VERSION: &str = "2.0";
