//! Configuration of `mcp serve` and `run`: [`teaagent_core::config`] (the user's file, the
//! workspace's tighten-only file, the `TEAAGENT_*` environment variables) with the flags applied
//! last. The loading, its hardening and its errors live in the core crate so that every server
//! built on it takes its policy from the same places; this module only adds the flags.
//!
//! Two things differ from a library server: `[tools.NAME]` for a tool the command does not have
//! is an error (it knows its tools, so that is a typo), and the home directory is created when
//! missing (the command keeps its lock registry and audit log there).

use teaagent_core::config::{Choices, Settings, Sources};
use teaagent_core::{Registry, Workspace};

pub(crate) use teaagent_core::config::{ConfigError, McpServer, ReadUserFile, UserFile};

use crate::cli::CallFlags;

/// The user's file (`--config`, else the home's, the home created when missing), read once
/// for both what [`load`] takes from it and the external servers the registry is built with.
pub(crate) fn read_user(flags: &CallFlags) -> Result<ReadUserFile, ConfigError> {
    ReadUserFile::read(UserFile::locate(flags.config.as_deref())?)
}

/// Applies the user's file (as [`read_user`] read it), the workspace's file and the
/// environment, then the flags.
pub(crate) fn load(
    flags: &CallFlags,
    user: &ReadUserFile,
    workspace: &Workspace,
    registry: &Registry,
) -> Result<Settings, ConfigError> {
    let sources = Sources {
        user_file: flags.config.as_deref(),
        user_read: Some(user),
        create_home: true,
        workspace: Some(workspace),
        // The command's settings are the user's file's (a server's own file is for servers
        // built on the crate that name themselves).
        server_file: None,
        environment: true,
        flags: Choices {
            permission_mode: flags.permission_mode,
            grants: flags.grant.clone(),
            deny: Vec::new(),
            preapprove: flags.preapprove.clone(),
            request_state_keys: None,
        },
        strict_tool_names: true,
    };
    Settings::load(&sources, registry)
}
