//! `search_text`: ripgrep's engine over the workspace.
//!
//! Built on ripgrep's own crates: `ignore` walks the tree in parallel (`.gitignore` honoured,
//! hidden files searched, `.git` skipped, links not followed), `grep-regex` compiles the pattern
//! and `grep-searcher` reads each file, skipping binary ones as ripgrep does (it stops at the
//! first NUL byte). Results are sorted by path and line; when the cap is reached the search
//! stops, so which matches come back first is not specified — the marker says to narrow it.

use std::fs::File;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Serialize;

use super::common::{path_error, workspace};
use crate::tool;
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::Target;

/// Longest line text returned (longer lines are cut, with `…`).
const MAX_LINE: usize = 500;

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
}

/// Search file contents with a regular expression (or a literal string), like ripgrep: files
/// ignored by `.gitignore`, the `.git` directory and binary files are skipped. Returns matching
/// lines with their path and line number, and optional context lines. At most `max_results`.
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
) -> Result<Json<SearchResults>, ToolError> {
    let path = path.unwrap_or_else(|| ".".to_owned());
    let ws = workspace(ctx)?;
    let start = ws.resolve(&path).map_err(|e| path_error(&path, e))?;
    if start.target() == Target::Missing {
        return Err(path_error(&path, crate::workspace::PathError::NotFound));
    }
    let options = SearchOptions {
        pattern,
        glob,
        literal: literal.unwrap_or(false),
        case_insensitive: case_insensitive.unwrap_or(false),
        context: context.map_or(0, |c| c.get() as usize),
        max_results: max_results.map_or(200, |n| n.get() as usize),
    };
    search(ws.root(), &ws.absolute(&start), &options).map(Json).map_err(ToolError::new)
}

/// The search itself (also what the benchmark measures): `root` is the canonical workspace
/// root and `start` an absolute path inside it; reported paths are relative to `root`.
pub fn search(root: &Path, start: &Path, options: &SearchOptions) -> Result<SearchResults, String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(options.case_insensitive)
        .fixed_strings(options.literal)
        .line_terminator(Some(b'\n'))
        .build(&options.pattern)
        .map_err(|e| format!("invalid pattern: {e}"))?;
    let mut walk = ignore::WalkBuilder::new(start);
    walk.hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .threads(std::thread::available_parallelism().map_or(2, usize::from).min(12));
    if let Some(glob) = &options.glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(start);
        overrides.add(glob).map_err(|e| format!("invalid glob `{glob}`: {e}"))?;
        walk.overrides(overrides.build().map_err(|e| format!("invalid glob `{glob}`: {e}"))?);
    }
    // One entry per file with matches; sorted by path at the end (lines are in order already).
    let found = Mutex::new(Vec::<(String, Vec<Hit>)>::new());
    let count = AtomicUsize::new(0);
    let files = AtomicU64::new(0);
    let cap = options.max_results;
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .before_context(options.context)
            .after_context(options.context)
            .build();
        let (found, count, files) = (&found, &count, &files);
        Box::new(move |entry| {
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if count.load(Ordering::Relaxed) >= cap {
                return WalkState::Quit;
            }
            let Some(file) = open_confined(root, entry.path()) else { return WalkState::Continue };
            files.fetch_add(1, Ordering::Relaxed);
            let mut sink = Collect { hits: Vec::new(), before: Vec::new(), count, cap };
            let _ = searcher.search_file(&matcher, &file, &mut sink);
            if !sink.hits.is_empty() {
                let relative =
                    entry.path().strip_prefix(root).unwrap_or(entry.path()).to_string_lossy().into_owned();
                found.lock().unwrap_or_else(|p| p.into_inner()).push((relative, sink.hits));
            }
            if count.load(Ordering::Relaxed) >= cap { WalkState::Quit } else { WalkState::Continue }
        })
    });
    let mut files_found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    files_found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let truncated = (count.load(Ordering::Relaxed) >= cap).then(|| {
        format!("stopped at {cap} matching lines; narrow the pattern, the directory or the glob (or raise max_results)")
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
    Ok(SearchResults { matches, files_searched: files.into_inner(), truncated })
}

/// One matching line of a file.
struct Hit {
    line: u64,
    text: String,
    before: Vec<String>,
    after: Vec<String>,
}

/// Collects one file's matches, with context lines attached.
struct Collect<'a> {
    hits: Vec<Hit>,
    before: Vec<String>,
    count: &'a AtomicUsize,
    cap: usize,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.count.fetch_add(1, Ordering::Relaxed) >= self.cap {
            return Ok(false);
        }
        self.hits.push(Hit {
            line: m.line_number().unwrap_or(0),
            text: line_text(m.bytes()),
            before: std::mem::take(&mut self.before),
            after: Vec::new(),
        });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        match c.kind() {
            SinkContextKind::Before => self.before.push(line_text(c.bytes())),
            SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(line_text(c.bytes()));
                }
            }
            SinkContextKind::Other => {}
        }
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

/// Opens a file the walk found, making sure it really is inside `root`: the last component must
/// not be a link (`O_NOFOLLOW`), it must be a regular file (`O_NONBLOCK`, so a FIFO never
/// blocks), and on Linux the kernel's name for the open file (`/proc/self/fd`) must lie beneath
/// the root — which catches a directory swapped for a link while the walk was under way.
fn open_confined(root: &Path, path: &Path) -> Option<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        if !real.starts_with(root) {
            return None;
        }
    }
    let _ = rustix::fs::fcntl_setfl(&fd, OFlags::RDONLY);
    Some(File::from(fd))
}
