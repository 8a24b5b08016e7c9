//! The `#[tool]` attribute end to end: tools defined in several modules of the fixture server,
//! registered at link time, listed and called through the official SDK's client, and their
//! `tools/list` entries snapshotted exactly as a client sees them.

#![allow(deprecated)]

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{Value, json};
use teaagent_tests::{Bin, snap};

use crate::common::client;
use client::{Client, connect, timely};

async fn fixture() -> Client {
    // Full access: these tests are about the attribute, not the policy.
    connect(
        Bin::Fixture.path(),
        &[],
        &[("FIXTURE_MODE", "danger-full-access")],
        ProtocolVersion::V_2025_06_18,
    )
    .await
    .0
}

async fn call(client: &Client, name: &str, args: Value) -> Result<rmcp::model::CallToolResult, ServiceError> {
    let args = args.as_object().cloned().expect("an object");
    timely(client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))).await
}

#[tokio::test]
async fn tools_from_every_module_are_registered_and_listed() {
    let client = fixture().await;
    let tools = timely(client.list_all_tools()).await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    // modules::text, modules::math::ops (renamed), modules::notes, sink, plus the hand-written ones.
    for name in ["upper", "divide", "keep_note", "kitchen_sink", "echo", "slow"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(!names.contains(&"div"), "`name = \"divide\"` renames the tool");
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn sync_async_args_and_result_forms_answer_as_documented() {
    let client = fixture().await;
    let upper = call(&client, "upper", json!({"text": "héllo"})).await.expect("upper");
    assert_eq!(upper.content[0].as_text().map(|t| t.text.as_str()), Some("HÉLLO"));

    let ok = call(&client, "divide", json!({"a": 7, "b": 2})).await.expect("divide");
    assert_eq!((ok.content[0].as_text().map(|t| t.text.as_str()), ok.is_error), (Some("3"), Some(false)));
    let err = call(&client, "divide", json!({"a": 7, "b": 0})).await.expect("a result, not a protocol error");
    assert_eq!(err.is_error, Some(true));
    assert_eq!(
        err.content[0].as_text().map(|t| t.text.as_str()),
        Some("cannot divide by zero: pass a non-zero `b`")
    );

    let note =
        call(&client, "keep_note", json!({"title": "t", "lines": ["a", "b"]})).await.expect("keep_note");
    let texts: Vec<&str> = note.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    assert_eq!(texts, ["keep_note: t", "a\nb"]);

    let sink = call(
        &client,
        "kitchen_sink",
        json!({
            "query": "needle",
            "order": "relevance",
            "filter": {"tags": ["x"], "ranges": [{"start": 3}, {"start": 1, "end": 9}]},
            "threshold": 0.5,
            "weights": {"title": 2.0},
            "flags": [true, false],
            "limit": null,
            "tree": {"name": "root", "children": [{"name": "leaf"}]}
        }),
    )
    .await
    .expect("kitchen_sink");
    let structured = sink.structured_content.clone().expect("structuredContent");
    assert_eq!(structured["matched"], 6);
    assert_eq!(structured["order"], "Relevance");
    assert_eq!(
        structured["notes"],
        json!([
            "tool kitchen_sink",
            "1 tags, 0 labels, ranges [3..end, 1..9], depth 4",
            "limit None, threshold 0.5, 1 weights, 2 flags",
            "tree root with 1 children"
        ])
    );
    // The same JSON as text, for clients that read only text.
    let text: Value = serde_json::from_str(sink.content[0].as_text().map(|t| t.text.as_str()).unwrap_or(""))
        .expect("json text");
    assert_eq!(text, structured);
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn bad_arguments_are_invalid_params_listing_every_problem() {
    let client = fixture().await;
    let refused = call(
        &client,
        "kitchen_sink",
        json!({"order": "sideways", "threshold": "high", "flags": [1], "bogus": 1}),
    )
    .await;
    let Err(ServiceError::McpError(e)) = refused else { panic!("expected -32602, got {refused:?}") };
    assert_eq!(e.code.0, -32602);
    let data = e.data.expect("data");
    assert_eq!(data["reason"], "invalid_arguments");
    assert_eq!(data["tool"], "kitchen_sink");
    let pointers: Vec<&str> =
        data["errors"].as_array().expect("errors").iter().filter_map(|e| e["pointer"].as_str()).collect();
    for expected in ["/query", "/order", "/threshold", "/weights", "/flags/0", "/bogus"] {
        assert!(pointers.contains(&expected), "{expected} missing from {pointers:?}");
    }
    timely(client.cancel()).await.expect("shut down");
}

#[test]
fn tools_list_entries_are_what_the_snapshots_say() {
    // Straight off the wire (a client library's types would drop the seed's annotation fields).
    let fixture = listed(Bin::Fixture);
    let echo = listed(Bin::Echo);
    let get = |tools: &[Value], name: &str| {
        tools.iter().find(|t| t["name"] == name).cloned().unwrap_or_else(|| panic!("no tool {name}"))
    };
    snap::with_settings_in_order(|| {
        insta::assert_json_snapshot!("tool_kitchen_sink", get(&fixture, "kitchen_sink"));
        insta::assert_json_snapshot!("tool_keep_note", get(&fixture, "keep_note"));
        insta::assert_json_snapshot!("tool_divide", get(&fixture, "divide"));
        insta::assert_json_snapshot!("example_echo", get(&echo, "echo"));
    });
}

#[test]
fn every_schema_is_client_safe() {
    // Everything the fixture and the example define, checked for the shape clients accept.
    for tool in listed(Bin::Fixture).into_iter().chain(listed(Bin::Echo)) {
        let (name, schema) =
            (tool["name"].as_str().unwrap_or_default().to_owned(), tool["inputSchema"].clone());
        let text = schema.to_string();
        assert!(!text.contains("\"$schema\""), "{name}: $schema");
        assert_eq!(schema["type"], "object", "{name}");
        assert!(schema["properties"].is_object(), "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for format in ["uint", "int8", "int16", "int32", "int64", "double", "float"] {
            assert!(!text.contains(&format!("\"format\":\"{format}")), "{name}: format {format}");
        }
        // Only the recursive tree keeps definitions.
        assert_eq!(text.contains("$ref"), name == "kitchen_sink", "{name}: {text}");
    }
}

/// The `tools/list` entries of a server, read over the wire.
fn listed(bin: Bin) -> Vec<Value> {
    let mut server = teaagent_tests::RawServer::spawn(bin.path(), &[]);
    server.initialize("2025-06-18");
    let list = server.request("tools/list", json!({}));
    server.finish();
    list["result"]["tools"].as_array().cloned().expect("tools")
}
