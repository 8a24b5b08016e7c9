//! Starting one external server (`gateway.rs`, "Lifecycle"): the `initialize` handshake, then
//! its whole tool list, page by page, within bounds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::ToolList;
use super::child::{Connection, Launch, PROTOCOL_VERSION, Reply};
use crate::visible::shown;

/// Most tools read from one server (a list longer than this is refused as a whole).
const MAX_TOOLS: usize = 10_000;
/// Most `tools/list` pages read from one server.
const MAX_PAGES: usize = 1_000;
/// Most bytes of one server's tool list, all pages (a list longer than this is refused as a
/// whole: no model should read that much about one server's tools).
const MAX_LIST_BYTES: usize = 16 * 1024 * 1024;

/// Starts a server, initializes it and reads its tool list.
pub(super) async fn start_one(
    launch: &Launch,
    timeout: Duration,
) -> Result<(Arc<Connection>, ToolList), String> {
    let conn = Connection::spawn(launch)
        .map_err(|e| format!("cannot start {}: {e}", shown(&launch.program.display().to_string())))?;
    let handshake = async {
        let init = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "teaagent-gateway", "version": env!("CARGO_PKG_VERSION")},
        });
        match conn.request("initialize", init).await {
            Reply::Result(result)
                if serde_json::from_str::<Value>(&result)
                    .is_ok_and(|r| r.get("protocolVersion").is_some_and(Value::is_string)) => {}
            Reply::Result(_) => return Err("its `initialize` result has no protocolVersion".to_owned()),
            Reply::Error(e) => return Err(format!("it refused `initialize`: {}", shown(&e.to_string()))),
            Reply::Closed => return Err("it exited before answering `initialize`".to_owned()),
            Reply::Unreadable(why) => return Err(format!("its `initialize` reply cannot be read: {why}")),
        }
        conn.notify("notifications/initialized", json!({}));
        list_tools(&conn).await
    };
    match tokio::time::timeout(timeout, handshake).await {
        Ok(Ok(list)) => Ok((conn, list)),
        Ok(Err(why)) => {
            conn.shutdown(Duration::from_millis(200)).await;
            Err(why)
        }
        Err(_) => {
            conn.shutdown(Duration::from_millis(200)).await;
            Err(format!("it did not initialize and list its tools within {} s", timeout.as_secs_f64()))
        }
    }
}

/// Every page of `tools/list` (at most [`MAX_PAGES`], [`MAX_TOOLS`] and [`MAX_LIST_BYTES`]).
pub(super) async fn list_tools(conn: &Connection) -> Result<ToolList, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut bytes = 0usize;
    for page_number in 1..=MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = match conn.request("tools/list", params).await {
            Reply::Result(page) => {
                // As the server wrote it: counted before it is read.
                bytes = bytes.saturating_add(page.len());
                serde_json::from_str::<Value>(&page).unwrap_or_default()
            }
            Reply::Error(e) => return Err(format!("it refused `tools/list`: {}", shown(&e.to_string()))),
            Reply::Closed => return Err("it exited before listing its tools".to_owned()),
            Reply::Unreadable(why) => return Err(format!("its `tools/list` reply cannot be read: {why}")),
        };
        if bytes > MAX_LIST_BYTES {
            return Err(format!(
                "its tool list is larger than {} MiB ({bytes} bytes in its first {page_number} pages): no model should read that much about one server's tools",
                MAX_LIST_BYTES >> 20
            ));
        }
        let Some(items) = page.get("tools").and_then(Value::as_array) else {
            return Err("its `tools/list` result has no `tools` array".to_owned());
        };
        for tool in items {
            if !tool.get("name").is_some_and(Value::is_string) {
                return Err("it listed a tool without a name".to_owned());
            }
        }
        tools.extend(items.iter().cloned());
        if tools.len() > MAX_TOOLS {
            return Err(format!("it listed more than {MAX_TOOLS} tools"));
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => return Ok(ToolList::new(tools)),
        }
    }
    Err(format!("its tool list has more than {MAX_PAGES} pages"))
}
