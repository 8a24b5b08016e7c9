//! The global lock registry: one writer server per workspace.
//!
//! `$TEAAGENT_HOME/workspace_registry.json` holds one record per locked workspace:
//! `{workspace_path, owner_pid, acquired_at}` plus `owner_start` (the process's start time, in
//! clock ticks since boot), `boot_id`, and the root directory's identity `root_dev`/`root_ino`.
//! Every read and every read-modify-write happens under an exclusive `flock` on
//! `workspace_registry.lock`, so concurrent servers never lose each other's records nor read a
//! torn file (held by another process, it is waited for a bounded time: `crate::home`'s lock
//! files). The file is rewritten in place while it fits in its first page (padded with spaces),
//! and replaced atomically (temporary file, `rename`) when it grows past it: a rename costs the
//! start of every server a block allocation and write-back on ext4 (`Home::rewrite_padded` says
//! why and when an overwrite is safe). Nothing is `fsync`ed: the registry says which live
//! processes hold which roots, and after a crash of the machine none of them is alive (each record
//! carries its boot); a file the crash left empty or torn is set aside and rebuilt, like any
//! unusable one. A server takes its lock before it answers anything, so that write is on every
//! start's path. All of
//! it goes through [`Home`]: no link in the home is ever followed. A file that does not parse (or
//! is not a regular file, or is larger than [`MAX_REGISTRY_BYTES`]) is reported, kept aside as
//! `workspace_registry.json.corrupt`, and rebuilt — never trusted; a single record that does not
//! parse is dropped alone, the others are kept. Any acquisition prunes every record whose owner
//! is dead.
//!
//! A lock conflicts with locks on the same workspace and on every directory above or below it:
//! servers on `W` and `W/sub` would write the same files.
//!
//! # Which workspace
//!
//! A workspace is a directory, not a name: records are matched by the root's identity (device
//! and inode, taken from the path when the lock is made, right after the server opened its root
//! at start — a swap of the root within that instant is not caught), so a root renamed (`mv W W2`) or spelled differently (through a link, a
//! bind mount) is still the same workspace. The identity cannot be reused while the record is
//! live: its owner holds the directory open, which keeps the inode. A record without an
//! identity (written by an older teaagent) is matched by its path.
//!
//! # Which owner is alive
//!
//! A record pins its workspace only while its owner is provably the live process that wrote it:
//! the pid exists and is not a zombie (state `Z` or `X` in `/proc/PID/stat`: it has exited and
//! only waits to be reaped, its files are closed), it runs in the same boot (`boot_id`), and it
//! started when the record says (`owner_start`). A record that lacks the start time or the boot
//! id cannot be verified and does not pin anything (a forged record naming pid 1, or a reused
//! pid, is pruned like a dead one). Where the boot id cannot be read, the boot is not compared
//! (every server records none); where `/proc` is missing altogether, nothing can be verified and
//! only the pid's existence counts. A live process whose start time and boot id were copied into
//! a forged record does pin the root while it lives: telling it from a server would need its
//! open files, which a non-dumpable server keeps to itself.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::home::{Home, OwnFileError};

/// The registry's file name in `$TEAAGENT_HOME`.
pub const FILE_NAME: &str = "workspace_registry.json";
const LOCK_NAME: &str = "workspace_registry.lock";
/// The largest registry teaagent reads (8 MiB: tens of thousands of records); a larger one is
/// treated as corrupt.
pub const MAX_REGISTRY_BYTES: u64 = 8 * 1024 * 1024;

/// One locked workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    /// The canonical workspace root, as spelled when it was locked.
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
    /// The root directory's device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_dev: Option<u64>,
    /// The root directory's inode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_ino: Option<u64>,
}

/// A directory's identity: device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirIdentity {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
}

impl DirIdentity {
    /// The identity of the directory `path` names now (links followed).
    pub fn of(path: &Path) -> io::Result<Self> {
        let stat = rustix::fs::stat(path)?;
        Ok(Self { dev: stat.st_dev, ino: stat.st_ino })
    }

