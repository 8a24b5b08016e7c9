//! The global lock registry: one writer server per workspace (SPEC §8).
//!
//! `$TEAAGENT_HOME/workspace_registry.json` holds one record per locked workspace:
//! `{workspace_path, owner_pid, acquired_at}` plus `owner_start` (the process's start time, in
//! clock ticks since boot) and `boot_id`, which tell a live owner from a dead one whose pid was
//! reused. Every read-modify-write happens under an exclusive `flock` on
//! `workspace_registry.lock` and replaces the file atomically (temporary file, `fsync`,
//! `rename`, `fsync` of the directory), so concurrent servers never lose each other's records and
//! a crash never leaves a torn file. A file that does not parse is reported, kept aside as
//! `workspace_registry.json.corrupt`, and rebuilt — never trusted. Any acquisition prunes every
//! record whose owner is dead.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// The registry's file name in `$TEAAGENT_HOME`.
pub const FILE_NAME: &str = "workspace_registry.json";
const LOCK_NAME: &str = "workspace_registry.lock";

/// One locked workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    /// The canonical workspace root.
    pub workspace_path: PathBuf,
    /// The owning server's pid.
    pub owner_pid: u32,
    /// When it was acquired (RFC 3339, UTC).
    pub acquired_at: String,
    /// The owner's start time (clock ticks since boot), to detect pid reuse.
    #[serde(default)]
    pub owner_start: Option<u64>,
    /// The boot the owner started in.
    #[serde(default)]
    pub boot_id: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    version: u32,
    locks: Vec<LockRecord>,
}

/// The outcome of an acquisition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// This process holds the lock now.
    Held,
    /// Another live server holds it.
    HeldBy(LockRecord),
}

/// The lock registry in a directory (normally `$TEAAGENT_HOME`).
#[derive(Debug, Clone)]
pub struct LockRegistry {
    dir: PathBuf,
}

impl LockRegistry {
    /// The registry in `$TEAAGENT_HOME` (created with user-only permissions).
    pub fn open_home() -> io::Result<Self> {
        Ok(Self { dir: crate::home::ensure()? })
    }

    /// The registry in `dir` (which must exist).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The registry file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// Acquires the lock of `workspace` for this process, pruning every dead owner's record.
    pub fn acquire(&self, workspace: &Path) -> io::Result<Acquired> {
        let me = std::process::id();
        self.update(|locks| {
            if let Some(owner) = locks.iter().find(|r| r.workspace_path == workspace && r.owner_pid != me) {
                return Acquired::HeldBy(owner.clone());
            }
            if !locks.iter().any(|r| r.workspace_path == workspace && r.owner_pid == me) {
                locks.push(LockRecord {
                    workspace_path: workspace.to_path_buf(),
                    owner_pid: me,
                    acquired_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
                    owner_start: process_start(me),
                    boot_id: boot_id(),
                });
            }
            Acquired::Held
        })
    }

    /// Releases this process's lock of `workspace` (no error if it held none).
    pub fn release(&self, workspace: &Path) -> io::Result<()> {
        let me = std::process::id();
        self.update(|locks| locks.retain(|r| !(r.workspace_path == workspace && r.owner_pid == me)))
    }

    /// Every record, as the file says now (dead owners included).
    pub fn records(&self) -> io::Result<Vec<LockRecord>> {
        crate::home::locked(&self.dir.join(LOCK_NAME), || Ok(self.read().0))
    }

    /// Read, prune the dead, change, write back — all under the file lock.
    fn update<T>(&self, change: impl FnOnce(&mut Vec<LockRecord>) -> T) -> io::Result<T> {
        crate::home::locked(&self.dir.join(LOCK_NAME), || {
            let (mut locks, corrupt) = self.read();
            let before = locks.clone();
            locks.retain(is_alive);
            let out = change(&mut locks);
            if corrupt || locks != before {
                self.write(&locks)?;
            }
            Ok(out)
        })
    }

    /// The records, and whether the file was corrupt (then it is set aside and rebuilt).
    fn read(&self) -> (Vec<LockRecord>, bool) {
        let path = self.path();
        let mut text = String::new();
        match File::open(&path).and_then(|mut f| f.read_to_string(&mut text)) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return (Vec::new(), false),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read the lock registry; rebuilding it");
                return (Vec::new(), true);
            }
        }
        if text.trim().is_empty() {
            return (Vec::new(), false);
        }
        match serde_json::from_str::<RegistryFile>(&text) {
            Ok(file) => (file.locks, false),
            Err(e) => {
                let aside = self.dir.join(format!("{FILE_NAME}.corrupt"));
                let _ = std::fs::rename(&path, &aside);
                tracing::warn!(
                    path = %path.display(),
                    error = %e,
                    kept_as = %aside.display(),
                    "the lock registry is corrupt; it was set aside and is rebuilt from the live servers"
                );
                (Vec::new(), true)
            }
        }
    }

    fn write(&self, locks: &[LockRecord]) -> io::Result<()> {
        let mut body = serde_json::to_vec_pretty(&RegistryFile { version: 1, locks: locks.to_vec() })?;
        body.push(b'\n');
        crate::home::write_atomic(&self.path(), &body)
    }
}

