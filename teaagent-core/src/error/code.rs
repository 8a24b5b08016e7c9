//! JSON-RPC and MCP error codes used by teaagent.

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
