//! End to end with the official Rust MCP SDK as the client: the real binaries, spawned over the
//! child-process transport, initialized under every supported version and an unknown one; the
//! rest of the suite runs in both eras (the legacy `initialize` and protocol `2026-07-28`).

#![allow(deprecated)]

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ErrorCode, LoggingLevel, PaginatedRequestParams,
    PingRequest, ProtocolVersion, ServerResult, SetLevelRequestParams,
};
use rmcp::service::PeerRequestOptions;
use serde_json::json;
use teaagent_tests::Bin;

use crate::common::client;
use client::{Event, Handshake, connect, connect_as, timely, version};

fn workspace() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("teaagent-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp workspace");
    dir
}

fn args_of(bin: Bin, root: &str) -> Vec<&str> {
    match bin {
        Bin::Teaagent => vec!["mcp", "serve", "--root", root],
        _ => vec![],
    }
}

#[tokio::test]
async fn every_binary_initializes_under_every_version_and_an_unknown_one() {
    let root = workspace();
    let root = root.to_str().expect("utf-8 temp path");
    let cases = [
        (ProtocolVersion::V_2024_11_05, "2024-11-05"),
        (ProtocolVersion::V_2025_03_26, "2025-03-26"),
        (ProtocolVersion::V_2025_06_18, "2025-06-18"),
        (ProtocolVersion::V_2025_11_25, "2025-11-25"),
        (version("1999-01-01"), "2025-11-25"),
        // The SDK's own newest version, which this server does not speak yet.
        (ProtocolVersion::LATEST, "2025-11-25"),
    ];
    for bin in [Bin::Echo, Bin::Fixture, Bin::Teaagent] {
        for (asked, answered) in &cases {
            let (client, _) = connect(bin.path(), &args_of(bin, root), &[], asked.clone()).await;
            let info = client.peer_info().expect("initialized");
            assert_eq!(info.protocol_version.as_str(), *answered, "{bin:?} asked {asked}");
            let server = info.server_info.as_ref().expect("serverInfo");
            assert_eq!(
                (server.name.as_str(), server.version.as_str()),
                ("teaagent", env!("CARGO_PKG_VERSION"))
            );
            assert!(info.capabilities.tools.is_some() && info.capabilities.logging.is_some());
            let pong = timely(client.send_request(ClientRequest::PingRequest(PingRequest::default()))).await;
            assert!(matches!(pong, Ok(ServerResult::EmptyResult(_))), "{pong:?}");
            let tools = timely(client.list_all_tools()).await.expect("tools/list");
            if bin != Bin::Teaagent {
                assert!(tools.iter().any(|t| t.name == "echo"), "{bin:?}");
                let args = json!({"text": "héllo 🦀"}).as_object().cloned().expect("object");
                let result =
                    timely(client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)))
                        .await
                        .expect("tools/call");
                let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
                assert_eq!(text.as_deref(), Some("héllo 🦀"));
                assert_eq!(result.is_error, Some(false));
            }
            timely(client.cancel()).await.expect("shut down");
        }
    }
}

#[tokio::test]
async fn the_example_lists_its_echo_tool_with_schema_and_annotations() {
    for handshake in Handshake::both() {
        the_example_lists_its_echo_tool(handshake).await;
    }
}

async fn the_example_lists_its_echo_tool(handshake: Handshake) {
    let (client, _) = connect_as(Bin::Echo.path(), &[], &[], handshake).await;
    let tools = timely(client.list_all_tools()).await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    let echo = &tools[0];
    assert_eq!(
        serde_json::Value::Object((*echo.input_schema).clone()),
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to echo."}},
            "required": ["text"],
            "additionalProperties": false
        })
    );
    let annotations = echo.annotations.as_ref().expect("annotations");
    assert_eq!((annotations.read_only_hint, annotations.idempotent_hint), (Some(true), Some(true)));
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn pagination_through_the_client_visits_every_tool_once() {
    for handshake in Handshake::both() {
        pagination_visits_every_tool_once(handshake).await;
    }
}

async fn pagination_visits_every_tool_once(handshake: Handshake) {
    let env = [("FIXTURE_EXTRA_TOOLS", "250"), ("FIXTURE_PAGE_SIZE", "100")];
    let (client, _) = connect_as(Bin::Fixture.path(), &[], &env, handshake).await;
    let first = timely(client.list_tools(None)).await.expect("first page");
    assert_eq!(first.tools.len(), 100);
    let cursor = first.next_cursor.clone().expect("a next page");
    let second = timely(client.list_tools(Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))))
        .await
        .expect("second page");
    assert_eq!(second.tools[0].name, "extra_089");
    let all = timely(client.list_all_tools()).await.expect("every page");
    let mut names: Vec<_> = all.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len(), "no tool listed twice");
    for i in 0..250 {
        assert!(names.binary_search(&format!("extra_{i:03}")).is_ok(), "extra_{i:03} missing");
    }
    let bad =
        timely(client.list_tools(Some(PaginatedRequestParams::default().with_cursor(Some("bogus".into())))))
            .await;
    match bad {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(e.data.as_ref().map(|d| d["reason"].clone()), Some(json!("invalid_cursor")));
        }
        other => panic!("expected -32602, got {other:?}"),
    }
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn errors_reach_the_client_with_their_codes_and_data() {
    for handshake in [Handshake::Legacy(ProtocolVersion::V_2025_06_18), Handshake::Modern] {
        errors_reach_the_client(handshake).await;
    }
}

