//! The audit log: one JSON line per decision, appended to `$TEAAGENT_HOME/audit.jsonl`, and
//! one more when an admitted call has run.
//!
//! # Records
//!
//! `{"time", "tool", "tier", "digest", "mode", "rule", "outcome"}` (with `principal` when the
//! transport names the caller, and `sandbox` for a tool that runs a command). A **decision**'s
//! `outcome` is `allowed`, `denied`, `refused`, `rate_limited` or `locked`, and `rule` is what
//! decided. A call that was allowed may still be refused by a later step (the rate limit, the
//! workspace lock, admission): that refusal is a second record. A call that ran gets a
//! **completion** record once its handler is done: `outcome` `completed` (a result), `failed`
//! (an error result, an error, a panic, its timeout) or `input_required` (modern era: it asked
//! the client first), `rule` the rule that allowed it, and `duration_ms`, how long the handler
//! ran (milliseconds, to the microsecond). A decision's record never has `duration_ms`.
//!
//! For calls above the `low` tier the decision's line is written before the call runs, and a
//! call whose line cannot be written is denied (no unaudited writes); `low`-tier lines are
//! written the same way but a failure only warns, as does a completion record that cannot be
//! written (the call has run either way).
//!
//! # One line, one write
//!
//! A line is one `write(2)` on a file opened with `O_APPEND`, so lines of concurrent servers
//! never interleave, and nothing is synced: a record costs an append, not a disk flush.
//!
//! The log and its lock file stay open between records (an [`AuditLog`] and its clones share
//! them; a record written while another one of the same process is being written opens its
//! own, so that neither waits for the other): a record is the shared lock, a look at what
//! `audit.jsonl` names now, the write, and the unlock. When the name no longer leads to the file
//! kept open (another server rotated the log, someone removed or replaced it), it is opened
//! again, with every check of a first open; so is the lock file, if its name no longer leads to
//! the one kept open either. The lock file's name is looked at then and before a rotation, not
//! at every record: the lock orders rotations, and whatever replaced it shows in `audit.jsonl`
//! by the next rotation at the latest. (A record costs four system calls; looking at the lock's
//! name every time made it five, and a record took a third longer.)
//!
//! # Rotation
//!
//! When a line would take `audit.jsonl` past [`Rotation::max_bytes`] (default 16 MiB), the log
//! is rotated first: `audit.jsonl.{keep}` is removed, each `audit.jsonl.N` becomes
//! `audit.jsonl.{N+1}`, and `audit.jsonl` becomes `audit.jsonl.1`; the line then starts a new
//! `audit.jsonl`. At most [`Rotation::keep`] old files are kept (default 5), and old files
//! numbered past `keep` (left by a larger setting) are removed too. Writers that look at the size
//! at the same moment each add their line, so a file may pass the limit by the lines of writers
//! that were writing at that moment; the next line after them rotates.
//!
//! Several servers may write the same log at once, so rotation goes by a lock file in the home,
//! `audit.lock` (an `flock`):
//!
//! - a writer holds it **shared** from opening `audit.jsonl` until its line is written: writers
//!   never wait for each other;
//! - a writer whose line would pass the limit closes the file, takes the lock **exclusive**
//!   (waiting until every other writer has written its line), looks at the size of
//!   `audit.jsonl` again (another writer may have rotated meanwhile: then it does nothing),
//!   renames the files, and goes back to shared to open the new `audit.jsonl`.
//!
//! So no writer ever has an old file open while the files are renamed: every line lands in the
//! file that is `audit.jsonl` when it is written, none is written into a file that is then
//! dropped, and the records of all files, oldest file first, are in the order they were written.
//! A reader ([`open_files`]) opens every file under the shared lock, so a rotation cannot move
//! records between the files it has opened. The lock orders renames; an `flock` is released by
//! the kernel when its process dies, so a crashed writer never holds it.
//!
//! A line is written whole or not at all, but a reader may see a line of a writer that is still
//! writing it (or one cut by a crash): the last line of a file without its newline is not a
//! record yet. [`Lines`] holds it back until its end is there.
//!
//! # Waiting for the lock
//!
//! Any process of the user may hold `audit.lock` (a teaagent stopped in the middle of a
//! rotation, a command a tool runs), for as long as it likes. A record never waits for it
//! without bound: the lock is asked for without blocking, and waited for at most
//! [`lock_wait`](crate::home::lock_wait) (`crate::home`'s lock files), after which the record
//! cannot be written (so a call above tier `low` is refused, as for any log that cannot be
//! written). A server writes its records from the runtime's tasks with
//! `AuditLog::append_aside`: at once when the lock is free, and on the blocking pool when it has
//! to wait, so that the server goes on answering, and stops when told, while one of its calls
//! waits for the log.
//!
//! # Links
//!
//! The file is opened relative to the home directory's handle with `O_NOFOLLOW` and must be a
//! regular file (see [`crate::home`]): an `audit.jsonl` that is a link (or a FIFO, a device) is
//! refused, so audit lines are never written anywhere but the home — and the calls that need
//! them are denied until it is fixed. The same holds for `audit.lock`.

