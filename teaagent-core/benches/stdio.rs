//! The stdio load benchmark: the `echo` example against a limit and the official Rust SDK, all
//! measured in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --bench stdio            # full run (5 rounds, a few minutes)
//! BENCH_QUICK=1 cargo bench -p teaagent-core --bench stdio   # 3 smaller rounds
//! ```
//!
//! The contenders, each built with `--release` (fat LTO, one codegen unit) and linked alike (with
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
//! Rounds interleave the contenders, so drift in the machine's load hits all alike: cold starts
//! alternate one start at a time, and the sequential calls run against every contender at once,
//! in turns of 100 calls (see `sequential_interleaved`). Every figure is a median over rounds:
//! of the round's value, and for latencies of the round's percentile. The report ends with the
//! performance issue's targets, each judged on this run.

#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one server measured, a value per round (latencies: every sample of every round).
#[derive(Default)]
struct Figures {
    cold_starts: Vec<Duration>,
    /// Sequential latencies with client and server on one core, one list per round.
    pinned: Vec<Vec<Duration>>,
    /// Sequential latencies wherever the scheduler puts them, one list per round.
    free: Vec<Vec<Duration>>,
    pipelined_per_s: Vec<f64>,
    mib_echo_per_s: Vec<f64>,
    cpu_per_call: Vec<Duration>,
    idle_rss_kib: Vec<u64>,
    peak_rss_kib: Vec<u64>,
}

struct Scale {
    rounds: usize,
    cold_starts: usize,
    sequential: usize,
    pipelined: usize,
    mib_calls: usize,
}

const IN_FLIGHT: usize = 256;

/// One server under test.
struct Contender {
    name: &'static str,
    program: PathBuf,
    args: Vec<std::ffi::OsString>,
    /// Only its cold start is measured (`teaagent mcp serve`: the same protocol layer as the
    /// echo example; what differs is the work before the first answer).
    cold_start_only: bool,
    /// `$TEAAGENT_HOME` of every server: an empty scratch folder, not the user's.
    home: PathBuf,
    figures: Figures,
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
    let mut contenders = [
        contender("limit", built.examples.join("baseline"), vec![], false),
        contender("rmcp 3.11 (stdio pipes)", built.rmcp_echo, vec![], false),
        contender("teaagent echo", built.examples.join("echo"), vec![], false),
        contender(
            "teaagent mcp serve",
            built.teaagent.clone(),
            vec!["mcp".into(), "serve".into(), "--root".into(), root.clone().into()],
            true,
        ),
        contender("teaagent echo, Json<T> output", built.examples.join("echo_json"), vec![], false),
    ];
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
    report(&contenders, quick, built.packed_relocs);
    output_check_cost(&contenders);
    println!();
    println!("{shell}");
}

/// What the command sandbox costs per `shell_exec` call: `teaagent mcp serve` running
/// `shell_exec {"command": "true"}` one call after another, in `allow` (the workspace-write
/// sandbox: a Landlock ruleset, mount and network namespaces, a temporary directory per call)
/// and in `danger-full-access` (no sandbox), alternating in turns; medians of each round's
/// median wall time per call.
fn shell_exec_cost(teaagent: &Path, scratch: &Path, rounds: usize, calls: usize) -> String {
    let home = scratch.join("shell-home");
    std::fs::create_dir_all(&home).expect("shell home");
    // shell_exec's own rate limit (10 a minute) would measure the limiter.
    std::fs::write(
        home.join("config.toml"),
        "[tools.shell_exec]\nrate_limit = { max_calls = 1000000, window_secs = 1 }\n",
    )
    .expect("shell config");
    let contender = |mode: &str| Contender {
        name: "shell_exec",
        program: teaagent.to_path_buf(),
        args: ["mcp", "serve", "--permission-mode", mode, "--root"]
            .iter()
            .map(std::ffi::OsString::from)
            // A workspace each: one server per workspace may write (the lock).
            .chain([{
                let root = scratch.join(format!("shell-workspace-{mode}"));
                std::fs::create_dir_all(&root).expect("shell workspace");
                root.into_os_string()
            }])
            .collect(),
        cold_start_only: false,
        home: home.clone(),
        figures: Figures::default(),
    };
    let (sandboxed, open) = (contender("allow"), contender("danger-full-access"));
    let mut servers = [Server::start(&sandboxed), Server::start(&open)];
    for s in &mut servers {
        s.initialize();
    }
    let mut medians: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut line = String::new();
    let call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"shell_exec\",\"arguments\":{\"command\":\"true\"}}}\n";
    for _ in 0..rounds {
        for (i, server) in servers.iter_mut().enumerate() {
            let mut times = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                server.send(call);
                server.read_line(&mut line);
                times.push(t.elapsed().as_secs_f64());
                assert!(line.contains("exit code: 0"), "shell_exec failed: {line}");
            }
            medians[i].push(median(&times));
        }
    }
    for s in servers {
        s.stop();
    }
    let (with, without) = (median(&medians[0]) * 1e6, median(&medians[1]) * 1e6);
    format!(
        "shell_exec `true`, wall time per call: {with:.0} µs in the workspace-write sandbox against {without:.0} µs without one (danger-full-access): {:+.0} µs, {:.2}×.",
        with - without,
        with / without
    )
}