    /// The identity of an open directory.
    pub fn of_fd(fd: impl std::os::fd::AsFd) -> io::Result<Self> {
        let stat = rustix::fs::fstat(fd)?;
        Ok(Self { dev: stat.st_dev, ino: stat.st_ino })
    }
}

/// A workspace as the lock sees it: its path and, when known, its directory's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedRoot {
    /// The canonical root.
    pub path: PathBuf,
    /// The root directory's identity (authoritative when both sides have one).
    pub identity: Option<DirIdentity>,
}

impl LockedRoot {
    /// `path` with the identity of the directory it names now.
    pub fn of(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let identity = DirIdentity::of(&path).ok();
        Self { path, identity }
    }

    /// Whether `record` is a lock of this workspace.
    fn is(&self, record: &LockRecord) -> bool {
        match (self.identity, record.root_dev.zip(record.root_ino)) {
            (Some(me), Some((dev, ino))) => me.dev == dev && me.ino == ino,
            _ => record.workspace_path == self.path,
        }
    }

    /// Whether `record` locks this workspace, a directory inside it or one it lies in: two
    /// servers on `W` and `W/sub` would write the same files, so their locks conflict.
    fn overlaps(&self, record: &LockRecord) -> bool {
        self.is(record)
            || self.path.starts_with(&record.workspace_path)
            || record.workspace_path.starts_with(&self.path)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    version: u32,
    locks: Vec<LockRecord>,
}

/// The registry as read: each record on its own, so that one that does not parse is dropped
/// alone and never takes the live ones with it.
#[derive(Debug, Default, Deserialize)]
struct RegistryRead {
    #[serde(default)]
    locks: Vec<serde_json::Value>,
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
    home: Home,
}

impl LockRegistry {
    /// The registry in `$TEAAGENT_HOME` (created with user-only permissions).
    pub fn open_home() -> io::Result<Self> {
        Ok(Self { home: Home::open()? })
    }

    /// The registry in `dir` (which must exist, with the checks of [`Home::at`]).
    pub fn in_dir(dir: impl Into<PathBuf>) -> io::Result<Self> {
        Ok(Self { home: Home::at(dir)? })
    }

    /// The registry file.
    pub fn path(&self) -> PathBuf {
        self.home.file(FILE_NAME)
    }

    /// Acquires the lock of `workspace` for this process, pruning every dead owner's record.
    /// The registry's file lock, held by another process, is waited for
    /// [`lock_wait`](crate::home::lock_wait) at most.
    pub fn acquire(&self, workspace: &LockedRoot) -> io::Result<Acquired> {
        self.acquire_until(workspace, crate::home::lock_deadline())
    }

    /// [`LockRegistry::acquire`], waiting for the registry's file lock until `deadline` at most.
    fn acquire_until(&self, workspace: &LockedRoot, deadline: Instant) -> io::Result<Acquired> {
        let me = std::process::id();
        self.update(deadline, |locks| {
            if let Some(owner) = locks.iter().find(|r| workspace.overlaps(r) && r.owner_pid != me) {
                return Acquired::HeldBy(owner.clone());
            }
            if !locks.iter().any(|r| workspace.is(r) && r.owner_pid == me) {
                locks.push(LockRecord {
                    workspace_path: workspace.path.clone(),
                    owner_pid: me,
                    acquired_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
                    owner_start: process_stat(me).map(|s| s.start),
                    boot_id: boot_id(),
                    root_dev: workspace.identity.map(|i| i.dev),
                    root_ino: workspace.identity.map(|i| i.ino),
                });
            }
            Acquired::Held
        })
    }

    /// Releases this process's lock of `workspace` (no error if it held none).
    pub fn release(&self, workspace: &LockedRoot) -> io::Result<()> {
        let me = std::process::id();
        let deadline = crate::home::lock_deadline();
        self.update(deadline, |locks| locks.retain(|r| !(workspace.is(r) && r.owner_pid == me)))
    }

