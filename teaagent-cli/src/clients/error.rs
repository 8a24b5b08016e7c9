//! What can go wrong with a client's configuration file. Every message names the file (shown
//! escaped: [`teaagent_core::visible::escape`]) and says how to fix it; none of them leaves the
//! file changed.

use std::io;
use std::path::{Path, PathBuf};

use teaagent_core::visible;

/// A client's configuration that cannot be read, used or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The client's own directory does not exist: it was never started on this machine.
    #[error(
        "{client} does not seem to be installed: {} does not exist. Start {client} once so that it creates its configuration, or print the entry with `teaagent mcp install mcp-json` and add it to the client by hand",
        show(dir)
    )]
    NotInstalled {
        /// The client's name.
        client: &'static str,
        /// Its directory.
        dir: PathBuf,
    },
    /// `--project` for a client that reads only its user-level file.
    #[error("{client} has no project-level configuration file; install it without --project (for your user)")]
    NoProjectFile {
        /// The client's name.
        client: &'static str,
    },
    /// The same variable given twice to `--env`.
    #[error("--env {key}=… is given twice; give each variable once")]
    DuplicateEnv {
        /// The variable.
        key: String,
    },
    /// A path that is not UTF-8 cannot be written into a client's JSON or TOML.
    #[error("{} is not UTF-8, so no client's configuration can name it; use a path that is", show(path))]
    NotUtf8Path {
        /// The binary or the root.
        path: PathBuf,
    },
    /// `--root` is not a directory that can be used.
    #[error("--root {}: {source}; give the project's directory", show(path))]
    Root {
        /// As given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// No home directory to find the user-level file in.
    #[error("cannot find {client}'s configuration: HOME is not set (or not an absolute path)")]
    NoHome {
        /// The client's name.
        client: &'static str,
    },
    /// The file (or the directory it goes in) exists but cannot be read.
    #[error("cannot read {}: {source}", show(path))]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not UTF-8 text.
    #[error("{} is not UTF-8 text; fix or move it aside, then run this again", show(path))]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// The file does not parse.
    #[error(
        "{} is not valid {format} (line {line}, column {column}: {message}); fix it, or move it aside, and run this again",
        show(path)
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// `JSON` or `TOML`.
        format: &'static str,
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based, in characters.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The top level, or the servers key, is not an object (a table).
    #[error(
        "{}: {what} is {found}, where {client} expects an object of servers; fix the file and run this again",
        show(path)
    )]
    Shape {
        /// The file.
        path: PathBuf,
        /// The client's name.
        client: &'static str,
        /// `the top level` or `` `mcpServers` ``.
        what: String,
        /// What it is instead (`an array`, `a string`…).
        found: &'static str,
    },
    /// A key written twice where teaagent edits: which one a client reads depends on its parser.
    #[error(
        "{} has {what} more than once (a client reads only one of them); remove the extra one and run this again",
        show(path)
    )]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// `` `mcpServers` `` or `` the server `teaagent` ``.
        what: String,
    },
    /// A project file that is a link to somewhere outside the project.
    #[error(
        "{} leads outside the project (to {}); teaagent writes a project's file only inside it: replace the link with a file",
        show(path),
        show(target)
    )]
    OutsideProject {
        /// The project's file.
        path: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// Writing the new file (or its backup) failed; the file is as it was.
    #[error("cannot write {}: {source}; the file was left as it was", show(path))]
    Write {
        /// The file that could not be written.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl ClientError {
    /// Whether this is a problem with a configuration file or the command line (exit code 2),
    /// rather than with the machine (exit code 1).
    pub(crate) fn is_usage(&self) -> bool {
        matches!(
            self,
            ClientError::NoProjectFile { .. }
                | ClientError::DuplicateEnv { .. }
                | ClientError::Root { .. }
                | ClientError::NotUtf8Path { .. }
                | ClientError::Parse { .. }
                | ClientError::Shape { .. }
                | ClientError::Duplicate { .. }
                | ClientError::NotText { .. }
                | ClientError::OutsideProject { .. }
        )
    }
}

/// A path as a person reads it: escaped.
pub(crate) fn show(path: &Path) -> String {
    visible::escape(&path.display().to_string())
}

/// What a JSON value is, for messages.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
