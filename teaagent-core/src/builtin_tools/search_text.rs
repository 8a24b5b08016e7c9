//! `search_text`: ripgrep's engine over the workspace.
//!
//! Built on ripgrep's own crates: the workspace's [`Walk`] lists the files beneath the root's
//! handle (`.gitignore` honoured, hidden files searched, `.git` skipped, links not followed, not
//! even a directory swapped for one mid-walk), `grep-regex` compiles the pattern and
//! `grep-searcher` reads each file on a pool of threads, skipping binary ones as ripgrep does (it
//! stops at the first NUL byte). Results are sorted by path and line; when the cap is reached the
//! search stops, so which matches come back first is not specified — the marker says to narrow it.
//!
//! Bounded work, whatever the files and the pattern:
//! - each searcher holds at most [`LINE_HEAP`] of a line: a file with a longer line is searched
//!   up to that line, and the result's `skipped` names it (instead of buffering the whole line);
//! - returned lines are cut at `MAX_LINE` (500) characters with `…`;
//! - the lines kept (matches and context) add up to at most the output cap (256 KiB), so
//!   `context` × `max_results` × long lines cannot make a large answer;
//! - `pattern` is at most 16 KiB and `glob` 4 KiB, both compiled under
//!   `PATTERN_SIZE_LIMIT` (10 MiB): past those the call is refused as invalid arguments
//!   (`-32602`, or an `isError` result from protocol `2025-11-25` on).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use schemars::JsonSchema;
use serde::Serialize;

use super::common::{
    MAX_GLOB, MAX_PATTERN, Outcome, PATTERN_SIZE_LIMIT, ToolRefusal, check_length, hidden, hidden_error,
    invalid_argument, is_size_limit, path_error, workspace,
};
use crate::tool;
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::walk::{Walk, WalkEntry};
use crate::workspace::{Resolved, Target, Workspace};

/// Longest line text returned (longer lines are cut, with `…`).
const MAX_LINE: usize = 500;

/// Most heap a searcher uses for a line beyond its 64 KiB buffer (1 MiB): a file with a longer
/// line is searched up to it.
pub const LINE_HEAP: usize = 1024 * 1024;

/// Files handed to a searcher at once, and batches queued at most.
const BATCH: usize = 16;
const QUEUED_BATCHES: usize = 16;

/// Files named in `skipped` at most.
const MAX_SKIPPED_NAMES: usize = 20;

/// One matching line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextMatch {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The line number, 1-based.
    pub line: u64,
    /// The line's text.
    pub text: String,
    /// Lines before it (with `context`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Lines after it (with `context`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// What a search found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResults {
    /// The matching lines, by path and line.
    pub matches: Vec<TextMatch>,
    /// Files searched (binary files included).
    pub files_searched: u64,
    /// Set when the search stopped at `max_results`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
    /// Set when files were searched only up to a line longer than 1 MiB (named here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// How to search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The pattern.
    pub pattern: String,
    /// A glob restricting which files are searched (ripgrep's `-g`).
    pub glob: Option<String>,
    /// The pattern is a plain string, not a regular expression.
    pub literal: bool,
    /// Ignore case.
    pub case_insensitive: bool,
    /// Lines of context before and after each match.
    pub context: usize,
    /// Stop after this many matching lines.
    pub max_results: usize,
    /// Stop once the matching and context lines kept add up to this many bytes (the tool uses
    /// the built-in tools' output cap, 256 KiB, so its memory and its answer are bounded by it
    /// whatever `context` × `max_results` × line length would come to).
    pub max_bytes: usize,
}

