//! Walking the workspace beneath its root handle: the one walker behind `find_files`,
//! `search_text` and `resources/list`.
//!
//! Decisions, and why:
//!
//! - **Handles, not names.** Every directory is opened with `openat(parent, name, O_DIRECTORY |
//!   O_NOFOLLOW)` from the root's open handle, never by an absolute path. A root renamed and
//!   replaced by a link after start is not seen (the handle still names the directory the server
//!   started on), and a subdirectory swapped for a link while the walk is under way makes that
//!   open fail, so the walk skips it instead of following it out of the root.
//! - **Only regular files** are yielded; links are listed by nobody and followed by nobody, FIFOs,
//!   sockets and devices are skipped. Files are opened by [`WalkEntry::open`] with `O_NOFOLLOW |
//!   O_NONBLOCK` relative to their directory's handle and checked with `fstat`.
//! - **Ignore files as git and ripgrep read them**, but only inside the root: `.ignore`, then
//!   `.gitignore`, then `.git/info/exclude`, the deepest directory's rule winning within each kind
//!   and `!` re-including; `.gitignore` rules of directories above a nested repository (a
//!   directory holding `.git`) do not apply inside it. Directories above the root are never
//!   consulted, nor is the user's global excludes file: what is ignored depends on the workspace
//!   alone. Each ignore file is read through its directory's handle, must be a regular file (a link
//!   is skipped, as git itself refuses a symbolic `.gitignore`), is opened without blocking (a
//!   FIFO cannot hang a walk) and is read up to [`MAX_IGNORE_FILE`], all of them together up to
//!   [`MAX_IGNORE_TOTAL`] a walk (the rest is dropped, with a warning on stderr).
//! - **Same order as before**: depth first, each directory's entries sorted by name, `.git`
//!   skipped, hidden files kept.
//! - **Policy's hidden paths** ([`Workspace::is_hidden`]) are left out: a hidden directory is not
//!   entered.
//! - **Bounded depth**: directories deeper than [`MAX_DEPTH`] are skipped (with a warning), so a
//!   hostile tree cannot exhaust the server's file handles (each level holds one).

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::Gitignore;
use ignore::overrides::Override;
use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;

use super::Workspace;
use super::resolve::{PathError, Resolved, Target, open_dir};

mod listing;
mod rules;

use listing::Listing;
use rules::{Rules, open_regular};

/// The most of an ignore file that is read (1 MiB).
pub const MAX_IGNORE_FILE: u64 = 1 << 20;

/// The most of all ignore files one walk reads together (4 MiB): compiling ignore rules costs
/// time, so a tree full of huge ignore files cannot make every walk slow; past it, further
/// ignore files are skipped with a warning.
pub const MAX_IGNORE_TOTAL: u64 = 4 << 20;

/// The deepest directory a walk enters, counted from the root.
pub const MAX_DEPTH: usize = 256;

/// A file a walk found.
#[derive(Debug, Clone)]
pub struct WalkEntry {
    dir: Arc<OwnedFd>,
    /// Ends with its name, which starts at `name_at`.
    relative: PathBuf,
    name_at: usize,
}

impl WalkEntry {
    /// Its path relative to the workspace root.
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// Its name in its directory.
    pub fn name(&self) -> &OsStr {
        OsStr::from_bytes(&self.relative.as_os_str().as_bytes()[self.name_at..])
    }

    /// Its path relative to the workspace root, given up.
    pub fn into_relative(self) -> PathBuf {
        self.relative
    }

    /// Opens it for reading: by name in the directory the walk found it in, refusing a link
    /// (`O_NOFOLLOW`) and anything but a regular file (opened with `O_NONBLOCK`, checked with
    /// `fstat`). `None` when it is gone or was replaced by something else.
    pub fn open(&self) -> Option<File> {
        open_regular(&self.dir, self.name()).ok().flatten()
    }

