//! The stdio load benchmark: the `echo` example against a limit and the official Rust SDK, all
//! measured in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --bench stdio            # full run (5 rounds, a few minutes)
//! BENCH_QUICK=1 cargo bench -p teaagent-core --bench stdio   # 3 smaller rounds
//! BENCH_BEFORE=DIR cargo bench -p teaagent-core --bench stdio  # also an earlier build, same run
//! ```
//!
//! The contenders, each built with the `dist` profile (fat LTO, one codegen unit) and linked alike (with
//! packed relative relocations where `teaagent-cli/build.rs` gives them to the shipped binary)
//! before the run:
//! - **limit** (`examples/baseline.rs`): the least a stdio MCP server can do — read a line, parse
//!   it with serde_json, write the correct answer; no async runtime, no checks. Every other
//!   figure is a ratio to its figure.
//! - **rmcp** (`bench-peers/rmcp-echo`): the same `echo` tool on rmcp 3.11 the way its README
//!   writes a server (`#[tool_router]`, `#[tokio::main]`), over its non-blocking `stdio_pipes`.
//! - **teaagent echo** (`examples/echo.rs`): the whole pipeline on — schema validation, the
//!   policy read from the environment, the rate limiter, cancellation, the in-flight cap.
//! - **teaagent mcp serve** (the shipped binary on a scratch workspace and `$TEAAGENT_HOME`):
//!   cold start only; its protocol layer is the echo example's.
//!
//! - **before** (with `BENCH_BEFORE=DIR`): `DIR/echo` and `DIR/teaagent`, the same two built from
//!   an earlier commit (as optimized as these, linked alike), measured in the same rounds: a change's cost is
//!   their ratios next to today's, not two runs' figures side by side.
//!
//! Rounds interleave the contenders, so drift in the machine's load hits all alike: cold starts
//! alternate one start at a time, and the sequential calls run against every contender at once,
//! in turns of 100 calls (see `sequential_interleaved`). Every figure is a median over rounds:
//! of the round's value, and for latencies of the round's percentile. The report ends with the
//! performance issue's targets, each judged on this run.
//!
//! The modules: `build` (every contender built alike), `server` (one server under test and the
//! lines it is sent), `measure` (cold starts, sequential and pipelined calls, memory and CPU),
//! `costs` (what the command sandbox and structured output cost), `stats` and `report`.

#![allow(clippy::print_stdout)] // the report is this program's output

mod build;
mod costs;
mod measure;
mod report;
mod server;
mod stats;
#[path = "../support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::time::Duration;

use build::build;
use costs::{output_check_cost, shell_exec_cost};
use measure::{cold_start, measure, sequential_interleaved};
use report::report;

/// What one server measured, a value per round (latencies: every sample of every round).
#[derive(Default)]
pub(crate) struct Figures {
    pub(crate) cold_starts: Vec<Duration>,
    /// Sequential latencies with client and server on one core, one list per round.
    pub(crate) pinned: Vec<Vec<Duration>>,
    /// Sequential latencies wherever the scheduler puts them, one list per round.
    pub(crate) free: Vec<Vec<Duration>>,
    pub(crate) pipelined_per_s: Vec<f64>,
    pub(crate) mib_echo_per_s: Vec<f64>,
    pub(crate) cpu_per_call: Vec<Duration>,
    pub(crate) idle_rss_kib: Vec<u64>,
    pub(crate) peak_rss_kib: Vec<u64>,
}

pub(crate) struct Scale {
    pub(crate) rounds: usize,
    pub(crate) cold_starts: usize,
    pub(crate) sequential: usize,
    pub(crate) pipelined: usize,
    pub(crate) mib_calls: usize,
}

pub(crate) const IN_FLIGHT: usize = 256;

/// One server under test.
pub(crate) struct Contender {
    pub(crate) name: &'static str,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<std::ffi::OsString>,
    /// Only its cold start is measured (`teaagent mcp serve`: the same protocol layer as the
    /// echo example; what differs is the work before the first answer).
    pub(crate) cold_start_only: bool,
    /// `$TEAAGENT_HOME` of every server: an empty scratch folder, not the user's.
    pub(crate) home: PathBuf,
    pub(crate) figures: Figures,
}

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let scale = if quick {
        Scale { rounds: 3, cold_starts: 20, sequential: 2_000, pipelined: 20_000, mib_calls: 20 }
    } else {
        Scale { rounds: 5, cold_starts: 40, sequential: 10_000, pipelined: 100_000, mib_calls: 50 }
    };
    let built = build();
    let scratch = std::env::temp_dir().join(format!("teaagent-bench-stdio-{}", std::process::id()));
    let (home, root) = (scratch.join("home"), scratch.join("workspace"));
    std::fs::create_dir_all(&home).expect("scratch home");
    std::fs::create_dir_all(root.join("src")).expect("scratch workspace");
    std::fs::write(root.join("README.md"), "# bench\n").expect("scratch file");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("scratch file");
    let contender = |name, program: PathBuf, args: Vec<std::ffi::OsString>, cold_start_only| Contender {
        name,
        program,
        args,
        cold_start_only,
        home: home.clone(),
        figures: Figures::default(),
    };
    let serve_args = || vec!["mcp".into(), "serve".into(), "--root".into(), root.clone().into()];
    // (The report reads the first four by position: limit, rmcp, echo, serve.)
    let mut contenders = vec![
        contender("limit", built.examples.join("baseline"), vec![], false),
        contender("rmcp 3.11 (stdio pipes)", built.rmcp_echo.clone(), vec![], false),
        contender("teaagent echo", built.examples.join("echo"), vec![], false),
        contender("teaagent mcp serve", built.teaagent.clone(), serve_args(), true),
        contender("teaagent echo, Json<T> output", built.examples.join("echo_json"), vec![], false),
    ];
    if let Some(before) = std::env::var_os("BENCH_BEFORE").map(PathBuf::from) {
        let earlier = [
            ("teaagent echo (BENCH_BEFORE)", "echo", vec![], false),
            ("teaagent mcp serve (BENCH_BEFORE)", "teaagent", serve_args(), true),
        ];
        for (name, file, args, cold_start_only) in earlier {
            let program = before.join(file);
            assert!(
                program.is_file(),
                "BENCH_BEFORE: no {} (build it at the earlier commit)",
                program.display()
            );
            contenders.push(contender(name, program, args, cold_start_only));
        }
    }
    let shell =
        shell_exec_cost(&built.teaagent, &scratch, if quick { 3 } else { 5 }, if quick { 40 } else { 100 });
    // Rounds alternate the servers, so drift in the machine's load hits all alike. Cold starts
    // alternate start by start: a start is short, and what ran just before it (another server's
    // 1 MiB echoes, or nothing) would otherwise weigh on one contender's starts and not another's.
    for round in 1..=scale.rounds {
        eprintln!("round {round} of {}", scale.rounds);
        for _ in 0..scale.cold_starts {
            for c in &mut contenders {
                cold_start(c);
            }
        }
        sequential_interleaved(&mut contenders, scale.sequential, true);
        sequential_interleaved(&mut contenders, scale.sequential, false);
        for c in &mut contenders {
            measure(c, &scale);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    report(&contenders, quick, &built);
    output_check_cost(&contenders);
    println!();
    println!("{shell}");
}
