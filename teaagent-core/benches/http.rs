//! The Streamable HTTP benchmark: teaagent's `echo_http` example against a minimal hyper server
//! answering the same JSON (the limit) and rmcp's streamable-HTTP server, all in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --features http --bench http
//! BENCH_QUICK=1 cargo bench -p teaagent-core --features http --bench http
//! ```
//!
//! The contenders, each built with the `dist` profile before the run:
//! - **limit** (`examples/http_baseline.rs`): hyper's HTTP/1 server on a current-thread runtime;
//!   it parses the body with serde_json and answers the tool result; no checks at all.
//! - **teaagent** (`examples/echo_http.rs`): `Server::serve_http` on a current-thread runtime,
//!   every check on (Host, Origin, headers against `_meta`, argument validation, the policy, the
//!   rate limiter).
//! - **rmcp** (`bench-peers/rmcp-echo-http`): rmcp 3.11's `StreamableHttpService`, stateless
//!   with JSON answers, served by hyper on tokio's multi-thread runtime (its usual setup).
//!
//! Every request is the same protocol 2026-07-28 `tools/call` of `echo` (headers and `_meta`)
//! over keep-alive HTTP/1.1 connections; each answer is checked. Figures: sequential latency on
//! one connection (p50, p99), with client and server pinned to one core and then free (on a VM
//! the free column mostly measures how fast an idle vCPU wakes), and calls per second with 16
//! connections at once. Rounds interleave the contenders; throughput is the median over rounds,
//! latency percentiles are over every sample of every round.

#![allow(clippy::print_stdout)] // the report is this program's output

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 16;

struct Scale {
    rounds: usize,
    sequential: usize,
    per_connection: usize,
}

struct Contender {
    name: &'static str,
    program: PathBuf,
}

