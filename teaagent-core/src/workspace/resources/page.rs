//! One `resources/list` page: the next files of a walk, described as resources on two threads.
//!
//! Describing a file takes its size, a `stat` of it by name in its directory's handle, and those
//! calls cost more than the rest of a listing together (the walk's reading of the directories
//! included). So while this thread walks on, a helper thread takes the files found so far a chunk
//! at a time and stats them; this thread describes each chunk the helper is done with (its URI,
//! name and MIME type) between steps of the walk, and when the walk has found the page it stats
//! what the helper has not taken yet. Every allocation and free of a page happens on this thread
//! (the helper only fills in sizes), which keeps the allocator's per-thread caches working.
//!
//! The helper is one thread a listing keeps ([`Helper`]), started by the first page that needs it
//! and waiting between pages; it ends when the listing is dropped. It helps one page at a time:
//! a page listed while it helps another is done by its own thread alone, as is a page smaller
//! than one chunk, or any page when the system would not start the helper. The page comes out
//! in the walk's order whoever statted which chunk. A chunk whose statting panicked on the helper
//! (nothing there is known to) goes back, and the walking thread stats the rest of that page: no
//! page waits for a chunk that nobody will stat.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use super::super::uri;
use super::super::walk::{Walk, WalkEntry};
use super::guess_mime;
use crate::mcp::resources::Resource;

/// Files statted together.
const CHUNK: usize = 32;

/// The files a page took from a walk.
pub(super) struct Page {
    /// Its files, described, in the walk's order.
    pub resources: Vec<Resource>,
    /// The path of the last of them (the page's end, which its cursor names).
    pub last: Option<PathBuf>,
    /// The first file after the page, taken from the walk to know the page is not the last.
    pub next: Option<WalkEntry>,
}

/// The thread that stats files for a listing's pages (see the module docs).
#[derive(Default)]
pub(super) struct Helper {
    /// Where pages hand it their queue; `None` when it could not be started.
    pages: OnceLock<Option<Sender<Arc<Queue>>>>,
}

impl Helper {
    /// Asks the helper to stat `queue`'s chunks, starting it the first time.
    fn help(&self, queue: &Arc<Queue>) {
        let pages = self.pages.get_or_init(|| {
            let (pages, waiting) = channel::<Arc<Queue>>();
            std::thread::Builder::new()
                .name("resources/list".into())
                // It only stats, through `rustix`, whose paths are copied on the stack.
                .stack_size(128 * 1024)
                .spawn(move || {
                    for queue in waiting {
                        queue.stat_while_walking();
                    }
                })
                .ok()
                .map(|_| pages)
        });
        if let Some(pages) = pages {
            // Fails only when the thread is gone; the page is then done by its own thread.
            let _ = pages.send(Arc::clone(queue));
        }
    }
}

/// Takes the next `size` files `wanted` keeps from `walk` (starting with `first`, a file taken
/// from it before) and describes them, with `helper`'s help.
pub(super) fn take(
    helper: &Helper,
    walk: &mut Walk,
    first: Option<WalkEntry>,
    size: usize,
    mut wanted: impl FnMut(&WalkEntry) -> bool,
) -> Page {
    let queue = Arc::new(Queue::default());
    let mut described = Described::new(size);
    let mut taken = 0;
    let mut last = None;
    let mut next = None;
    let mut chunk = described.chunk(0);
    let found = first.into_iter().chain(std::iter::from_fn(|| walk.find(|file| wanted(file))));
    for file in found {
        if taken == size {
            next = Some(file);
            break;
        }
        taken += 1;
        chunk.files.push(file);
        if chunk.files.len() == CHUNK {
            last = chunk.files.last().map(|file| file.relative().to_path_buf());
            queue.push(std::mem::replace(&mut chunk, described.chunk(taken)));
            if taken == CHUNK {
                helper.help(&queue);
            }
            for statted in queue.statted() {
                described.add(statted);
            }
        }
    }
    if let Some(file) = chunk.files.last() {
        last = Some(file.relative().to_path_buf());
        queue.push(chunk);
    }
    queue.finish();
    while let Some(statted) = queue.next_for_walker() {
        described.add(statted);
    }
    Page { resources: described.resources, last, next }
}

