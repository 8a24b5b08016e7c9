//! The first answer, early: an `initialize` that is already waiting on stdin is read and answered
//! at once, before the process gets ready to serve (the async runtime, and in the `teaagent`
//! command the registry, the configuration, the policy and the workspace lock).
//!
//! A client starts a server and sends `initialize` at once; everything the server does before
//! answering is the client's wait (the `stdio` benchmark's cold start). The answer needs only what
//! the server announces — its name and version, whether it serves resources, its instructions —
//! so when the first line is already there it is answered on the spot, when it is a well-formed
//! `initialize`. Anything else (a modern request, garbage, a line not complete yet, a line longer
//! than [`EARLY_MAX`], the end of input) is handed over untouched and the server answers it as
//! usual, once ready.
//!
//! Nothing here waits: stdin is only read while it has bytes ready (a zero-timeout `poll`), so a
//! client that has not written yet, a configuration error or a signal are handled exactly as
//! before. What this changes for a client: one whose server stops on a configuration that cannot
//! be used (exit code 2, the reason on stderr) may have had its `initialize` answered first, so it
//! sees the process end after the handshake instead of during it. Nothing runs before the server
//! is ready: only the handshake is answered early.
//!
//! Only a stdin that is a pipe or a socket (what MCP clients give) is read early; a terminal or a
//! file is left to the server as before. The answer is written to stdout directly: it is the first
//! thing ever written there, and nothing else is written before the server has taken over.

use std::io;
use std::os::fd::AsFd;

use super::announcement::Announcement;
use crate::jsonrpc::{Incoming, RawParams};
use crate::session::peer::SessionInfo;

/// The most read before giving up on finding the first line early (an `initialize` line is a few
/// hundred bytes; anything longer is left to the server's framer).
pub const EARLY_MAX: usize = 64 * 1024;

/// What the early thread read, and whether it answered.
#[derive(Debug, Default)]
pub(crate) struct EarlyRead {
    /// The session of the `initialize` it answered (its line is not in `bytes`).
    pub(crate) session: Option<SessionInfo>,
    /// Bytes read and not consumed, for the framer.
    pub(crate) bytes: Vec<u8>,
    /// The input ended.
    pub(crate) eof: bool,
}

/// What was read and answered early ([`crate::Server::answer_initialize_early`]).
#[derive(Debug)]
pub struct EarlyStdio {
    pub(crate) announcement: Announcement,
    pub(crate) read: Option<EarlyRead>,
}

impl EarlyStdio {
    /// Reads and answers the first line if it is already waiting on a stdin that is a pipe or a
    /// socket.
    pub(crate) fn start(announcement: Announcement) -> Self {
        let stdin = rustix::stdio::stdin();
        let kind = rustix::fs::fstat(stdin).ok().map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode));
        if !matches!(kind, Some(rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket)) {
            return Self { announcement, read: None };
        }
        let read = read_and_answer(&announcement);
        Self { announcement, read: Some(read) }
    }
}

/// Takes over what was read early, warning when the server announces other things than the
/// early answer did.
pub(crate) fn take_over(early: EarlyStdio, announcement: &Announcement) -> Option<EarlyRead> {
    if early.announcement != *announcement && early.read.as_ref().is_some_and(|r| r.session.is_some()) {
        tracing::warn!(
            early = ?early.announcement,
            server = ?announcement,
            "`initialize` was answered early with other server information or capabilities than this server's"
        );
    }
    early.read
}

/// Reads what stdin has ready, up to the first line (or [`EARLY_MAX`], or the end of input), and
/// answers that line when it is a well-formed `initialize`.
fn read_and_answer(announcement: &Announcement) -> EarlyRead {
    let stdin = rustix::stdio::stdin();
    let mut bytes = Vec::new();
    let mut eof = false;
    let mut chunk = [0u8; 4096];
    let newline = loop {
        // Not `memchr::memchr`: its first call asks the CPU which search to use (`cpuid`, trapped
        // by a virtual machine: about 0.1 ms, a tenth of a cold start). See `find_newline`.
        if let Some(at) = super::framing::find_newline(&bytes) {
            break Some(at);
        }
        if bytes.len() >= EARLY_MAX || !ready(stdin) {
            break None;
        }
        match rustix::io::read(stdin, &mut chunk) {
            Ok(0) => {
                eof = true;
                break None;
            }
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(rustix::io::Errno::INTR) => {}
            // A read error: the server meets it again and reports it.
            Err(_) => break None,
        }
    };
    let Some(at) = newline else { return EarlyRead { session: None, bytes, eof } };
    let Some((line, session)) = answer(&bytes[..at], announcement) else {
        return EarlyRead { session: None, bytes, eof };
    };
    if write_all(&line).is_err() {
        // Nothing was written (an `initialize` answer is one atomic pipe write): the server
        // answers it itself.
        return EarlyRead { session: None, bytes, eof };
    }
    bytes.drain(..=at);
    EarlyRead { session: Some(session), bytes, eof }
}

/// Whether `fd` has bytes (or the end of input) ready, without waiting.
fn ready(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    let mut fds = [rustix::event::PollFd::new(&fd, rustix::event::PollFlags::IN)];
    let zero = rustix::event::Timespec { tv_sec: 0, tv_nsec: 0 };
    matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
}

/// The answer to `line` if it is a well-formed `initialize` request.
fn answer(line: &[u8], announcement: &Announcement) -> Option<(Vec<u8>, SessionInfo)> {
    let Ok(Incoming::Request(request)) = Incoming::parse_line(line.to_vec()) else { return None };
    if request.method != "initialize" {
        return None;
    }
    super::era::initialize_answer(&request.id, request.params.as_ref().map(RawParams::get), announcement).ok()
}

/// Writes the whole line to stdout, waiting while a non-blocking stdout is full.
fn write_all(mut line: &[u8]) -> io::Result<()> {
    let stdout = rustix::stdio::stdout();
    while !line.is_empty() {
        match rustix::io::write(stdout, line) {
            Ok(n) => line = &line[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let fd = stdout.as_fd();
                let mut fds = [rustix::event::PollFd::new(&fd, rustix::event::PollFlags::OUT)];
                let _ = rustix::event::poll(&mut fds, None);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
