//! What a tool author meets first, against real binaries: the
//! `author` test binary (a server written as the README shows, with the usual mistakes) and the
//! shipped `teaagent`.
//!
//! - `run_stdio()` inside `#[tokio::main]` (either flavour) serves, on a thread of its own, with a
//!   line on stderr naming `serve_stdio().await`; `serve_stdio().await` there works too;
//! - a server with no tools says so on stderr; a registry error met by `.expect` prints readably;
//! - `Json<T>` of a non-object `T` is wrapped as `{"result": …}`, recorded in the `outputSchema`;
//! - declared rate limits appear as `annotations.rateLimit`, in `tools/list` and in
//!   `teaagent mcp tools --json`; `prompts` is not advertised;
//! - state given once with `.state(...)` is shared by every call of every tool that takes it, and
//!   is not in any input schema; a server whose tools take state it was not given does not start
//!   (exit 1, the tool, the type and `.state(...)` named on stderr, nothing on stdout);
//! - `#[schemars(range(...))]` on a parameter bounds its schema, and the server refuses a value
//!   out of range before the tool runs.
//!
//! The compile errors (`&str` parameters, state of the wrong type, unknown parameter attributes)
//! and the missing-description warning are trybuild cases in `teaagent-macros/tests/ui/fail/` (`macro_ui.rs`).

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::wire::WAIT;
use teaagent_tests::{Bin, RawServer, Tree};

/// The `author` binary in `mode`, with a home of its own and no `RUST_LOG`.
fn author(mode: &str, home: &Tree) -> Command {
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("AUTHOR_MODE", mode).env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
    cmd
}

/// Runs a mode that is expected to exit by itself (stdin is empty).
fn run(mode: &str) -> Output {
    let home = Tree::new();
    author(mode, &home).stdin(Stdio::null()).output().expect("run the author binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tools/list` of a started server, by tool name.
fn tools(server: &mut RawServer) -> Vec<Value> {
    let listed = server.request("tools/list", json!({}));
    listed["result"]["tools"].as_array().cloned().unwrap_or_else(|| panic!("no tools in {listed}"))
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no `{name}` in {tools:?}"))
}

#[test]
fn run_stdio_inside_tokio_main_serves_and_names_serve_stdio() {
    for (mode, level) in [("tokio-run-stdio", "INFO"), ("tokio-current-thread-run-stdio", "WARN")] {
        let home = Tree::new();
        let mut server = RawServer::start(author(mode, &home));
        server.initialize("2025-06-18");
        let called =
            server.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}))["result"]
                .clone();
        assert_eq!(called["content"][0]["text"], "hi", "{mode}: {called}");
        let named =
            |stderr: &str| stderr.lines().any(|l| l.contains(level) && l.contains("serve_stdio().await"));
        // Read on until the `initialize` line is there too (INFO): it may come in a later read.
        let stderr = server.stderr_once(|s| named(s) && (level != "INFO" || s.contains("initialize")));
        assert!(!stderr.contains("panic"), "{mode}: {stderr}");
        assert!(named(&stderr), "{mode}: no {level} line naming serve_stdio().await:\n{stderr}");
        if level == "INFO" {
            // The client's version and the protocol's, each under its own name.
            let line = stderr.lines().find(|l| l.contains("initialize")).unwrap_or_default();
            assert!(
                line.contains("client_version=0") && line.contains("protocol=2025-06-18"),
                "{mode}: {stderr}"
            );
        }
        server.finish();
    }
}

#[test]
fn serve_stdio_await_inside_tokio_main_serves() {
    let home = Tree::new();
    let mut server = RawServer::start(author("tokio-serve-stdio", &home));
    server.initialize("2025-06-18");
    let called =
        server.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}))["result"].clone();
    assert_eq!(called["content"][0]["text"], "hi", "{called}");
    server.finish();
}

