//! `teaagent doctor`: the things that go wrong, checked in the order they matter, each with
//! what was found and how to fix it.
//!
//! Each check is a module of its own and adds [`Finding`]s: the binary, the home directory and
//! the files in it, the configuration files (the user's and the workspace's, with the
//! environment), the clients whose configuration names teaagent, the workspace lock, the
//! external servers, the HTTP token file, and the fleet's Redis. Nothing is changed: the home
//! is not created, no lock is taken, no external server is started (its executable is hashed,
//! as `teaagent mcp serve` does before starting it), and a Redis is only asked `PING` and given
//! the store's scripts, which every replica loads at its first call anyway.

mod binary;
mod clients;
mod config;
mod external;
mod fleet;
mod home;
mod lock;
mod tokens;

use std::path::PathBuf;

use serde::Serialize;

/// How a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// As it should be.
    Ok,
    /// Works, but probably not as meant.
    Warning,
    /// Something a server or a client will fail on.
    Error,
}

/// One thing checked.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Finding {
    /// Which check (`binary`, `home`, `config`, `client`, `lock`, `external`, `token-file`,
    /// `fleet`).
    pub(crate) check: &'static str,
    /// How it stands.
    pub(crate) status: Status,
    /// What was checked: a path, a server's name, a client's.
    pub(crate) subject: String,
    /// What was found.
    pub(crate) message: String,
    /// How to fix it, for a warning or an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fix: Option<String>,
}

impl Finding {
    fn new(
        check: &'static str,
        status: Status,
        subject: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self { check, status, subject: subject.into(), message: message.into(), fix: None }
    }

    fn ok(check: &'static str, subject: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(check, Status::Ok, subject, message)
    }

    fn warning(check: &'static str, subject: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(check, Status::Warning, subject, message)
    }

    fn error(check: &'static str, subject: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(check, Status::Error, subject, message)
    }

    fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// What to examine.
#[derive(Debug, Clone)]
pub(crate) struct Subject {
    /// The workspace root (the clients' entries are checked whatever root they name).
    pub(crate) root: PathBuf,
    /// `--config FILE`, instead of the home's `config.toml`.
    pub(crate) config: Option<PathBuf>,
    /// The HTTP token file to check (else the home's `tokens`, when it exists).
    pub(crate) token_file: Option<PathBuf>,
}

/// Every check, in order.
pub(crate) fn examine(subject: &Subject) -> Vec<Finding> {
    let mut findings = Vec::new();
    binary::check(&mut findings);
    let home = home::check(&mut findings);
    let settings = config::check(subject, &mut findings);
    clients::check(&subject.root, &mut findings);
    lock::check(&subject.root, home.as_deref(), &mut findings);
    if let Some(settings) = &settings {
        external::check(settings, &subject.root, &mut findings);
    }
    tokens::check(subject.token_file.as_deref(), home.as_deref(), &mut findings);
    if let Some(settings) = &settings {
        fleet::check(settings, &mut findings);
    }
    findings
}

/// A path as a person reads it (escaped).
fn shown(path: &std::path::Path) -> String {
    teaagent_core::visible::escape(&path.display().to_string())
}
