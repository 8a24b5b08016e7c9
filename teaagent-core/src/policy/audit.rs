//! The audit log: one JSON line per decision, appended to `$TEAAGENT_HOME/audit.jsonl`.
//!
//! `{"time", "tool", "tier", "digest", "mode", "rule", "outcome"}` (with `principal` when the
//! transport names the caller, and `sandbox` for a tool that runs a command) — `outcome` is `allowed`,
//! `denied`, `rate_limited` or `locked`. A line is one `write(2)` on a file opened with
//! `O_APPEND`, so lines of concurrent servers never interleave. For calls above the `low` tier the
//! line is written before the call runs, and a call whose line cannot be written is denied (no
//! unaudited writes); `low`-tier lines are written the same way but a failure only warns.
//!
//! The file is opened relative to the home directory's handle with `O_NOFOLLOW` and must be a
//! regular file (see [`crate::home`]): an `audit.jsonl` that is a link (or a FIFO, a device) is
//! refused, so audit lines are never written anywhere but the home — and the calls that need
//! them are denied until it is fixed.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::home::Home;

/// The audit log's file name in `$TEAAGENT_HOME`.
pub const FILE_NAME: &str = "audit.jsonl";

/// One decision.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// When (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// The tool.
    pub tool: &'a str,
    /// Its tier.
    pub tier: &'a str,
    /// The call's payload digest (`sha256:...`).
    pub digest: &'a str,
    /// The permission mode.
    pub mode: &'a str,
    /// What decided.
    pub rule: &'a str,
    /// `allowed`, `denied`, `rate_limited`, `locked`.
    pub outcome: &'a str,
    /// Who asked, when the transport authenticated the client (HTTP: `token:NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<&'a str>,
    /// What the command could reach, for a tool that runs one (the server's command sandbox).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'a str>,
}

impl AuditRecord<'_> {
    /// The current time, formatted for a record.
    pub fn now() -> String {
        humantime::format_rfc3339_millis(SystemTime::now()).to_string()
    }
}

/// An append-only JSON-lines file.
#[derive(Debug, Clone)]
pub struct AuditLog {
    home: Home,
    path: PathBuf,
}

impl AuditLog {
    /// The log `audit.jsonl` in `home` (created on first write, user-only permissions).
    pub fn in_dir(home: Home) -> Self {
        Self { path: home.file(FILE_NAME), home }
    }

    /// The log in `$TEAAGENT_HOME`.
    pub fn in_home() -> io::Result<Self> {
        Ok(Self::in_dir(Home::open()?))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line.
    pub fn append(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut file = self.home.open_append(FILE_NAME)?;
        file.write_all(&line)
    }
}