/// What structured output costs: the Json<T> echo against the text echo in this run (CPU per
/// call, median of rounds), and the output check alone, timed in process on the same values.
fn output_check_cost(contenders: &[Contender]) {
    use teaagent_core::{CallToolResult, Json, Registry, tool};

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Echoed {
        /// The text, unchanged.
        text: String,
    }

    /// Echo the text back unchanged, as structured output.
    #[tool(read_only, unregistered)]
    fn echo(
        /// The text to echo.
        text: String,
    ) -> Json<Echoed> {
        Json(Echoed { text })
    }

    let cpu = |name: &str| {
        let c = contenders.iter().find(|c| c.name == name).expect("a contender");
        median(&c.figures.cpu_per_call.iter().map(Duration::as_secs_f64).collect::<Vec<_>>()) * 1e6
    };
    let (text, json) = (cpu("teaagent echo"), cpu("teaagent echo, Json<T> output"));
    println!();
    println!(
        "Structured output: CPU per call {json:.2} µs with Json<T> against {text:.2} µs with text ({:+.2} µs, {:.2}×).",
        json - text,
        json / text
    );
    let registry = Registry::builder().add::<echo>().build().expect("a valid registry");
    for (what, value, calls) in
        [("\"hello\"", "hello".to_owned(), 1_000_000u32), ("1 MiB of text", "x".repeat(1 << 20), 1_000)]
    {
        let mut result = CallToolResult::structured(serde_json::json!({ "text": value }));
        let start = Instant::now();
        for _ in 0..calls {
            let replaced = registry.check_output("echo", std::hint::black_box(&mut result));
            assert!(!replaced, "the echo's output matches its schema");
        }
        let each = start.elapsed().as_secs_f64() / f64::from(calls) * 1e9;
        println!(
            "The output check alone, on {{\"text\": {what}}}: {each:.0} ns per call ({calls} calls in process)."
        );
    }
}

struct Built {
    examples: PathBuf,
    rmcp_echo: PathBuf,
    teaagent: PathBuf,
    /// Whether every server is linked with packed relative relocations.
    packed_relocs: bool,
}

/// The link argument `teaagent-cli/build.rs` gives the shipped binary where glibc applies it.
const PACK_RELATIVE_RELOCS: &str = "link-arg=-Wl,-z,pack-relative-relocs";

/// Builds every server with `--release`: the shipped binary, the echo and baseline examples, and
/// the rmcp peer (its own workspace, `bench-peers/rmcp-echo`, into this target directory).
///
/// Every server is linked alike: when the shipped binary came out with packed relative
/// relocations (its build script decides, from this machine's glibc), the others are linked with
/// the same argument, so no contender's memory or start-up figures owe anything to a link
/// option another lacks.
fn build() -> Built {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = core.parent().expect("workspace");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // target/release/deps/stdio-HASH → target/release
    let exe = std::env::current_exe().expect("bench path");
    let release = exe.parent().and_then(Path::parent).expect("target/release");
    let target = release.parent().expect("target");
    // `cargo rustc` when the link needs the extra argument (it takes one target at a time).
    let run = |args: &[&str], manifest: &Path, link: Option<&str>| {
        let mut cmd = Command::new(&cargo);
        cmd.arg(if link.is_some() { "rustc" } else { "build" })
            .args(["--release", "--locked"])
            .args(args)
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(target);
        if let Some(link) = link {
            cmd.args(["--", "-C", link]);
        }
        let status = cmd.status().expect("run cargo");
        assert!(status.success(), "building {args:?} failed");
    };
    run(&["-p", "teaagent-cli"], &workspace.join("Cargo.toml"), None);
    let teaagent = release.join("teaagent");
    let packed_relocs = names_dt_relr(&teaagent);
    let link = packed_relocs.then_some(PACK_RELATIVE_RELOCS);
    for example in ["echo", "echo_json", "baseline"] {
        run(&["-p", "teaagent-core", "--example", example], &core.join("Cargo.toml"), link);
    }
    run(&[], &workspace.join("bench-peers/rmcp-echo/Cargo.toml"), link);
    let built = Built {
        examples: release.join("examples"),
        rmcp_echo: release.join("rmcp-echo"),
        teaagent,
        packed_relocs,
    };
    let servers = ["echo", "echo_json", "baseline"].map(|e| built.examples.join(e));
    for program in servers.iter().chain([&built.rmcp_echo]) {
        assert_eq!(
            names_dt_relr(program),
            packed_relocs,
            "{} is not linked like teaagent",
            program.display()
        );
    }
    built
}

