//! What a one-tool server costs its author, next to the same server written with rmcp (the
//! official Rust SDK), measured in the same run on the same machine.
//!
//! ```sh
//! flock /tmp/teaagent-cargo.lock cargo bench -p teaagent-core --bench footprint   # ~6 min on 2 cores
//! BENCH_QUICK=1 cargo bench -p teaagent-core --bench footprint                     # one debug build each
//! ```
//!
//! Two crates are generated under `target/footprint-bench/`, each built in its own target
//! directory with cargo's default profiles (debug info is the author's choice, left as cargo
//! sets it):
//!
//! - `teaagent_echo`: the `echo` example, depending on this teaagent-core by path, no features;
//! - `rmcp_echo`: the same tool with rmcp's `#[tool_router]`/`#[tool]` and `ServerHandler`
//!   (rmcp 3 with `server`, `macros`, `transport-io`; `schemars`, `serde`, `tokio` with
//!   `macros` and `rt`, a current-thread runtime like `run_stdio`'s).
//!
//! Both start from the workspace's lock file, so shared dependencies build at the same
//! versions. Dependencies are downloaded before anything is timed (`cargo fetch`; the first run
//! needs the registry for rmcp's crates); every timed
//! build is `--offline --locked` from an empty target directory. Before timing, each server
//! answers `initialize` and a `tools/call` of `echo` (a server that does not work would measure
//! nothing). Reported:
//!
//! - distinct crates (name and version) in the normal dependency tree (`cargo tree -e normal`),
//!   the server crate included, and teaagent-core's own tree with and without `builtin-tools`;
//! - clean debug build wall time (the median of the runs; the two sides alternate, so drift in
//!   the machine's load hits both alike) and the debug binary's size;
//! - the same in release (cargo's default release profile), one build each; skipped with
//!   `BENCH_QUICK`.
//!
//! Each figure comes with the ratio teaagent/rmcp and the issue's target. Run it while nothing
//! else builds: the wall times compete for the same cores. The target directories are removed at
//! the end (the generated crates stay, to look at or build by hand).

#![allow(clippy::print_stdout)] // the report is this program's output

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Debug builds of each side in a full run.
const RUNS: usize = 3;

/// The issue's targets for teaagent's echo: its tree, and its ratios to rmcp's.
const TARGET_CRATES: usize = 100;
const TARGET_BUILD_RATIO: f64 = 1.3;
const TARGET_BINARY_RATIO: f64 = 1.5;

/// The `echo` example, as it is (the `teaagent_echo` side's `main.rs`).
const TEAAGENT_MAIN: &str = include_str!("../examples/echo.rs");

const RMCP_MAIN: &str = r#"use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
    transport::stdio,
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

#[derive(Debug, Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    /// Echo the text back unchanged.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Echo::new().serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
"#;

/// One generated server crate.
struct Side {
    name: &'static str,
    dir: PathBuf,
    crates: usize,
    debug_builds: Vec<Duration>,
    debug_size: u64,
    release_build: Option<Duration>,
    release_size: Option<u64>,
}

impl Side {
    fn target(&self) -> PathBuf {
        self.dir.join("target")
    }

    fn binary(&self, profile: &str) -> PathBuf {
        self.target().join(profile).join(self.name)
    }
}

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let workspace = core.parent().expect("workspace").to_path_buf();
    let root = workspace.join("target/footprint-bench");
    let core_dep = format!("teaagent-core = {{ path = {:?} }}\n", core.display().to_string());
    let rmcp_deps = "rmcp = { version = \"3\", features = [\"server\", \"macros\", \"transport-io\"] }\n\
                     schemars = \"1\"\n\
                     serde = { version = \"1\", features = [\"derive\"] }\n\
                     tokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n";
    let mut sides = [
        generate(&root, &workspace, "teaagent_echo", &core_dep, TEAAGENT_MAIN),
        generate(&root, &workspace, "rmcp_echo", rmcp_deps, RMCP_MAIN),
    ];
    for side in &mut sides {
        let fetch = cargo(&side.dir).args(["fetch", "--quiet"]).status().expect("cargo fetch");
        assert!(fetch.success(), "cargo fetch failed in {}", side.dir.display());
        side.crates = distinct_crates(cargo(&side.dir).args(["tree", "--offline", "--locked"]));
    }
    let core_lean = distinct_crates(cargo(&workspace).args(["tree", "--offline", "-p", "teaagent-core"]));
    let core_full = distinct_crates(cargo(&workspace).args([
        "tree",
        "--offline",
        "-p",
        "teaagent-core",
        "--features",
        "builtin-tools",
    ]));

    let runs = if quick { 1 } else { RUNS };
    for run in 0..runs {
        // Alternate which side goes first.
        let order: [usize; 2] = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let side = &mut sides[i];
            eprintln!("run {} of {runs}: clean debug build of {}", run + 1, side.name);
            let took = clean_build(side, false);
            side.debug_builds.push(took);
            side.debug_size = size(&side.binary("debug"));
            if run == 0 {
                smoke(&side.binary("debug"), side.name);
            }
        }
    }
    if !quick {
        for side in &mut sides {
            eprintln!("clean release build of {}", side.name);
            side.release_build = Some(clean_build(side, true));
            side.release_size = Some(size(&side.binary("release")));
        }
    }
    report(&sides, core_lean, core_full);
    // Every run builds from scratch anyway: the two target directories (about 1.5 GB) go.
    for side in &sides {
        let _ = std::fs::remove_dir_all(side.target());
    }
}

