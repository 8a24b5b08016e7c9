//! The child's stdout (`gateway/child.rs`), and the thread that reads it.
//!
//! The child is started on the gateway's thread, and its stdout is read there at first. A call
//! runs on the server's runtime, though: a reply read on the gateway's thread reaches its call
//! by waking the server's thread, and a request alone in flight is handed to the gateway's
//! thread to write (`child/stdin.rs`), so that its reply finds that thread awake. Each call in
//! sequence crossed between the two threads twice.
//!
//! So once a call comes from a runtime ([`Seat::call_from_here`]), the reader moves to that
//! runtime, the *serving* one: what it had read of a line goes with it, and what the child
//! wrote meanwhile waits in the pipe. A reply then wakes the very thread that waits for it, and
//! requests are written by their senders. When the serving runtime ends (the server stopped,
//! and its runtime dropped the reader with its other tasks), the reader goes back to the
//! gateway's thread, again with what it had read, and stays there: the child keeps running
//! until the gateway shuts it down, as before.
//!
//! Only replies are worth reading on the serving runtime. A child that writes what answers no
//! request (unasked replies, notifications, lines that are not JSON) would spend the serving
//! thread's time, and every client's requests would wait for it: past
//! [`MAX_UNANSWERING_BYTES`] of such lines in a row, the reader goes home for good, and the
//! gateway's thread pays for what the child writes, as it did before any call.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Weak};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{Connection, lock};
use crate::server::framing::{Frame, LineFramer};
use crate::visible::escape;

/// Where the reader runs, and where it may move.
pub(super) struct Seat {
    /// The gateway's runtime: where the reader starts, and goes back to.
    home: Handle,
    /// The runtime of the first call, once there was one.
    serving: Mutex<Option<Handle>>,
    /// Told when `serving` is set.
    called: Notify,
    /// The reader runs on the serving runtime now.
    on_serving: AtomicBool,
    /// The reader came back from the serving runtime: it stays home.
    back: AtomicBool,
}

impl Seat {
    /// A seat whose home is the current runtime.
    pub(super) fn new() -> Self {
        Seat {
            home: Handle::current(),
            serving: Mutex::new(None),
            called: Notify::new(),
            on_serving: AtomicBool::new(false),
            back: AtomicBool::new(false),
        }
    }

    /// A call is made from the current runtime: the first one to do so becomes the serving
    /// runtime, and the reader moves there.
    pub(super) fn call_from_here(&self) {
        if self.on_serving.load(Ordering::Relaxed) || self.back.load(Ordering::Relaxed) {
            return;
        }
        let Ok(here) = Handle::try_current() else { return };
        let mut serving = lock(&self.serving);
        if serving.is_none() {
            *serving = Some(here);
            self.called.notify_one();
        }
    }

    /// Whether the reader runs on the serving runtime now (requests are then written by their
    /// senders: `child/stdin.rs`).
    pub(super) fn on_serving(&self) -> bool {
        self.on_serving.load(Ordering::Relaxed)
    }
}

/// The bytes of lines in a row that answered no request, past which a reader on the serving
/// runtime goes home for good (see the module docs). A reply, whatever its size, starts the
/// count again.
const MAX_UNANSWERING_BYTES: u64 = 256 * 1024;

/// What the reader carries from one runtime to the other.
pub(super) struct Reading {
    framer: LineFramer,
    /// The first bytes of a line too long to read, and whether its request failed already.
    long: Option<(Vec<u8>, bool)>,
    /// The bytes of the lines since the last one that answered a request.
    unanswering: u64,
    /// The connection's count of answered requests when a line last answered one.
    answered: u64,
    conn: Weak<Connection>,
    seat: std::sync::Arc<Seat>,
    /// Cancelled when the stream ends.
    closed: CancellationToken,
}

impl Reading {
    /// Starts reading `stdout` on the seat's home runtime.
    pub(super) fn start(
        stdout: OwnedFd,
        conn: Weak<Connection>,
        max_line: usize,
        seat: std::sync::Arc<Seat>,
        closed: CancellationToken,
    ) {
        let home = seat.home.clone();
        let reading = Reading {
            framer: LineFramer::new(max_line),
            long: None,
            unanswering: 0,
            answered: 0,
            conn,
            seat,
            closed,
        };
        home.spawn(read(Here { pipe: Pipe::Fd(stdout), reading: Some(reading), serving: false }));
    }

