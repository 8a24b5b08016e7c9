//! Structured output as clients check it: every result's `structuredContent` against the tool's
//! own `outputSchema`, with an independent validator (the `jsonschema` crate, as the SDK clients
//! use Ajv and `jsonschema`), for the built-in tools and an author's `Json<T>` with optional,
//! skipped, defaulted, flattened and enum fields; and the server's own check, which turns a
//! result that breaks its schema into a clear `isError` (tool, pointer, likely cause) with one
//! warning per tool on stderr. The official SDK clients run the same ground in
//! `tests/sdk_clients.rs`; the in-process test kit (`teaagent_core::testing`) is tested here too.

use std::process::Command;

use serde_json::{Value, json};
use teaagent_core::testing::{TestClient, TestError};
use teaagent_core::{Json, Registry, Server, tool};
use teaagent_tests::{Bin, RawServer, Tree};

/// Every tool's `outputSchema`, by name.
fn output_schemas(server: &mut RawServer) -> Vec<(String, Value)> {
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    tools
        .into_iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_owned(), t.get("outputSchema")?.clone())))
        .collect()
}

/// Checks a `tools/call` answer the way the SDK clients do: a result that is not an error
/// carries `structuredContent` that satisfies the tool's `outputSchema`.
fn assert_valid(schemas: &[(String, Value)], tool: &str, answer: &Value) -> Value {
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(false), "{tool}: {answer}");
    let schema =
        &schemas.iter().find(|(n, _)| n == tool).unwrap_or_else(|| panic!("{tool} has no outputSchema")).1;
    let structured =
        result.get("structuredContent").unwrap_or_else(|| panic!("{tool}: no structuredContent"));
    let validator = jsonschema::validator_for(schema).expect("the outputSchema is valid JSON Schema");
    let errors: Vec<String> =
        validator.iter_errors(structured).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{tool}: {errors:?}\nschema: {schema}\nvalue: {structured}");
    structured.clone()
}

/// No `type` lists anywhere (the Inspector's `--strict` "type-union" portability warning).
fn assert_no_type_lists(name: &str, schema: &Value) {
    match schema {
        Value::Object(o) => {
            assert!(!o.get("type").is_some_and(Value::is_array), "{name}: a `type` list in {schema}");
            o.values().for_each(|v| assert_no_type_lists(name, v));
        }
        Value::Array(items) => items.iter().for_each(|v| assert_no_type_lists(name, v)),
        _ => {}
    }
}

fn call(server: &mut RawServer, tool: &str, arguments: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": arguments}))
}

#[test]
fn every_builtin_result_matches_its_own_output_schema() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write(
        "ws/notes.txt",
        "needle on the first line\nsecond line\nthird line\nneedle on the last line\n",
    );
    tree.write("ws/src/lib.rs", "pub fn answer() -> u32 {\n    42\n}\n");
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "allow", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-11-25");
    let schemas = output_schemas(&mut server);
    for (name, schema) in &schemas {
        assert_no_type_lists(name, schema);
    }
    let search = |context: Option<u64>| match context {
        Some(n) => json!({"pattern": "needle", "context": n}),
        None => json!({"pattern": "needle"}),
    };
    for context in [None, Some(0), Some(1), Some(2), Some(10)] {
        let found = assert_valid(&schemas, "search_text", &call(&mut server, "search_text", search(context)));
        let lines: Vec<u64> = found["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .map(|m| m["line"].as_u64().expect("line"))
            .collect();
        assert_eq!(lines, [1, 4], "context {context:?}: {found}");
    }
    // Each match has its whole context, even where the two overlap.
    let found = call(&mut server, "search_text", search(Some(2)));
    let matches = &found["result"]["structuredContent"]["matches"];
    assert_eq!(matches[0]["after"], json!(["second line", "third line"]), "{found}");
    assert_eq!(matches[1]["before"], json!(["second line", "third line"]), "{found}");
    assert!(matches[0].get("before").is_none() && matches[1].get("after").is_none(), "{found}");
    let found = call(&mut server, "search_text", search(Some(3)));
    let matches = &found["result"]["structuredContent"]["matches"];
    assert_eq!(
        matches[0]["after"],
        json!(["second line", "third line", "needle on the last line"]),
        "{found}"
    );
    assert_eq!(
        matches[1]["before"],
        json!(["needle on the first line", "second line", "third line"]),
        "{found}"
    );
    for (tool, args) in [
        ("list_directory", json!({})),
        ("list_directory", json!({"path": "src", "depth": 3})),
        ("find_files", json!({"pattern": "**/*.rs"})),
        ("find_files", json!({"pattern": "*.none"})),
        ("file_info", json!({"path": "notes.txt"})),
        ("file_info", json!({"path": "src"})),
    ] {
        assert_valid(&schemas, tool, &call(&mut server, tool, args));
    }
    server.finish();
}