mod files;
mod rotate;

pub use files::{Lines, LogFile, MAX_LINE, file_names, open_files};
pub use rotate::Rotation;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::home::{FileStat, Home, LockKind};
use crate::jsonrpc::response::write_json_str;
use crate::task::BoxFuture;

/// The audit log's file name in `$TEAAGENT_HOME`.
pub const FILE_NAME: &str = "audit.jsonl";

/// The lock file that orders rotations (module docs).
pub const LOCK_NAME: &str = "audit.lock";

/// Every `outcome` a record may have: decisions first, then completions (module docs).
pub const OUTCOMES: [&str; 8] =
    ["allowed", "denied", "refused", "rate_limited", "locked", "completed", "failed", "input_required"];

/// One decision, or one completion.
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
    /// What decided (for a completion, what allowed the call).
    pub rule: &'a str,
    /// One of [`OUTCOMES`].
    pub outcome: &'a str,
    /// Who asked, when the transport authenticated the client (HTTP: `token:NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<&'a str>,
    /// What the command could reach, for a tool that runs one (the server's command sandbox).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<&'a str>,
    /// How long the handler ran, for a completion (milliseconds, to the microsecond).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
}

impl AuditRecord<'_> {
    /// The current time, formatted for a record.
    pub fn now() -> String {
        humantime::format_rfc3339_millis(SystemTime::now()).to_string()
    }

    /// `duration` as a record's `duration_ms`: milliseconds, to the microsecond.
    pub fn millis(duration: Duration) -> f64 {
        duration.as_micros() as f64 / 1000.0
    }

    /// The record as one line, its newline included: the bytes `serde_json` writes for it, with
    /// its strings (most of a record) escaped by the answer writer's escaper rather than a byte
    /// at a time. Every call of `teaagent mcp serve` writes two.
    fn line(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(320);
        let field = |out: &mut Vec<u8>, key: &[u8], value: &str| {
            out.extend_from_slice(key);
            write_json_str(out, value);
        };
        field(&mut out, b"{\"time\":", &self.time);
        field(&mut out, b",\"tool\":", self.tool);
        field(&mut out, b",\"tier\":", self.tier);
        field(&mut out, b",\"digest\":", self.digest);
        field(&mut out, b",\"mode\":", self.mode);
        field(&mut out, b",\"rule\":", self.rule);
        field(&mut out, b",\"outcome\":", self.outcome);
        if let Some(principal) = self.principal {
            field(&mut out, b",\"principal\":", principal);
        }
        if let Some(sandbox) = self.sandbox {
            field(&mut out, b",\"sandbox\":", sandbox);
        }
        if let Some(ms) = self.duration_ms {
            out.extend_from_slice(b",\"duration_ms\":");
            // As `serde_json` writes an `f64` (`null` when it is not finite); into a `Vec`, it
            // cannot fail.
            let _ = serde_json::to_writer(&mut out, &ms);
        }
        out.extend_from_slice(b"}\n");
        out
    }
}

