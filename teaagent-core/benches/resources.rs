//! `resources/list` paging through a 100,000-file workspace, next to a plain `ignore` walk of the
//! same tree in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --features builtin-tools --bench resources
//! ```
//!
//! The tree (10 × 10 × 10 directories of 100 files, plus a `.gitignore`d build directory and a
//! `.git` directory that must not be listed) is generated once under
//! `target/resources-bench/`. Figures: time to the first page and to the last page (each page is
//! one call, resuming after the previous page's last path), total time to page through
//! everything, and walks of the same tree: a plain `ignore` walk (the baseline), the same walk
//! sorted and with each file's size, which is what a listing must know, and the workspace's own
//! handle-based `Walk` (what `resources/list` uses) without and with sizes. On one thread a
//! listing cannot be faster than the last of these: it walks the same tree and gives each file's
//! size, which takes a `stat` of every file. A listing stats on a second thread while it walks
//! (`src/workspace/resources/page.rs`), so its time can be below that walk's; its CPU time (the
//! whole process's, both threads) is printed too, and cannot.
//!
//! Seven rounds, each of every figure once; a figure's ratio is the median over the rounds of
//! its time against the plain walk of its own round. (Best-of-three times, each figure's best
//! against the baseline's best, moved the listing's ratio between 1.15× and 1.79× in three runs
//! on one evening: the walk's own time went from 123 ms to 210 ms between them.)

#![allow(clippy::print_stdout)] // the report is this program's output

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use teaagent_core::Workspace;
use teaagent_core::workspace::resources::WorkspaceResources;
use teaagent_core::workspace::walk::Walk;

/// Rounds: each measures every figure once, the plain walk included, one after the other; a
/// figure's ratio is the median over the rounds of its time against that round's plain walk
/// (a machine that slows down or speeds up between rounds moves both alike).
const ROUNDS: usize = 7;

fn main() {
    let root = tree();
    let workspace = Workspace::open(&root).expect("workspace");
    let resources = WorkspaceResources::new(workspace.clone());
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let plain = walk(&root, false);
        let needed = walk(&root, true);
        let handles_no_sizes = handle_walk(&workspace, false);
        let handles = handle_walk(&workspace, true);
        let paging = page_through(&resources);
        assert_eq!(plain.0, paging.files, "the walk and the listing disagree on the number of files");
        assert_eq!(handles.0, paging.files, "the two walks disagree on the number of files");
        assert_eq!(handles_no_sizes.0, paging.files, "the two walks disagree on the number of files");
        rounds.push(Round {
            plain: plain.1,
            needed: needed.1,
            handles_no_sizes: handles_no_sizes.1,
            handles: handles.1,
            paging,
        });
    }
    let files = rounds[0].paging.files;
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    // A figure's median time, and its median ratio to the plain walk of the same round.
    let figure = |of: &dyn Fn(&Round) -> Duration| {
        let times = median(rounds.iter().map(|r| of(r).as_secs_f64()).collect());
        let ratios = median(rounds.iter().map(|r| of(r).as_secs_f64() / r.plain.as_secs_f64()).collect());
        (ms(Duration::from_secs_f64(times)), ratios)
    };
    println!();
    println!(
        "| resources/list, {files} files, 500 a page ({ROUNDS} rounds, medians) | time | ratio to the plain walk of the same round |"
    );
    println!("|---|---|---|");
    println!("| plain `ignore` walk (baseline) | {} | 1.00× |", figure(&|r| r.plain).0);
    let (time, ratio) = figure(&|r| r.needed);
    println!("| `ignore` walk, sorted, with sizes | {time} | {ratio:.2}× |");
    let (time, ratio) = figure(&|r| r.handles_no_sizes);
    println!("| workspace `Walk` (handles), sorted, no sizes | {time} | {ratio:.2}× |");
    let (time, ratio) = figure(&|r| r.handles);
    println!(
        "| workspace `Walk` (handles), sorted, with sizes (one thread's floor: a listing gives each file's size) | {time} | {ratio:.2}× |"
    );
    println!("| first page | {} | — |", figure(&|r| r.paging.first).0);
    println!("| last page | {} | — |", figure(&|r| r.paging.last).0);
    let (time, ratio) = figure(&|r| r.paging.total);
    println!("| every page, in order | {time} | {ratio:.2}× (target ≤ 1.5×) |");
    let (time, ratio) = figure(&|r| r.paging.cpu);
    println!("| every page, in order: CPU time | {time} | {ratio:.2}× |");
}