/// Writes `root/name` (manifest, lock file, `src/main.rs`).
fn generate(root: &Path, workspace: &Path, name: &'static str, deps: &str, main: &str) -> Side {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{deps}\n[workspace]\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
    std::fs::write(dir.join("src/main.rs"), main).expect("main.rs");
    // The workspace's lock file (it holds rmcp too, for the tests): shared dependencies are
    // built at the same versions on both sides. Copied once; cargo adds what it lacks.
    if !dir.join("Cargo.lock").exists() {
        std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
    }
    Side {
        name,
        dir,
        crates: 0,
        debug_builds: Vec::new(),
        debug_size: 0,
        release_build: None,
        release_size: None,
    }
}

fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    cmd
}

/// Distinct `name version` pairs in the normal dependency tree `cmd` (a `cargo tree`) prints.
fn distinct_crates(cmd: &mut Command) -> usize {
    let out = cmd.args(["-e", "normal", "--prefix", "none"]).output().expect("cargo tree");
    assert!(out.status.success(), "cargo tree failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let crates: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    crates.len()
}

/// A build from an empty target directory.
fn clean_build(side: &Side, release: bool) -> Duration {
    let _ = std::fs::remove_dir_all(side.target());
    let mut cmd = cargo(&side.dir);
    cmd.env("CARGO_TARGET_DIR", side.target()).args(["build", "--quiet", "--offline", "--locked"]);
    if release {
        cmd.arg("--release");
    }
    let t = Instant::now();
    let out = cmd.output().expect("cargo build");
    let took = t.elapsed();
    assert!(out.status.success(), "build of {} failed:\n{}", side.name, String::from_utf8_lossy(&out.stderr));
    took
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len()
}

/// `initialize`, then `tools/call echo`: the server must answer both.
fn smoke(bin: &Path, name: &str) {
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {name}: {e}"));
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let answer = |id: u32| loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains(&format!("\"id\":{id}")) => return line,
            Ok(_) => {}
            Err(e) => panic!("{name} gave no answer to request {id}: {e}"),
        }
    };
    let send = |stdin: &mut std::process::ChildStdin, line: &str| {
        stdin.write_all(line.as_bytes()).and_then(|()| stdin.write_all(b"\n")).expect("write");
    };
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"footprint","version":"0"}}}"#,
    );
    let init = answer(1);
    assert!(init.contains("\"protocolVersion\""), "{name}: bad initialize answer {init}");
    send(&mut stdin, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(
        &mut stdin,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"footprint-echo"}}}"#,
    );
    let call = answer(2);
    assert!(call.contains("footprint-echo") && !call.contains("\"error\""), "{name}: bad echo answer {call}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn report(sides: &[Side; 2], core_lean: usize, core_full: usize) {
    let [tea, rmcp] = sides;
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!();
    println!(
        "{} on {cores} cores; debug builds: {} per side",
        rustc.unwrap_or_default(),
        tea.debug_builds.len()
    );
    println!();
    println!("| one-tool echo server | teaagent-core | rmcp | teaagent/rmcp | target |");
    println!("|---|---|---|---|---|");
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "| distinct crates, normal tree | {} | {} | {:.2}× | ≤ {TARGET_CRATES} ({}) |",
        tea.crates,
        rmcp.crates,
        tea.crates as f64 / rmcp.crates as f64,
        verdict(tea.crates <= TARGET_CRATES)
    );
    let (tb, rb) = (median(tea.debug_builds.clone()), median(rmcp.debug_builds.clone()));
    let build_ratio = tb.as_secs_f64() / rb.as_secs_f64();
    let all = |s: &Side| {
        s.debug_builds.iter().map(|d| format!("{:.1}", d.as_secs_f64())).collect::<Vec<_>>().join(", ")
    };
    println!(
        "| clean debug build (median; runs: {} / {}) | {} | {} | {build_ratio:.2}× | ≤ {TARGET_BUILD_RATIO}× ({}) |",
        all(tea),
        all(rmcp),
        secs(tb),
        secs(rb),
        verdict(build_ratio <= TARGET_BUILD_RATIO)
    );
    let size_ratio = tea.debug_size as f64 / rmcp.debug_size as f64;
    println!(
        "| debug binary | {} | {} | {size_ratio:.2}× | ≤ {TARGET_BINARY_RATIO}× ({}) |",
        mb(tea.debug_size),
        mb(rmcp.debug_size),
        verdict(size_ratio <= TARGET_BINARY_RATIO)
    );
    if let (Some(tb), Some(rb), Some(ts), Some(rs)) =
        (tea.release_build, rmcp.release_build, tea.release_size, rmcp.release_size)
    {
        println!(
            "| clean release build | {} | {} | {:.2}× | |",
            secs(tb),
            secs(rb),
            tb.as_secs_f64() / rb.as_secs_f64()
        );
        println!("| release binary | {} | {} | {:.2}× | |", mb(ts), mb(rs), ts as f64 / rs as f64);
    }
    println!();
    println!(
        "teaagent-core's own normal tree: {core_lean} crates without features, {core_full} with `builtin-tools`"
    );
}
