//! Arguments a model can fix (arguments that fail the input schema),
//! against the real binaries:
//!
//! - up to protocol `2025-06-18`: `-32602` with `data: {tool, reason: "invalid_arguments",
//!   errors}`; from `2025-11-25` on: a result with `isError: true` whose text is the same report
//!   and whose `_meta` is the same `data` — checked for every supported version, on the `author`
//!   binary's `plan` tool (nested arguments, `Option<Enum>`, a `Bounded`) and on the shipped
//!   `teaagent`'s built-in tools (a schema failure, and a tool's own refusal of an argument);
//! - the message text itself lists every problem at its innermost pointer, with the allowed
//!   values of enums, and never the validator's "not valid under any of the schemas";
//! - a refusal met while decoding (after the schema) takes the same form;
//! - a refused `#[path]` stays `-32602` in every version;
//! - refused arguments use no rate-limit budget, in either form;
//! - the official SDK's client sees the `2025-11-25` form as a tool result;
//! - `teaagent run` (no client, no session) prints the report and exits with 1.

#![allow(deprecated)]

use std::process::{Command, Stdio};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree, snap};

use crate::common::client;

/// Versions answered with `-32602`.
const ERROR_FORM: [&str; 3] = ["2024-11-05", "2025-03-26", "2025-06-18"];
/// Versions answered with an `isError` result.
const RESULT_FORM: [&str; 1] = ["2025-11-25"];

/// The `author` binary (a server written as the README shows), initialized with `version`.
fn author(version: &str, home: &Tree) -> RawServer {
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG").env_remove("AUTHOR_MODE");
    let mut server = RawServer::start(cmd);
    server.initialize(version);
    server
}

/// The shipped `teaagent mcp serve` on `tree`, initialized with `version`.
fn teaagent(version: &str, tree: &Tree, home: &Tree) -> RawServer {
    let root = tree.root();
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root", root.to_str().expect("utf-8")])
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG");
    let mut server = RawServer::start(cmd);
    server.initialize(version);
    server
}

fn call(server: &mut RawServer, tool: &str, arguments: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": arguments}))
}

/// A refusal of arguments in either form, as (message text, data).
fn refusal(answer: &Value, version: &str) -> (String, Value) {
    if RESULT_FORM.contains(&version) {
        assert!(answer.get("error").is_none(), "{version}: a result, not an error: {answer}");
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{version}: {answer}");
        let content = result["content"].as_array().expect("content");
        assert_eq!(content.len(), 1, "{answer}");
        assert_eq!(content[0]["type"], "text");
        let text = content[0]["text"].as_str().expect("text").to_owned();
        (text, result["_meta"].clone())
    } else {
        assert!(answer.get("result").is_none(), "{version}: an error, not a result: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{version}: {answer}");
        let message = answer["error"]["message"].as_str().expect("message").to_owned();
        (message, answer["error"]["data"].clone())
    }
}

fn no_raw_validator_words(text: &str) {
    for raw in ["anyOf", "oneOf", "not valid under any of the schemas", "(see data.errors)"] {
        assert!(!text.contains(raw), "`{raw}` in {text}");
    }
}