    /// Every record, as the file says now (dead owners included).
    pub fn records(&self) -> io::Result<Vec<LockRecord>> {
        self.home.locked(LOCK_NAME, || Ok(self.read().0))
    }

    /// The records that would keep a server from locking `workspace` (the same workspace, one
    /// above or below it), each with whether its owner is alive: a dead owner's record is
    /// pruned at the next acquisition, a live one refuses it. Nothing is changed.
    pub fn holders(&self, workspace: &LockedRoot) -> io::Result<Vec<(LockRecord, bool)>> {
        let records = self.records()?;
        Ok(records.into_iter().filter(|r| workspace.overlaps(r)).map(|r| (r.clone(), is_alive(&r))).collect())
    }

    /// Read, prune the dead, change, write back — all under the file lock.
    fn update<T>(&self, deadline: Instant, change: impl FnOnce(&mut Vec<LockRecord>) -> T) -> io::Result<T> {
        self.home.locked_until(LOCK_NAME, deadline, || {
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

    /// The records, and whether the file was unusable (then it is set aside and rebuilt).
    fn read(&self) -> (Vec<LockRecord>, bool) {
        let path = self.path();
        let bytes = match self.home.read(FILE_NAME, MAX_REGISTRY_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return (Vec::new(), false),
            Err(OwnFileError::Io { source, .. }) => {
                tracing::warn!(path = %path.display(), error = %source, "cannot read the lock registry; rebuilding it");
                return (Vec::new(), true);
            }
            Err(e) => return (Vec::new(), self.set_aside(&e.to_string())),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return (Vec::new(), false);
        }
        let file = match serde_json::from_slice::<RegistryRead>(&bytes) {
            Ok(file) => file,
            Err(e) => return (Vec::new(), self.set_aside(&format!("it is not a valid registry: {e}"))),
        };
        let mut dropped = false;
        let locks = file
            .locks
            .into_iter()
            .filter_map(|record| match serde_json::from_value::<LockRecord>(record) {
                Ok(record) => Some(record),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "dropped a lock record that is not valid; the others are kept");
                    dropped = true;
                    None
                }
            })
            .collect();
        // Written back without the bad record.
        (locks, dropped)
    }

    /// Moves an unusable registry aside (a link is moved, not followed); always `true`.
    fn set_aside(&self, why: &str) -> bool {
        let aside = format!("{FILE_NAME}.corrupt");
        let _ = self.home.rename(FILE_NAME, &aside);
        tracing::warn!(
            path = %self.path().display(),
            kept_as = %self.home.file(&aside).display(),
            "the lock registry is unusable ({why}); it was set aside and is rebuilt from the live servers"
        );
        true
    }

    fn write(&self, locks: &[LockRecord]) -> io::Result<()> {
        let mut body = serde_json::to_vec_pretty(&RegistryFile { version: 1, locks: locks.to_vec() })?;
        body.push(b'\n');
        self.home.rewrite_padded(FILE_NAME, &body)
    }
}

/// Whether a record's owner is provably the live process that wrote it (see the module docs).
fn is_alive(record: &LockRecord) -> bool {
    let Ok(raw) = i32::try_from(record.owner_pid) else { return false };
    let Some(pid) = rustix::process::Pid::from_raw(raw) else { return false };
    match rustix::process::test_kill_process(pid) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    let Some(stat) = process_stat(record.owner_pid) else {
        // No /proc at all: nothing can be verified beyond the pid's existence. (With /proc, a
        // pid whose stat cannot be read is gone.)
        return !Path::new("/proc/self/stat").exists();
    };
    if matches!(stat.state, 'Z' | 'X' | 'x') {
        return false;
    }
    // Where the boot id is hidden (some sandboxes), every server records none, and they agree.
    if let Some(current) = boot_id()
        && record.boot_id.as_deref() != Some(current.as_str())
    {
        return false;
    }
    record.owner_start == Some(stat.start)
}

/// What `/proc/PID/stat` says about a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcStat {
    /// Its state (`R`, `S`, `Z`, ...).
    state: char,
    /// Its start time in clock ticks since boot (field 22).
    start: u64,
}

fn process_stat(pid: u32) -> Option<ProcStat> {
    let bytes = crate::home::read_path(Path::new(&format!("/proc/{pid}/stat")), 4096).ok()??;
    let stat = String::from_utf8_lossy(&bytes);
    // The command name may contain spaces and parentheses: count fields after the last `)`.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let start = rest.nth(18)?.parse().ok()?;
    Some(ProcStat { state, start })
}

fn boot_id() -> Option<String> {
    let bytes = crate::home::read_path(Path::new("/proc/sys/kernel/random/boot_id"), 256).ok()??;
    Some(String::from_utf8_lossy(&bytes).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    fn root(path: &str) -> LockedRoot {
        LockedRoot { path: path.into(), identity: None }
    }

    fn me() -> LockRecord {
        LockRecord {
            workspace_path: "/a".into(),
            owner_pid: std::process::id(),
            acquired_at: "2026-01-01T00:00:00Z".into(),
            owner_start: process_stat(std::process::id()).map(|s| s.start),
            boot_id: boot_id(),
            root_dev: None,
            root_ino: None,
        }
    }

    #[test]
    fn acquire_is_reentrant_and_release_removes_the_record() {
        let scratch = Scratch::new("lock-reentrant");
        let dir = scratch.path().to_path_buf();
        let registry = LockRegistry::in_dir(&dir).expect("registry");
        let ws = root("/some/workspace");
        assert_eq!(registry.acquire(&ws).expect("acquire"), Acquired::Held);
        assert_eq!(registry.acquire(&ws).expect("again"), Acquired::Held);
        assert_eq!(registry.records().expect("records").len(), 1);
        registry.release(&ws).expect("release");
        assert!(registry.records().expect("records").is_empty());
    }

    #[test]
    fn dead_reused_and_unverifiable_pids_are_pruned() {
        let scratch = Scratch::new("lock-dead");
        let dir = scratch.path().to_path_buf();
        let registry = LockRegistry::in_dir(&dir).expect("registry");
        assert!(is_alive(&me()), "this process is alive");
        let dead = LockRecord { workspace_path: "/a".into(), owner_pid: 4_000_000, ..me() }; // above pid_max
        let reused = LockRecord { workspace_path: "/b".into(), owner_start: Some(1), ..me() };
        let no_start = LockRecord { workspace_path: "/c".into(), owner_start: None, ..me() };
        let no_boot = LockRecord { workspace_path: "/d".into(), boot_id: None, ..me() };
        let other_boot = LockRecord { workspace_path: "/e".into(), boot_id: Some("x".into()), ..me() };
        for r in [&dead, &reused, &no_start, &no_boot, &other_boot] {
            assert!(!is_alive(r), "{r:?}");
        }
        registry.write(&[dead, reused, no_start, no_boot, other_boot]).expect("write");
        assert_eq!(registry.acquire(&root("/b")).expect("acquire"), Acquired::Held);
        let records = registry.records().expect("records");
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].owner_start, process_stat(std::process::id()).map(|s| s.start));
    }