#[test]
fn a_server_without_tools_warns_at_startup_and_one_with_tools_does_not() {
    let home = Tree::new();
    let mut empty = RawServer::start(author("no-tools", &home));
    empty.initialize("2025-06-18");
    assert_eq!(tools(&mut empty), Vec::<Value>::new());
    let warned = |stderr: &str| {
        stderr.contains("WARN") && stderr.contains("no tools") && stderr.contains(".registered()")
    };
    let stderr = empty.stderr_once(warned);
    assert!(warned(&stderr), "{stderr}");
    empty.finish();

    let mut served = RawServer::start(author("", &home));
    served.initialize("2025-06-18");
    assert!(!tools(&mut served).is_empty());
    served.close_stdin();
    assert!(served.wait(WAIT).success());
    // Startup lines come before the first answer; the exit and a moment let the reader catch up.
    std::thread::sleep(Duration::from_millis(50));
    let stderr = served.stderr();
    assert!(stderr.contains("initialize"), "stderr not collected yet: {stderr}");
    assert!(!stderr.contains("no tools"), "{stderr}");
}

#[test]
fn a_registry_error_met_by_expect_prints_its_readable_form() {
    let out = run("bad-registry");
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("valid tools: invalid tool registry:\n  - tool `bad name`"),
        "not the readable form:\n{stderr}"
    );
    assert!(!stderr.contains("RegistryError {"), "the Debug form:\n{stderr}");
    assert!(!stderr.contains("problems: ["), "the Debug form:\n{stderr}");
}

#[test]
fn non_object_structured_output_is_wrapped_and_the_schema_says_so() {
    let home = Tree::new();
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let listed = tools(&mut server);

    // A list of structs.
    let schema = &tool(&listed, "words")["outputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["required"], json!(["result"]), "{schema}");
    assert_eq!(schema["x-teaagent-wrapped"], true, "{schema}");
    assert_eq!(schema["properties"]["result"]["type"], "array", "{schema}");
    let item = &schema["properties"]["result"]["items"];
    assert_eq!(item["type"], "object", "{schema}");
    assert_eq!(item["properties"]["word"]["type"], "string", "{schema}");
    let called = server.request("tools/call", json!({"name": "words", "arguments": {"text": "ab cd"}}));
    let result = &called["result"];
    assert_eq!(
        result["structuredContent"],
        json!({"result": [{"word": "ab", "at": 0}, {"word": "cd", "at": 3}]}),
        "{called}"
    );
    assert_eq!(result["isError"], false, "{called}");
    let as_text: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("json text");
    assert_eq!(as_text, json!([{"word": "ab", "at": 0}, {"word": "cd", "at": 3}]));

    // A scalar.
    let schema = &tool(&listed, "length")["outputSchema"];
    assert_eq!(schema["x-teaagent-wrapped"], true, "{schema}");
    assert_eq!(schema["properties"]["result"]["type"], "integer", "{schema}");
    let called = server.request("tools/call", json!({"name": "length", "arguments": {"text": "héllo"}}));
    assert_eq!(called["result"]["structuredContent"], json!({"result": 5}), "{called}");

    // An object is not wrapped.
    let schema = &tool(&listed, "stats")["outputSchema"];
    assert!(schema.get("x-teaagent-wrapped").is_none(), "{schema}");
    assert!(schema["properties"]["chars"].is_object(), "{schema}");
    let called = server.request("tools/call", json!({"name": "stats", "arguments": {"text": "abc"}}));
    assert_eq!(called["result"]["structuredContent"], json!({"chars": 3}), "{called}");
    server.finish();
}

#[test]
fn declared_rate_limits_are_annotations_next_to_the_seed_fields() {
    let home = Tree::new();
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let listed = tools(&mut server);
    let echo = &tool(&listed, "echo")["annotations"];
    assert_eq!(echo["rateLimit"], json!({"maxCalls": 3, "windowSeconds": 60}), "{echo}");
    // The seed's fields are still there, next to MCP's hints.
    for key in ["readOnly", "destructive", "idempotent", "stateful", "securityTier", "readOnlyHint"] {
        assert!(echo.get(key).is_some(), "no `{key}` in {echo}");
    }
    assert_eq!(echo["securityTier"], "Low");
    let words = &tool(&listed, "words")["annotations"];
    assert_eq!(words["rateLimit"], json!({"maxCalls": 5, "windowSeconds": 0.5}), "{words}");
    let length = &tool(&listed, "length")["annotations"];
    assert!(length.get("rateLimit").is_none(), "no limit declared: {length}");
    server.finish();
}

#[test]
fn teaagent_tools_json_and_tools_list_carry_the_rate_limit() {
    let (tree, home) = (Tree::new(), Tree::new());
    let out = Command::new(Bin::Teaagent.path())
        .args(["mcp", "tools", "--json"])
        .current_dir(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).expect("a json list of tools");
    let shell = &tool(&listed, "shell_exec")["annotations"];
    assert_eq!(shell["rateLimit"], json!({"maxCalls": 10, "windowSeconds": 60}), "{shell}");
    assert!(tool(&listed, "read_file")["annotations"].get("rateLimit").is_none());

    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let served = tools(&mut server);
    assert_eq!(tool(&served, "shell_exec")["annotations"]["rateLimit"], shell["rateLimit"]);
    server.finish();
}

#[test]
fn prompts_are_not_advertised_when_there_are_none() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).env("TEAAGENT_HOME", home.base());
    let mut servers = vec![RawServer::start(cmd), RawServer::start(author("", &home))];
    for server in &mut servers {
        let result = server.initialize("2025-11-25");
        let capabilities = &result["capabilities"];
        assert!(capabilities.get("prompts").is_none(), "{capabilities}");
        assert!(capabilities.get("tools").is_some(), "{capabilities}");
        // What is not declared is not answered: a client that asks anyway gets -32601.
        let completes = capabilities.get("completions").is_some();
        let undeclared = ["prompts/list", "prompts/get", "completion/complete"];
        for method in undeclared.into_iter().filter(|m| !completes || !m.starts_with("completion")) {
            let listed = server.request(method, json!({}));
            assert_eq!(listed["error"]["code"], json!(-32601), "{method}: {listed}");
        }
    }
    for server in servers {
        server.finish();
    }
}

