//! The built-in workspace tools of the shipped server, each defined with `#[tool]` in
//! its own file. Every path argument is a `#[path]` parameter (confined before the body runs);
//! tools that may write act through the handles that were judged and approved
//! ([`ToolContext::path_target`](crate::ToolContext::path_target)), read tools resolve beneath
//! the root's handle again, and every open is checked at the moment of use (no link followed out,
//! no special file). Domain failures (no such file, not unique, non-zero exit) are results with
//! `isError: true` and a message an agent can act on; JSON-RPC errors are for framework failures
//! and for arguments no call could satisfy (a glob or regex past its size limit: `-32602`).
//!
//! | tool | annotations |
//! |---|---|
//! | [`read_file`](read_file::read_file), [`list_directory`](list_directory::list_directory), [`find_files`](find_files::find_files), [`search_text`](search_text::search_text), [`file_info`](file_info::file_info) | read-only, idempotent, low |
//! | [`create_file`](create_file::create_file) | medium |
//! | [`write_file`](write_file::write_file) | destructive, idempotent, medium |
//! | [`edit_file`](edit_file::edit_file) | destructive, medium |
//! | [`move_path`](move_path::move_path), [`delete_path`](delete_path::delete_path) | destructive, high |
//! | [`shell_exec`](shell_exec::shell_exec) | destructive, stateful, high, 10 calls per 60 s |
//!
//! Compiled only with the `builtin-tools` feature (the `teaagent` binary enables it): a server of
//! your own tools does not build ripgrep's engine for them. To offer them next to yours:
//!
//! ```toml
//! teaagent-core = { version = "0.1", features = ["builtin-tools"] }
//! ```
//!
//! ```no_run
//! # use teaagent_core::{Registry, Server};
//! let registry = Registry::builder().tools(teaagent_core::builtin_tools::builtin()).registered().build();
//! # let _ = registry.map(|r| Server::new(r));
//! ```

mod common;
pub mod create_file;
pub mod delete_path;
pub mod edit_file;
pub mod file_info;
pub mod find_files;
pub mod list_directory;
pub mod move_path;
pub mod read_file;
pub mod search_text;
pub mod shell_exec;
pub mod write_file;

#[cfg(test)]
mod policy_tests;

use crate::tool::{DefineTool, ToolDef};

/// Every built-in tool, in the order `tools/list` shows them.
pub fn builtin() -> Vec<ToolDef> {
    vec![
        read_file::read_file::tool_def(),
        list_directory::list_directory::tool_def(),
        find_files::find_files::tool_def(),
        search_text::search_text::tool_def(),
        file_info::file_info::tool_def(),
        create_file::create_file::tool_def(),
        write_file::write_file::tool_def(),
        edit_file::edit_file::tool_def(),
        move_path::move_path::tool_def(),
        delete_path::delete_path::tool_def(),
        shell_exec::shell_exec::tool_def(),
    ]
}
