//! `teaagent audit --follow`: new records as they are written, across rotations.
//!
//! Every 200 ms (or at once when stdout's reader goes away) the reader prints what was appended
//! to the `audit.jsonl` it holds open, then looks whether the name `audit.jsonl` still is that
//! file. When a rotation renamed it, the file it holds is complete (writers append under the
//! log's shared lock, and the rename happens under the exclusive one: see
//! `teaagent_core::policy::audit`), so it reads that file to its end, then every file newer than
//! it (more than one if the log was rotated more than once meanwhile), and follows the new
//! `audit.jsonl`.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::event::{PollFd, PollFlags, Timespec};
use teaagent_core::home::{FileStat, Home};
use teaagent_core::policy::audit::{FILE_NAME, Lines, open_files};

use super::{Current, Output, cut_off};

/// How long the reader waits between looks.
const POLL: Timespec = Timespec { tv_sec: 0, tv_nsec: 200_000_000 };

/// Prints new records until stdout's reader goes away or the process is interrupted (SIGINT:
/// Ctrl-C). The interruption is noted and acted on between records, so none is cut short; it is
/// heard even where SIGINT was ignored on entry (a job started in the background by a script).
pub(super) fn follow(
    dir: &Path,
    mut home: Option<Home>,
    mut current: Option<Current>,
    out: &mut Output,
) -> io::Result<()> {
    let interrupted = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted))?;
    loop {
        if stdout_gone()? || interrupted.load(Ordering::Relaxed) {
            return Ok(());
        }
        if home.is_none() {
            // Not there yet: the first call of a server makes it.
            home = Home::at(dir).ok();
        }
        let Some(home) = &home else { continue };
        if let Some(current) = &mut current {
            out.print_new(FILE_NAME, &mut current.lines)?;
        }
        let now = home.stat(FILE_NAME)?;
        let moved = match (&current, &now) {
            (Some(current), Some(now)) => !current.identity.same_file(now),
            (None, None) => false,
            _ => true,
        };
        if moved {
            let mut after = None;
            if let Some(mut old) = current.take() {
                // Complete now: its last records, then whatever came after it.
                out.print_new(FILE_NAME, &mut old.lines)?;
                cut_off(&format!("{FILE_NAME} (rotated)"), &old.lines);
                after = Some(old.identity);
            }
            current = catch_up(home, after, out)?;
        }
    }
}

/// Prints the files newer than `after` (all of them without it), oldest first, and gives back
/// `audit.jsonl`'s reader.
fn catch_up(home: &Home, after: Option<FileStat>, out: &mut Output) -> io::Result<Option<Current>> {
    let files = open_files(home)?;
    let identities = files.iter().map(|f| FileStat::of_file(&f.file)).collect::<io::Result<Vec<_>>>()?;
    let start = match after {
        None => 0,
        Some(after) => match identities.iter().position(|id| id.same_file(&after)) {
            Some(i) => i + 1,
            None => {
                // Rotated away meanwhile, and with it any file between it and the oldest left.
                eprintln!(
                    "teaagent: warning: the log was rotated more than `keep` times since the last look; records may have been dropped unseen"
                );
                0
            }
        },
    };
    for (file, identity) in files.into_iter().zip(identities).skip(start) {
        let mut lines = Lines::new(file.file);
        out.print_new(&file.name, &mut lines)?;
        if file.name == FILE_NAME {
            return Ok(Some(Current { lines, identity }));
        }
        cut_off(&file.name, &lines);
    }
    Ok(None)
}

/// Waits up to [`POLL`]; whether stdout's reader has gone away (a pipe whose other end was
/// closed: then nothing printed would be read, and the command ends as if it had printed into
/// it, without an error).
fn stdout_gone() -> io::Result<bool> {
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    match rustix::event::poll(&mut fds, Some(&POLL)) {
        Ok(_) => Ok(fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