/// Whether a record's owner is the live process that wrote it (not a reused pid).
fn is_alive(record: &LockRecord) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(record.owner_pid as i32) else { return false };
    match rustix::process::test_kill_process(pid) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    if let (Some(recorded), Some(current)) = (&record.boot_id, boot_id())
        && *recorded != current
    {
        return false;
    }
    match (record.owner_start, process_start(record.owner_pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    }
}

/// A process's start time in clock ticks since boot (`/proc/PID/stat`, field 22).
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: count fields after the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("teaagent-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn acquire_is_reentrant_and_release_removes_the_record() {
        let dir = temp_dir("reentrant");
        let registry = LockRegistry::in_dir(&dir);
        let ws = Path::new("/some/workspace");
        assert_eq!(registry.acquire(ws).expect("acquire"), Acquired::Held);
        assert_eq!(registry.acquire(ws).expect("again"), Acquired::Held);
        assert_eq!(registry.records().expect("records").len(), 1);
        registry.release(ws).expect("release");
        assert!(registry.records().expect("records").is_empty());
    }

    #[test]
    fn dead_and_reused_pids_are_pruned() {
        let dir = temp_dir("dead");
        let registry = LockRegistry::in_dir(&dir);
        let dead = LockRecord {
            workspace_path: "/a".into(),
            owner_pid: 4_000_000, // above pid_max: never alive
            acquired_at: "2026-01-01T00:00:00Z".into(),
            owner_start: None,
            boot_id: None,
        };
        let reused = LockRecord {
            workspace_path: "/b".into(),
            owner_pid: std::process::id(),
            owner_start: Some(1),
            ..dead.clone()
        };
        registry.write(&[dead, reused]).expect("write");
        assert_eq!(registry.acquire(Path::new("/b")).expect("acquire"), Acquired::Held);
        let records = registry.records().expect("records");
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].owner_start, process_start(std::process::id()));
    }

    #[test]
    fn a_corrupt_file_is_set_aside_and_rebuilt() {
        let dir = temp_dir("corrupt");
        std::fs::write(dir.join(FILE_NAME), b"{ this is not json").expect("write");
        let registry = LockRegistry::in_dir(&dir);
        assert_eq!(registry.acquire(Path::new("/w")).expect("acquire"), Acquired::Held);
        assert!(dir.join(format!("{FILE_NAME}.corrupt")).exists());
        let text = std::fs::read_to_string(dir.join(FILE_NAME)).expect("rebuilt");
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
    }
}

/// A server's hold on its workspace's lock: acquired at start, checked before every call of a
/// tool that is not read-only (and re-tried while another server holds it), released at a clean
/// shutdown.
#[derive(Debug)]
pub struct WorkspaceLock {
    registry: LockRegistry,
    root: PathBuf,
    held: std::sync::Mutex<bool>,
}

/// Why a call may not write the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockRefusal {
    /// Another live server holds it.
    HeldBy(LockRecord),
    /// The registry could not be used.
    Unavailable(String),
}

impl WorkspaceLock {
    /// A lock of `root` (canonical) in `registry`, not yet acquired.
    pub fn new(registry: LockRegistry, root: impl Into<PathBuf>) -> Self {
        Self { registry, root: root.into(), held: std::sync::Mutex::new(false) }
    }

    /// The workspace this lock is for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The registry it lives in.
    pub fn registry(&self) -> &LockRegistry {
        &self.registry
    }

    /// Tries to acquire the lock (blocking file I/O; cheap once held).
    pub fn ensure(&self) -> Result<(), LockRefusal> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if *held {
            return Ok(());
        }
        match self.registry.acquire(&self.root) {
            Ok(Acquired::Held) => {
                *held = true;
                tracing::info!(root = %self.root.display(), registry = %self.registry.path().display(), "workspace lock acquired");
                Ok(())
            }
            Ok(Acquired::HeldBy(owner)) => Err(LockRefusal::HeldBy(owner)),
            Err(e) => Err(LockRefusal::Unavailable(format!(
                "the lock registry {} cannot be used: {e}; set TEAAGENT_HOME to a writable directory",
                self.registry.path().display()
            ))),
        }
    }

    /// Whether this server holds the lock.
    pub fn is_held(&self) -> bool {
        *self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Releases the lock if held.
    pub fn release(&self) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if std::mem::take(&mut *held) {
            match self.registry.release(&self.root) {
                Ok(()) => tracing::info!(root = %self.root.display(), "workspace lock released"),
                Err(e) => tracing::warn!(error = %e, "could not release the workspace lock"),
            }
        }
    }
}
