//! # teaagent-core
//!
//! A framework for [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust:
//! protocol types, a tool registry and a fast stdio server.
//!
//! - [`jsonrpc`] and [`mcp`]: the wire (ids echoed byte for byte, every method's types).
//! - [`error`]: every error the server answers with, mapped to JSON-RPC in one place.
//! - [`tool`](mod@tool) and [`registry`]: what a tool is, and the checked set a server offers.
//! - [`State`]: shared application state, given once with [`Server::state`] and taken by tools
//!   as a parameter (see [`tool::state`]).
//! - [`server`]: the stdio server (framing, concurrency, cancellation, shutdown).
//! - [`policy`] and [`config`]: which calls run, and where a server takes that from.
//! - [`logging`]: logs to stderr and, on request, to the client.
//! - [`policy`], [`workspace`], [`home`]: who may call what, the one directory tools may reach
//!   (`#[path]` parameters are confined to it), the lock that keeps two servers from writing it.
//!
//! ## Cargo features
//!
//! - **`gateway`** (off by default): `teaagent_core::gateway` — external MCP servers started as
//!   child processes, their tools served under this server's policy (what `teaagent mcp serve`
//!   does with the servers the user allowed). Only tokio's `process` feature, no new crate.
//! - **`builtin-tools`** (off by default): the built-in workspace tools of `teaagent mcp serve`
//!   (`teaagent_core::builtin_tools`: `read_file`, `search_text`, `shell_exec`, …) and the workspace's
//!   files served as resources (`workspace::{walk, uri, resources}`). They bring ripgrep's
//!   engine (`grep-searcher`, `grep-regex`), `ignore`, `mime_guess`, `base64` and tokio's
//!   `process` feature. A server of your own tools needs none of it, so it does not compile it:
//!   without the feature the echo example's dependency tree is under 100 crates (the
//!   `footprint` bench measures it next to the same server written with rmcp). The `teaagent`
//!   binary enables it; enable it yourself to offer the built-in tools next to yours:
//!
//!   ```toml
//!   teaagent-core = { version = "0.1", features = ["builtin-tools"] }
//!   ```
//!
//! Always there, feature or not: the protocol, the registry and `#[tool]`, validation of every
//! call's arguments against the tool's JSON Schema (a model's mistakes are answered with a
//! message it can act on, before the tool runs), the policy pipeline, workspace confinement and
//! the lock registry.
//!
//! Validation is teaagent's own ([`schema::validate`]): the part of JSON Schema 2020-12 that tool
//! input schemas use — types, `enum`/`const`, object and array keywords, number and string
//! bounds, `pattern`, `anyOf`/`oneOf`/`allOf`/`not`/`if`, local `$ref`s — with 2020-12's
//! semantics (`1.0` is an integer; integers compared exactly). `format` is an annotation as
//! 2020-12 says (`"format": "email"` documents the value, it does not refuse one). `pattern` uses
//! the `regex` crate's syntax (linear time; no look-around, no backreferences). A keyword it does
//! not know is refused when the registry is built, naming the tool and the keyword, never left
//! unchecked. Why not the `jsonschema` crate: its ~40 crates were about 40% of a one-tool
//! server's clean debug build and over half of its debug binary (the `footprint` bench's echo
//! server: 99 crates, 103 MB against 58 crates, 45 MB without it), for a general validator tool
//! schemas need a small part of. It is still the reference: a differential test checks that both
//! give the same verdict on schemars-generated schemas and many instances.
//!
//! Policy rules match tool names and paths with `globset` (the glob syntax `find_files` takes
//! too). It stays: it shares its regex engine with `regex` (the validator's `pattern`), so it
//! costs two crates, and a matcher of our own would be a second glob dialect to learn.

// `#[tool]` generates `::teaagent_core::...` paths; inside this crate they must resolve too (the
// built-in tools, tests). Without the `builtin-tools` feature nothing in the library uses it.
#[allow(unused_extern_crates)]
extern crate self as teaagent_core;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
#[cfg(feature = "builtin-tools")]
pub mod builtin_tools;
pub mod config;
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
mod containment;
mod cursor;
pub mod digest;
pub mod env;
pub mod error;
#[cfg(feature = "redis")]
pub mod fleet;
#[cfg(feature = "gateway")]
pub mod gateway;
pub mod home;
pub mod jsonrpc;
pub mod logging;
pub mod mcp;
pub mod policy;
pub mod prompt;
pub mod rate_limit;
pub mod registry;
pub mod resource;
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
pub mod sandbox;
pub mod schema;
pub mod server;
pub mod session;
mod task;
pub mod testing;
pub mod tool;
pub mod visible;
pub mod workspace;

pub use error::Error;
pub use mcp::{CallToolResult, Content, JsonObject};
pub use policy::{PermissionMode, Policy};
pub use prompt::{PromptDef, Prompts};
pub use registry::{OutputMismatch, Registry, RegistryBuilder, RegistryError};
pub use server::{
    Announcement, EarlyStdio, Peer, ResourceProvider, Server, ServerConfig, Serving, ToolAvailability,
    ToolOverride,
};
pub use task::BoxFuture;
pub use tool::{
    Behavior, Bounded, ClientCapability, DefineTool, Handler, InputError, InputRequest, IntoToolOutput, Json,
    MissingState, ParamRole, RateLimit, State, Tier, ToolContext, ToolDef, ToolError,
};
pub use workspace::Workspace;

#[doc = include_str!("tool_attr.md")]
pub use teaagent_macros::tool;

/// The README's Rust examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
