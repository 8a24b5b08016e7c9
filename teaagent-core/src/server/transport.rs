//! The byte pipes under the protocol: stdin in, stdout out.
//!
//! When stdin and stdout are pipes or sockets (what every MCP client gives a server), they are
//! switched to non-blocking mode and driven by the runtime's reactor, so a request costs no thread
//! hop: the same worker reads the line, runs the call and queues the answer. Anything else (a
//! terminal, a regular file, a stdout shared with stderr) is served by a plain blocking thread,
//! because switching those to non-blocking mode would change them for other processes too. The
//! original file-status flags are restored when the server stops.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::framing::{Frame, LineFramer};
use crate::session::backlog::Backlog;
use crate::session::outbox::Outbox;
use crate::session::peer::{OneWriter, Out};

const CHUNK: usize = super::framing::READ_CHUNK;

/// The capacity asked for stdin's and stdout's pipes (Linux gives 64 KiB by default). A pipe
/// that holds a quarter MiB moves a large message in a few reads instead of sixteen hand-offs
/// between client and server; it is kernel memory only while data is in flight. A pipe that is
/// already larger is left alone, and a refusal (the user's pipe quota) is not an error.
const PIPE_CAPACITY: usize = 256 * 1024;

/// Where lines come from.
pub(crate) enum Input {
    /// Driven by the reactor.
    Async(Box<dyn AsyncRead + Unpin + Send>),
    /// Chunks read by a blocking thread.
    Thread(mpsc::Receiver<io::Result<Vec<u8>>>),
}

/// Where lines go.
pub(crate) enum Output {
    /// Driven by the reactor.
    Async(Box<dyn AsyncWrite + Unpin + Send>),
    /// Written by a blocking thread.
    Blocking(Box<dyn Write + Send>),
}

/// Reads frames; [`FrameReader::next`] is cancel-safe (a `select!` may drop it at any time
/// without losing bytes).
pub(crate) struct FrameReader {
    input: Input,
    framer: LineFramer,
    eof: bool,
}

impl FrameReader {
    pub(crate) fn new(input: Input, max_line_bytes: usize) -> Self {
        Self { input, framer: LineFramer::new(max_line_bytes), eof: false }
    }

    /// The next frame when it is already read, without reading.
    pub(crate) fn buffered(&mut self) -> Option<Frame> {
        self.framer.next_frame()
    }

    /// The next frame, or `None` at end of input (read errors end the input too, logged).
    pub(crate) async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(frame) = self.framer.next_frame() {
                return Some(frame);
            }
            if self.eof {
                return None;
            }
            // Reads go straight into the framer's buffer (cancel-safe: `read_buf` appends only
            // what it read, and a read that is dropped has read nothing).
            let read = match &mut self.input {
                Input::Async(r) => r.read_buf(self.framer.buffer_for_read()).await,
                Input::Thread(rx) => match rx.recv().await {
                    Some(Ok(bytes)) => {
                        self.framer.push(&bytes);
                        continue;
                    }
                    Some(Err(e)) => Err(e),
                    None => Ok(0),
                },
            };
            match read {
                Ok(0) => {
                    self.eof = true;
                    self.framer.finish();
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::error!(error = %e, "reading stdin failed; stopping");
                    self.eof = true;
                    self.framer.finish();
                }
            }
        }
    }
}

/// Writes queued lines, several at a time when they pile up. Returns when told to close or when
/// every sender is gone; a write error (the client went away) cancels `broken`.
pub(crate) async fn write_loop(
    output: Output,
    rx: mpsc::UnboundedReceiver<Out>,
    OneWriter { backlog, outbox }: OneWriter,
    broken: CancellationToken,
) {
    match output {
        Output::Async(w) => write_async(w, rx, &backlog, &outbox, broken).await,
        Output::Blocking(w) => {
            let counted = backlog.clone();
            let done = tokio::task::spawn_blocking(move || write_blocking(w, rx, &counted, &outbox, broken));
            let _ = done.await;
        }
    }
    // Calls that wait for the client to read their predecessors' answers go on: it never will.
    backlog.close();
}

/// Collects the next batch: the first message, then whatever is already queued (up to ~1 MiB),
/// lines waiting in the outbox taken where the channel says so.
fn gather(
    first: Out,
    rx: &mut mpsc::UnboundedReceiver<Out>,
    outbox: &Outbox,
) -> (Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>) {
    let mut batch = Vec::new();
    let mut next = first;
    loop {
        let lines = match next {
            Out::Line(line) => line,
            Out::Queued => outbox.take(),
            Out::Close(tx) => return (batch, Some(tx)),
        };
        if batch.is_empty() {
            batch = lines;
        } else {
            batch.extend_from_slice(&lines);
        }
        if batch.len() >= 1 << 20 {
            break;
        }
        match rx.try_recv() {
            Ok(out) => next = out,
            Err(_) => break,
        }
    }
    (batch, None)
}