/// An append-only JSON-lines file, rotated by size.
#[derive(Debug, Clone)]
pub struct AuditLog {
    home: Home,
    path: PathBuf,
    /// `audit.lock`'s path, for messages.
    lock_path: PathBuf,
    rotation: Rotation,
    /// The lock file and the log as last opened (module docs, "One line, one write").
    open: Arc<Mutex<Option<OpenLog>>>,
}

/// Logs a record that could not be written.
fn warn_unwritten(written: io::Result<()>) {
    if let Err(e) = written {
        tracing::warn!(error = %e, "the audit log cannot be written");
    }
}

/// A record [`AuditLog::append_aside`] is writing: written already (or failed), or waiting
/// for another process's lock on the blocking pool. A future of its result; small, so that the
/// call's future that awaits it stays so (the wait is boxed).
pub(crate) enum AuditWrite {
    /// Written, or not, without waiting.
    Done(io::Result<()>),
    /// Waiting for the lock.
    Waiting(BoxFuture<'static, io::Result<()>>),
}

impl AuditWrite {
    /// Nothing to write.
    pub(crate) fn nothing() -> Self {
        Self::Done(Ok(()))
    }
}

impl Future for AuditWrite {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut *self {
            Self::Done(written) => Poll::Ready(std::mem::replace(written, Ok(()))),
            Self::Waiting(waiting) => waiting.as_mut().poll(cx),
        }
    }
}

/// Whether [`AuditLog::write_locked`] wrote its line.
enum Written {
    Yes,
    /// No: the lock file kept open no longer has the lock's name; it must be opened again.
    LockReplaced,
}

/// The two files a record is written with, kept open between records.
#[derive(Debug)]
struct OpenLog {
    lock: File,
    lock_id: FileStat,
    log: File,
    log_id: FileStat,
}

impl AuditLog {
    /// The log `audit.jsonl` in `home` (created on first write, user-only permissions), rotated
    /// with the default [`Rotation`].
    pub fn in_dir(home: Home) -> Self {
        Self {
            path: home.file(FILE_NAME),
            lock_path: home.file(LOCK_NAME),
            home,
            rotation: Rotation::default(),
            open: Arc::default(),
        }
    }

    /// The log in `$TEAAGENT_HOME`.
    pub fn in_home() -> io::Result<Self> {
        Ok(Self::in_dir(Home::open()?))
    }

    /// Rotates the log as `rotation` says (`[audit]` in the user's configuration).
    pub fn rotation(mut self, rotation: Rotation) -> Self {
        self.rotation = rotation;
        self
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line, rotating the log first when the line would take it past
    /// its size (module docs). Waits for another process's lock at most
    /// [`lock_wait`](crate::home::lock_wait) ("Waiting for the lock", module docs).
    pub fn append(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        self.append_line(&record.line(), Some(crate::home::lock_deadline()))
    }

    /// [`AuditLog::append`] for a task of the runtime: written at once when no other process
    /// holds the lock, else waited for on the blocking pool, so that no thread of the runtime
    /// ever waits for another process ("Waiting for the lock", module docs).
    pub(crate) fn append_aside(&self, record: &AuditRecord<'_>) -> AuditWrite {
        let line = record.line();
        match self.append_line(&line, None) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            written => return AuditWrite::Done(written),
        }
        let log = self.clone();
        let deadline = crate::home::lock_deadline();
        AuditWrite::Waiting(Box::pin(async move {
            tokio::task::spawn_blocking(move || log.append_line(&line, Some(deadline)))
                .await
                .map_err(io::Error::other)?
        }))
    }

