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

/// The longest wait `TEAAGENT_LOCK_WAIT` may ask for (an hour).
pub const MAX_LOCK_WAIT: Duration = Duration::from_secs(3600);

/// A wait longer than this is logged (once a wait): a lock is normally held for microseconds.
const WARN_AFTER: Duration = Duration::from_millis(200);

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
/// duration such as `10s` or `500ms`, at most [`MAX_LOCK_WAIT`]) when it is set and valid, else
/// [`DEFAULT_LOCK_WAIT`]. Read once; an invalid value is logged and the default used.
pub fn lock_wait() -> Duration {
    static WAIT: OnceLock<Duration> = OnceLock::new();
    *WAIT.get_or_init(|| {
        let Some(value) = std::env::var_os(crate::env::ENV_LOCK_WAIT) else { return DEFAULT_LOCK_WAIT };
        wait_from(&value).unwrap_or_else(|why| {
            tracing::warn!(
                value = %value.to_string_lossy(),
                "{} {why}; waiting {}s for locks",
                crate::env::ENV_LOCK_WAIT,
                DEFAULT_LOCK_WAIT.as_secs()
            );
            DEFAULT_LOCK_WAIT
        })
    })
}

/// When a lock asked for now is given up: [`lock_wait`] from now.
pub fn lock_deadline() -> Instant {
    Instant::now() + lock_wait()
}

/// `TEAAGENT_LOCK_WAIT`'s value as a wait, or why it is none.
fn wait_from(value: &std::ffi::OsStr) -> Result<Duration, String> {
    let text = value.to_str().ok_or("is not UTF-8")?;
    let wait = humantime::parse_duration(text.trim())
        .map_err(|e| format!("is not a duration such as `10s` ({e})"))?;
    if wait > MAX_LOCK_WAIT {
        return Err(format!("is longer than the most a lock is waited for ({}s)", MAX_LOCK_WAIT.as_secs()));
    }
    Ok(wait)
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
                    "{} is locked by another process, which did not let go of it in time (a \
                     process stopped while holding it, or a command that keeps it?)",
                    path.display()
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

    /// `TEAAGENT_LOCK_WAIT`: a duration up to an hour; anything else is refused with why (and
    /// the default used), a value past the limit included (a deadline that far would overflow).
    #[test]
    fn a_lock_wait_is_a_duration_up_to_its_limit() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(wait_from(OsStr::new(" 10s ")), Ok(Duration::from_secs(10)));
        assert_eq!(wait_from(OsStr::new("0s")), Ok(Duration::ZERO));
        assert_eq!(wait_from(OsStr::new("1h")), Ok(MAX_LOCK_WAIT));
        for refused in ["1h 1s", "18446744073709551615s", "forever", "", "-1s", "10"] {
            assert!(wait_from(OsStr::new(refused)).is_err(), "{refused:?}");
        }
        assert!(wait_from(OsStr::from_bytes(b"5s\xff")).is_err());
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
