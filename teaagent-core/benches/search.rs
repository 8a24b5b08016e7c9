//! `search_text` against ripgrep on the same generated tree, the same queries, in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --features builtin-tools --bench search
//! ```
//!
//! The tree (generated once under `target/search-bench/`): 30,000 text files of a few KiB in
//! nested directories, 20 files of 5 MiB, some binary files, a `.gitignore`d directory and a
//! `.git` directory. ripgrep comes from Debian's `ripgrep` package; the bench installs it with
//! apt when `rg` is missing. Both search the same files: ripgrep with `--hidden -g '!.git'`
//! (teaagent searches hidden files too, and skips `.git`), both honour `.gitignore` and skip
//! binary files. Each figure is the best of several runs, and the match counts must agree.

#![allow(clippy::print_stdout)] // the report is this program's output

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use teaagent_core::builtin_tools::search_text::{SearchOptions, search};
use teaagent_core::workspace::Workspace;

const RUNS: usize = 5;

fn main() {
    let root = tree().canonicalize().expect("canonical root");
    let rg = ripgrep();
    let workspace = Workspace::open(&root).expect("open the workspace");
    let start = workspace.resolve(".").expect("the root");
    let queries: [(&str, &str, bool, bool); 5] = [
        ("literal, frequent", "ERROR", true, false),
        ("literal, rare", "needle_in_haystack", true, false),
        ("regex", r"fn [a-z]+_handler\(", false, false),
        ("case-insensitive", "timeout", true, true),
        ("regex, alternation", r"(warn|fail)ed to (open|close)", false, false),
    ];
    println!();
    println!("| query ({} files) | matches | teaagent search_text | ripgrep | ratio |", count_files(&root));
    println!("|---|---|---|---|---|");
    for (name, pattern, literal, case_insensitive) in queries {
        let options = SearchOptions {
            pattern: pattern.to_owned(),
            glob: None,
            literal,
            case_insensitive,
            context: 0,
            max_results: usize::MAX,
            max_bytes: usize::MAX,
        };
        let mut ours = Duration::MAX;
        let mut found = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            let results = search(&workspace, &start, "search_text", &options).expect("search");
            ours = ours.min(t.elapsed());
            found = results.matches.len();
        }
        match &rg {
            Some(rg) => {
                let mut theirs = Duration::MAX;
                let mut their_count = 0;
                for _ in 0..RUNS {
                    let mut cmd = Command::new(rg);
                    cmd.args(["-n", "--no-heading", "--hidden", "-g", "!.git", "--no-messages"]);
                    if literal {
                        cmd.arg("-F");
                    }
                    if case_insensitive {
                        cmd.arg("-i");
                    }
                    cmd.arg("-e").arg(pattern).arg(&root);
                    let t = Instant::now();
                    let out = cmd.output().expect("run rg");
                    theirs = theirs.min(t.elapsed());
                    their_count = out.stdout.iter().filter(|b| **b == b'\n').count();
                }
                assert_eq!(found, their_count, "{name}: teaagent found {found}, ripgrep {their_count}");
                println!(
                    "| {name} `{pattern}` | {found} | {:.1} ms | {:.1} ms | {:.2}× (target ≤ 1.5×) |",
                    ms(ours),
                    ms(theirs),
                    ours.as_secs_f64() / theirs.as_secs_f64()
                );
            }
            None => println!("| {name} `{pattern}` | {found} | {:.1} ms | (no rg) | — |", ms(ours)),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `rg`, installed with apt when missing (the machine's package registry).
fn ripgrep() -> Option<PathBuf> {
    let found = |name: &str| {
        std::env::var_os("PATH")
            .and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|p| p.is_file()))
    };
    if let Some(rg) = found("rg") {
        return Some(rg);
    }
    eprintln!("rg not found; installing Debian's ripgrep package");
    let _ = Command::new("apt-get").args(["install", "-y", "-q", "ripgrep"]).status();
    if found("rg").is_none() {
        let _ = Command::new("apt-get").args(["update", "-q"]).status();
        let _ = Command::new("apt-get").args(["install", "-y", "-q", "ripgrep"]).status();
    }
    let rg = found("rg");
    if rg.is_none() {
        eprintln!("could not install ripgrep: reporting teaagent's times alone");
    }
    rg
}

fn count_files(root: &Path) -> usize {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .count()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let", "value", "result", "config", "server", "request", "handler", "Timeout", "timeout", "ERROR",
    "warn", "failed", "to", "open", "close", "buffer", "stream", "parse", "token", "index", "match",
    "return", "self", "async", "await",
];

fn line(rng: &mut Rng) -> String {
    let mut words: Vec<String> =
        (0..(4 + rng.below(10))).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize].to_owned()).collect();
    match rng.below(40) {
        0 => words.push(format!("fn {}_handler(x: u32)", ["read", "write", "close"][rng.below(3) as usize])),
        1 => words
            .push(["warned to open", "failed to close", "failed to open"][rng.below(3) as usize].to_owned()),
        _ => {}
    }
    words.join(" ")
}

fn tree() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/search-bench/ws");
    let done = root.join(".generated");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for i in 0..30_000u32 {
        let dir = root.join(format!("src{}/mod{}", i % 30, (i / 30) % 25));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let lines = 20 + rng.below(120);
        let mut text: String = (0..lines).map(|_| line(&mut rng) + "\n").collect();
        if i % 7919 == 0 {
            text.push_str("here is the needle_in_haystack\n");
        }
        std::fs::write(dir.join(format!("file{i}.rs")), text).expect("write");
    }
    std::fs::create_dir_all(root.join("big")).expect("mkdir");
    for i in 0..20 {
        let text: String = (0..60_000).map(|_| line(&mut rng) + "\n").collect();
        std::fs::write(root.join(format!("big/log{i}.txt")), text).expect("write");
    }
    std::fs::create_dir_all(root.join("assets")).expect("mkdir");
    for i in 0..200 {
        let mut bytes = format!("ERROR timeout {i}\n").into_bytes();
        bytes.extend([0u8, 1, 2, 3]);
        bytes.extend(b"ERROR after the NUL\n");
        std::fs::write(root.join(format!("assets/blob{i}.bin")), bytes).expect("write");
    }
    std::fs::write(root.join(".gitignore"), "target/\n").expect("gitignore");
    std::fs::create_dir_all(root.join("target")).expect("mkdir");
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    for i in 0..500 {
        std::fs::write(root.join(format!("target/gen{i}.rs")), "ERROR ignored\n").expect("write");
        std::fs::write(root.join(format!(".git/obj{i}")), "ERROR in git\n").expect("write");
    }
    std::fs::write(&done, b"").expect("marker");
    root
}