    /// Its size now (`None` when it is gone or no longer a regular file).
    pub fn size(&self) -> Option<u64> {
        let stat = rustix::fs::statat(self.dir.as_fd(), self.name(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
        (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile).then_some(stat.st_size.max(0) as u64)
    }
}

/// A directory being walked.
#[derive(Debug)]
struct Frame {
    dir: Arc<OwnedFd>,
    /// Relative to the root.
    relative: PathBuf,
    /// Its entries, those still to visit next.
    listing: Listing,
    rules: Arc<Rules>,
}

/// A depth-first walk of the regular files beneath a directory of the workspace, in sorted
/// order (see the module docs). An iterator of [`WalkEntry`]; cheap to keep paused.
#[derive(Debug)]
pub struct Walk {
    workspace: Workspace,
    scope: String,
    /// Rules of the directories above the start (root first), with their relative paths.
    above: Vec<(PathBuf, Arc<Rules>)>,
    stack: Vec<Frame>,
    /// Listings of directories walked, whose buffers the next directories are read into (those
    /// [`Listing::worth_keeping`]: at most one a depth the walk reached, kept while it is paused).
    spare: Vec<Listing>,
    /// Overrides (`search_text`'s `glob`), matched relative to the start.
    overrides: Option<Override>,
    start: PathBuf,
    /// Only what sorts after this path (and the directories leading to it).
    after: Option<PathBuf>,
    /// A walk started at a regular file yields just that file.
    single: Option<WalkEntry>,
    /// What this walk may still read of ignore files.
    budget: u64,
}

impl Walk {
    /// Walks beneath `start` (a directory resolved in `workspace`) for `scope` (the tool's name,
    /// or `resources/list`: what policy's hidden paths are asked about).
    ///
    /// A `start` that is a regular file is walked as that one file (ignore files do not apply to
    /// a file named explicitly, as in ripgrep).
    pub fn new(workspace: &Workspace, start: &Resolved, scope: &str) -> Result<Walk, PathError> {
        if let (Target::File { .. }, Some(name)) = (start.target(), &start.name) {
            // A resolved path ends with its name.
            let name_at = start.relative().as_os_str().len().saturating_sub(name.len());
            let single = (!workspace.is_hidden(scope, start.relative())).then(|| WalkEntry {
                dir: Arc::clone(&start.parent),
                relative: start.relative().to_path_buf(),
                name_at,
            });
            return Ok(Walk {
                workspace: workspace.clone(),
                scope: scope.to_owned(),
                above: Vec::new(),
                stack: Vec::new(),
                spare: Vec::new(),
                overrides: None,
                start: start.relative().to_path_buf(),
                after: None,
                single,
                budget: 0,
            });
        }
        // Open the chain root → start by names, each without following a link, to read the
        // ignore files of the directories above the start (inside the root only).
        let mut dir = workspace.dir_handle();
        let mut relative = PathBuf::new();
        let mut above = Vec::new();
        let mut budget = MAX_IGNORE_TOTAL;
        let names: Vec<&OsStr> = start.relative().iter().collect();
        for name in names {
            let listing = Listing::read(&dir)?;
            above.push((relative.clone(), Arc::new(Rules::read(&dir, &relative, &listing, &mut budget))));
            dir = Arc::new(open_dir(dir.as_fd(), Path::new(name)).map_err(|e| match e.raw_os_error() {
                Some(c) if c == Errno::NOENT.raw_os_error() => PathError::NotFound,
                Some(c) if c == Errno::NOTDIR.raw_os_error() || c == Errno::LOOP.raw_os_error() => {
                    PathError::NotADirectory
                }
                _ => PathError::Io(e),
            })?);
            relative.push(name);
        }
        let mut walk = Walk {
            workspace: workspace.clone(),
            scope: scope.to_owned(),
            above,
            stack: Vec::new(),
            spare: Vec::new(),
            overrides: None,
            start: relative.clone(),
            after: None,
            single: None,
            budget,
        };
        let listing = Listing::read(&dir)?;
        let rules = Arc::new(Rules::read(&dir, &relative, &listing, &mut walk.budget));
        walk.stack.push(Frame { dir, relative, listing, rules });
        Ok(walk)
    }

    /// Applies overrides (globs whitelisting or, with `!`, excluding files; relative to the
    /// start), which win over ignore files as in ripgrep's `-g`.
    pub fn with_overrides(mut self, overrides: Override) -> Walk {
        self.overrides = Some(overrides);
        self
    }

    /// Only yields files that sort after `after` (relative to the root), pruning every directory
    /// that sorts entirely before it.
    pub fn after(mut self, after: Option<PathBuf>) -> Walk {
        self.after = after;
        self
    }

    /// Whether ignore files or overrides leave this entry out.
    fn ignored(&self, relative: &Path, is_dir: bool) -> bool {
        if let Some(overrides) = &self.overrides {
            let within = below(relative, &self.start).unwrap_or(relative);
            match overrides.matched(within, is_dir) {
                Match::Whitelist(_) => return false,
                Match::Ignore(_) => return true,
                Match::None => {}
            }
        }
        let chain = self
            .stack
            .iter()
            .rev()
            .map(|f| (f.relative.as_path(), &*f.rules))
            .chain(self.above.iter().rev().map(|(p, r)| (p.as_path(), &**r)));
        let (mut dot_ignore, mut gitignore, mut exclude) = (None, None, None);
        let mut saw_git = false;
        for (dir, rules) in chain.filter(|(_, rules)| !rules.is_empty()) {
            let Some(within) = below(relative, dir) else { continue };
            let matched = |gi: &Option<Gitignore>| match gi.as_ref().map(|g| g.matched(within, is_dir)) {
                Some(Match::Ignore(_)) => Some(true),
                Some(Match::Whitelist(_)) => Some(false),
                _ => None,
            };
            dot_ignore = dot_ignore.or_else(|| matched(&rules.dot_ignore));
            if !saw_git {
                gitignore = gitignore.or_else(|| matched(&rules.gitignore));
                exclude = exclude.or_else(|| matched(&rules.exclude));
            }
            saw_git = saw_git || rules.has_git;
        }
        dot_ignore.or(gitignore).or(exclude).unwrap_or(false)
    }

    fn pruned(&self, relative: &Path) -> bool {
        // Keep what comes after the cursor, and the directories leading down to it.
        self.after.as_deref().is_some_and(|after| !(relative > after || after.starts_with(relative)))
    }
}

impl Iterator for Walk {
    type Item = WalkEntry;

    fn next(&mut self) -> Option<WalkEntry> {
        if let Some(single) = self.single.take() {
            return Some(single);
        }
        loop {
            let frame = self.stack.last_mut()?;
            let Some((name, kind)) = frame.listing.next() else {
                if let Some(done) = self.stack.pop()
                    && done.listing.worth_keeping()
                {
                    self.spare.push(done.listing);
                }
                continue;
            };
            if name == ".git" {
                continue;
            }
            let mut relative = PathBuf::with_capacity(frame.relative.as_os_str().len() + 1 + name.len());
            relative.push(&frame.relative);
            relative.push(name);
            let name_at = relative.as_os_str().len() - name.len();
            let dir = Arc::clone(&frame.dir);
            let name = OsStr::from_bytes(&relative.as_os_str().as_bytes()[name_at..]);
            let kind = match kind {
                Some(kind) => kind,
                None => match rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                    Err(_) => continue, // gone since the listing
                },
            };
            let is_dir = match kind {
                FileType::Directory => true,
                FileType::RegularFile => false,
                _ => continue, // links and special files
            };
            if self.pruned(&relative)
                || self.workspace.is_hidden(&self.scope, &relative)
                || self.ignored(&relative, is_dir)
            {
                continue;
            }
            if !is_dir {
                // A file with several names may be a denied file by another name.
                if self.workspace.hides_links(&self.scope)
                    && rustix::fs::statat(dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(true, |stat| stat.st_nlink > 1)
                {
                    continue;
                }
                return Some(WalkEntry { dir, relative, name_at });
            }
            if self.stack.len() + self.above.len() >= MAX_DEPTH {
                tracing::warn!(dir = %relative.display(), "deeper than {MAX_DEPTH} directories: not walked");
                continue;
            }
            // Opened without following a link: a directory swapped for a link since the listing
            // fails here and is skipped, never followed out of the root.
            let Ok(fd) = open_dir(dir.as_fd(), Path::new(name)) else { continue };
            let Ok(listing) = self.spare.pop().unwrap_or_default().reread(&fd) else { continue };
            let rules = Arc::new(Rules::read(&fd, &relative, &listing, &mut self.budget));
            self.stack.push(Frame { dir: Arc::new(fd), relative, listing, rules });
        }
    }
}

/// `relative` below `dir`, both paths the walk built (names joined by single `/`s, no `.`):
/// compared as bytes, where [`Path::strip_prefix`] would parse both into components (it was a
/// twelfth of a listing's instructions).
fn below<'a>(relative: &'a Path, dir: &Path) -> Option<&'a Path> {
    let dir = dir.as_os_str().as_bytes();
    if dir.is_empty() {
        return Some(relative);
    }
    match relative.as_os_str().as_bytes().strip_prefix(dir)? {
        [] => Some(Path::new("")),
        [b'/', rest @ ..] => Some(Path::new(OsStr::from_bytes(rest))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::rules::{SmallFileError, read_small};
    use super::*;
    use crate::scratch::Scratch;

    fn files(ws: &Workspace, start: &str) -> Vec<String> {
        let start = ws.resolve(start).expect("start");
        Walk::new(ws, &start, "find_files")
            .expect("walk")
            .map(|e| e.relative().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn below_is_strip_prefix_for_the_walks_paths() {
        let paths = ["", "a", "ab", "a/b", "a/bc", "a/b/c", "ab/c", "a/b/c/d.txt"];
        for relative in paths {
            for dir in paths {
                let (relative, dir) = (Path::new(relative), Path::new(dir));
                assert_eq!(
                    below(relative, dir),
                    relative.strip_prefix(dir).ok(),
                    "{relative:?} below {dir:?}"
                );
            }
        }
    }

    #[test]
    fn ignore_files_as_git_reads_them() {
        let s = Scratch::new("walk-ignore");
        s.write(".gitignore", "*.log\nbuild/\n!keep.log\n");
        s.write("a.log", "");
        s.write("keep.log", "");
        s.write("build/out.txt", "");
        s.write(".hidden", "");
        s.write(".git/config", "");
        s.write("src/.gitignore", "!b.log\n");
        s.write("src/b.log", "");
        s.write("src/c.log", "");
        s.write("src/.ignore", "secret.txt\n");
        s.write("src/.gitignore2", "");
        s.write("src/secret.txt", "");
        // A nested repository: the outer .gitignore does not apply inside it, .ignore does.
        s.write("nested/.git/info/exclude", "excluded.txt\n");
        s.write("nested/d.log", "");
        s.write("nested/excluded.txt", "");
        s.write(".ignore", "*.tmp\n");
        s.write("nested/e.tmp", "");
        let ws = Workspace::open(s.path()).expect("open");
        assert_eq!(
            files(&ws, "."),
            [
                ".gitignore",
                ".hidden",
                ".ignore",
                "keep.log",
                "nested/d.log",
                "src/.gitignore",
                "src/.gitignore2",
                "src/.ignore",
                "src/b.log"
            ]
        );
        // Starting below the root still applies the rules of the directories above it.
        assert_eq!(files(&ws, "src"), ["src/.gitignore", "src/.gitignore2", "src/.ignore", "src/b.log"]);
        // A file named as the start is walked as itself.
        assert_eq!(files(&ws, "a.log"), ["a.log"]);
    }

    #[test]
    fn hidden_paths_are_left_out_and_not_entered() {
        let s = Scratch::new("walk-hidden");
        s.write("secrets/key", "");
        s.write("public/readme", "");
        s.write("public/secret.txt", "");
        let ws = Workspace::open(s.path()).expect("open");
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&asked);
        ws.set_hidden(Arc::new(move |scope: &str, path: &Path| {
            seen.lock().expect("lock").push((scope.to_owned(), path.to_path_buf()));
            path.starts_with("secrets") || path.ends_with("secret.txt")
        }));
        assert_eq!(files(&ws, "."), ["public/readme"]);
        let asked = asked.lock().expect("lock");
        assert!(asked.iter().all(|(scope, _)| scope == "find_files"));
        assert!(
            !asked.iter().any(|(_, p)| p == Path::new("secrets/key")),
            "a hidden directory is not entered"
        );
    }

    #[test]
    fn special_and_linked_ignore_files_are_skipped() {
        let s = Scratch::new("walk-special");
        s.write("a.txt", "");
        s.write("outside-rules", "*.txt\n");
        std::os::unix::fs::symlink("/dev/zero", s.path().join(".gitignore")).expect("link");
        std::os::unix::fs::symlink(s.path().join("outside-rules"), s.path().join(".ignore")).expect("link");
        let ws = Workspace::open(s.path()).expect("open");
        assert_eq!(files(&ws, "."), ["a.txt", "outside-rules"]);
        let big = "x\n".repeat((MAX_IGNORE_FILE as usize) / 2 + 10);
        s.write("big", &big);
        let root = ws.dir_handle();
        let read = read_small(&*root, OsStr::new("big"), MAX_IGNORE_FILE).expect("read").expect("there");
        assert!(read.truncated && read.bytes.len() as u64 == MAX_IGNORE_FILE);
        assert!(matches!(read_small(&*root, OsStr::new(".gitignore"), 10), Err(SmallFileError::NotRegular)));
        assert!(read_small(&*root, OsStr::new("missing"), 10).expect("ok").is_none());
    }

    #[test]
    fn a_directory_listing_keeps_only_what_fits() {
        let s = Scratch::new("walk-first");
        for i in 0..50 {
            s.write(&format!("f{i:02}"), "");
        }
        let ws = Workspace::open(s.path()).expect("open");
        let root = ws.resolve(".").expect("root");
        let (first, more) = root.read_dir_first(5, |n| n != "f01").expect("list");
        let names: Vec<_> = first.iter().map(|e| e.name.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["f00", "f02", "f03", "f04", "f05"]);
        assert!(more);
        let (all, more) = root.read_dir_first(100, |_| true).expect("list");
        assert_eq!((all.len(), more), (50, false));
    }

    #[test]
    fn ignore_files_share_one_budget_a_walk() {
        let s = Scratch::new("walk-budget");
        let filler = format!("# {}\n", "x".repeat((MAX_IGNORE_FILE as usize) - 100));
        for d in 0..6 {
            s.write(&format!("d{d}/.gitignore"), &format!("{filler}ignored.txt\n"));
            s.write(&format!("d{d}/ignored.txt"), "");
        }
        let ws = Workspace::open(s.path()).expect("open");
        let found: Vec<String> = files(&ws, ".").into_iter().filter(|f| f.ends_with("ignored.txt")).collect();
        assert_eq!(found, ["d4/ignored.txt", "d5/ignored.txt"], "the first four files use up the budget");
    }
}
