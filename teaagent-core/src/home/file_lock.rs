//! The `flock`s on lock files in the home (`audit.lock`, `workspace_registry.lock`,
//! `file_digests.lock`, the CLI's `trust.lock`): taken without waiting when they can be, else
//! waited for **at most** [`lock_wait`] (5 s unless `TEAAGENT_LOCK_WAIT` says otherwise).
//!
//! Any process of the user can hold such a lock, for as long as it likes: a teaagent stopped
//! with `^Z` in the middle of a rotation, or a command a tool runs (`flock` needs only a file
//! opened for reading, which a sandbox that lets commands read the disk allows). A blocking
//! `flock(2)` would wait for it without end, and nothing can interrupt a thread waiting in the
//! kernel: the call behind it would never be answered, and a thread of the runtime waiting there
//! would freeze the whole server, its stop included. So a lock is asked for with `LOCK_NB`, and
//! while another process holds it, asked again after a pause that grows from 1 to 50 ms, until
//! the deadline; then the caller gets an error ([`io::ErrorKind::TimedOut`]) that names the file.
//! A wait that lasts longer than [`WARN_AFTER`] is logged, once.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;
use rustix::io::Errno;

/// How long a lock held by another process is waited for, unless `TEAAGENT_LOCK_WAIT` says.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(5);

/// A wait longer than this is logged (once a wait): a lock is normally held for microseconds.
pub const WARN_AFTER: Duration = Duration::from_millis(200);

/// The longest pause between two attempts.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// Shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// Several holders at once.
    Shared,
    /// One holder, and no shared one.
    Exclusive,
}

/// How long a lock file held by another process is waited for: `TEAAGENT_LOCK_WAIT` (a
/// duration such as `10s` or `500ms`) when it is set and valid, else [`DEFAULT_LOCK_WAIT`].
/// Read once; an invalid value is logged and the default used.
pub fn lock_wait() -> Duration {
    static WAIT: OnceLock<Duration> = OnceLock::new();
    *WAIT.get_or_init(|| {
        let Some(value) = std::env::var_os(crate::env::ENV_LOCK_WAIT) else { return DEFAULT_LOCK_WAIT };
        match value.to_str().map(|v| humantime::parse_duration(v.trim())) {
            Some(Ok(wait)) => wait,
            _ => {
                tracing::warn!(
                    value = %value.to_string_lossy(),
                    "{} is not a duration (such as `10s`); waiting {}s for locks",
                    crate::env::ENV_LOCK_WAIT,
                    DEFAULT_LOCK_WAIT.as_secs()
                );
                DEFAULT_LOCK_WAIT
            }
        }
    })
}

/// Takes a `kind` lock on `file` (the lock file at `path`, for messages). With no `deadline`,
/// does not wait: another process's lock is [`io::ErrorKind::WouldBlock`]. With one, waits
/// until then at most (module docs): past it, [`io::ErrorKind::TimedOut`].
pub fn lock(file: &File, path: &Path, kind: LockKind, deadline: Option<Instant>) -> io::Result<()> {
    let operation = match kind {
        LockKind::Shared => FlockOperation::NonBlockingLockShared,
        LockKind::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    // The clock is read only once the lock turns out to be taken (most locks are free).
    let mut started = None;
    let mut pause = Duration::from_millis(1);
    let mut warned = false;
    loop {
        match rustix::fs::flock(file, operation) {
            Ok(()) => return Ok(()),
            Err(Errno::WOULDBLOCK) => {}
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let Some(deadline) = deadline else {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, format!("{} is locked", path.display())));
        };
        let now = Instant::now();
        let started = *started.get_or_insert(now);
        if now >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} has been locked by another process for {:.1}s (a process stopped while \
                     holding it, or a command that keeps it?)",
                    path.display(),
                    now.duration_since(started).as_secs_f64()
                ),
            ));
        }
        if !warned && now.duration_since(started) >= WARN_AFTER {
            warned = true;
            let left = deadline.duration_since(now).as_secs_f64();
            tracing::warn!(lock = %path.display(), "locked by another process; waiting up to {left:.1}s more");
        }
        std::thread::sleep(pause.min(deadline.duration_since(now)));
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Lets go of `file`'s lock.
pub fn unlock(file: &File) -> io::Result<()> {
    Ok(rustix::fs::flock(file, FlockOperation::Unlock)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second open of `path`: its own open file description, so its lock competes with the
    /// first's as another process's would.
    fn open(path: &Path) -> File {
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).expect("open")
    }

    #[test]
    fn shared_locks_coexist_and_an_exclusive_one_excludes() {
        let dir = crate::scratch::Scratch::new("file-lock-kinds");
        let path = dir.path().join("x.lock");
        let (a, b) = (open(&path), open(&path));
        lock(&a, &path, LockKind::Shared, None).expect("first shared");
        lock(&b, &path, LockKind::Shared, None).expect("second shared");
        unlock(&b).expect("unlock");
        let busy = lock(&b, &path, LockKind::Exclusive, None).expect_err("a shared lock is held");
        assert_eq!(busy.kind(), io::ErrorKind::WouldBlock, "{busy}");
        unlock(&a).expect("unlock");
        lock(&b, &path, LockKind::Exclusive, None).expect("free now");
    }

    #[test]
    fn a_wait_ends_at_its_deadline_with_an_error_naming_the_file() {
        let dir = crate::scratch::Scratch::new("file-lock-deadline");
        let path = dir.path().join("held.lock");
        let (holder, waiter) = (open(&path), open(&path));
        lock(&holder, &path, LockKind::Exclusive, None).expect("held");
        let started = Instant::now();
        let deadline = started + Duration::from_millis(300);
        let late = lock(&waiter, &path, LockKind::Shared, Some(deadline)).expect_err("never free");
        assert_eq!(late.kind(), io::ErrorKind::TimedOut, "{late}");
        assert!(late.to_string().contains("held.lock"), "{late}");
        assert!(started.elapsed() >= Duration::from_millis(300), "{:?}", started.elapsed());
    }

    #[test]
    fn a_wait_ends_when_the_holder_lets_go() {
        let dir = crate::scratch::Scratch::new("file-lock-let-go");
        let path = dir.path().join("soon.lock");
        let (holder, waiter) = (open(&path), open(&path));
        lock(&holder, &path, LockKind::Exclusive, None).expect("held");
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(holder);
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        lock(&waiter, &path, LockKind::Exclusive, Some(deadline)).expect("taken once let go");
        letting_go.join().expect("thread");
    }
}