/// Whether an executable was linked with packed relative relocations: it then names the glibc
/// version that guards them.
fn names_dt_relr(program: &Path) -> bool {
    let bytes = std::fs::read(program).expect("read a built server");
    bytes.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR")
}

struct Server {
    child: Child,
    /// `None` while the pipelined writer thread holds it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(c: &Contender) -> Self {
        let mut child = Command::new(&c.program)
            .args(&c.args)
            .env("RUST_LOG", "warn")
            .env("TEAAGENT_HOME", &c.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        Self { child, stdin: Some(stdin), stdout }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.flush().expect("flush");
    }

    fn read_line(&mut self, buf: &mut String) {
        buf.clear();
        let n = self.stdout.read_line(buf).expect("read");
        assert!(n > 0, "the server closed stdout");
    }

    fn initialize(&mut self) {
        self.send(&initialize_line());
        let mut line = String::new();
        self.read_line(&mut line);
        assert!(line.contains("\"protocolVersion\""), "bad initialize answer: {line}");
        self.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn initialize_line() -> String {
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n".to_owned()
}

fn call_line(id: usize, text: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{text}\"}}}}}}\n"
    )
}

/// One cold start: spawn → the `initialize` answer read.
fn cold_start(c: &mut Contender) {
    let t = Instant::now();
    let mut server = Server::start(c);
    server.initialize();
    c.figures.cold_starts.push(t.elapsed());
    server.stop();
}

/// Calls answered one at a time by every contender at once, in blocks of [`BLOCK`] calls per
/// contender in turn: a burst of scheduling delay (on a virtual machine a sleeping vCPU can take
/// ~0.1 ms to wake) lasts milliseconds, and falls on whichever contender is answering then;
/// blocks spread such bursts over all contenders alike. `pinned`: client and servers share one
/// core (the servers inherit the affinity of the thread that spawns them).
fn sequential_interleaved(contenders: &mut [Contender], calls: usize, pinned: bool) {
    const BLOCK: usize = 100;
    support::pin_to_first_core(pinned);
    let mut running: Vec<(usize, Server, Vec<Duration>)> = contenders
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.cold_start_only)
        .map(|(i, c)| {
            let mut server = Server::start(c);
            server.initialize();
            (i, server, Vec::with_capacity(calls))
        })
        .collect();
    let mut done = 0;
    while done < calls {
        let block = BLOCK.min(calls - done);
        for (_, server, latencies) in &mut running {
            sequential(server, done, block, latencies);
        }
        done += block;
    }
    for (i, server, latencies) in running {
        server.stop();
        let figures = &mut contenders[i].figures;
        if pinned { figures.pinned.push(latencies) } else { figures.free.push(latencies) }
    }
    support::pin_to_first_core(false);
}

fn measure(c: &mut Contender, scale: &Scale) {
    if c.cold_start_only {
        return;
    }
    let mut server = Server::start(c);
    server.initialize();
    let pid = server.child.id();
    // Idle: after the handshake and one call, with nothing in flight.
    sequential(&mut server, 0, 1, &mut Vec::new());
    std::thread::sleep(Duration::from_millis(50));
    c.figures.idle_rss_kib.push(proc_status_kib(pid, "VmRSS:"));

    // Pipelined calls, 256 in flight; CPU time of the server over this phase.
    let cpu_before = cpu_time(pid);
    c.figures.pipelined_per_s.push(pipelined(&mut server, scale.pipelined));
    c.figures.cpu_per_call.push(cpu_time(pid).saturating_sub(cpu_before) / scale.pipelined as u32);

    // 1 MiB echoes, one at a time.
    let big = "x".repeat(1 << 20);
    let mut line = String::new();
    let t = Instant::now();
    for i in 0..scale.mib_calls {
        server.send(&call_line(i + 1, &big));
        server.read_line(&mut line);
        assert!(line.len() > 1 << 20, "short answer to a 1 MiB echo");
    }
    c.figures.mib_echo_per_s.push(scale.mib_calls as f64 / t.elapsed().as_secs_f64());

    c.figures.peak_rss_kib.push(proc_status_kib(pid, "VmHWM:"));
    server.stop();
}

