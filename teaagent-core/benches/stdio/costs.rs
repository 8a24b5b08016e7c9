//! What two features cost, measured beside the contenders: the command sandbox per `shell_exec`
//! call, and structured output (`Json<T>`) per call.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::server::Server;
use crate::stats::median;
use crate::{Contender, Figures};

/// What the command sandbox costs per `shell_exec` call: `teaagent mcp serve` running
/// `shell_exec {"command": "true"}` one call after another, in `allow` (the workspace-write
/// sandbox: a Landlock ruleset, mount and network namespaces, a temporary directory per call)
/// and in `danger-full-access` (no sandbox), alternating in turns; medians of each round's
/// median wall time per call.
pub(crate) fn shell_exec_cost(teaagent: &Path, scratch: &Path, rounds: usize, calls: usize) -> String {
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
pub(crate) fn output_check_cost(contenders: &[Contender]) {
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
