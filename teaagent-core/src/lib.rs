//! # teaagent-core
//!
//! A framework for [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust:
//! write a function, add `#[tool]`, and serve it — over stdio or Streamable HTTP, in both
//! protocol eras, under a permission policy — alone or as a fleet of replicas.
//!
//! What a tool author uses:
//!
//! - [`tool`](macro@tool), [`Registry`] and [`Server`]: define tools, check them, serve them
//!   ([`Server::run_stdio`], `Server::serve_http` with the `http` feature).
//! - [`ToolContext`], [`State`], [`Json`], [`ToolError`]: what a tool receives and returns
//!   ([`tool`](mod@tool)); [`PromptDef`], [`resource::ResourceProvider`] and [`SkillDef`] for
//!   prompts, resources and skills.
//! - [`Policy`] and [`config`]: which calls run (modes, grants, deny rules, approvals, audit),
//!   and the files and variables a server reads them from.
//! - [`testing`]: an in-process client for your tools' tests.
//!
//! How the crate is put together — its floors, every import pointing down, what each module owns
//! and the order of checks of a call — is in the repository's `ARCHITECTURE.md`.
//!
//! ## Cargo features
//!
//! - **`http`** (off by default): Streamable HTTP (`Server::serve_http`,
//!   `server::http`): hyper's HTTP/1 server and its glue crates.
//! - **`oauth`** (off by default, implies `http`): OAuth 2.1 resource-server mode for HTTP
//!   (`server::http::oauth`): JWT access tokens checked against the issuer's key set.
//! - **`redis`** (off by default): `fleet::RedisStore`, the fleet's store in Redis: rate-limit
//!   windows, request-state nonces, counted grants' uses and "for this session" approvals shared,
//!   so replicas behind a load balancer decide as one server (without it, `fleet::LocalStore`
//!   keeps them in the process).
//! - **`gateway`** (off by default): `teaagent_core::gateway` — external MCP servers started as
//!   child processes, their tools served under this server's policy (what `teaagent mcp serve`
//!   does with the servers the user allowed). Only tokio's `process` feature, no new crate.
//! - **`builtin-tools`** (off by default): the built-in workspace tools of `teaagent mcp serve`
//!   (`teaagent_core::builtin_tools`: `read_file`, `search_text`, `shell_exec`, …) and the workspace's
//!   files served as resources (`workspace::{walk, uri, resources}`). They bring ripgrep's
//!   engine (`grep-searcher`, `grep-regex`), `ignore`, `mime_guess` and tokio's
//!   `process` feature. A server of your own tools needs none of it, so it does not compile it:
//!   without the feature the echo example's dependency tree is under 100 crates (the
//!   `footprint` bench measures it next to the same server written with rmcp). The `teaagent`
//!   binary enables it; enable it yourself to offer the built-in tools next to yours:
//!
//!   ```toml
//!   teaagent-core = { version = "0.1", features = ["builtin-tools"] }
//!   ```
//!
//! Every feature gated item says so in these docs (built with `--cfg docsrs`, as docs.rs does).
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

#![cfg_attr(docsrs, feature(doc_cfg))]

// `#[tool]` generates `::teaagent_core::...` paths; inside this crate they must resolve too (the
// built-in tools, tests). Without the `builtin-tools` feature nothing in the library uses it.
#[allow(unused_extern_crates)]
extern crate self as teaagent_core;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
#[cfg(feature = "builtin-tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "builtin-tools")))]
pub mod builtin_tools;
pub mod config;
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
mod containment;
mod cursor;
pub mod digest;
#[doc(hidden)] // the `TEAAGENT_*` variables, for `teaagent` and the tests; libraries read them via `config`
pub mod env;
pub mod error;
pub mod fleet;
#[cfg(feature = "gateway")]
#[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
pub mod gateway;
#[doc(hidden)] // the `teaagent` command's home directory; a library server reads it through `config`
pub mod home;
mod json_escapes;
pub mod jsonrpc;
pub mod logging;
pub mod mcp;
pub mod metrics;
pub mod policy;
pub mod prompt;
#[doc(hidden)] // the server builds its limiter; tests and benchmarks reach into it
pub mod rate_limit;
pub mod registry;
pub mod resource;
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
#[doc(hidden)] // the command sandbox `teaagent` sets up; not a tool author's API
pub mod sandbox;
pub mod schema;
#[cfg(test)]
mod scratch;
pub mod server;
#[doc(hidden)] // its public types are documented where a server author meets them, in `server`
pub mod session;
pub mod skill;
mod task;
pub mod testing;
pub mod tool;
#[doc(hidden)] // escaping for what a person sees, shared with the `teaagent` command
pub mod visible;
pub mod workspace;

pub use error::Error;
pub use mcp::tasks::{TaskStart, TaskSupport};
pub use mcp::{CallToolResult, Content, JsonObject};
pub use policy::{PermissionMode, Policy};
pub use prompt::{PromptDef, Prompts};
pub use registry::{OutputMismatch, Registry, RegistryBuilder, RegistryError};
pub use server::{
    Announcement, Peer, ResourceProvider, Server, ServerConfig, Serving, ToolAvailability, ToolOverride,
};
pub use skill::{SkillDef, Skills};
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