    #[test]
    fn records_match_by_identity_before_path() {
        let id = Some(DirIdentity { dev: 1, ino: 2 });
        let record = LockRecord { root_dev: Some(1), root_ino: Some(2), ..me() };
        assert!(LockedRoot { path: "/renamed".into(), identity: id }.is(&record));
        assert!(
            !LockedRoot { path: "/a".into(), identity: Some(DirIdentity { dev: 1, ino: 3 }) }.is(&record)
        );
        let old = me(); // no identity recorded: by path
        assert!(LockedRoot { path: "/a".into(), identity: id }.is(&old));
        assert!(!LockedRoot { path: "/b".into(), identity: id }.is(&old));
    }

    #[test]
    fn a_corrupt_file_is_set_aside_and_rebuilt() {
        let scratch = Scratch::new("lock-corrupt");
        let dir = scratch.path().to_path_buf();
        std::fs::write(dir.join(FILE_NAME), b"{ this is not json").expect("write");
        let registry = LockRegistry::in_dir(&dir).expect("registry");
        assert_eq!(registry.acquire(&root("/w")).expect("acquire"), Acquired::Held);
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
    root: LockedRoot,
    /// Whether this server holds it: read without waiting ([`WorkspaceLock::is_held`], asked on
    /// the runtime's thread while another call may be asking the registry).
    held: AtomicBool,
    /// Held while the registry is asked or told: one acquisition or release at a time.
    changing: Mutex<()>,
}

/// Why a call may not write the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockRefusal {
    /// Another live server holds it (boxed: the record is large next to the `Ok` side).
    HeldBy(Box<LockRecord>),
    /// The registry could not be used.
    Unavailable(String),
}