async fn write_async(
    mut w: Box<dyn AsyncWrite + Unpin + Send>,
    mut rx: mpsc::UnboundedReceiver<Out>,
    backlog: &Backlog,
    outbox: &Outbox,
    broken: CancellationToken,
) {
    while let Some(first) = rx.recv().await {
        let (batch, close) = gather(first, &mut rx, outbox);
        if !batch.is_empty()
            && let Err(e) = async {
                w.write_all(&batch).await?;
                w.flush().await
            }
            .await
        {
            tracing::error!(error = %e, "writing stdout failed; the client is gone");
            broken.cancel();
            return;
        }
        backlog.written(batch.len());
        if let Some(tx) = close {
            let _ = tx.send(());
            return;
        }
    }
}

fn write_blocking(
    mut w: Box<dyn Write + Send>,
    mut rx: mpsc::UnboundedReceiver<Out>,
    backlog: &Backlog,
    outbox: &Outbox,
    broken: CancellationToken,
) {
    while let Some(first) = rx.blocking_recv() {
        let (batch, close) = gather(first, &mut rx, outbox);
        if !batch.is_empty()
            && let Err(e) = w.write_all(&batch).and_then(|()| w.flush())
        {
            tracing::error!(error = %e, "writing stdout failed; the client is gone");
            broken.cancel();
            return;
        }
        backlog.written(batch.len());
        if let Some(tx) = close {
            let _ = tx.send(());
            return;
        }
    }
}

/// Restores the file-status flags of stdin and stdout when dropped.
pub(crate) struct RestoreFlags {
    saved: Vec<(BorrowedFd<'static>, OFlags)>,
}

impl Drop for RestoreFlags {
    fn drop(&mut self) {
        for (fd, flags) in &self.saved {
            let _ = rustix::fs::fcntl_setfl(fd, *flags);
        }
    }
}

/// Opens stdin and stdout for the server. Must run inside the runtime.
pub(crate) fn stdio() -> io::Result<(Input, Output, RestoreFlags)> {
    let stdin = rustix::stdio::stdin();
    let stdout = rustix::stdio::stdout();
    let stderr = rustix::stdio::stderr();
    let mut restore = RestoreFlags { saved: Vec::new() };
    for fd in [stdin, stdout] {
        if let Ok(flags) = rustix::fs::fcntl_getfl(fd) {
            restore.saved.push((fd, flags));
        }
    }
    let same_as_stderr = |fd: BorrowedFd<'_>| match (rustix::fs::fstat(fd), rustix::fs::fstat(stderr)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    };

    let input = match kind(stdin) {
        Some(FileType::Fifo) => {
            grow_pipe(stdin);
            Input::Async(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(dup(stdin)?)?))
        }
        Some(FileType::Socket) => Input::Async(Box::new(socket(dup(stdin)?)?)),
        _ => Input::Thread(read_thread(File::from(dup(stdin)?))),
    };
    let output = match kind(stdout) {
        Some(FileType::Fifo) if !same_as_stderr(stdout) => {
            grow_pipe(stdout);
            Output::Async(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(dup(stdout)?)?))
        }
        Some(FileType::Socket) if !same_as_stderr(stdout) => Output::Async(Box::new(socket(dup(stdout)?)?)),
        _ => Output::Blocking(Box::new(File::from(dup(stdout)?))),
    };
    Ok((input, output, restore))
}

/// Raises a pipe's capacity to [`PIPE_CAPACITY`] (see there). Linux only.
#[cfg(target_os = "linux")]
fn grow_pipe(fd: BorrowedFd<'_>) {
    match rustix::pipe::fcntl_getpipe_size(fd) {
        Ok(size) if size < PIPE_CAPACITY => {
            if let Err(e) = rustix::pipe::fcntl_setpipe_size(fd, PIPE_CAPACITY) {
                tracing::debug!(error = %e, "cannot enlarge a stdio pipe; keeping its size");
            }
        }
        _ => {}
    }
}

#[cfg(not(target_os = "linux"))]
fn grow_pipe(_: BorrowedFd<'_>) {}

fn kind(fd: BorrowedFd<'_>) -> Option<FileType> {
    rustix::fs::fstat(fd).ok().map(|st| FileType::from_raw_mode(st.st_mode))
}

/// A close-on-exec duplicate, so no child process ever inherits the protocol's descriptors.
fn dup(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    Ok(rustix::io::fcntl_dupfd_cloexec(fd, 3)?)
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std)
}

/// Reads stdin on a plain thread (terminals, files). The thread ends at EOF or when the server is
/// gone; a thread blocked in `read` does not keep the process alive.
fn read_thread(mut file: File) -> mpsc::Receiver<io::Result<Vec<u8>>> {
    let (tx, rx) = mpsc::channel(4);
    let spawned = std::thread::Builder::new().name("teaagent-stdin".into()).spawn(move || {
        let mut buf = vec![0; CHUNK];
        loop {
            let msg = match file.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = msg.is_err();
            if tx.blocking_send(msg).is_err() || failed {
                return;
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the stdin thread");
    }
    rx
}