#[test]
fn state_given_once_is_shared_by_every_call_and_not_in_the_schema() {
    let home = Tree::new();
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let listed = tools(&mut server);
    let add = &tool(&listed, "add_note")["inputSchema"];
    assert_eq!(add["properties"], json!({"text": {"type": "string", "description": "The note's text."}}));
    assert_eq!(add["required"], json!(["text"]), "{add}");
    let list = &tool(&listed, "list_notes")["inputSchema"];
    assert_eq!(list["properties"], json!({}), "{list}");
    assert!(list.get("required").is_none(), "{list}");

    let add = |server: &mut RawServer, text: &str| {
        let called = server.request("tools/call", json!({"name": "add_note", "arguments": {"text": text}}));
        called["result"]["content"][0]["text"].clone()
    };
    assert_eq!(add(&mut server, "milk"), "1 notes");
    assert_eq!(add(&mut server, "eggs"), "2 notes");
    let listed = server.request("tools/call", json!({"name": "list_notes", "arguments": {}}));
    assert_eq!(listed["result"]["content"][0]["text"], "milk\neggs", "{listed}");
    server.finish();
}

#[test]
fn a_server_without_the_state_its_tools_take_does_not_start() {
    // `run_stdio()` logs the refusal and exits 1; `serve_stdio().await` returns it as an error.
    for mode in ["no-state", "no-state-serve-stdio"] {
        let out = run(mode);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
        assert!(out.stdout.is_empty(), "{mode}: stdout is protocol only: {}", text(&out.stdout));
        for tool in ["add_note", "list_notes"] {
            assert!(
                stderr.contains(&format!(
                    "tool `{tool}` takes `State<author::Notes>`, but the server has no `author::Notes`"
                )),
                "{mode}: {tool} not named:\n{stderr}"
            );
        }
        assert!(stderr.contains("`Server::new(registry).state(value)`"), "{mode}: {stderr}");
        assert!(!stderr.contains("serving MCP"), "{mode}: it started:\n{stderr}");
    }
    // Given, but as another type: the message says what was given and the two ways out.
    let out = run("arc-state");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tool `add_note` takes `State<author::Notes>`, but the server was given a `alloc::sync::Arc<author::Notes>`, which is another type")
            && stderr.contains("have the tool take `State<alloc::sync::Arc<author::Notes>>`"),
        "{stderr}"
    );
}

