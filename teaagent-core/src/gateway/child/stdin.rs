//! A child's stdin. A line is written by the thread that sends it, at once, when nothing is
//! waiting before it: a call through the gateway needs no hand-off to the gateway's thread on its
//! way out. When the pipe is full, the rest of the line and every line after it are queued, and
//! the writer task ([`Stdin::drain`], on the gateway's runtime) writes them in order as the pipe
//! drains. Closing drops the write end, so the child reads EOF.

use std::io;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rustix::io::Errno;
use tokio::net::unix::pipe::Sender;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The write end of a child's stdin, shared by every sender and the writer task.
pub(super) struct Stdin {
    state: Mutex<State>,
    /// Tells the writer task that lines are queued.
    queued: Notify,
}

struct State {
    /// The pipe; `None` once closed (or broken).
    pipe: Option<Arc<Sender>>,
    /// What waits for the pipe to drain, in order.
    waiting: Vec<u8>,
    /// The writer task is writing what it took from `waiting`: lines wait behind it.
    writing: bool,
}

impl Stdin {
    /// Takes over the child's stdin. Must run on the runtime whose reactor drives the writer.
    pub(super) fn new(stdin: tokio::process::ChildStdin) -> io::Result<Self> {
        // (Back in non-blocking mode: the write end is this process's alone.)
        let pipe = Arc::new(Sender::from_owned_fd(stdin.into_owned_fd()?)?);
        let state = State { pipe: Some(pipe), waiting: Vec::new(), writing: false };
        Ok(Self { state: Mutex::new(state), queued: Notify::new() })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `line`, after every line sent before it. A closed or broken pipe drops it (the
    /// child is gone: its reader fails what waits for a reply).
    pub(super) fn send(&self, line: &[u8]) {
        let mut state = self.state();
        let Some(pipe) = state.pipe.clone() else { return };
        if state.writing || !state.waiting.is_empty() {
            state.waiting.extend_from_slice(line);
            return;
        }
        match write_now(&pipe, line) {
            Ok(written) if written == line.len() => {}
            Ok(written) => {
                state.waiting.extend_from_slice(&line[written..]);
                state.writing = true;
                self.queued.notify_one();
            }
            Err(_) => state.pipe = None,
        }
    }

    /// Closes the pipe (the child reads EOF once the writer task has let go of it too).
    pub(super) fn close(&self) {
        self.state().pipe = None;
        self.queued.notify_one();
    }

    /// The writer task: writes what is queued as the pipe drains, until `closed`, [`Stdin::close`]
    /// or a broken pipe.
    pub(super) async fn drain(&self, closed: &CancellationToken) {
        loop {
            tokio::select! {
                () = self.queued.notified() => {}
                () = closed.cancelled() => break,
            }
            loop {
                let (pipe, bytes) = {
                    let mut state = self.state();
                    let Some(pipe) = state.pipe.clone() else { return };
                    if state.waiting.is_empty() {
                        state.writing = false;
                        break;
                    }
                    state.writing = true;
                    (pipe, std::mem::take(&mut state.waiting))
                };
                let written = tokio::select! {
                    written = write_all(&pipe, &bytes) => written,
                    () = closed.cancelled() => Ok(()),
                };
                if written.is_err() || closed.is_cancelled() {
                    self.state().pipe = None;
                    return;
                }
            }
        }
        self.state().pipe = None;
    }
}

/// Writes as much of `bytes` as the pipe takes now; how much that was.
fn write_now(pipe: &Sender, mut bytes: &[u8]) -> io::Result<usize> {
    let mut written = 0;
    while !bytes.is_empty() {
        // Straight to the pipe: the reactor's view of its readiness is only for the writer task,
        // which asks the pipe again whenever it is told it would block.
        match rustix::io::write(pipe.as_fd(), bytes) {
            Ok(n) => {
                written += n;
                bytes = &bytes[n..];
            }
            Err(Errno::AGAIN) => break,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(written)
}

/// Writes all of `bytes`, waiting for the pipe to drain when it is full.
async fn write_all(pipe: &Sender, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        pipe.writable().await?;
        match pipe.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