/// One round's times.
struct Round {
    plain: Duration,
    needed: Duration,
    handles_no_sizes: Duration,
    handles: Duration,
    paging: Paging,
}

/// One paging through everything.
#[derive(Clone, Copy)]
struct Paging {
    files: usize,
    first: Duration,
    last: Duration,
    total: Duration,
    /// CPU time of the whole process (both threads of a listing).
    cpu: Duration,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Pages through everything, one call a page, each resuming after the previous page.
fn page_through(resources: &WorkspaceResources) -> Paging {
    let cpu = cpu_time();
    let start = Instant::now();
    let mut cursor: Option<String> = None;
    let mut files = 0;
    let mut first = None;
    let mut last;
    loop {
        let t = Instant::now();
        let page = resources.list_blocking(cursor.as_deref()).expect("page");
        last = t.elapsed();
        first.get_or_insert(last);
        files += page.resources.len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let total = start.elapsed();
    Paging { files, first: first.unwrap_or_default(), last, total, cpu: cpu_time().saturating_sub(cpu) }
}

/// CPU time of this process so far, every thread's.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a whole `rusage` to the pointer it is given, a valid one here.
    #[allow(unsafe_code)]
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) != 0 {
            return Duration::ZERO;
        }
        usage.assume_init()
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// A walk with the listing's rules; `sorted_with_sizes` also sorts and stats like a listing.
fn walk(root: &Path, sorted_with_sizes: bool) -> (usize, Duration) {
    let start = Instant::now();
    let mut builder = ignore::WalkBuilder::new(root);
    builder.hidden(false).require_git(false).filter_entry(|e| e.file_name() != ".git");
    if sorted_with_sizes {
        builder.sort_by_file_name(|a, b| a.cmp(b));
    }
    let mut files = 0;
    let mut bytes = 0u64;
    for entry in builder.build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files += 1;
            if sorted_with_sizes {
                bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    std::hint::black_box(bytes);
    (files, start.elapsed())
}

/// The workspace's own walk beneath the root's handle, with each file's size when `sizes`.
fn handle_walk(workspace: &Workspace, sizes: bool) -> (usize, Duration) {
    let start = Instant::now();
    let root = workspace.resolve(".").expect("the root");
    let mut files = 0;
    let mut bytes = 0u64;
    for entry in Walk::new(workspace, &root, "resources/list").expect("walk") {
        files += 1;
        if sizes {
            bytes += entry.size().unwrap_or(0);
        }
    }
    std::hint::black_box(bytes);
    (files, start.elapsed())
}

/// The generated tree (made once).
fn tree() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/resources-bench/ws");
    let done = root.join(".generated");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    for a in 0..10 {
        for b in 0..10 {
            for c in 0..10 {
                let dir = root.join(format!("pkg{a}/mod{b}/part{c}"));
                std::fs::create_dir_all(&dir).expect("mkdir");
                for f in 0..100 {
                    std::fs::write(dir.join(format!("file{f:03}.rs")), b"fn main() {}\n").expect("write");
                }
            }
        }
    }
    std::fs::write(root.join(".gitignore"), "build/\n").expect("gitignore");
    for (dir, n) in [("build", 2000), (".git/objects", 2000)] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        for f in 0..n {
            std::fs::write(root.join(dir).join(format!("o{f}")), b"x").expect("write");
        }
    }
    std::fs::write(&done, b"").expect("marker");
    root
}