#[test]
fn schemars_range_on_a_parameter_bounds_the_schema_and_the_server_enforces_it() {
    let home = Tree::new();
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let listed = tools(&mut server);
    let schema = &tool(&listed, "letter")["inputSchema"];
    assert_eq!(
        schema["properties"]["n"],
        json!({"type": "integer", "description": "Which letter, 1-based.", "minimum": 1, "maximum": 26}),
        "{schema}"
    );
    assert_eq!(schema["properties"]["upper"]["default"], false, "{schema}");
    assert_eq!(schema["required"], json!(["n"]), "{schema}");

    let refused = server.request("tools/call", json!({"name": "letter", "arguments": {"n": 27}}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["errors"][0]["pointer"], "/n", "{refused}");
    let message = refused["error"]["data"]["errors"][0]["message"].as_str().unwrap_or_default();
    // The wording is the argument report's (tests/argument_errors.rs); the bound is in it.
    assert!(message.contains("26") && message.contains("27"), "{refused}");

    let called =
        server.request("tools/call", json!({"name": "letter", "arguments": {"n": 3, "upper": true}}));
    assert_eq!(called["result"]["content"][0]["text"], "C", "{called}");
    let called = server.request("tools/call", json!({"name": "letter", "arguments": {"n": 26}}));
    assert_eq!(called["result"]["content"][0]["text"], "z", "{called}");
    server.finish();
}

/// Tool authors, round 2: a tool that handles a client that cannot be asked (its `ctx.ask`
/// failed and it answered without) is answered with its own result; one that lets the error end
/// the call (`?`) gets `-32021` naming the capability.
#[test]
fn a_tool_that_handles_a_question_it_cannot_ask_keeps_its_result() {
    let home = Tree::new();
    let mut server = RawServer::start(author("tokio-run-stdio", &home));
    server.initialize("2025-11-25");
    let handled = server.request("tools/call", json!({"name": "greet", "arguments": {}}));
    assert_eq!(handled["result"]["content"][0]["text"], "hello, guest", "{handled}");
    assert_eq!(handled["result"]["isError"], false, "{handled}");
    let ended = server.request("tools/call", json!({"name": "greet_by_name", "arguments": {}}));
    assert_eq!(ended["error"]["code"], -32021, "{ended}");
    server.finish();
}

/// Tool authors, round 2: prompt arguments are checked — a required one missing is `-32602`
/// naming it, an optional one left out is `None`, a name the handler misspells is answered with
/// the name (not a bare panic message), and a completer for an argument the prompt lacks keeps
/// the server from starting.
#[test]
fn prompt_arguments_are_checked_and_a_misspelled_name_is_named() {
    let home = Tree::new();
    let mut server = RawServer::start(author("blocking-prompt", &home));
    server.initialize("2025-11-25");
    let missing = server.request("prompts/get", json!({"name": "typo", "arguments": {}}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing.to_string().contains("needs the argument `file`"), "{missing}");
    let misspelled = server.request("prompts/get", json!({"name": "typo", "arguments": {"file": "a.rs"}}));
    assert_eq!(misspelled["error"]["code"], -32603, "{misspelled}");
    assert!(
        misspelled
            .to_string()
            .contains("prompt `typo` has no argument `fil` (its arguments: `file`, `note`)"),
        "{misspelled}"
    );
    let optional = server.request("prompts/get", json!({"name": "nap", "arguments": {"ms": "1"}}));
    assert!(optional["result"]["messages"][0]["content"]["text"] == "slept 1 ms", "{optional}");
    server.finish();

    let out = run("misspelled-completer");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "prompt `summarize` has a completer for `pth`, which is not one of its arguments (`path`)"
        ),
        "{stderr}"
    );
}
