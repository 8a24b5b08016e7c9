//! The cost of the fleet's shared rate limiter: an admission by
//! `RateLimiter::admit` with a `RedisStore` against a real local `redis-server`, next to the in-process
//! limiter and a bare Redis `PING`, all in the same run.
//!
//! ```sh
//! cargo bench -p teaagent-core --features redis --bench shared_state            # 5 rounds
//! BENCH_QUICK=1 cargo bench -p teaagent-core --features redis --bench shared_state   # 3 small rounds
//! ```
//!
//! `redis-server` must be installed (Debian: `apt-get install redis-server`); the bench starts
//! its own on a free loopback port (`--save "" --appendonly no`, its files in a temporary
//! directory) and kills it at the end.
//!
//! The contenders, on a current-thread tokio runtime (the one `teaagent mcp serve` and
//! `Server::serve_http` run on):
//! - **in-process**: `admit` of a limiter with the default `LocalStore`, the server's own call
//!   (the tool's window under the store's mutex), the admission dropped.
//!   Every figure is a ratio to its figure.
//! - **shared**: the same call on a limiter given a `RedisStore` (default options): one EVALSHA
//!   of the sliding-window script over the `redis` crate's connection manager.
//! - **PING**: `RedisStore::ping` — the same connection, the same timeout wrapper, a command that
//!   does nothing: one bare round trip, the yardstick for "≤ 1 round trip per admitted call".
//!
//! The limit is `u32::MAX` calls per second (never reached: every admission must succeed, or the
//! bench panics); the one-second window keeps the windows at their steady state, one admission
//! leaving for each one entering. Redis is flushed before each shared phase.
//!
//! Figures: sequential latency on one task (p50, p99 over every sample of every round, the
//! timer's own cost included for all), and admissions per second with 16 concurrent tasks on the
//! same runtime (median over rounds). The Redis commands each admission costs are counted by the
//! server itself (`INFO commandstats` before and after, on a connection of the bench's own): the
//! commands the client sent are the round trips; the script's own `redis.call`s are listed apart.
//! Rounds interleave the contenders, in a rotating order. Nothing about time is asserted.

#![allow(clippy::print_stdout)] // the report is this program's output

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_core::fleet::{LocalStore, RedisOptions, RedisStore};
use teaagent_core::rate_limit::RateLimiter;
use teaagent_core::{CallToolResult, Handler, Registry, ToolDef};

/// Concurrent tasks of the throughput phase.
const TASKS: usize = 16;
/// The rate-limited tool.
const TOOL: &str = "limited";
/// Never reached (the script compares it as a Lua number: exact up to 2^53).
const MAX_CALLS: u32 = u32::MAX;
const WINDOW: Duration = Duration::from_secs(1);
/// Key prefix in the bench's Redis.
const PREFIX: &str = "bench:";
/// What the script calls inside Redis (not round trips: `commandstats` counts them too).
const INSIDE_SCRIPT: [&str; 6] = ["time", "zremrangebyscore", "zcard", "zadd", "pexpire", "zrange"];

struct Scale {
    rounds: usize,
    warm_up: usize,
    sequential: usize,
    per_task: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Local,
    Shared,
    Ping,
}

const KINDS: [Kind; 3] = [Kind::Local, Kind::Shared, Kind::Ping];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Local => "in-process limiter (`admit`, LocalStore)",
            Kind::Shared => "shared limiter (`admit`, RedisStore)",
            Kind::Ping => "Redis PING (same connection)",
        }
    }
}

#[derive(Default)]
struct Figures {
    latencies: Vec<Duration>,
    per_s: Vec<f64>,
}

/// The two limiters and the shared state.
struct Limiters {
    local: RateLimiter,
    shared: RateLimiter,
    state: RedisStore,
}

