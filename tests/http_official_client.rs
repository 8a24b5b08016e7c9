//! Streamable HTTP against the real binaries, driven by the official Rust SDK's
//! streamable-HTTP client: the modern era (protocol 2026-07-28) from `teaagent mcp serve --http`,
//! with and without a bearer token, and the legacy era from the fixture server
//! (`FIXTURE_HTTP`).

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;
use teaagent_tests::Tree;

use crate::common::client;
use crate::common::http as raw;
use raw::Http;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_speaks_the_modern_era_over_http() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server = Http::teaagent(&tree, &home, &[], &[]);
    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
        ),
        events: tokio::sync::mpsc::unbounded_channel().0,
    };
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = client::timely(recorder.serve_with_lifecycle(transport, mode)).await.expect("discover");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version.as_str(), "2026-07-28");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "read_file"), "{tools:?}");
    let read = client::timely(
        client.call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(json!({"path": "src/a.txt"}).as_object().cloned().expect("object")),
        ),
    )
    .await
    .expect("read_file");
    assert_eq!(serde_json::to_value(&read).expect("json")["content"][0]["text"], "hello\n");
    let unknown = client::timely(client.call_tool(CallToolRequestParams::new("no_such_tool"))).await;
    assert!(
        format!("{unknown:?}").contains("-32601") || format!("{unknown:?}").contains("Unknown tool"),
        "{unknown:?}"
    );
    // Refused by the policy (workspace-write: write_file is destructive), in-band.
    let denied =
        client::timely(client.call_tool(
            CallToolRequestParams::new("write_file").with_arguments(
                json!({"path": "x.txt", "content": "x"}).as_object().cloned().expect("object"),
            ),
        ))
        .await;
    assert!(format!("{denied:?}").contains("32001"), "{denied:?}");
    assert!(!tree.path("ws/x.txt").exists());
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_calls_with_a_token() {
    let (tree, home) = (Tree::new(), Tree::new());
    let server =
        Http::teaagent(&tree, &home, &[], &[("TEAAGENT_HTTP_TOKENS", "ci:ci-token-0123456789abcdef")]);
    let connect = |token: Option<&str>| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(server.url());
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let recorder = client::Recorder {
            config: rmcp::model::ClientConfig::new(
                rmcp::model::ClientCapabilities::default(),
                rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
            ),
            events: tokio::sync::mpsc::unbounded_channel().0,
        };
        let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        recorder.serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), mode)
    };
    assert!(client::timely(connect(None)).await.is_err(), "no token, no session");
    let client = client::timely(connect(Some("ci-token-0123456789abcdef"))).await.expect("with the token");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "search_text"));
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_speaks_the_legacy_era_over_http() {
    let home = Tree::new();
    let server = Http::fixture(&home);
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel::<client::Event>();
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-http-e2e", "0.1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25),
        events: events_tx,
    };
    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let client = client::timely(rmcp::ServiceExt::serve(recorder, transport)).await.expect("initialize");
    assert_eq!(client.peer_info().expect("info").protocol_version.as_str(), "2025-11-25");
    let echo = client::timely(
        client.call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(json!({"text": "legacy"}).as_object().cloned().expect("object")),
        ),
    )
    .await
    .expect("echo");
    assert_eq!(serde_json::to_value(&echo).expect("json")["content"][0]["text"], "legacy");
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "slow"));
    let _ = events.try_recv();
    client.cancel().await.expect("close");
}
