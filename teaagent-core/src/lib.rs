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

// `#[tool]` generates `::teaagent_core::...` paths; inside this crate they must resolve too.
extern crate self as teaagent_core;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
pub mod config;
pub mod error;
pub mod home;
pub mod jsonrpc;
pub mod logging;
pub mod mcp;
pub mod policy;
pub mod rate_limit;
pub mod registry;
pub mod schema;
pub mod server;
pub mod tool;
pub mod tools;
pub mod visible;
pub mod workspace;

pub use error::Error;
pub use mcp::{CallToolResult, Content, JsonObject};
pub use policy::{PermissionMode, Policy};
pub use registry::{Registry, RegistryBuilder, RegistryError};
pub use server::{Peer, ResourceProvider, Server, ServerConfig, ToolOverride};
pub use tool::{
    Behavior, Bounded, DefineTool, Handler, IntoToolOutput, Json, MissingState, ParamRole, RateLimit, State,
    Tier, ToolContext, ToolDef, ToolError,
};
pub use workspace::Workspace;

#[doc = include_str!("tool_attr.md")]
pub use teaagent_macros::tool;

/// The README's Rust examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
