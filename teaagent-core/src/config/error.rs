//! Why a configuration cannot be used (`config.rs`).

use std::path::PathBuf;

use crate::home::HomeError;
use crate::policy::grant::GrantError;

/// A configuration that cannot be used: the server does not start.
///
/// Its text is raw (it may quote a file's bytes): print it through [`visible::escape`](crate::visible::escape).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The home directory cannot be used.
    #[error("{0}")]
    Home(#[from] HomeError),
    /// The file cannot be read (safely).
    #[error("{}: cannot use this configuration file: {why}", file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// Why.
        why: String,
    },
    /// Not TOML, an unknown key, or a value of the wrong type.
    #[error("{}: {why}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// What is wrong, with line and column.
        why: String,
    },
    /// A value out of its range.
    #[error("{}: `{key}` = {value} is out of range: allowed is {allowed}", file.display())]
    OutOfRange {
        /// The file.
        file: PathBuf,
        /// The key (`tools.NAME.timeout_secs`).
        key: String,
        /// The value as written.
        value: String,
        /// The range.
        allowed: &'static str,
    },
    /// A grant or deny rule that names no tool served (the `teaagent` command refuses to start;
    /// `Policy::rules_naming_no_tool`).
    #[error(
        "{0} (from --grant, TEAAGENT_GRANTS, TEAAGENT_DENY or a configuration file's `grants` or `deny`)"
    )]
    RuleNamesNoTool(String),
    /// A grant or deny rule that does not parse.
    #[error("{}: `{key}`: {why}", file.display())]
    BadRule {
        /// The file.
        file: PathBuf,
        /// The key and index (`grants[2]`).
        key: String,
        /// Why.
        why: String,
    },
    /// `tools.NAME` for a tool that does not exist.
    #[error("{}: `tools.{name}`: no such tool (known: {known})", file.display())]
    UnknownTool {
        /// The file.
        file: PathBuf,
        /// The name.
        name: String,
        /// The tools there are.
        known: String,
    },
    /// A rule or digest given to [`Settings`](super::Settings) by hand that does not parse (those read by
    /// [`Settings::load`](super::Settings::load) were checked where they were read, and say where).
    #[error(transparent)]
    Rule(#[from] GrantError),
    /// An environment variable with a value that cannot be used.
    #[error("environment variable {var}: {why}")]
    Environment {
        /// The variable.
        var: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
}

impl ConfigError {
    /// Whether it is a usage error (exit 2): everything but an unusable home directory (which
    /// is the environment's problem, not the command line's: exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(self, ConfigError::Home(_))
    }
}