impl Limiters {
    /// One admission (or one PING); panics unless admitted.
    async fn once(&self, kind: Kind) {
        let limiter = match kind {
            Kind::Local => &self.local,
            Kind::Shared => &self.shared,
            Kind::Ping => {
                self.state.ping().await.unwrap_or_else(|e| panic!("PING: {e}"));
                return;
            }
        };
        if let Err(refused) = limiter.admit(TOOL, None).await {
            panic!("{}: an admission was refused: {refused:?}", kind.name());
        }
    }
}

/// Commands counted by Redis between two snapshots, per admission.
#[derive(Default)]
struct Count {
    admissions: usize,
    /// Sent by the client: round trips (pipelined or not, each is one request and one answer).
    sent: BTreeMap<String, u64>,
    /// Run by the script inside Redis.
    inside: BTreeMap<String, u64>,
    /// Microseconds Redis spent running EVALSHA/EVAL (the script included).
    script_usec: u64,
}

impl Count {
    fn between(before: &Stats, after: &Stats, admissions: usize) -> Self {
        let mut count = Count { admissions, ..Count::default() };
        for (name, &(calls, usec)) in after {
            let (calls0, usec0) = before.get(name).copied().unwrap_or((0, 0));
            let calls = calls - calls0;
            // The `INFO` of the first snapshot is counted in the second.
            if calls == 0 || name == "info" {
                continue;
            }
            if name == "evalsha" || name == "eval" {
                count.script_usec += usec - usec0;
            }
            let side =
                if INSIDE_SCRIPT.contains(&name.as_str()) { &mut count.inside } else { &mut count.sent };
            side.insert(name.clone(), calls);
        }
        count
    }

    fn add(&mut self, other: &Count) {
        self.admissions += other.admissions;
        self.script_usec += other.script_usec;
        for (mine, theirs) in [(&mut self.sent, &other.sent), (&mut self.inside, &other.inside)] {
            for (name, calls) in theirs {
                *mine.entry(name.clone()).or_default() += calls;
            }
        }
    }

    fn round_trips(&self) -> u64 {
        self.sent.values().sum()
    }

    fn per_admission(&self) -> f64 {
        self.round_trips() as f64 / self.admissions as f64
    }

