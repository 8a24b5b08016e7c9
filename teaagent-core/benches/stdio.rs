//! The stdio load benchmark: the `echo` example against a baseline measured in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --bench stdio            # full run (about a minute)
//! BENCH_QUICK=1 cargo bench -p teaagent-core --bench stdio
//! ```
//!
//! The baseline (`examples/baseline.rs`) is the least a stdio MCP server can do: read a line,
//! parse it with serde_json, write the correct answer — no async runtime. Every figure is printed
//! with its ratio to the baseline's and the target from the foundation issue. Both servers are
//! built with `--release` first, and both get the same requests from the same driver.

#![allow(clippy::print_stdout)] // the report is this program's output

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one server measured.
#[derive(Default)]
struct Figures {
    cold_starts: Vec<Duration>,
    /// Sequential latencies with client and server on one core.
    pinned: Vec<Duration>,
    /// Sequential latencies wherever the scheduler puts them.
    free: Vec<Duration>,
    pipelined_per_s: Vec<f64>,
    mib_echo_per_s: Vec<f64>,
    cpu_per_call: Vec<Duration>,
    peak_rss_kib: u64,
}

struct Scale {
    rounds: usize,
    cold_starts: usize,
    sequential: usize,
    pipelined: usize,
    mib_calls: usize,
}

const IN_FLIGHT: usize = 256;

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let scale = if quick {
        Scale { rounds: 2, cold_starts: 20, sequential: 2_000, pipelined: 20_000, mib_calls: 20 }
    } else {
        Scale { rounds: 5, cold_starts: 40, sequential: 10_000, pipelined: 100_000, mib_calls: 50 }
    };
    let examples = build_examples();
    let bins = [examples.join("baseline"), examples.join("echo")];
    let mut figures = [Figures::default(), Figures::default()];
    // Rounds alternate the two servers, so drift in the machine's load hits both alike.
    for round in 1..=scale.rounds {
        eprintln!("round {round} of {}", scale.rounds);
        for (bin, f) in bins.iter().zip(figures.iter_mut()) {
            measure(bin, &scale, f);
        }
    }
    let [baseline, echo] = figures;
    report(&baseline, &echo);
}
fn build_examples() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--example", "echo", "--example", "baseline", "--manifest-path"])
        .arg(&manifest)
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the examples failed");
    // target/release/deps/stdio-HASH → target/release/examples
    let exe = std::env::current_exe().expect("bench path");
    let release = exe.parent().and_then(Path::parent).expect("target/release");
    release.join("examples")
}