/// Files found together, with their sizes once statted.
struct Chunk {
    /// The index of its first file in the page.
    at: usize,
    files: Vec<WalkEntry>,
    sizes: Vec<Option<u64>>,
}

impl Chunk {
    /// Stats its files (through their directories' handles; a file gone since has no size).
    fn stat(&mut self) {
        self.sizes.extend(self.files.iter().map(WalkEntry::size));
    }
}

/// A page's chunks waiting to be statted, and statted chunks waiting to be described.
#[derive(Default)]
pub(super) struct Queue {
    state: Mutex<State>,
    /// A chunk came, or no more will.
    found: Condvar,
    /// The helper statted a chunk.
    statted: Condvar,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<Chunk>,
    statted: Vec<Chunk>,
    /// The helper is statting a chunk now.
    statting: bool,
    /// No chunk will come any more.
    finished: bool,
}

impl Queue {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, chunk: Chunk) {
        self.state().waiting.push_back(chunk);
        self.found.notify_one();
    }

    fn finish(&self) {
        self.state().finished = true;
        self.found.notify_all();
    }

    /// The chunks statted so far.
    fn statted(&self) -> Vec<Chunk> {
        std::mem::take(&mut self.state().statted)
    }

    /// The helper: stats waiting chunks until none is waiting and none will come.
    fn stat_while_walking(&self) {
        let mut state = self.state();
        loop {
            if let Some(mut chunk) = state.waiting.pop_front() {
                state.statting = true;
                drop(state);
                // Nothing here is known to panic (`statat` returns its errors); if something
                // did, the page must not wait for a chunk the helper dropped: it goes back,
                // unstatted, and the helper leaves this page to the walking thread (a chunk that
                // panics every time is not tried again and again here).
                let statted = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    #[cfg(test)]
                    tests::panic_if_told(&chunk);
                    chunk.stat();
                }));
                state = self.state();
                state.statting = false;
                let panicked = statted.is_err();
                if panicked {
                    chunk.sizes.clear();
                    state.waiting.push_back(chunk);
                } else {
                    state.statted.push(chunk);
                }
                self.statted.notify_one();
                if panicked {
                    return;
                }
            } else if state.finished {
                return;
            } else {
                state = self.found.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// The walker once the walk is done: the next chunk statted by the helper, or one it stats
    /// itself, until every chunk is statted.
    fn next_for_walker(&self) -> Option<Chunk> {
        let mut state = self.state();
        loop {
            if let Some(chunk) = state.statted.pop() {
                return Some(chunk);
            }
            if let Some(mut chunk) = state.waiting.pop_back() {
                drop(state);
                chunk.stat();
                return Some(chunk);
            }
            if !state.statting {
                return None;
            }
            state = self.statted.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The page's files described so far, in the walk's order (a chunk statted before the one
/// ahead of it waits in `early`), and emptied chunks kept for the chunks to come.
struct Described {
    resources: Vec<Resource>,
    early: Vec<Chunk>,
    mime: MimeMemo,
    spare: Vec<Chunk>,
}

impl Described {
    fn new(size: usize) -> Described {
        Described {
            resources: Vec::with_capacity(size.min(4096)),
            early: Vec::new(),
            mime: MimeMemo::default(),
            spare: Vec::new(),
        }
    }

    /// An empty chunk whose first file will be the page's `at`-th.
    fn chunk(&mut self, at: usize) -> Chunk {
        let mut chunk = self.spare.pop().unwrap_or_else(|| Chunk {
            at,
            files: Vec::with_capacity(CHUNK),
            sizes: Vec::with_capacity(CHUNK),
        });
        chunk.at = at;
        chunk
    }

    /// Describes `chunk` if it comes next, and the early chunks that then come next.
    fn add(&mut self, chunk: Chunk) {
        if chunk.at != self.resources.len() {
            self.early.push(chunk);
            return;
        }
        self.describe(chunk);
        while let Some(at) = self.early.iter().position(|chunk| chunk.at == self.resources.len()) {
            let chunk = self.early.swap_remove(at);
            self.describe(chunk);
        }
    }

    fn describe(&mut self, mut chunk: Chunk) {
        for (file, size) in chunk.files.drain(..).zip(chunk.sizes.drain(..)) {
            self.resources.push(resource(file, size, &mut self.mime));
        }
        self.spare.push(chunk);
    }
}

/// One file as a resource.
fn resource(file: WalkEntry, size: Option<u64>, mime: &mut MimeMemo) -> Resource {
    let uri = uri::to_uri(file.relative());
    let mime_type = Some(Cow::Borrowed(mime.guess(file.name())));
    Resource { uri, name: uri::into_display(file.into_relative()), mime_type, size, description: None }
}

/// [`guess_mime`] for files in sorted order, which come in runs of one extension: the table is
/// searched once a run.
#[derive(Default)]
struct MimeMemo {
    extension: Vec<u8>,
    known: Option<&'static str>,
}

impl MimeMemo {
    fn guess(&mut self, name: &OsStr) -> &'static str {
        let Some(extension) = extension(name.as_bytes()) else { return guess_mime(Path::new(name), None) };
        if extension != self.extension.as_slice() {
            self.extension.clear();
            self.extension.extend_from_slice(extension);
            self.known =
                std::str::from_utf8(extension).ok().and_then(|e| mime_guess::from_ext(e).first_raw());
        }
        self.known.unwrap_or_else(|| guess_mime(Path::new(name), None))
    }
}

/// A file name's extension as [`Path::extension`] gives it, without parsing a path: after the
/// last dot, unless that dot starts the name (`.env` has none).
fn extension(name: &[u8]) -> Option<&[u8]> {
    if name == b".." {
        return None;
    }
    let dot = name.iter().rposition(|&b| b == b'.')?;
    (dot > 0).then(|| &name[dot + 1..])
}

#[cfg(test)]
mod tests {
    use super::super::WorkspaceResources;
    use super::*;
    use crate::scratch::Scratch;
    use crate::workspace::Workspace;

    /// Writes `dirs` directories of `files` files, the `n`-th file `size(n)` bytes long; their
    /// paths and sizes in the walk's order.
    fn tree(s: &Scratch, dirs: usize, files: usize, size: impl Fn(usize) -> usize) -> Vec<(String, u64)> {
        let mut written = Vec::new();
        for d in 0..dirs {
            for f in 0..files {
                let relative = format!("d{d}/f{f:02}.txt");
                let contents = "x".repeat(size(d * files + f));
                s.write(&relative, &contents);
                written.push((relative, contents.len() as u64));
            }
        }
        written
    }

    /// Every page of `resources` in turn (none longer than `page_size`): each file's name and size.
    fn list_all(resources: &WorkspaceResources, page_size: usize) -> Vec<(String, u64)> {
        let mut listed = Vec::new();
        let mut cursor = None;
        loop {
            let page = resources.list_blocking(cursor.as_deref()).expect("page");
            assert!(page.resources.len() <= page_size);
            listed.extend(page.resources.into_iter().map(|r| (r.name, r.size.expect("size"))));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return listed,
            }
        }
    }

    /// Every page size around the chunk's gives every file once, in the walk's order, each with
    /// its own size (the chunks statted by either thread are put back in place).
    #[test]
    fn pages_keep_the_walks_order_and_each_files_size() {
        let s = Scratch::new("resources-pages");
        let expected = tree(&s, 3, 45, |n| n);
        let workspace = Workspace::open(s.path()).expect("workspace");
        for page_size in [1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 100, 135, 136, 500] {
            let resources = WorkspaceResources::with_limits(workspace.clone(), page_size, 1 << 20);
            assert_eq!(list_all(&resources, page_size), expected, "pages of {page_size}");
        }
    }

    /// Listings that run at once share one helper, which helps one page at a time: every one
    /// of them still gets every file once, in order, with its size, and the helper keeps no
    /// listing waiting.
    #[test]
    fn listings_at_once_share_the_helper_and_each_gets_everything() {
        let s = Scratch::new("resources-at-once");
        let expected = tree(&s, 8, 50, |n| n % 97);
        let workspace = Workspace::open(s.path()).expect("workspace");
        let resources = WorkspaceResources::with_limits(workspace, 70, 1 << 20);
        std::thread::scope(|scope| {
            let listers: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| (0..5).all(|_| list_all(&resources, 70) == expected)))
                .collect();
            for lister in listers {
                assert!(lister.join().expect("lister"), "a listing at once missed or misplaced a file");
            }
        });
    }

    /// The directory a chunk starts in that makes the helper panic once (`panic_if_told`).
    static PANIC_ONCE_IN: Mutex<Option<&'static str>> = Mutex::new(None);

    /// Panics if the test below asked for a panic on a chunk that starts in this directory.
    pub(super) fn panic_if_told(chunk: &Chunk) {
        let mut told = PANIC_ONCE_IN.lock().unwrap_or_else(PoisonError::into_inner);
        let starts_there = |dir| chunk.files.first().is_some_and(|file| file.relative().starts_with(dir));
        if told.is_some_and(starts_there) {
            *told = None;
            drop(told);
            panic!("a panic while the helper stats (a test)");
        }
    }

    /// A panic while the helper stats a chunk loses no file and keeps no page waiting: the
    /// chunk goes back, and the walking thread stats it.
    #[test]
    fn a_panic_in_the_helper_loses_no_file() {
        let s = Scratch::new("resources-helper-panic");
        let mut expected = Vec::new();
        for f in 0..400 {
            let relative = format!("helper-panics/f{f:03}.txt");
            s.write(&relative, &"x".repeat(f % 13));
            expected.push((relative, (f % 13) as u64));
        }
        let workspace = Workspace::open(s.path()).expect("workspace");
        let resources = Arc::new(WorkspaceResources::with_limits(workspace, 500, 1 << 20));
        let told = || PANIC_ONCE_IN.lock().unwrap_or_else(PoisonError::into_inner).is_some();
        *PANIC_ONCE_IN.lock().unwrap_or_else(PoisonError::into_inner) = Some("helper-panics");
        // The helper takes chunks only while the walk goes on, so it may take none in a
        // listing: list until it has panicked once (each listing on a thread of its own, waited
        // for with a bound, so that a page left waiting fails the test rather than hangs it).
        for _ in 0..200 {
            let (sent, listed) = std::sync::mpsc::channel();
            let resources = Arc::clone(&resources);
            std::thread::spawn(move || sent.send(list_all(&resources, 500)));
            let listed = listed.recv_timeout(std::time::Duration::from_secs(30));
            assert_eq!(listed.expect("the listing ended"), expected);
            if !told() {
                return;
            }
        }
        panic!("the helper never took a chunk in 200 listings");
    }

    #[test]
    fn the_memo_guesses_as_the_table_does() {
        let names = [
            "a.rs",
            "b.rs",
            "c.RS",
            "d.txt",
            "Makefile",
            ".env",
            "e.",
            "f.unknownext",
            "Cargo.lock",
            "g.lock",
            "h.rs",
            "i.json",
            "j.unknownext",
            ".hidden.rs",
        ];
        let mut memo = MimeMemo::default();
        for name in names.iter().chain(names.iter().rev()) {
            assert_eq!(memo.guess(OsStr::new(name)), guess_mime(Path::new(name), None), "{name}");
        }
    }

    #[test]
    fn extensions_as_paths_give_them() {
        for name in ["a.rs", "a.tar.gz", ".env", ".env.local", "e.", "..", ".", "...", "plain", "a..b", ".a."]
        {
            let ours = extension(name.as_bytes()).map(OsStr::from_bytes);
            assert_eq!(ours, Path::new(name).extension(), "{name}");
        }
    }
}