/// Bad nested arguments for `plan`, and the report every version must carry.
fn bad_plan() -> (Value, Vec<(&'static str, &'static str)>) {
    let arguments = json!({
        "priority": "urgent",
        "due": {"days": "soon", "at": "noon"},
        "repeat": 11,
        "colour": "red",
    });
    let expected = vec![
        ("/colour", "unknown property `colour`; the properties are `title`, `priority`, `due`, `repeat`"),
        ("/due/at", r#"must be one of "morning", "evening" or null (got "noon")"#),
        ("/due/days", r#"must be an integer (got a string: "soon")"#),
        ("/priority", r#"must be one of "low", "medium" or "high" (got "urgent")"#),
        ("/repeat", "must be at most 10 (got 11)"),
        ("/title", "missing required property `title`"),
    ];
    (arguments, expected)
}

#[test]
fn nested_arguments_are_reported_whole_in_each_versions_form() {
    let (arguments, expected) = bad_plan();
    let mut reports = Vec::new();
    for version in ERROR_FORM.iter().chain(&RESULT_FORM) {
        let home = Tree::new();
        let mut server = author(version, &home);
        let answer = call(&mut server, "plan", arguments.clone());
        let (text, data) = refusal(&answer, version);
        assert_eq!(data["tool"], "plan", "{version}: {answer}");
        assert_eq!(data["reason"], "invalid_arguments", "{version}: {answer}");
        let errors: Vec<(&str, &str)> = data["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .map(|e| (e["pointer"].as_str().expect("pointer"), e["message"].as_str().expect("message")))
            .collect();
        assert_eq!(errors, expected, "{version}");
        // The text itself lists every problem, one line each, pointer first.
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("Invalid arguments for tool 'plan' (6 problems):"), "{text}");
        let listed: Vec<&str> = lines.collect();
        let wanted: Vec<String> = expected.iter().map(|(p, m)| format!("- {p}: {m}")).collect();
        assert_eq!(listed, wanted, "{version}");
        no_raw_validator_words(&text);
        reports.push((text, data));
        // Good arguments still work in the same session.
        let ok =
            call(&mut server, "plan", json!({"title": "Water plants", "due": {"days": 2, "at": "evening"}}));
        assert_eq!(
            ok["result"]["content"][0]["text"], "Water plants: Medium, in 2 days (Evening), 1×",
            "{ok}"
        );
        server.finish();
    }
    // The same report in every version: only its form differs.
    assert!(reports.windows(2).all(|w| w[0] == w[1]), "{reports:#?}");
}

/// Both forms exactly as a client sees them (a change here is a change of the wire contract).
#[test]
fn both_forms_on_the_wire() {
    let (arguments, _) = bad_plan();
    let mut answers = serde_json::Map::new();
    for version in ["2025-06-18", "2025-11-25"] {
        let home = Tree::new();
        let mut server = author(version, &home);
        let mut answer = call(&mut server, "plan", arguments.clone());
        if let Some(o) = answer.as_object_mut() {
            o.remove("id");
        }
        answers.insert(version.to_owned(), answer);
        server.finish();
    }
    snap::with_settings(|| insta::assert_json_snapshot!("argument_errors", answers));
}

#[test]
fn one_problem_is_one_line() {
    for version in ["2025-06-18", "2025-11-25"] {
        let home = Tree::new();
        let mut server = author(version, &home);
        let answer = call(&mut server, "plan", json!({"title": "t", "due": {"days": 1}, "priority": 3}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(
            text,
            r#"Invalid arguments for tool 'plan': /priority: must be one of "low", "medium" or "high" (got 3)"#
        );
        assert_eq!(data["errors"].as_array().map(Vec::len), Some(1), "{data}");
        // Counts are spelled as English counts them.
        let answer = call(&mut server, "plan", json!({"title": "", "due": {"days": 1}}));
        let (text, _) = refusal(&answer, version);
        assert_eq!(
            text,
            "Invalid arguments for tool 'plan': /title: must be at least 1 character long (got 0 characters)"
        );
        // Arguments that are not an object at all.
        let answer = server.request("tools/call", json!({"name": "plan", "arguments": [1]}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(text, "Invalid arguments for tool 'plan': `arguments` must be an object (got an array)");
        assert_eq!(data["errors"][0]["pointer"], "");
        server.finish();
    }
}

/// A parameter whose decoding refuses what its schema accepts: the same error, the same form.
#[test]
fn decoding_refusals_take_the_same_form() {
    for version in ["2025-06-18", "2025-11-25"] {
        let home = Tree::new();
        let mut server = author(version, &home);
        let answer = call(&mut server, "halve", json!({"n": 3}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(
            text, "Invalid arguments for tool 'halve': /n: 3 is odd; pass an even number",
            "{version}"
        );
        assert_eq!(data["errors"], json!([{"pointer": "/n", "message": "3 is odd; pass an even number"}]));
        let ok = call(&mut server, "halve", json!({"n": 4}));
        assert_eq!(ok["result"]["content"][0]["text"], "2", "{ok}");
        server.finish();
    }
}

/// Schema failures are checked before the rate limit: they never spend its budget, whichever
/// form they take (`echo` admits 3 calls a minute).
#[test]
fn refused_arguments_use_no_rate_limit_budget() {
    for version in ["2025-06-18", "2025-11-25"] {
        let home = Tree::new();
        let mut server = author(version, &home);
        for _ in 0..5 {
            let answer = call(&mut server, "echo", json!({"text": 5}));
            let (text, _) = refusal(&answer, version);
            assert_eq!(
                text,
                "Invalid arguments for tool 'echo': /text: must be a string (got an integer: 5)"
            );
        }
        for _ in 0..3 {
            let ok = call(&mut server, "echo", json!({"text": "hi"}));
            assert_eq!(ok["result"]["content"][0]["text"], "hi", "{version}: {ok}");
        }
        let limited = call(&mut server, "echo", json!({"text": "hi"}));
        assert_eq!(limited["error"]["code"], -32002, "{version}: {limited}");
        server.finish();
    }
}

/// The shipped server: a schema failure of a built-in tool, a built-in tool's own refusal of an
/// argument (a glob past its length limit), and a refused `#[path]`, which stays `-32602`.
#[test]
fn built_in_tools_follow_the_same_rule_and_path_refusals_stay_errors() {
    for version in ERROR_FORM.iter().chain(&RESULT_FORM) {
        let (tree, home) = (Tree::new(), Tree::new());
        let mut server = teaagent(version, &tree, &home);

        let answer = call(&mut server, "read_file", json!({"offset": -1, "limit": "all"}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(data["tool"], "read_file");
        let pointers: Vec<&str> =
            data["errors"].as_array().expect("errors").iter().filter_map(|e| e["pointer"].as_str()).collect();
        assert_eq!(pointers, ["/limit", "/offset", "/path"], "{version}: {data}");
        for pointer in pointers {
            assert!(text.contains(&format!("\n- {pointer}: ")), "{pointer} not in {text}");
        }
        assert!(text.contains("/path: missing required property `path`"), "{text}");
        no_raw_validator_words(&text);

        let long_glob = "*".repeat(5000);
        let answer = call(&mut server, "find_files", json!({"pattern": long_glob}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(data["errors"][0]["pointer"], "/pattern", "{version}: {data}");
        assert!(text.starts_with("Invalid arguments for tool 'find_files': /pattern: "), "{text}");
        assert!(text.len() < 300, "the value is not echoed: {text}");

        let outside = call(&mut server, "read_file", json!({"path": "../outside.txt"}));
        assert_eq!(outside["error"]["code"], -32602, "{version}: {outside}");
        assert_eq!(outside["error"]["data"]["reason"], "outside_workspace", "{version}: {outside}");
        server.finish();
    }
}

/// What a real client makes of the `2025-11-25` form: a tool result it can hand to the model,
/// with the report as text and the data in `_meta`.
#[tokio::test]
async fn the_sdk_client_sees_a_tool_result_from_2025_11_25_on() {
    let home = Tree::new();
    let home_dir = home.base();
    let env = [("TEAAGENT_HOME", home_dir.to_str().expect("utf-8"))];
    let (arguments, expected) = bad_plan();
    let arguments = arguments.as_object().cloned().expect("an object");
    let (client, _) = client::connect(Bin::Author.path(), &[], &env, ProtocolVersion::V_2025_11_25).await;
    let result =
        client::timely(client.call_tool(CallToolRequestParams::new("plan").with_arguments(arguments)))
            .await
            .expect("a result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default();
    for (pointer, message) in &expected {
        assert!(text.contains(&format!("- {pointer}: {message}")), "{pointer} not in {text}");
    }
    let meta = serde_json::to_value(&result.meta).expect("json");
    assert_eq!(meta["reason"], "invalid_arguments", "{meta}");
    assert_eq!(meta["errors"].as_array().map(Vec::len), Some(expected.len()), "{meta}");
    client::timely(client.cancel()).await.expect("shut down");
}

/// `teaagent run` has no client and no session: the report goes to stderr, exit code 1.
#[test]
fn run_prints_the_report_and_fails() {
    let (tree, home) = (Tree::new(), Tree::new());
    let out = Command::new(Bin::Teaagent.path())
        .args(["run", "read_file", "--args", r#"{"offset": 0, "bogus": true}"#])
        .current_dir(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Invalid arguments for tool 'read_file' (3 problems):"), "{stderr}");
    // With `--json`, the JSON-RPC error object on stdout (there is no session to take a form
    // from), exit code 1 as well.
    let as_json = Command::new(Bin::Teaagent.path())
        .args(["run", "read_file", "--args", r#"{"offset": 0}"#, "--json"])
        .current_dir(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent");
    assert_eq!(as_json.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&as_json.stdout).expect("json on stdout");
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["reason"], "invalid_arguments", "{error}");
    assert_eq!(error["data"]["errors"].as_array().map(Vec::len), Some(2), "{error}");
    for line in [
        "- /bogus: unknown property `bogus`",
        "- /offset: must be at least 1 (got 0)",
        "- /path: missing required property `path`",
    ] {
        assert!(stderr.contains(line), "{line} not in {stderr}");
    }
}

/// `uniqueItems` on a long array is checked by key, not pair by pair: 200,000 distinct numbers
/// (1.4 MB, well inside the line limit) would be 2 * 10^10 comparisons on the server's thread,
/// holding every other request for minutes. Answered (within the tests' wait), and `ping` too;
/// a repeat (`7` and `7.0`) is found at the end of a long array.
#[test]
fn a_long_set_is_checked_for_repeats_in_linear_time() {
    let home = Tree::new();
    let mut server = author("2025-06-18", &home);
    let numbers: Vec<u64> = (0..200_000).collect();
    let answer = call(&mut server, "count_distinct", json!({"numbers": numbers}));
    assert_eq!(answer["result"]["content"][0]["text"], "200000", "{answer}");
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    let mut repeated: Vec<Value> = (0..50_000).map(|i| json!(i)).collect();
    repeated.push(json!(7.0));
    let (text, data) =
        refusal(&call(&mut server, "count_distinct", json!({"numbers": repeated})), "2025-06-18");
    assert!(text.contains("/numbers"), "{text}");
    assert_eq!(data["errors"][0]["pointer"], "/numbers", "{data}");
    server.finish();
}

/// A property name is the client's: in a pointer it is one escaped segment (`~` as `~0`, `/` as
/// `~1`, so `a/b` can never pass for a nested path), and in the text a person reads its control
/// characters are escaped and a very long one is cut.
#[test]
fn hostile_property_names_stay_one_escaped_segment() {
    let key = "due/days~1\u{1b}[2J";
    let long = "k".repeat(100_000);
    for version in ["2025-06-18", "2025-11-25"] {
        let home = Tree::new();
        let mut server = author(version, &home);
        let answer = call(&mut server, "plan", json!({"title": "t", "due": {"days": 1}, key: 1}));
        let (text, data) = refusal(&answer, version);
        assert_eq!(data["errors"][0]["pointer"], "/due~1days~01\u{1b}[2J", "{version}: {data}");
        assert!(
            text.starts_with("Invalid arguments for tool 'plan': /due~1days~01\\e[2J: "),
            "{version}: {text}"
        );
        assert!(!text.contains('\u{1b}'), "{version}: a raw escape reached the text: {text:?}");
        let answer = call(&mut server, "plan", json!({"title": "t", "due": {"days": 1}, long.as_str(): 1}));
        let (text, _) = refusal(&answer, version);
        assert!(
            text.len() < 2_000,
            "{version}: a 100,000-character name is shown whole ({} bytes)",
            text.len()
        );
        server.finish();
    }
}