struct Server {
    child: Child,
    /// `None` while the pipelined writer thread holds it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(bin: &Path) -> Self {
        let mut child = Command::new(bin)
            .env("RUST_LOG", "warn")
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

fn measure(bin: &Path, scale: &Scale, f: &mut Figures) {
    // Cold start: spawn → initialize answer.
    for _ in 0..scale.cold_starts {
        let t = Instant::now();
        let mut server = Server::start(bin);
        server.initialize();
        f.cold_starts.push(t.elapsed());
        server.stop();
    }

    // Sequential calls, first with client and server sharing one core (the server inherits the
    // affinity of the thread that spawns it), then unpinned.
    pin_to_first_core(true);
    let mut server = Server::start(bin);
    server.initialize();
    sequential(&mut server, scale.sequential, &mut f.pinned);
    server.stop();
    pin_to_first_core(false);

    let mut server = Server::start(bin);
    server.initialize();
    let pid = server.child.id();
    sequential(&mut server, scale.sequential, &mut f.free);

    // Pipelined calls, 256 in flight; CPU time of the server over this phase.
    let cpu_before = cpu_time(pid);
    f.pipelined_per_s.push(pipelined(&mut server, scale.pipelined));
    f.cpu_per_call.push(cpu_time(pid).saturating_sub(cpu_before) / scale.pipelined as u32);

    // 1 MiB echoes, one at a time.
    let big = "x".repeat(1 << 20);
    let mut line = String::new();
    let t = Instant::now();
    for i in 0..scale.mib_calls {
        server.send(&call_line(i + 1, &big));
        server.read_line(&mut line);
        assert!(line.len() > 1 << 20, "short answer to a 1 MiB echo");
    }
    f.mib_echo_per_s.push(scale.mib_calls as f64 / t.elapsed().as_secs_f64());

    f.peak_rss_kib = f.peak_rss_kib.max(peak_rss_kib(pid));
    server.stop();
}

fn sequential(server: &mut Server, calls: usize, latencies: &mut Vec<Duration>) {
    let mut line = String::new();
    for i in 0..calls {
        let request = call_line(i + 1, "hello");
        let t = Instant::now();
        server.send(&request);
        server.read_line(&mut line);
        latencies.push(t.elapsed());
    }
    assert!(line.contains("\"text\":\"hello\""), "bad echo answer: {line}");
}

/// Pins the calling thread (and so the servers it spawns) to the first allowed CPU, or unpins it.
fn pin_to_first_core(pin: bool) {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    static ALLOWED: std::sync::OnceLock<Option<CpuSet>> = std::sync::OnceLock::new();
    let Some(allowed) = ALLOWED.get_or_init(|| sched_getaffinity(None).ok()) else { return };
    let set = if pin {
        let Some(first) = (0..CpuSet::MAX_CPU).find(|&c| allowed.is_set(c)) else { return };
        let mut one = CpuSet::new();
        one.set(first);
        one
    } else {
        *allowed
    };
    if let Err(e) = sched_setaffinity(None, &set) {
        eprintln!("cannot change CPU affinity ({e}); latencies are unpinned");
    }
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

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn median<T: PartialOrd + Copy>(values: &[T]) -> T {
    percentile(values, 50)
}

fn percentile<T: PartialOrd + Copy>(values: &[T], p: usize) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn report(base: &Figures, echo: &Figures) {
    fn us(d: Duration) -> String {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    }
    fn ms(d: Duration) -> String {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
    let lat = |name: &'static str, b: &[Duration], e: &[Duration], p: usize, target: &'static str| {
        let (b, e) = (percentile(b, p), percentile(e, p));
        (name, us(b), us(e), ratio(e, b), target)
    };
    let rate = |name: &'static str, b: &[f64], e: &[f64], digits: usize, target: &'static str| {
        let (b, e) = (median(b), median(e));
        (name, format!("{b:.digits$}"), format!("{e:.digits$}"), e / b, target)
    };
    let rows: Vec<(&str, String, String, f64, &str)> = vec![
        {
            let (b, e) = (median(&base.cold_starts), median(&echo.cold_starts));
            ("cold start, spawn → initialize (median)", ms(b), ms(e), ratio(e, b), "≤ 1.3×")
        },
        lat("sequential tools/call p50, one core", &base.pinned, &echo.pinned, 50, "≤ 1.5×"),
        lat("sequential tools/call p99, one core", &base.pinned, &echo.pinned, 99, "—"),
        lat("sequential tools/call p50, two cores", &base.free, &echo.free, 50, "≤ 1.5×"),
        lat("sequential tools/call p99, two cores", &base.free, &echo.free, 99, "—"),
        rate("pipelined calls/s, 256 in flight", &base.pipelined_per_s, &echo.pipelined_per_s, 0, "≥ 0.5×"),
        rate("1 MiB echo calls/s", &base.mib_echo_per_s, &echo.mib_echo_per_s, 1, "≥ 0.8×"),
        {
            let (b, e) = (median(&base.cpu_per_call), median(&echo.cpu_per_call));
            ("server CPU per pipelined call", us(b), us(e), ratio(e, b), "≤ 3×")
        },
        (
            "peak RSS",
            format!("{} KiB", base.peak_rss_kib),
            format!("{} KiB", echo.peak_rss_kib),
            echo.peak_rss_kib as f64 / base.peak_rss_kib.max(1) as f64,
            "≤ 2×",
        ),
    ];
    println!();
    println!("| figure | baseline | teaagent echo | ratio | target |");
    println!("|---|---|---|---|---|");
    for (name, b, e, r, target) in rows {
        println!("| {name} | {b} | {e} | {r:.2}× | {target} |");
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}