/// `calls` calls, one at a time, with ids from `first + 1`.
fn sequential(server: &mut Server, first: usize, calls: usize, latencies: &mut Vec<Duration>) {
    let mut line = String::new();
    for i in first..first + calls {
        let request = call_line(i + 1, "hello");
        let t = Instant::now();
        server.send(&request);
        server.read_line(&mut line);
        latencies.push(t.elapsed());
    }
    assert!(line.contains("\"text\":\"hello\""), "bad echo answer: {line}");
}

/// Keeps `IN_FLIGHT` calls outstanding: a writer thread sends whenever the reader has freed a
/// slot. Returns calls per second.
fn pipelined(server: &mut Server, calls: usize) -> f64 {
    let (freed_tx, freed_rx) = mpsc::sync_channel::<()>(IN_FLIGHT);
    for _ in 0..IN_FLIGHT {
        freed_tx.send(()).expect("slots");
    }
    let mut stdin = server.stdin.take().expect("stdin");
    let t = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(64 * 1024);
        let mut sent = 0;
        while sent < calls {
            // Take every free slot, then write them in one go.
            freed_rx.recv().expect("slot");
            batch.clear();
            batch.extend_from_slice(call_line(sent + 1_000_000, "hello").as_bytes());
            sent += 1;
            while sent < calls && freed_rx.try_recv().is_ok() {
                batch.extend_from_slice(call_line(sent + 1_000_000, "hello").as_bytes());
                sent += 1;
            }
            stdin.write_all(&batch).expect("write");
            stdin.flush().expect("flush");
        }
        stdin
    });
    let mut line = String::new();
    for _ in 0..calls {
        server.read_line(&mut line);
        let _ = freed_tx.try_send(());
    }
    let elapsed = t.elapsed();
    server.stdin = Some(writer.join().expect("writer"));
    calls as f64 / elapsed.as_secs_f64()
}

/// CPU time of every thread of `pid` (from /proc/PID/task/*/schedstat, in nanoseconds).
fn cpu_time(pid: u32) -> Duration {
    let mut total = 0u64;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) {
                total += s.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            }
        }
    }
    Duration::from_nanos(total)
}

/// A `kB` field of /proc/PID/status (`VmRSS:` resident now, `VmHWM:` the peak).
fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The median over rounds of each round's `p`th percentile, in seconds.
fn per_round(rounds: &[Vec<Duration>], p: usize) -> f64 {
    let each: Vec<f64> = rounds
        .iter()
        .map(|r| percentile(&r.iter().map(Duration::as_secs_f64).collect::<Vec<_>>(), p))
        .collect();
    median(&each)
}

fn median<T: PartialOrd + Copy>(values: &[T]) -> T {
    percentile(values, 50)
}

fn percentile<T: PartialOrd + Copy>(values: &[T], p: usize) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

/// One figure of every contender: how it is read from [`Figures`], shown, and compared.
struct Column {
    name: &'static str,
    /// The contender's value (a median of rounds, or a percentile of samples).
    value: fn(&Figures) -> f64,
    show: fn(f64) -> String,
}

