//! What a server announces in its `initialize` result (and, in the modern era, in
//! `server/discover`): its name and version, its instructions, the capabilities it declares.

use crate::mcp::Implementation;

/// What the server announces in its `initialize` result.
#[derive(Debug, Clone, PartialEq)]
pub struct Announcement {
    /// `serverInfo`.
    pub server_info: Implementation,
    /// Whether the `resources` capability is declared.
    pub resources: bool,
    /// `instructions`.
    pub instructions: Option<String>,
    /// Whether `tools.listChanged` is declared: the server has tools that may be withheld while
    /// it runs ([`crate::Server::availability`], the gateway of `teaagent mcp serve`).
    pub tools_list_changed: bool,
    /// Whether `resources.subscribe` is declared ([`crate::ResourceProvider::subscribable`]).
    pub resource_subscribe: bool,
    /// Whether the `prompts` capability is declared ([`crate::Server::prompts`]).
    pub prompts: bool,
    /// Whether the `completions` capability is declared (a prompt or the resource provider
    /// completes arguments).
    pub completions: bool,
    /// Whether the server has skills ([`crate::Server::skills`]): the `resources` capability is
    /// declared, and in the modern era the skills extension too.
    pub skills: bool,
    /// Whether a tool may run as a task (`#[tool(task)]`): the tasks capability (2025-11-25) and
    /// extension (2026-07-28) are declared. Set by the server once its tools are collected.
    pub tasks: bool,
}

impl Announcement {
    /// What [`crate::Server::new`] announces: `{"name": "teaagent", "version": <this crate's
    /// version>}`, no instructions; `resources` as the server will have them.
    pub fn teaagent(resources: bool) -> Self {
        Self {
            server_info: default_server_info(),
            resources,
            instructions: None,
            tools_list_changed: false,
            resource_subscribe: false,
            prompts: false,
            completions: false,
            skills: false,
            tasks: false,
        }
    }
}

/// `{"name": "teaagent", "version": <this crate's version>}`.
pub(crate) fn default_server_info() -> Implementation {
    Implementation { name: "teaagent".into(), version: env!("CARGO_PKG_VERSION").into(), title: None }
}
