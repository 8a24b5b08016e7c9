//! The server served over in-memory streams and called once, refusing to start without its tools' state.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::*;

/// A tool taking state the server was not given: `serve` and `call_once` refuse before
/// anything is read or run, with the `MissingState` inside.
#[tokio::test]
async fn serving_without_the_state_a_tool_takes_is_refused() {
    #[derive(Clone)]
    struct Notes;
    let registry = || {
        let def = crate::ToolDef::builder("add_note")
            .description("Adds a note.")
            .input_schema(serde_json::json!({"type": "object", "properties": {}}))
            .needs_state::<Notes>()
            .handler(crate::Handler::new(|_, _| async { Ok(crate::CallToolResult::text("ok")) }))
            .build();
        Registry::builder().tool(def).build().expect("valid")
    };
    let (reader, writer) = tokio::io::split(tokio::io::duplex(64).0);
    let err =
        Server::new(registry()).serve(reader, writer, CancellationToken::new()).await.expect_err("refused");
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    let missing = err.get_ref().and_then(|e| e.downcast_ref::<MissingState>()).expect("MissingState");
    assert_eq!(missing.missing().map(|(tool, _)| tool).collect::<Vec<_>>(), ["add_note"]);

    let err =
        Server::new(registry()).call_once("add_note", serde_json::json!({})).await.expect_err("refused");
    assert!(err.to_string().contains("tool `add_note` takes `State<"), "{err}");
    let called = Server::new(registry()).state(Notes).call_once("add_note", serde_json::json!({})).await;
    assert!(called.is_ok(), "{called:?}");
}

/// `serve` over in-memory streams: the same main loop as stdio.
#[tokio::test]
async fn serves_any_byte_streams() {
    let registry = Registry::builder().build().expect("empty registry");
    let (client, server_end) = tokio::io::duplex(4096);
    let (server_read, server_write) = tokio::io::split(server_end);
    let serving =
        tokio::spawn(Server::new(registry).serve(server_read, server_write, CancellationToken::new()));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
        .await
        .expect("write");
    let first: serde_json::Value =
        serde_json::from_str(&lines.next_line().await.expect("read").expect("a line")).expect("json");
    assert_eq!(first["result"]["protocolVersion"], "2025-06-18");
    let second = lines.next_line().await.expect("read").expect("a line");
    assert_eq!(second, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    client_write.shutdown().await.expect("close");
    drop(client_write);
    serving.await.expect("joined").expect("served until EOF");
}