    fn describe(map: &BTreeMap<String, u64>, admissions: usize) -> String {
        if map.is_empty() {
            return "none".into();
        }
        map.iter()
            .map(|(name, &calls)| match admissions {
                1 => format!("{} ×{calls}", name.to_uppercase()),
                _ => format!("{} {:.3}", name.to_uppercase(), calls as f64 / admissions as f64),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let scale = if quick {
        Scale { rounds: 3, warm_up: 300, sequential: 3_000, per_task: 500 }
    } else {
        Scale { rounds: 5, warm_up: 1_000, sequential: 20_000, per_task: 5_000 }
    };
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let registry = registry();
    let options = RedisOptions { prefix: PREFIX.into(), ..RedisOptions::default() };
    let state = RedisStore::new(&redis.url(), options).expect("state");
    let limiters = Arc::new(Limiters {
        local: RateLimiter::new(&registry, &HashMap::new(), Arc::new(LocalStore::new())),
        shared: RateLimiter::new(&registry, &HashMap::new(), Arc::new(state.clone())),
        state,
    });
    assert!(limiters.shared.is_shared() && !limiters.local.is_shared());

    // The first admission of a fresh connection on an empty script cache, then the first one
    // after the cache was flushed (as a Redis restarted without persistence would be).
    let mut first = Vec::new();
    for flush in [false, true] {
        if flush {
            redis.command(&["SCRIPT", "FLUSH"]);
        }
        let before = redis.stats();
        runtime.block_on(limiters.once(Kind::Shared));
        first.push(Count::between(&before, &redis.stats(), 1));
    }

    let mut figures: Vec<Figures> = KINDS.iter().map(|_| Figures::default()).collect();
    let (mut sequential_count, mut concurrent_count) = (Count::default(), Count::default());
    for round in 0..scale.rounds {
        for k in 0..KINDS.len() {
            let i = (k + round) % KINDS.len();
            let kind = KINDS[i];
            // Sequential latency, on one task.
            redis.command(&["FLUSHALL"]);
            runtime.block_on(async {
                for _ in 0..scale.warm_up {
                    limiters.once(kind).await;
                }
            });
            let before = redis.stats();
            runtime.block_on(async {
                let latencies = &mut figures[i].latencies;
                for _ in 0..scale.sequential {
                    let started = Instant::now();
                    limiters.once(kind).await;
                    latencies.push(started.elapsed());
                }
            });
            if kind == Kind::Shared {
                sequential_count.add(&Count::between(&before, &redis.stats(), scale.sequential));
            }
            // Throughput: 16 tasks at once on the same runtime.
            redis.command(&["FLUSHALL"]);
            let before = redis.stats();
            let per_s = runtime.block_on(async {
                let started = Instant::now();
                let tasks: Vec<_> = (0..TASKS)
                    .map(|_| {
                        let limiters = Arc::clone(&limiters);
                        let calls = scale.per_task;
                        tokio::spawn(async move {
                            for _ in 0..calls {
                                limiters.once(kind).await;
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("a task");
                }
                (TASKS * scale.per_task) as f64 / started.elapsed().as_secs_f64()
            });
            figures[i].per_s.push(per_s);
            if kind == Kind::Shared {
                concurrent_count.add(&Count::between(&before, &redis.stats(), TASKS * scale.per_task));
            }
        }
        eprintln!("round {} of {} done", round + 1, scale.rounds);
    }
    drop(runtime);
    report(&mut figures, &first, &sequential_count, &concurrent_count, &scale);
}

fn registry() -> Registry {
    let def = ToolDef::builder(TOOL)
        .description("A tool with a rate limit never reached.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .rate_limit(MAX_CALLS, WINDOW)
        .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
        .build();
    Registry::builder().tool(def).build().expect("registry")
}

fn report(figures: &mut [Figures], first: &[Count], sequential: &Count, concurrent: &Count, scale: &Scale) {
    let mut rows = Vec::new();
    for f in figures.iter_mut() {
        rows.push((
            percentile(&mut f.latencies, 0.5),
            percentile(&mut f.latencies, 0.99),
            median(&mut f.per_s),
        ));
    }
    let (base_p50, base_p99, base_rate) = rows[0];
    println!(
        "\n{} rounds; per round and contender: {} sequential calls, {TASKS} tasks × {} concurrent calls",
        scale.rounds, scale.sequential, scale.per_task
    );
    println!("\n| contender | p50 | p99 | calls/s ({TASKS} tasks) |");
    println!("|---|---|---|---|");
    for (kind, (p50, p99, rate)) in KINDS.iter().zip(&rows) {
        println!(
            "| {} | {} ({:.0}×) | {} ({:.0}×) | {:.0} ({:.4}×) |",
            kind.name(),
            shown(*p50),
            micros(*p50) / micros(base_p50),
            shown(*p99),
            micros(*p99) / micros(base_p99),
            rate,
            rate / base_rate
        );
    }
    let (shared, ping) = (rows[1], rows[2]);
    println!(
        "\nshared admission against one Redis round trip (PING): p50 {} = {:.2}× PING, p99 {} = {:.2}× PING; \
         calls/s {:.2}× PING's",
        shown(shared.0),
        micros(shared.0) / micros(ping.0),
        shown(shared.1),
        micros(shared.1) / micros(ping.1),
        shared.2 / ping.2
    );
    println!(
        "added to a call by the shared limiter: +{:.1} µs at p50, +{:.1} µs at p99",
        micros(shared.0) - micros(base_p50),
        micros(shared.1) - micros(base_p99)
    );
    println!(
        "Redis's own time in the script (commandstats, EVALSHA): {:.1} µs per admission",
        sequential.script_usec as f64 / sequential.admissions as f64
    );

    println!("\nRedis commands per admitted call (counted by Redis, INFO commandstats):");
    for (what, count) in [("sequential", sequential), ("16 tasks", concurrent)] {
        println!(
            "- {what} ({} admissions): {:.3} round trips ({}); inside the script: {}",
            count.admissions,
            count.per_admission(),
            Count::describe(&count.sent, count.admissions),
            Count::describe(&count.inside, count.admissions),
        );
    }
    for (what, count) in [
        ("first admission, new connection, empty script cache", &first[0]),
        ("first after SCRIPT FLUSH", &first[1]),
    ] {
        println!("- {what}: {} round trips ({})", count.round_trips(), Count::describe(&count.sent, 1));
    }

    let worst = sequential.per_admission().max(concurrent.per_admission());
    println!("\ntarget:");
    println!(
        "- ≤ 1 Redis round trip per admitted call: {worst:.3} — {}",
        if worst <= 1.0 { "holds" } else { "DOES NOT HOLD" }
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn shown(d: Duration) -> String {
    let us = micros(d);
    if us < 10.0 { format!("{us:.2} µs") } else { format!("{us:.1} µs") }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `INFO commandstats`: calls (rejected ones included) and microseconds, by command.
type Stats = BTreeMap<String, (u64, u64)>;

/// The bench's own `redis-server`: loopback, a free port, no persistence, its directory in the
/// temporary directory; killed (and its directory removed) when dropped.
struct RedisServer {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl RedisServer {
    fn start() -> Self {
        let program = ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]
            .iter()
            .map(PathBuf::from)
            .chain(std::env::var_os("PATH").iter().flat_map(std::env::split_paths))
            .map(|dir| dir.join("redis-server"))
            .find(|path| path.is_file())
            .expect("redis-server is not installed (Debian: apt-get install redis-server)");
        let dir = std::env::temp_dir().join(format!("teaagent-bench-redis-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for _ in 0..5 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            if let Some(server) = Self::spawn(&program, &dir, port) {
                return server;
            }
        }
        panic!(
            "redis-server did not start:\n{}",
            std::fs::read_to_string(dir.join("redis.log")).unwrap_or_default()
        );
    }

    /// `None` when it ended at once (another process took the port).
    fn spawn(program: &Path, dir: &Path, port: u16) -> Option<Self> {
        let log = std::fs::File::create(dir.join("redis.log")).expect("redis.log");
        let mut child = Command::new(program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir)
            .args(["--daemonize", "no", "--logfile", ""])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if matches!(command(addr, &["PING"]), Ok(answer) if answer == "PONG") {
                return Some(Self { child, addr, dir: dir.to_owned() });
            }
            if let Ok(Some(_)) = child.try_wait() {
                return None;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("redis-server gave no answer to PING within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// One command on a connection of its own; its answer as text.
    fn command(&self, args: &[&str]) -> String {
        command(self.addr, args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    fn stats(&self) -> Stats {
        let mut stats = Stats::new();
        for line in self.command(&["INFO", "commandstats"]).lines() {
            // cmdstat_evalsha:calls=1,usec=12,usec_per_call=12.00,rejected_calls=0,failed_calls=0
            let Some((name, fields)) = line.strip_prefix("cmdstat_").and_then(|l| l.split_once(':')) else {
                continue;
            };
            let field = |key: &str| {
                fields
                    .split(',')
                    .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            stats.insert(name.to_owned(), (field("calls") + field("rejected_calls"), field("usec")));
        }
        stats
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One command to `addr` in RESP; a simple, integer or bulk answer as text (an error answer is
/// an `Err`).
fn command(addr: SocketAddr, args: &[&str]) -> io::Result<String> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    (&stream).write_all(request.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end();
    let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    match line.split_at_checked(1) {
        Some(("+" | ":", rest)) => Ok(rest.to_owned()),
        Some(("-", rest)) => Err(bad(rest.to_owned())),
        Some(("$", length)) => {
            let length: usize = length.parse().map_err(|_| bad(format!("bad length: {line}")))?;
            let mut body = vec![0; length + 2];
            reader.read_exact(&mut body)?;
            body.truncate(length);
            String::from_utf8(body).map_err(|e| bad(e.to_string()))
        }
        _ => Err(bad(format!("unexpected answer: {line}"))),
    }
}
