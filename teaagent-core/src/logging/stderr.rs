//! Every line teaagent writes on stderr, written without ever blocking the thread that writes it.
//!
//! An MCP client starts the server with its stderr on a pipe, and may read that pipe slowly or
//! not at all. A pipe holds 64 KiB; once it is full, a plain write waits until the client reads,
//! and so does the thread that logged: a tool call, the gateway's thread, the serving loop. So:
//!
//! - while nothing waits, a line is written at once without waiting (`pwritev2` with
//!   `RWF_NOWAIT`), so with a reader it appears in order and at once, as before;
//! - what the pipe has no room for waits here, up to [`MAX_WAITING`] bytes, and a thread of its
//!   own writes it as the pipe drains; lines that come meanwhile queue behind it, in order;
//! - past that, whole lines are dropped and counted, and once the queue has drained a line says
//!   how many (`⟪N lines dropped: stderr was not read⟫`, a JSON event when the logs are JSON);
//! - where stderr cannot be written without waiting (a terminal, a file: `RWF_NOWAIT` is refused
//!   there) lines are written as they come, as before: those do not stay full.
//!
//! [`flush`] waits, up to a limit, for what is queued: a program calls it before it exits, so
//! the last lines (the error it stops on) are not lost.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::io::{Errno, ReadWriteFlags};

/// The most bytes that wait for a full stderr; past it, lines are dropped and counted.
pub const MAX_WAITING: usize = 256 * 1024;

/// How long a program about to exit waits for lines queued for stderr ([`flush`]).
pub const AT_EXIT: Duration = Duration::from_millis(500);

/// The process's stderr.
static STDERR: LazyLock<Arc<Lines>> = LazyLock::new(|| Arc::new(Lines::new(None)));

/// Writes `line` (with its `\n`) on stderr, now or as soon as it drains (module docs).
pub fn write(line: &[u8]) {
    Lines::write(&STDERR, line);
}

/// Waits until every line queued for stderr is written, or `limit` has passed. Returns whether
/// everything was written.
pub fn flush(limit: Duration) -> bool {
    STDERR.flush(limit)
}

/// A writer for `tracing_subscriber`'s `fmt` layer: each event is one [`write()`].
#[derive(Debug, Clone, Copy, Default)]
pub struct StderrWriter;

impl std::io::Write for StderrWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Lines on their way to one file descriptor (module docs).
pub(crate) struct Lines {
    /// `None`: the process's stderr.
    fd: Option<OwnedFd>,
    state: Mutex<State>,
    /// Signalled when lines are queued, and when the queue has drained.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The writing thread holds a line it took from the queue.
    writing: bool,
    dropped: u64,
    /// `RWF_NOWAIT` is refused here: lines are written as they come.
    plain: bool,
    started: bool,
    /// The writing thread ends once the queue is empty (tests).
    closing: bool,
}