async fn errors_reach_the_client(handshake: Handshake) {
    let (client, _) = connect_as(Bin::Fixture.path(), &[], &[], handshake).await;
    match timely(client.call_tool(CallToolRequestParams::new("missing"))).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.data, Some(json!({"tool": "missing", "reason": "unknown_tool"})));
        }
        other => panic!("expected -32601, got {other:?}"),
    }
    match timely(client.call_tool(CallToolRequestParams::new("panic"))).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32000);
            assert_eq!(e.data.as_ref().map(|d| d["reason"].clone()), Some(json!("panic")));
        }
        other => panic!("expected -32000, got {other:?}"),
    }
    let failed = timely(client.call_tool(CallToolRequestParams::new("fail"))).await.expect("a result");
    assert_eq!(failed.is_error, Some(true));
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn progress_and_logs_reach_a_real_client() {
    for handshake in [Handshake::Legacy(ProtocolVersion::V_2025_06_18), Handshake::Modern] {
        progress_and_logs(handshake).await;
    }
}

async fn progress_and_logs(handshake: Handshake) {
    let modern = matches!(handshake, Handshake::Modern);
    let (client, mut events) = connect_as(Bin::Fixture.path(), &[], &[], handshake).await;
    let args = json!({"ms": 300, "steps": 3}).as_object().cloned().expect("object");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(args),
    ));
    let handle = timely(client.send_cancellable_request(request, PeerRequestOptions::no_options()))
        .await
        .expect("sent");
    let token = handle.progress_token.clone();
    let result = timely(handle.await_response()).await.expect("a result");
    assert!(matches!(result, ServerResult::CallToolResult(_)), "{result:?}");
    let mut progress = Vec::new();
    while progress.len() < 3 {
        match timely(events.recv()).await {
            Some(Event::Progress(p)) => progress.push(p),
            Some(Event::Log(_)) => {}
            None => break,
        }
    }
    assert!(progress.iter().all(|p| p.progress_token == token));
    assert_eq!(progress.iter().map(|p| p.progress).collect::<Vec<_>>(), vec![1.0, 2.0, 3.0]);

    let args = json!({"level": "warn", "message": "disk almost full"}).as_object().cloned().expect("object");
    let log = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("log").with_arguments(args),
    ));
    // The level: for the session (legacy), or in the request's own `_meta` (modern).
    let mut options = PeerRequestOptions::default();
    if modern {
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_log_level(LoggingLevel::Warning);
        options = options.with_meta(meta);
    } else {
        timely(client.set_level(SetLevelRequestParams::new(LoggingLevel::Warning))).await.expect("setLevel");
    }
    let sent = timely(client.send_request_with_option(log, options)).await.expect("sent");
    timely(sent.await_response()).await.expect("log");
    let log = loop {
        match timely(events.recv()).await {
            Some(Event::Log(l)) => break l,
            Some(Event::Progress(_)) => {}
            None => panic!("no log notification"),
        }
    };
    assert_eq!(log.level, LoggingLevel::Warning);
    assert_eq!(log.data["message"], "disk almost full");
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn a_cancelled_call_leaves_the_session_usable() {
    for handshake in [Handshake::Legacy(ProtocolVersion::V_2025_06_18), Handshake::Modern] {
        a_cancelled_call_leaves_the_server_usable(handshake).await;
    }
}

async fn a_cancelled_call_leaves_the_server_usable(handshake: Handshake) {
    let (client, _) = connect_as(Bin::Fixture.path(), &[], &[], handshake).await;
    let args = json!({"ms": 60000}).as_object().cloned().expect("object");
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(args),
    ));
    let handle = timely(client.send_cancellable_request(request, PeerRequestOptions::no_options()))
        .await
        .expect("sent");
    timely(handle.cancel(Some("changed my mind".into()))).await.expect("cancel sent");
    let args = json!({"text": "after"}).as_object().cloned().expect("object");
    let after = timely(client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)))
        .await
        .expect("echo");
    assert_eq!(after.content[0].as_text().map(|t| t.text.as_str()), Some("after"));
    timely(client.cancel()).await.expect("shut down");
}
