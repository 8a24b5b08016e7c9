//! Hardening, honest limits, against the real binary (the set-up:
//! `common/shell_setup.rs`): every integer parameter a built-in tool limits states the limit in
//! its schema, and a value outside is refused with `-32602` naming the argument (no silent
//! clamp).

use serde_json::{Value, json};
use teaagent_tests::Tree;

use crate::common::shell_setup;
use shell_setup::{call, serve};

/// (tool, parameter, minimum, maximum, other arguments the call needs)
const LIMITS: &[(&str, &str, i64, i64, &str)] = &[
    ("list_directory", "depth", 1, 10, "{}"),
    ("search_text", "context", 0, 10, r#"{"pattern": "needle"}"#),
    ("search_text", "max_results", 1, 2000, r#"{"pattern": "needle"}"#),
    ("shell_exec", "timeout_secs", 1, 3600, r#"{"command": "echo ran"}"#),
];

#[test]
fn schemas_state_the_real_limits() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(&tree, &home, &[]);
    let tools = server.request("tools/list", json!({}))["result"]["tools"].clone();
    for &(tool, param, min, max, _) in LIMITS {
        let entry = tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == tool))
            .unwrap_or_else(|| panic!("{tool} is listed"));
        let schema = &entry["inputSchema"]["properties"][param];
        assert_eq!(schema["type"], "integer", "{tool}.{param}: {schema}");
        assert_eq!(schema["maximum"], json!(max), "{tool}.{param}: {schema}");
        assert_eq!(schema["minimum"], json!(min), "{tool}.{param}: {schema}");
    }
    server.finish();
}

#[test]
fn values_outside_the_limits_are_refused_naming_the_argument() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(&tree, &home, &[]);
    for &(tool, param, min, max, base) in LIMITS {
        let far = if max < 255 { 255 } else { i64::from(u32::MAX) };
        for bad in [json!(max + 1), json!(far), json!(min - 1), json!(u64::MAX), json!(-1)] {
            let mut args: Value = serde_json::from_str(base).expect("arguments");
            args[param] = bad.clone();
            let answer = call(&mut server, tool, args);
            let error = &answer["error"];
            assert_eq!(error["code"], -32602, "{tool}.{param} = {bad}: {answer}");
            assert_eq!(error["data"]["reason"], "invalid_arguments", "{answer}");
            let pointers: Vec<&Value> =
                error["data"]["errors"].as_array().into_iter().flatten().map(|e| &e["pointer"]).collect();
            assert!(pointers.contains(&&json!(format!("/{param}"))), "{tool}.{param} = {bad}: {answer}");
        }
    }
    server.finish();
}

#[test]
fn values_at_the_limits_work() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut deep = String::from("ws/d");
    for i in 0..12 {
        deep.push_str(&format!("/l{i}"));
    }
    tree.write(&format!("{deep}/bottom.txt"), "x\n");
    let lines: String = (0..2100).map(|i| format!("needle {i}\n")).collect();
    tree.write("ws/many.txt", &lines);
    let mut server = serve(&tree, &home, &[]);

    let listing = call(&mut server, "list_directory", json!({"path": "d", "depth": 10}));
    let entries = listing["result"]["structuredContent"]["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 10, "ten levels and no more: {listing}");

    let found = call(&mut server, "search_text", json!({"pattern": "needle", "max_results": 2000}));
    let matches = found["result"]["structuredContent"]["matches"].as_array().cloned().unwrap_or_default();
    assert_eq!(matches.len(), 2000, "{}", found["result"]["structuredContent"]["truncated"]);

    let context = call(&mut server, "search_text", json!({"pattern": "^needle 50$", "context": 10}));
    let hit = &context["result"]["structuredContent"]["matches"][0];
    assert_eq!(hit["before"].as_array().map(Vec::len), Some(10), "{context}");
    assert_eq!(hit["after"].as_array().map(Vec::len), Some(10), "{context}");

    let ran = call(&mut server, "shell_exec", json!({"command": "echo ran", "timeout_secs": 3600}));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert!(ran["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("ran"), "{ran}");
    server.finish();
}