impl Lines {
    pub(crate) fn new(fd: Option<OwnedFd>) -> Self {
        Lines { fd, state: Mutex::new(State::default()), changed: Condvar::new() }
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match &self.fd {
            Some(fd) => fd.as_fd(),
            None => rustix::stdio::stderr(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn write(this: &Arc<Lines>, line: &[u8]) {
        if line.is_empty() {
            return;
        }
        let mut state = this.state();
        let rest = if state.waiting.is_empty() && !state.writing {
            match this.write_now(&mut state, line) {
                0 => return,
                rest => &line[line.len() - rest..],
            }
        } else if state.bytes + line.len() > MAX_WAITING {
            state.dropped += 1;
            return;
        } else {
            line
        };
        // The rest of a line begun is always queued: the stream stays whole lines.
        state.bytes += rest.len();
        state.waiting.push_back(rest.to_vec());
        if !state.started {
            let lines = Arc::clone(this);
            let spawned = std::thread::Builder::new().name("stderr".into()).spawn(move || lines.drain());
            // Without a thread, the lines wait until one can be had (the next line tries again).
            state.started = spawned.is_ok();
        }
        this.changed.notify_all();
    }

    /// Writes what it can of `line` without waiting; returns how many bytes are left.
    fn write_now(&self, state: &mut State, line: &[u8]) -> usize {
        let mut written = 0;
        while written < line.len() {
            if state.plain {
                let _ = write_all(self.fd(), &line[written..]);
                return 0;
            }
            let slice = [IoSlice::new(&line[written..])];
            match rustix::io::pwritev2(self.fd(), &slice, u64::MAX, ReadWriteFlags::NOWAIT) {
                Ok(n) => written += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => return line.len() - written,
                // Not something that can be written without waiting (a terminal, a file), or a
                // kernel without `RWF_NOWAIT`: written as it comes, from now on.
                Err(Errno::OPNOTSUPP | Errno::INVAL | Errno::NOSYS) => state.plain = true,
                // Closed, or not writable: there is nobody to tell.
                Err(_) => return 0,
            }
        }
        0
    }

    /// The writing thread: writes what waits, in order, waiting for the pipe to drain.
    fn drain(&self) {
        let mut state = self.state();
        loop {
            let Some(line) = state.waiting.pop_front() else {
                if state.dropped > 0 {
                    let notice = dropped_notice(std::mem::take(&mut state.dropped));
                    state.bytes += notice.len();
                    state.waiting.push_back(notice);
                    continue;
                }
                self.changed.notify_all();
                if state.closing {
                    return;
                }
                state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            };
            state.writing = true;
            drop(state);
            let _ = write_all(self.fd(), &line);
            state = self.state();
            state.writing = false;
            state.bytes -= line.len();
        }
    }

    /// Lets the writing thread end once the queue is empty, so the descriptor can close.
    #[cfg(test)]
    fn close(&self) {
        self.state().closing = true;
        self.changed.notify_all();
    }

    pub(crate) fn flush(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut state = self.state();
        while !state.waiting.is_empty() || state.writing || (state.dropped > 0 && state.started) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self.changed.wait_timeout(state, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        true
    }
}

/// Writes all of `bytes`, waiting for room.
fn write_all(fd: BorrowedFd<'_>, mut bytes: &[u8]) -> rustix::io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return Err(Errno::PIPE),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The line that says how many were dropped.
fn dropped_notice(dropped: u64) -> Vec<u8> {
    let message = format!("⟪{dropped} lines dropped: stderr was not read⟫");
    let line = if super::json_lines() {
        super::json_line("WARN", "teaagent::stderr", message.into(), serde_json::Map::new())
    } else {
        format!("teaagent: {message}\n")
    };
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads everything from `read` until every writer is gone.
    fn read_all(read: OwnedFd) -> String {
        let mut file = std::fs::File::from(read);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).expect("read");
        text
    }

    #[test]
    fn a_pipe_nobody_reads_never_blocks_the_writer_and_nothing_is_lost_unsaid() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let lines = Arc::new(Lines::new(Some(write)));
        let line = |n: usize| format!("line {n:06} {}\n", "x".repeat(1000));
        let started = Instant::now();
        // About 2 MiB: the pipe's 64 KiB, then the queue's, then dropped.
        for n in 0..2000 {
            Lines::write(&lines, line(n).as_bytes());
        }
        assert!(started.elapsed() < Duration::from_secs(5), "writing waited for a reader");
        assert!(!lines.flush(Duration::from_millis(50)), "nothing read yet, so not everything written");
        let reader = std::thread::spawn(move || read_all(read));
        assert!(lines.flush(Duration::from_secs(10)), "written once read");
        lines.close();
        drop(lines);
        let text = reader.join().expect("reader");
        let written: Vec<&str> = text.lines().filter(|l| l.starts_with("line ")).collect();
        let said: u64 = text
            .lines()
            .filter_map(|l| {
                l.strip_prefix("teaagent: ⟪")?.strip_suffix(" lines dropped: stderr was not read⟫")
            })
            .map(|n| n.parse::<u64>().expect("a count"))
            .sum();
        assert!(written.len() > 64 && written.len() < 2000, "{} written", written.len());
        assert_eq!(written.len() as u64 + said, 2000, "every line written or counted");
        // In order, whole, and the first ones first.
        for (i, l) in written.iter().enumerate() {
            assert_eq!(format!("{l}\n"), line(i), "line {i}");
        }
    }

    #[test]
    fn exactly_the_bound_waits_and_the_next_line_is_dropped() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        // A pipe of one page: 64 lines of 64 bytes fill it.
        assert_eq!(rustix::pipe::fcntl_setpipe_size(&write, 4096).expect("pipe size"), 4096);
        let lines = Arc::new(Lines::new(Some(write)));
        let line = |n: usize| format!("{n:063}\n");
        let (in_pipe, waiting) = (64, MAX_WAITING / 64);
        for n in 0..in_pipe + waiting {
            Lines::write(&lines, line(n).as_bytes());
        }
        assert_eq!(lines.state().dropped, 0, "up to the bound, every line waits");
        Lines::write(&lines, line(in_pipe + waiting).as_bytes());
        assert_eq!(lines.state().dropped, 1, "one byte past it, the line is dropped");
        let reader = std::thread::spawn(move || read_all(read));
        assert!(lines.flush(Duration::from_secs(10)));
        lines.close();
        drop(lines);
        let text = reader.join().expect("reader");
        let expected: String = (0..in_pipe + waiting).map(line).collect();
        assert_eq!(text, format!("{expected}teaagent: ⟪1 lines dropped: stderr was not read⟫\n"));
    }

    #[test]
    fn with_a_reader_lines_are_written_at_once_in_order() {
        let (read, write) = rustix::pipe::pipe().expect("pipe");
        let reader = std::thread::spawn(move || read_all(read));
        let lines = Arc::new(Lines::new(Some(write)));
        for n in 0..500 {
            Lines::write(&lines, format!("{n}\n").as_bytes());
        }
        assert!(!lines.state().started, "no line had to wait, so no thread was started");
        drop(lines);
        let text = reader.join().expect("reader");
        assert_eq!(text, (0..500).map(|n| format!("{n}\n")).collect::<String>());
    }
}