#[derive(Default)]
struct Figures {
    /// Sequential latencies with client and server on one core.
    pinned: Vec<Duration>,
    /// Sequential latencies wherever the scheduler puts them (on a VM, waking an idle vCPU
    /// costs tens of microseconds: this column is the noisier one).
    free: Vec<Duration>,
    per_s: Vec<f64>,
}

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let scale = if quick {
        Scale { rounds: 3, sequential: 1000, per_connection: 500 }
    } else {
        Scale { rounds: 5, sequential: 3000, per_connection: 2000 }
    };
    let contenders = build();
    let mut figures: Vec<Figures> = contenders.iter().map(|_| Figures::default()).collect();
    for round in 0..scale.rounds {
        for (i, contender) in contenders.iter().enumerate() {
            // Sequential calls with client and server sharing one core (the server inherits the
            // affinity of the thread that starts it), then unpinned.
            support::pin_to_first_core(true);
            let (mut child, addr) = start(contender);
            sequential(addr, scale.sequential, &mut figures[i].pinned);
            let _ = child.kill();
            let _ = child.wait();
            support::pin_to_first_core(false);
            let (mut child, addr) = start(contender);
            sequential(addr, scale.sequential, &mut figures[i].free);
            let started = Instant::now();
            let workers: Vec<_> = (0..CONNECTIONS)
                .map(|_| {
                    let calls = scale.per_connection;
                    std::thread::spawn(move || {
                        let mut client = Connection::open(addr);
                        for n in 0..calls {
                            client.call(n as u64);
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().expect("a client thread");
            }
            let elapsed = started.elapsed().as_secs_f64();
            figures[i].per_s.push((CONNECTIONS * scale.per_connection) as f64 / elapsed);
            let _ = child.kill();
            let _ = child.wait();
        }
        eprintln!("round {} of {} done", round + 1, scale.rounds);
    }
    report(&contenders, &mut figures);
}

fn report(contenders: &[Contender], figures: &mut [Figures]) {
    let limit = [
        percentile(&mut figures[0].pinned, 0.5),
        percentile(&mut figures[0].pinned, 0.99),
        percentile(&mut figures[0].free, 0.5),
        percentile(&mut figures[0].free, 0.99),
    ];
    let limit_rate = median(&mut figures[0].per_s);
    println!(
        "\n| server | seq p50 (1 core) | seq p99 (1 core) | seq p50 (2 cores) | seq p99 (2 cores) | calls/s ({CONNECTIONS} connections) |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rates = Vec::new();
    for (contender, f) in contenders.iter().zip(figures.iter_mut()) {
        let mine = [
            percentile(&mut f.pinned, 0.5),
            percentile(&mut f.pinned, 0.99),
            percentile(&mut f.free, 0.5),
            percentile(&mut f.free, 0.99),
        ];
        let rate = median(&mut f.per_s);
        rates.push(rate);
        let cells: Vec<String> = mine
            .iter()
            .zip(&limit)
            .map(|(m, l)| format!("{:.1} µs ({:.2}×)", micros(*m), micros(*m) / micros(*l)))
            .collect();
        println!("| {} | {} | {:.0} ({:.2}×) |", contender.name, cells.join(" | "), rate, rate / limit_rate);
    }
    let (teaagent, rmcp) = (rates[1], rates[2]);
    println!("\ntargets:");
    println!(
        "- teaagent calls/s ≥ 0.5× the limit: {:.2}× — {}",
        teaagent / limit_rate,
        if teaagent / limit_rate >= 0.5 { "holds" } else { "DOES NOT HOLD" }
    );
    println!(
        "- teaagent ahead of rmcp: {:.2}× rmcp — {}",
        teaagent / rmcp,
        if teaagent > rmcp { "holds" } else { "DOES NOT HOLD" }
    );
}

/// Calls one after the other on one connection (after 200 to warm up).
fn sequential(addr: SocketAddr, calls: usize, latencies: &mut Vec<Duration>) {
    let mut client = Connection::open(addr);
    for n in 0..200 {
        client.call(n);
    }
    for n in 0..calls {
        let started = Instant::now();
        client.call(n as u64);
        latencies.push(started.elapsed());
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Builds the three servers (`dist` profile), returns them in report order.
fn build() -> Vec<Contender> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(&workspace)
        .args(["build", "--profile", "dist", "-p", "teaagent-core", "--features", "http"])
        .args(["--example", "http_baseline", "--example", "echo_http"])
        .status()
        .expect("cargo");
    assert!(status.success(), "building the examples failed");
    let status = Command::new(&cargo)
        .arg("build")
        .args(["--profile", "dist"])
        .arg("--manifest-path")
        .arg(workspace.join("bench-peers/rmcp-echo-http/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("cargo");
    assert!(status.success(), "building the rmcp peer failed");
    let release = target.join("dist");
    vec![
        Contender { name: "limit (hyper + serde_json)", program: release.join("examples/http_baseline") },
        Contender { name: "teaagent echo_http", program: release.join("examples/echo_http") },
        Contender { name: "rmcp 3.11 StreamableHttpService", program: release.join("rmcp-echo-http") },
    ]
}

/// Starts a server; its address from its `listening on http://ADDR/mcp` line.
fn start(contender: &Contender) -> (Child, SocketAddr) {
    let mut child = Command::new(&contender.program)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", contender.program.display()));
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("the server said where it listens").expect("stderr");
        if let Some(rest) = line.split("http://").nth(1) {
            break rest.split('/').next().expect("address").parse().expect("an address");
        }
    };
    // Keep reading stderr so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// One keep-alive HTTP/1.1 connection.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    addr: SocketAddr,
}

impl Connection {
    fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Connection { reader: BufReader::new(stream.try_clone().expect("clone")), writer: stream, addr }
    }

    /// One `tools/call` of `echo`; panics unless the answer echoes the text.
    fn call(&mut self, n: u64) {
        let body = format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}},"#,
                r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"#,
                r#""io.modelcontextprotocol/clientInfo":{{"name":"bench","version":"0"}}}}}}}}"#
            ),
            n
        );
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\r\n{}",
            self.addr,
            body.len(),
            body
        );
        self.writer.write_all(request.as_bytes()).expect("send");
        let mut status = String::new();
        self.reader.read_line(&mut status).expect("status line");
        let mut length = None;
        let mut chunked = false;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse::<usize>().ok();
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).expect("chunk size");
                let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
                let mut chunk = vec![0u8; n + 2];
                self.reader.read_exact(&mut chunk).expect("chunk");
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else {
            let mut buf = vec![0u8; length.expect("a length")];
            self.reader.read_exact(&mut buf).expect("body");
            body = buf;
        }
        let text = String::from_utf8_lossy(&body);
        assert!(
            status.starts_with("HTTP/1.1 200") && text.contains(r#""text":"hello""#),
            "unexpected answer: {status} {text}"
        );
    }
}