#[test]
fn an_authors_optional_and_skipped_fields_pass_and_a_lying_schema_is_a_clear_error() {
    let home = Tree::new();
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-11-25");
    let schemas = output_schemas(&mut server);
    let profile = &schemas.iter().find(|(n, _)| n == "profile").expect("profile").1;
    // Left out when empty: not required. Written as null, defaulted, flattened: required.
    assert_eq!(profile["required"], json!(["name", "email", "score", "kind", "city"]), "{profile}");
    assert_no_type_lists("profile", profile);
    let bare = assert_valid(&schemas, "profile", &call(&mut server, "profile", json!({"full": false})));
    assert_eq!(bare, json!({"name": "Ada", "email": null, "score": 3, "kind": "person", "city": "London"}));
    let full = assert_valid(&schemas, "profile", &call(&mut server, "profile", json!({"full": true})));
    assert_eq!(full["country"], "UK");

    for _ in 0..2 {
        let refused = call(&mut server, "mislabeled", json!({}));
        let result = &refused["result"];
        assert_eq!(result["isError"], json!(true), "{refused}");
        assert!(result.get("structuredContent").is_none(), "the bad value is not sent: {refused}");
        let text = result["content"][0]["text"].as_str().expect("text");
        for part in ["`mislabeled`", "outputSchema", "/count", "must be an integer", "Likely cause"] {
            assert!(text.contains(part), "`{part}` in: {text}");
        }
        assert_eq!(result["_meta"]["reason"], "invalid_output");
        assert_eq!(result["_meta"]["errors"][0]["pointer"], "/count");
    }
    let stderr = server.stderr_once(|s| s.contains("mislabeled"));
    assert_eq!(stderr.matches("does not match its own outputSchema").count(), 1, "once per tool:\n{stderr}");
    server.finish();
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Summary {
    /// Lines.
    lines: usize,
    /// The first line, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    first: Option<String>,
    /// Words, when any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    words: Vec<String>,
}

/// Summarizes a text.
#[tool(read_only, unregistered)]
fn summarize(
    /// The text.
    text: String,
) -> Json<Summary> {
    Json(Summary {
        lines: text.lines().count(),
        first: text.lines().next().map(str::to_owned),
        words: text.split_whitespace().map(str::to_owned).collect(),
    })
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Lies {
    /// Declared a number, written as text.
    #[schemars(with = "f64")]
    value: String,
}

/// Returns output that breaks its own schema.
#[tool(read_only, unregistered)]
fn lies() -> Json<Lies> {
    Json(Lies { value: "NaN".into() })
}

#[tokio::test]
async fn the_test_kit_checks_results_as_clients_do() {
    let registry = Registry::builder().add::<summarize>().add::<lies>().build().expect("valid tools");
    let mut client = TestClient::start(Server::new(registry)).await.expect("serves");
    let names: Vec<&str> = client.tools().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["summarize", "lies"]);
    assert_eq!(client.tools_list()["tools"][0]["outputSchema"]["required"], json!(["lines"]));

    let empty = client.call("summarize", json!({"text": ""})).await.expect("valid");
    assert_eq!(empty.structured(), Some(&json!({"lines": 0})));
    let some = client.call("summarize", json!({"text": "a b\nc"})).await.expect("valid");
    assert_eq!(some.structured().and_then(|s| s["first"].as_str()), Some("a b"));

    let refused = client.call("summarize", json!({"text": 5})).await.expect("a result the model reads");
    assert!(refused.is_error() && refused.text().contains("/text"), "{}", refused.text());

    match client.call("lies", json!({})).await {
        Err(TestError::InvalidOutput { tool, problems, explanation }) => {
            assert_eq!(tool, "lies");
            assert_eq!(problems[0].pointer, "/value");
            assert!(explanation.is_some_and(|e| e.contains("Likely cause")));
        }
        other => panic!("a lying schema must fail the kit: {other:?}"),
    }
    match client.call("nope", json!({})).await {
        Err(TestError::Rpc { code, message, .. }) => assert!(message.contains("nope"), "{code}: {message}"),
        other => panic!("an unknown tool is a JSON-RPC error: {other:?}"),
    }
    client.finish().await.expect("a clean shutdown");
}