impl WorkspaceLock {
    /// A lock of `root` (canonical) in `registry`, not yet acquired. The root's identity is
    /// taken now: make the lock right after opening the workspace, so that it names the
    /// directory the server serves even if the path is renamed later.
    pub fn new(registry: LockRegistry, root: impl Into<PathBuf>) -> Self {
        Self { registry, root: LockedRoot::of(root), held: AtomicBool::new(false), changing: Mutex::new(()) }
    }

    /// A lock of `workspace`, whose identity is taken from the directory it holds open (not
    /// from its name, which may already lead elsewhere).
    pub fn of_workspace(registry: LockRegistry, workspace: &super::Workspace) -> Self {
        let identity = DirIdentity::of_fd(workspace.dir_handle().as_ref()).ok();
        let root = LockedRoot { path: workspace.root().to_path_buf(), identity };
        Self { registry, root, held: AtomicBool::new(false), changing: Mutex::new(()) }
    }

    /// The workspace this lock is for.
    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// The registry it lives in.
    pub fn registry(&self) -> &LockRegistry {
        &self.registry
    }

    /// Tries to acquire the lock (blocking file I/O; cheap once held). The registry's file lock,
    /// held by another process, is waited for [`lock_wait`](crate::home::lock_wait) at most,
    /// counted from this call (a wait behind another call of this server's included).
    pub fn ensure(&self) -> Result<(), LockRefusal> {
        if self.is_held() {
            return Ok(());
        }
        // From now: a call that first waits for another one asking the registry waits no longer.
        let deadline = crate::home::lock_deadline();
        let _changing = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        if self.is_held() {
            return Ok(());
        }
        match self.registry.acquire_until(&self.root, deadline) {
            Ok(Acquired::Held) => {
                self.held.store(true, Ordering::Release);
                tracing::info!(root = %self.root.path.display(), registry = %self.registry.path().display(), "workspace lock acquired");
                Ok(())
            }
            Ok(Acquired::HeldBy(owner)) => Err(LockRefusal::HeldBy(Box::new(owner))),
            Err(e) => {
                let what_to_do = match e.kind() {
                    io::ErrorKind::TimedOut => "try again once that process has let go of it",
                    _ => "set TEAAGENT_HOME to a writable directory",
                };
                Err(LockRefusal::Unavailable(format!(
                    "the lock registry {} cannot be used: {e}; {what_to_do}",
                    self.registry.path().display()
                )))
            }
        }
    }

    /// Whether this server holds the lock.
    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    /// Releases the lock if held.
    pub fn release(&self) {
        let _changing = self.changing.lock().unwrap_or_else(|p| p.into_inner());
        if self.held.swap(false, Ordering::AcqRel) {
            match self.registry.release(&self.root) {
                Ok(()) => tracing::info!(root = %self.root.path.display(), "workspace lock released"),
                Err(e) => tracing::warn!(error = %e, "could not release the workspace lock"),
            }
        }
    }
}
