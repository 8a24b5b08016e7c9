//! `teaagent audit`: the audit log (`$TEAAGENT_HOME/audit.jsonl` and its rotated files) as a
//! table a person can scan, or as its JSON lines, filtered; `--follow` keeps printing records
//! as they are written, across rotations.
//!
//! - Records are read oldest first: `audit.jsonl.N` … `audit.jsonl.1`, then `audit.jsonl`, all
//!   opened together under the log's lock (`teaagent_core::policy::audit::open_files`).
//! - A line that is not a record is reported on stderr with its file and line number, and
//!   skipped. The last line of `audit.jsonl` without its newline is a record still being written:
//!   it is left out, and `--follow` prints it once its end is there. (The last line of an old
//!   file without its newline was cut by a crash: reported.)
//! - No log (nothing was ever audited in this home): said on stderr, exit 0 — an empty log is
//!   not an error; `--follow` waits for the first record.
//! - The table is coloured only when stdout is a terminal and `NO_COLOR` is not set; every
//!   value from the log is escaped (`teaagent_core::visible`). `--json` prints each record's line
//!   as it is in the file.
//! - `--follow` ends when interrupted (Ctrl-C: the record being printed is finished, exit 0) or
//!   when whoever reads its output goes away (a closed pipe: exit 0).

mod follow;
mod row;

pub(crate) use row::parse_since;

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;
use teaagent_core::home::{self, FileStat, Home};
use teaagent_core::policy::audit::{FILE_NAME, Lines, LogFile, open_files};
use teaagent_core::visible;

use crate::cli::AuditArgs;
use row::{Filter, HEADER, cells, colour};

/// Runs `teaagent audit`.
pub(crate) fn show(args: AuditArgs) -> anyhow::Result<ExitCode> {
    let dir = home::dir().context("cannot find $TEAAGENT_HOME")?;
    let filter = Filter { since: args.since, tool: args.tool, decision: args.decision };
    let colour = !args.json
        && std::io::IsTerminal::is_terminal(&io::stdout())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut out = Output { json: args.json, colour, widths: HEADER.map(str::len), filter, shown: 0 };
    let home = match Home::at(&dir) {
        Ok(home) => Some(home),
        Err(home::HomeError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let files = match &home {
        Some(home) => open_files(home).context("cannot read the audit log")?,
        None => Vec::new(),
    };
    let no_log = files.is_empty();
    if no_log {
        eprintln!(
            "teaagent: no audit log in {} yet: every tool call of `teaagent mcp serve` and `teaagent run` is recorded there{}",
            visible::escape(&dir.display().to_string()),
            if args.follow { "; waiting for the first record" } else { "" }
        );
    }
    let result = (|| -> io::Result<()> {
        let current = out.backlog(files)?;
        if args.follow {
            follow::follow(&dir, home.clone(), current, &mut out)?;
        }
        Ok(())
    })();
    match result {
        // Whoever read the output went away (`| head`): nothing more to say.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e).context("cannot print the audit log"),
        Ok(()) => {
            if out.shown == 0 && !args.follow && !no_log {
                eprintln!("teaagent: no record matches");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `audit.jsonl`, open, as the reader follows it.
pub(super) struct Current {
    lines: Lines,
    identity: FileStat,
}

/// Where the records go, and how.
struct Output {
    json: bool,
    colour: bool,
    /// The table's column widths: the header's and the backlog's widest, kept for the records
    /// that follow (a wider one pushes its own row, not the table).
    widths: [usize; 6],
    filter: Filter,
    shown: u64,
}

impl Output {
    /// Prints every record of `files` (oldest first) and gives back `audit.jsonl`'s reader, to
    /// follow.
    fn backlog(&mut self, files: Vec<LogFile>) -> io::Result<Option<Current>> {
        let mut rows = Vec::new();
        let mut current = None;
        for LogFile { name, file } in files {
            let identity = FileStat::of_file(&file)?;
            let mut lines = Lines::new(file);
            lines.read_new(|n, line| {
                self.take(&name, n, line, &mut rows);
                Ok(())
            })?;
            if name == FILE_NAME {
                current = Some(Current { lines, identity });
            } else {
                cut_off(&name, &lines);
            }
        }
        for row in &rows {
            if let Shown::Row(cells) = row {
                for (w, cell) in self.widths.iter_mut().zip(cells) {
                    *w = (*w).max(cell.chars().count());
                }
            }
        }
        if !rows.is_empty() && !self.json {
            self.print_header()?;
        }
        self.print_rows(&rows)?;
        Ok(current)
    }

    /// Adds the record on line `n` of `name` to `rows` when the filter keeps it (for `--json`,
    /// the line itself), or reports why it is not one.
    fn take(&mut self, name: &str, n: u64, line: &[u8], rows: &mut Vec<Shown>) {
        match row::parse(line) {
            Ok(parsed) if self.filter.keeps(&parsed) => rows.push(match self.json {
                // The line as it is (it parsed: valid UTF-8 JSON, no raw control character).
                true => Shown::Json(String::from_utf8_lossy(line).into_owned()),
                false => Shown::Row(cells(&parsed)),
            }),
            Ok(_) => {}
            Err(why) => eprintln!("teaagent: warning: {name}:{n}: {}; skipped", visible::escape(&why)),
        }
    }

    /// Prints what `lines` has read since the last time (following).
    fn print_new(&mut self, name: &str, lines: &mut Lines) -> io::Result<()> {
        let mut rows = Vec::new();
        lines.read_new(|n, line| {
            self.take(name, n, line, &mut rows);
            Ok(())
        })?;
        if !rows.is_empty() && self.shown == 0 && !self.json {
            self.print_header()?;
        }
        self.print_rows(&rows)
    }

    fn print_header(&self) -> io::Result<()> {
        let line = self.line(&HEADER.map(str::to_owned), None);
        let mut stdout = io::stdout().lock();
        match self.colour {
            true => writeln!(stdout, "\x1b[1m{line}\x1b[0m"),
            false => writeln!(stdout, "{line}"),
        }
    }

    fn print_rows(&mut self, rows: &[Shown]) -> io::Result<()> {
        let mut stdout = io::BufWriter::new(io::stdout().lock());
        for row in rows {
            match row {
                Shown::Json(line) => writeln!(stdout, "{line}")?,
                Shown::Row(cells) => {
                    let paint = if self.colour { colour(&cells[3]) } else { None };
                    writeln!(stdout, "{}", self.line(cells, paint))?;
                }
            }
            self.shown += 1;
        }
        stdout.flush()
    }

    /// One row of the table, in columns (the last one unpadded), the decision painted.
    fn line(&self, cells: &[String; 6], paint: Option<&str>) -> String {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(self.widths).enumerate() {
            let padded = if i + 1 == cells.len() { cell.clone() } else { format!("{cell:<w$}  ") };
            match paint.filter(|_| i == 3) {
                Some(code) => out.push_str(&format!("\x1b[{code}m{}\x1b[0m{}", cell, &padded[cell.len()..])),
                None => out.push_str(&padded),
            }
        }
        out.trim_end().to_owned()
    }
}

/// A record as it is printed: its line (`--json`), or its row's cells.
enum Shown {
    Json(String),
    Row([String; 6]),
}

/// Reports an old file whose last line has no newline: a record cut by a crash.
fn cut_off(name: &str, lines: &Lines) {
    if let Some((n, _)) = lines.incomplete() {
        eprintln!("teaagent: warning: {name}:{n}: an incomplete record (cut off); skipped");
    }
}