/// Search file contents with a regular expression (or a literal string), like ripgrep: files
/// ignored by `.gitignore`, the `.git` directory and binary files are skipped. Returns matching
/// lines with their path and line number, and optional context lines. At most `max_results`
/// matching lines and 256 KiB of text (a marker says when the search stopped).
#[tool(unregistered, read_only, idempotent, tier = "low", title = "Search text")]
pub fn search_text(
    ctx: &ToolContext,
    /// The regular expression (Rust regex syntax), or the text to find when `literal` is set.
    pattern: String,
    /// The directory to search, relative to the workspace root (default `.`).
    #[path]
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts` (`!` excludes).
    glob: Option<String>,
    /// Treat `pattern` as plain text (default false).
    literal: Option<bool>,
    /// Ignore case (default false).
    case_insensitive: Option<bool>,
    /// Lines of context before and after each match (default 0, at most 10).
    context: Option<crate::Bounded<0, 10>>,
    /// Matching lines to return at most (default 200, at most 2000).
    max_results: Option<crate::Bounded<1, 2000>>,
) -> Outcome<Json<SearchResults>> {
    let path = path.unwrap_or_else(|| ".".to_owned());
    let options = SearchOptions {
        pattern,
        glob,
        literal: literal.unwrap_or(false),
        case_insensitive: case_insensitive.unwrap_or(false),
        context: context.map_or(0, |c| c.get() as usize),
        max_results: max_results.map_or(200, |n| n.get() as usize),
        max_bytes: super::common::OUTPUT_CAP,
    };
    Outcome(run(ctx, &path, &options))
}

fn run(ctx: &ToolContext, path: &str, options: &SearchOptions) -> Result<Json<SearchResults>, ToolRefusal> {
    let ws = workspace(ctx)?;
    check_length(ctx, "pattern", &options.pattern, MAX_PATTERN)?;
    if let Some(glob) = &options.glob {
        check_length(ctx, "glob", glob, MAX_GLOB)?;
    }
    let start = ws.resolve(path).map_err(|e| path_error(path, e))?;
    if start.target() == Target::Missing {
        return Err(path_error(path, crate::workspace::PathError::NotFound).into());
    }
    if hidden(ctx, &start) {
        return Err(hidden_error(path).into());
    }
    // A cancelled call (timed out, cancelled by the client) stops walking.
    match search_until(ws, &start, ctx.tool(), options, &|| ctx.is_cancelled()) {
        Ok(results) => Ok(Json(results)),
        Err(SearchError::TooLarge(argument)) => Err(invalid_argument(
            ctx,
            argument,
            format!("`{argument}` compiles to more than the size limit; simplify it"),
        )),
        Err(SearchError::Failed(message)) => Err(ToolError::new(message).into()),
    }
}

/// Why a search could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The named argument (`pattern` or `glob`) compiles past `PATTERN_SIZE_LIMIT` (10 MiB).
    #[error("`{0}` compiles to more than the size limit; simplify it")]
    TooLarge(&'static str),
    /// The pattern or glob is not valid, or the start cannot be walked.
    #[error("{0}")]
    Failed(String),
}

/// The search itself (also what the benchmark measures): beneath `start` (resolved in `ws`),
/// for `scope` (the tool's name, which policy's hidden paths are asked about); reported paths
/// are relative to the root.
pub fn search(
    ws: &Workspace,
    start: &Resolved,
    scope: &str,
    options: &SearchOptions,
) -> Result<SearchResults, SearchError> {
    search_until(ws, start, scope, options, &|| false)
}

/// [`search`], stopping the walk early when `cancelled` says so.
fn search_until(
    ws: &Workspace,
    start: &Resolved,
    scope: &str,
    options: &SearchOptions,
    cancelled: &dyn Fn() -> bool,
) -> Result<SearchResults, SearchError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(options.case_insensitive)
        .fixed_strings(options.literal)
        .line_terminator(Some(b'\n'))
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build(&options.pattern)
        .map_err(|e| {
            let message = e.to_string();
            if is_size_limit(&message) {
                SearchError::TooLarge("pattern")
            } else {
                SearchError::Failed(format!("invalid pattern: {message}"))
            }
        })?;
    let mut walk = Walk::new(ws, start, scope).map_err(|e| SearchError::Failed(e.to_string()))?;
    if let Some(glob) = &options.glob {
        // Matched against paths relative to the start (`.` strips nothing). A glob that parses
        // fails to build only past globset's size limit.
        let mut overrides = ignore::overrides::OverrideBuilder::new(".");
        overrides.add(glob).map_err(|e| SearchError::Failed(format!("invalid glob `{glob}`: {e}")))?;
        walk = walk.with_overrides(overrides.build().map_err(|_| SearchError::TooLarge("glob"))?);
    }
    // One entry per file with matches; sorted by path at the end (lines are in order already).
    let found = Mutex::new(Vec::<(String, Vec<Hit>)>::new());
    let skipped = Mutex::new(Vec::<String>::new());
    let count = AtomicUsize::new(0);
    let kept = AtomicUsize::new(0);
    let files = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let cap = options.max_results;
    let threads = std::thread::available_parallelism().map_or(2, usize::from).min(12);
    // The walk runs on this thread and hands files to the searchers in batches (one wake-up per
    // batch, not per file) through a bounded queue (so the directory handles held by queued
    // files stay few).
    let (send, receive) = mpsc::sync_channel::<Vec<WalkEntry>>(QUEUED_BATCHES);
    let receive = Mutex::new(receive);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (matcher, receive) = (matcher.clone(), &receive);
            let (found, skipped, count, kept, files, stop) = (&found, &skipped, &count, &kept, &files, &stop);
            let max_bytes = options.max_bytes;
            scope.spawn(move || {
                let mut searcher = SearcherBuilder::new()
                    .binary_detection(BinaryDetection::quit(b'\x00'))
                    .line_number(true)
                    .before_context(options.context)
                    .after_context(options.context)
                    .heap_limit(Some(LINE_HEAP))
                    .build();
                loop {
                    let next = receive.lock().unwrap_or_else(|p| p.into_inner()).recv();
                    let Ok(batch) = next else { return };
                    for entry in batch {
                        if stop.load(Ordering::Relaxed) {
                            break; // drain the queue
                        }
                        let Some(file) = entry.open() else { continue };
                        files.fetch_add(1, Ordering::Relaxed);
                        let mut sink = Collect {
                            hits: Vec::new(),
                            recent: VecDeque::with_capacity(options.context),
                            context: options.context as u64,
                            count,
                            cap,
                            kept,
                            max_bytes,
                        };
                        let outcome = searcher.search_file(&matcher, &file, &mut sink);
                        let relative = || entry.relative().to_string_lossy().into_owned();
                        if outcome.is_err() {
                            // The line buffer hit its limit (or the read failed): say so.
                            skipped.lock().unwrap_or_else(|p| p.into_inner()).push(relative());
                        }
                        if !sink.hits.is_empty() {
                            found.lock().unwrap_or_else(|p| p.into_inner()).push((relative(), sink.hits));
                        }
                        if count.load(Ordering::Relaxed) >= cap || kept.load(Ordering::Relaxed) >= max_bytes {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
        let mut batch = Vec::with_capacity(BATCH);
        for entry in walk {
            if stop.load(Ordering::Relaxed) || cancelled() {
                batch.clear();
                break;
            }
            batch.push(entry);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if send.send(full).is_err() {
                    break;
                }
            }
        }
        if !batch.is_empty() {
            let _ = send.send(batch);
        }
        drop(send);
    });
    let mut files_found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    files_found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let truncated = if count.load(Ordering::Relaxed) >= cap {
        Some(format!(
            "stopped at {cap} matching lines; narrow the pattern, the directory or the glob (or raise max_results)"
        ))
    } else if kept.load(Ordering::Relaxed) >= options.max_bytes {
        Some(format!(
            "stopped at {} of matching and context lines; narrow the pattern, the directory or the glob (or use less context)",
            super::common::bytes(options.max_bytes as u64)
        ))
    } else {
        None
    };
    let mut skipped = skipped.into_inner().unwrap_or_else(|p| p.into_inner());
    skipped.sort_unstable();
    let skipped = (!skipped.is_empty()).then(|| {
        let more = skipped.len().saturating_sub(MAX_SKIPPED_NAMES);
        let mut names = skipped.iter().take(MAX_SKIPPED_NAMES).cloned().collect::<Vec<_>>().join(", ");
        if more > 0 {
            names.push_str(&format!(" and {more} more"));
        }
        format!(
            "{} file(s) searched only up to their first line longer than {} MiB: {names}",
            skipped.len(),
            LINE_HEAP / (1024 * 1024)
        )
    });
    let total: usize = files_found.iter().map(|(_, hits)| hits.len()).sum();
    let mut matches = Vec::with_capacity(total.min(cap));
    'files: for (path, hits) in files_found {
        for hit in hits {
            if matches.len() >= cap {
                break 'files;
            }
            matches.push(TextMatch {
                path: path.clone(),
                line: hit.line,
                text: hit.text,
                before: hit.before,
                after: hit.after,
            });
        }
    }
    Ok(SearchResults { matches, files_searched: files.into_inner(), truncated, skipped })
}

/// One matching line of a file.
struct Hit {
    line: u64,
    text: String,
    before: Vec<String>,
    after: Vec<String>,
}

/// Collects one file's matches, with context lines attached, within the search's shared caps:
/// `cap` matching lines and `max_bytes` of kept text (`kept`, over every file).
///
/// Every match gets its whole context, even where it overlaps a neighbour's: the searcher
/// reports each line once (lines 2–3 between matches on lines 1 and 4 come only as the first
/// match's after-context, with `context: 2`), so the last `context` lines seen are kept here
/// and a match takes its `before` from them, and a line (context or match) within `context`
/// lines after a match is added to that match's `after`.
struct Collect<'a> {
    hits: Vec<Hit>,
    /// The last `context` lines seen (matches and context), with their numbers.
    recent: VecDeque<(u64, String)>,
    context: u64,
    count: &'a AtomicUsize,
    cap: usize,
    kept: &'a AtomicUsize,
    max_bytes: usize,
}

impl Collect<'_> {
    /// Line `number` follows earlier matches: it is part of the `after` of those within reach.
    fn after_of_earlier(&mut self, number: u64, text: &str) {
        for hit in self.hits.iter_mut().rev() {
            if hit.line >= number {
                continue;
            }
            if number - hit.line > self.context {
                break;
            }
            self.kept.fetch_add(text.len(), Ordering::Relaxed);
            hit.after.push(text.to_owned());
        }
    }

    /// Remembers line `number` for the `before` of a match that may follow.
    fn remember(&mut self, number: u64, text: String) {
        if self.context == 0 {
            return;
        }
        if self.recent.len() as u64 >= self.context {
            self.recent.pop_front();
        }
        self.recent.push_back((number, text));
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.kept.load(Ordering::Relaxed) >= self.max_bytes
            || self.count.fetch_add(1, Ordering::Relaxed) >= self.cap
        {
            return Ok(false);
        }
        let text = line_text(m.bytes());
        let line = m.line_number().unwrap_or(0);
        let first = line.saturating_sub(self.context);
        let before: Vec<String> =
            self.recent.iter().filter(|(n, _)| *n >= first && *n < line).map(|(_, t)| t.clone()).collect();
        let size = text.len() + before.iter().map(String::len).sum::<usize>();
        self.kept.fetch_add(size, Ordering::Relaxed);
        self.after_of_earlier(line, &text);
        self.remember(line, text.clone());
        self.hits.push(Hit { line, text, before, after: Vec::new() });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let (Some(line), SinkContextKind::Before | SinkContextKind::After) = (c.line_number(), c.kind())
        else {
            return Ok(true);
        };
        let text = line_text(c.bytes());
        if matches!(c.kind(), SinkContextKind::After) {
            self.after_of_earlier(line, &text);
        }
        self.remember(line, text);
        Ok(true)
    }
}

fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.len() <= MAX_LINE
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        return text.to_owned();
    }
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > MAX_LINE {
        let mut cut: String = text.chars().take(MAX_LINE).collect();
        cut.push('…');
        cut
    } else {
        text.into_owned()
    }
}