    /// The stream ended: the connection is closed and its requests fail.
    fn end(&self) {
        self.closed.cancel();
        if let Some(conn) = self.conn.upgrade() {
            conn.fail_pending();
        }
    }

    /// Frames `bytes` and dispatches the lines; false once the connection is gone.
    fn take(&mut self, bytes: &[u8]) -> bool {
        self.framer.push(bytes);
        while let Some(frame) = self.framer.next_frame() {
            let Some(conn) = self.conn.upgrade() else { return false };
            if let Some(head) = self.framer.take_long_head() {
                self.long = Some((head, false));
            }
            let len = match frame {
                Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => line.len() as u64,
                Frame::Line(line) => {
                    conn.on_line(&line);
                    line.len() as u64
                }
                Frame::TooLong { len } => {
                    match self.long.take() {
                        Some((_, true)) => {}
                        Some((head, false)) => conn.on_long_line(&head, self.framer.long_tail(), len),
                        None => conn.on_long_line(b"", self.framer.long_tail(), len),
                    }
                    len
                }
            };
            // (A request that a line too long failed as it began counts when the line ends.)
            let answered = conn.answered();
            if answered == self.answered {
                self.unanswering = self.unanswering.saturating_add(len);
            } else {
                (self.answered, self.unanswering) = (answered, 0);
            }
        }
        // A line began that is too long to read: its request fails now, not when it ends.
        if let Some(head) = self.framer.take_long_head() {
            let Some(conn) = self.conn.upgrade() else { return false };
            let failed = conn.on_long_start(&head);
            self.long = Some((head, failed));
        }
        true
    }
}

/// The reader on one runtime: registers the pipe with it and reads until the stream ends, the
/// connection goes, or (at home) the reader moves to the serving runtime.
async fn read(mut here: Here) {
    let Pipe::Fd(fd) = std::mem::replace(&mut here.pipe, Pipe::Gone) else { return };
    match pipe::Receiver::from_owned_fd(fd) {
        Ok(pipe) => here.pipe = Pipe::Registered(pipe),
        Err(e) => {
            if let Some(reading) = here.reading.take() {
                tracing::warn!(server = %name(&reading), error = %e, "cannot read the external server's stdout");
                reading.end();
            }
            return;
        }
    }
    let serving = here.serving;
    if let Some(reading) = &here.reading {
        reading.seat.on_serving.store(serving, Ordering::Relaxed);
    }
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let (Pipe::Registered(pipe), Some(reading)) = (&mut here.pipe, here.reading.as_mut()) else { return };
        let seat = reading.seat.clone();
        let may_move = !serving && !seat.back.load(Ordering::Relaxed);
        let read = tokio::select! {
            biased;
            () = seat.called.notified(), if may_move => None,
            read = pipe.read(&mut chunk) => Some(read),
        };
        match read {
            None => {
                let serving_runtime = lock(&seat.serving).clone();
                if let Some(to) = serving_runtime {
                    here.move_to(&to, true);
                    return;
                }
            }
            Some(Ok(n)) if n > 0 => {
                if !reading.take(&chunk[..n]) {
                    here.reading = None;
                    return;
                }
                if serving && reading.unanswering > MAX_UNANSWERING_BYTES {
                    tracing::warn!(
                        server = %name(reading),
                        "the external server wrote more than {} KiB in a row that answers no request: it is read on the gateway's thread from now on",
                        MAX_UNANSWERING_BYTES / 1024
                    );
                    let home = seat.home.clone();
                    here.move_to(&home, false);
                    return;
                }
            }
            Some(_) => {
                if let Some(reading) = here.reading.take() {
                    reading.end();
                }
                return;
            }
        }
    }
}

/// The child's stdout as a reader task holds it.
enum Pipe {
    /// Not registered with the task's runtime yet (the task has not run).
    Fd(OwnedFd),
    Registered(pipe::Receiver),
    Gone,
}