    /// Appends a record no answer waits for (a refusal's, a completion's): at once when no other
    /// process holds the lock, else on the blocking pool in the background (waiting
    /// [`lock_wait`](crate::home::lock_wait) at most, as [`AuditLog::append_aside`] does), or
    /// here when there is no runtime. A record that cannot be written is logged.
    pub(crate) fn append_best_effort(&self, record: &AuditRecord<'_>) {
        let line = record.line();
        let written = match self.append_line(&line, None) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let deadline = crate::home::lock_deadline();
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return warn_unwritten(self.append_line(&line, Some(deadline)));
                };
                let log = self.clone();
                runtime.spawn_blocking(move || warn_unwritten(log.append_line(&line, Some(deadline))));
                return;
            }
            written => written,
        };
        warn_unwritten(written);
    }

    /// Writes `line`, waiting for another process's lock until `deadline` (none: not at all,
    /// [`io::ErrorKind::WouldBlock`]).
    fn append_line(&self, line: &[u8], deadline: Option<Instant>) -> io::Result<()> {
        // The files kept open are taken out while the line is written, so that a record of this
        // process never waits for another one's lock: it opens its own.
        let mut kept = self.open.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Twice at most: a lock file found replaced is opened again, once.
        for _ in 0..2 {
            let mut open = match kept.take() {
                Some(open) => open,
                None => self.open_log()?,
            };
            // Whatever fails, the next record starts from the names again (`open` is dropped).
            crate::home::lock(&open.lock, &self.lock_path, LockKind::Shared, deadline)?;
            let written = self.write_locked(&mut open, line, deadline);
            let unlocked = crate::home::unlock(&open.lock);
            match written? {
                Written::Yes => {
                    unlocked?;
                    *self.open.lock().unwrap_or_else(PoisonError::into_inner) = Some(open);
                    return Ok(());
                }
                Written::LockReplaced => {}
            }
        }
        Err(io::Error::other(format!("{LOCK_NAME} keeps being replaced")))
    }

    /// The lock file and the log, as a first record opens them.
    fn open_log(&self) -> io::Result<OpenLog> {
        let lock = self.home.lock_file(LOCK_NAME)?;
        let lock_id = FileStat::of_file(&lock)?;
        let log = self.home.open_append(FILE_NAME)?;
        let log_id = FileStat::of_file(&log)?;
        Ok(OpenLog { lock, lock_id, log, log_id })
    }

    /// Writes `line` holding the lock shared: to `audit.jsonl` as it is named now, rotated first
    /// if the line is due to start a new file. Writes nothing when the lock file kept open is no
    /// longer the one named `audit.lock` (module docs).
    fn write_locked(
        &self,
        open: &mut OpenLog,
        line: &[u8],
        deadline: Option<Instant>,
    ) -> io::Result<Written> {
        let size = match self.still_named(FILE_NAME, &open.log_id)? {
            Some(size) => size,
            None => {
                if self.still_named(LOCK_NAME, &open.lock_id)?.is_none() {
                    return Ok(Written::LockReplaced);
                }
                open.log = self.home.open_append(FILE_NAME)?;
                open.log_id = FileStat::of_file(&open.log)?;
                open.log_id.size
            }
        };
        if self.rotation.is_due(size, line.len()) {
            if self.still_named(LOCK_NAME, &open.lock_id)?.is_none() {
                return Ok(Written::LockReplaced);
            }
            // Not atomic: the shared lock is dropped, then the exclusive one taken once every
            // other writer is done; the size is looked at again under it.
            crate::home::lock(&open.lock, &self.lock_path, LockKind::Exclusive, deadline)?;
            rotate::rotate_if_due(&self.home, self.rotation, line.len())?;
            crate::home::lock(&open.lock, &self.lock_path, LockKind::Shared, deadline)?;
            open.log = self.home.open_append(FILE_NAME)?;
            open.log_id = FileStat::of_file(&open.log)?;
        }
        open.log.write_all(line)?;
        Ok(Written::Yes)
    }

    /// The size of the file `name` leads to in the home now, if it is still `kept` (the same
    /// file, with that one name); `None` if it must be opened again.
    fn still_named(&self, name: &str, kept: &FileStat) -> io::Result<Option<u64>> {
        Ok(self.home.stat(name)?.filter(|now| now.same_file(kept) && now.links == 1).map(|now| now.size))
    }
}

#[cfg(test)]
mod tests;