fn report(contenders: &[Contender], quick: bool, packed_relocs: bool) {
    fn us(v: f64) -> String {
        format!("{:.1} µs", v * 1e6)
    }
    fn ms(v: f64) -> String {
        format!("{:.2} ms", v * 1e3)
    }
    fn mib(v: f64) -> String {
        format!("{:.1} MiB", v / 1024.0)
    }
    fn secs(d: &[Duration]) -> Vec<f64> {
        d.iter().map(Duration::as_secs_f64).collect()
    }
    fn kib(v: &[u64]) -> Vec<f64> {
        v.iter().map(|&k| k as f64).collect()
    }
    let columns = [
        Column { name: "cold start", value: |f| median(&secs(&f.cold_starts)), show: ms },
        Column { name: "seq p50 (1 core)", value: |f| per_round(&f.pinned, 50), show: us },
        Column { name: "seq p99 (1 core)", value: |f| per_round(&f.pinned, 99), show: us },
        Column { name: "seq p50 (2 cores)", value: |f| per_round(&f.free, 50), show: us },
        Column { name: "seq p99 (2 cores)", value: |f| per_round(&f.free, 99), show: us },
        Column {
            name: "pipelined/s",
            value: |f| median(&f.pipelined_per_s),
            show: |v| format!("{:.0}k", v / 1e3),
        },
        Column { name: "CPU µs/call", value: |f| median(&secs(&f.cpu_per_call)), show: us },
        Column { name: "1 MiB echo/s", value: |f| median(&f.mib_echo_per_s), show: |v| format!("{v:.0}") },
        Column { name: "idle RSS", value: |f| median(&kib(&f.idle_rss_kib)), show: mib },
        Column { name: "peak RSS", value: |f| median(&kib(&f.peak_rss_kib)), show: mib },
    ];
    let limit = &contenders[0].figures;
    // values[contender][column]; NaN where a contender was not measured on a column.
    let values: Vec<Vec<f64>> = contenders
        .iter()
        .map(|c| {
            columns
                .iter()
                .enumerate()
                .map(|(i, col)| if c.cold_start_only && i > 0 { f64::NAN } else { (col.value)(&c.figures) })
                .collect()
        })
        .collect();
    let ratio = |c: usize, col: usize| values[c][col] / values[0][col];
    println!();
    println!(
        "{} interleaved rounds{}; the limit's figures are absolute, the others' are ratios to it (value in brackets).",
        limit.peak_rss_kib.len(),
        if quick { " (BENCH_QUICK)" } else { "" }
    );
    if packed_relocs {
        println!(
            "Every server is linked with packed relative relocations (`-z pack-relative-relocs`), as `teaagent` is here."
        );
    } else {
        println!(
            "No server is linked with packed relative relocations: `teaagent-cli/build.rs` did not give them to `teaagent` here (glibc older than 2.36, a cross build, or TEAAGENT_PACKED_RELOCS=0)."
        );
    }
    println!();
    print!("| server |");
    for col in &columns {
        print!(" {} |", col.name);
    }
    println!();
    println!("|---|{}", "---|".repeat(columns.len()));
    for (ci, c) in contenders.iter().enumerate() {
        print!("| {} |", c.name);
        for (i, col) in columns.iter().enumerate() {
            let v = values[ci][i];
            if v.is_nan() {
                print!(" — |");
            } else if ci == 0 {
                print!(" {} |", (col.show)(v));
            } else {
                print!(" {:.2}× ({}) |", ratio(ci, i), (col.show)(v));
            }
        }
        println!();
    }

    // The targets of the performance issue, each judged on this run.
    const COLD: usize = 0;
    const P50_1: usize = 1;
    const P99_1: usize = 2;
    const P50_2: usize = 3;
    const P99_2: usize = 4;
    const PIPE: usize = 5;
    const CPU: usize = 6;
    const MIB: usize = 7;
    const IDLE: usize = 8;
    const PEAK: usize = 9;
    let (rmcp, echo, serve) = (1, 2, 3);
    let at_most = |v: f64, t: f64| (v <= t, format!("{v:.2}× (≤ {t}×)"));
    let at_least = |v: f64, t: f64| (v >= t, format!("{v:.2}× (≥ {t}×)"));
    let checks = [
        ("1 MiB echo calls/s ≥ 1.1×", at_least(ratio(echo, MIB), 1.1)),
        (
            "1 MiB echo calls/s ahead of rmcp",
            (
                values[echo][MIB] > values[rmcp][MIB],
                format!("{:.2}× of rmcp's", values[echo][MIB] / values[rmcp][MIB]),
            ),
        ),
        ("peak RSS ≤ 2×", at_most(ratio(echo, PEAK), 2.0)),
        (
            "idle RSS ≤ rmcp's",
            (
                values[echo][IDLE] <= values[rmcp][IDLE],
                format!("{:.2}× of rmcp's", values[echo][IDLE] / values[rmcp][IDLE]),
            ),
        ),
        ("pipelined calls/s ≥ 0.6×", at_least(ratio(echo, PIPE), 0.6)),
        ("seq p50 ≤ 1.3× (1 core)", at_most(ratio(echo, P50_1), 1.3)),
        ("seq p50 ≤ 1.3× (2 cores)", at_most(ratio(echo, P50_2), 1.3)),
        ("seq p99 ≤ 3× (1 core)", at_most(ratio(echo, P99_1), 3.0)),
        ("seq p99 ≤ 3× (2 cores)", at_most(ratio(echo, P99_2), 3.0)),
        ("CPU per call ≤ 2.5×", at_most(ratio(echo, CPU), 2.5)),
        ("cold start, echo example ≤ 1.2×", at_most(ratio(echo, COLD), 1.2)),
        ("cold start, teaagent mcp serve ≤ 1.5×", at_most(ratio(serve, COLD), 1.5)),
    ];
    println!();
    println!("| target | teaagent | holds |");
    println!("|---|---|---|");
    for (name, (holds, shown)) in checks {
        println!("| {name} | {shown} | {} |", if holds { "yes" } else { "**no**" });
    }
}