/// A reader task's pipe and state, while it has them. Dropped with them (its runtime ended,
/// whether the task had run or not), a reader of the serving runtime goes home.
struct Here {
    pipe: Pipe,
    reading: Option<Reading>,
    serving: bool,
}

impl Here {
    /// Goes on reading on `to` (`serving`: the serving runtime, else home).
    fn move_to(&mut self, to: &Handle, serving: bool) {
        let Some(reading) = self.reading.take() else { return };
        let fd = match std::mem::replace(&mut self.pipe, Pipe::Gone) {
            Pipe::Fd(fd) => Ok(fd),
            Pipe::Registered(pipe) => pipe.into_nonblocking_fd(),
            Pipe::Gone => return,
        };
        match fd {
            Ok(fd) => {
                if !serving {
                    reading.seat.on_serving.store(false, Ordering::Relaxed);
                    reading.seat.back.store(true, Ordering::Relaxed);
                }
                to.spawn(read(Here { pipe: Pipe::Fd(fd), reading: Some(reading), serving }));
            }
            Err(e) => {
                tracing::warn!(server = %name(&reading), error = %e, "cannot move the external server's stdout to another thread");
                reading.end();
            }
        }
    }
}

impl Drop for Here {
    fn drop(&mut self) {
        if self.serving
            && let Some(home) = self.reading.as_ref().map(|r| r.seat.home.clone())
        {
            self.move_to(&home, false);
        }
    }
}

fn name(reading: &Reading) -> String {
    reading.conn.upgrade().map(|c| escape(&c.name)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    /// A runtime on a thread of its own (the gateway's), until `stop` is dropped.
    fn home() -> (Handle, tokio::sync::oneshot::Sender<()>, std::thread::JoinHandle<()>) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            })
        });
        (handle, stop, thread)
    }

    /// A reader of a pipe's read end, at home on `home`: its seat, the token it cancels at the
    /// end of the stream, and the write end.
    fn reader_of_a_pipe(home: &Handle) -> (Arc<Seat>, CancellationToken, OwnedFd) {
        let (read_end, write_end) = rustix::pipe::pipe().expect("pipe");
        let seat = Arc::new(home.block_on(async { Seat::new() }));
        let closed = CancellationToken::new();
        let _entered = home.enter();
        Reading::start(read_end, Weak::new(), 1024, seat.clone(), closed.clone());
        (seat, closed, write_end)
    }

    /// A runtime that made a call, with the reader moved onto it (waited for at most 10 s).
    fn called_from_a_new_runtime(seat: &Seat) -> tokio::runtime::Runtime {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            seat.call_from_here();
            let moved = async {
                while !seat.on_serving() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            };
            tokio::time::timeout(Duration::from_secs(10), moved)
                .await
                .expect("the reader moved to the calling runtime");
        });
        runtime
    }

    fn eventually(what: &str, done: impl Fn() -> bool) {
        for _ in 0..1000 {
            if done() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("{what}: not after 10 s");
    }

    #[test]
    fn the_reader_moves_to_the_first_calls_runtime_and_reads_the_end_of_the_stream_there() {
        let (home, stop, thread) = home();
        let (seat, closed, write_end) = reader_of_a_pipe(&home);
        let serving = called_from_a_new_runtime(&seat);
        serving.block_on(async {
            drop(write_end);
            tokio::time::timeout(Duration::from_secs(10), closed.cancelled())
                .await
                .expect("the end of the stream");
        });
        drop(stop);
        thread.join().expect("home");
    }

    #[test]
    fn when_the_serving_runtime_ends_the_reader_goes_home_and_stays() {
        let (home, stop, thread) = home();
        let (seat, closed, write_end) = reader_of_a_pipe(&home);
        drop(called_from_a_new_runtime(&seat));
        assert!(!seat.on_serving(), "back home");
        assert!(!closed.is_cancelled(), "the stream goes on");
        // A call from another runtime does not move it again.
        let another = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        another.block_on(async { seat.call_from_here() });
        drop(another);
        assert!(!seat.on_serving());
        // Still read, at home: the end of the stream is seen there.
        drop(write_end);
        eventually("the end of the stream, read at home", || closed.is_cancelled());
        drop(stop);
        thread.join().expect("home");
    }
}
