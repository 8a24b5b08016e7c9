//! A test kit for tool authors: an in-process MCP client that checks what it receives the way
//! the official SDK clients do.
//!
//! [`TestClient::start`] serves a [`Server`] over an in-memory pipe — the same JSON-RPC lines,
//! handshake, validation, policy and rate limits as over stdio — and lists its tools.
//! [`TestClient::call`] calls one with JSON arguments and returns its result after the checks a
//! client makes: a tool with an `outputSchema` must return `structuredContent` that satisfies
//! it (the Python and TypeScript SDKs refuse anything else), and a result the server itself
//! refused to send for breaking that schema ([`crate::Registry::check_output`]) is an error
//! here too, with the server's explanation. [`TestClient::tools_list`] is the `tools/list`
//! answer, for a snapshot of everything a client sees.
//!
//! ```
//! use serde_json::json;
//! use teaagent_core::testing::TestClient;
//! use teaagent_core::{Json, Registry, Server, tool};
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum {
//!     total: i64,
//!     /// Only when the sum overflowed and saturated.
//!     #[serde(skip_serializing_if = "Option::is_none")]
//!     note: Option<String>,
//! }
//!
//! /// Adds two numbers.
//! #[tool(read_only, unregistered)]
//! fn add(
//!     /// The first.
//!     a: i64,
//!     /// The second.
//!     b: i64,
//! ) -> Json<Sum> {
//!     Json(Sum { total: a.saturating_add(b), note: None })
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::builder().add::<add>().build().expect("valid tools");
//! let mut client = TestClient::start(Server::new(registry)).await.expect("serves");
//! let result = client.call("add", json!({"a": 2, "b": 3})).await.expect("a valid result");
//! assert_eq!(result.structured(), Some(&json!({"total": 5})));
//! // Bad arguments are a result the model reads, not an exception.
//! let refused = client.call("add", json!({"a": "two"})).await.expect("a result");
//! assert!(refused.is_error(), "{}", refused.text());
//! // In your own tests: insta::assert_json_snapshot!(client.tools_list());
//! assert_eq!(client.tools_list()["tools"][0]["name"], "add");
//! client.finish().await.expect("a clean shutdown");
//! # });
//! ```
//!
//! The client speaks protocol `2025-11-25` (the `initialize` era, as most clients do today) and
//! declares no capabilities: a tool that asks the client something ([`crate::ToolContext::ask`])
//! gets the error it would get from a client without forms. The server's policy is what it
//! would be when served; fix it with [`Server::policy`] for a test that must not depend on the
//! environment. Every request waits at most [`TestClient::timeout`] (60 s by default).

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::ArgumentError;
use crate::mcp::ProtocolVersion;
use crate::registry::OUTPUT_MISMATCH_REASON;
use crate::schema::Validator;
use crate::server::Server;

/// What went wrong in a [`TestClient`] exchange.
#[derive(Debug)]
#[non_exhaustive]
pub enum TestError {
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The error code, e.g. `-32602`.
        code: i64,
        /// Its message.
        message: String,
        /// Its `data`, if any.
        data: Option<Value>,
    },
    /// A result that an SDK client would refuse: structured output missing or not matching the
    /// tool's `outputSchema` (found by this client or reported by the server).
    InvalidOutput {
        /// The tool.
        tool: String,
        /// Every problem, at its JSON pointer into `structuredContent`.
        problems: Vec<ArgumentError>,
        /// The server's explanation, when the server refused the output itself.
        explanation: Option<String>,
    },
    /// The server broke the protocol (an answer that is not JSON-RPC, a tool list that is not
    /// one, an `outputSchema` no validator accepts) or stopped answering.
    Protocol(String),
    /// No answer within [`TestClient::timeout`].
    Timeout(String),
    /// The in-memory pipe failed, or the server ended with an error.
    Io(std::io::Error),
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Rpc { code, message, data } => {
                write!(f, "JSON-RPC error {code}: {message}")?;
                if let Some(data) = data {
                    write!(f, " (data: {data})")?;
                }
                Ok(())
            }
            TestError::InvalidOutput { tool, problems, explanation } => {
                if let Some(text) = explanation {
                    return f.write_str(text);
                }
                write!(f, "tool `{tool}` returned a result that clients refuse:")?;
                for p in problems {
                    let at = if p.pointer.is_empty() { "(the whole value)" } else { &p.pointer };
                    write!(f, "\n  {at}: {}", p.message)?;
                }
                Ok(())
            }
            TestError::Protocol(what) => write!(f, "protocol error: {what}"),
            TestError::Timeout(what) => write!(f, "no answer in time: {what}"),
            TestError::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for TestError {}

impl From<std::io::Error> for TestError {
    fn from(e: std::io::Error) -> Self {
        TestError::Io(e)
    }
}

/// A `tools/call` result, as a client received it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    raw: Value,
}

impl ToolResult {
    /// Whether the tool reported a failure (`isError: true`), including refused arguments.
    pub fn is_error(&self) -> bool {
        self.raw["isError"] == Value::Bool(true)
    }

    /// The `structuredContent`, if any.
    pub fn structured(&self) -> Option<&Value> {
        self.raw.get("structuredContent")
    }

    /// The text of every text content, joined by newlines.
    pub fn text(&self) -> String {
        let blocks = self.raw["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        let texts: Vec<&str> = blocks.iter().filter_map(|c| c["text"].as_str()).collect();
        texts.join("\n")
    }

    /// The whole result, as JSON.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// An in-process MCP client for tests (module docs).
pub struct TestClient {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    next_id: u64,
    tools: Vec<Value>,
    outputs: HashMap<String, Validator>,
    stop: CancellationToken,
    server: JoinHandle<std::io::Result<()>>,
    timeout: Duration,
}

impl fmt::Debug for TestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").field("tools", &self.tools.len()).finish_non_exhaustive()
    }
}

/// Room for messages in flight on the in-memory pipe, each way.
const PIPE_BYTES: usize = 1 << 20;

impl TestClient {
    /// Serves `server` on the current tokio runtime, makes the `initialize` handshake and lists
    /// every tool (all pages). Fails if the server refuses to start (missing state, a bad
    /// configuration), or if a tool's `outputSchema` cannot be checked.
    pub async fn start(server: Server) -> Result<TestClient, TestError> {
        let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
        let (server_reader, server_writer) = tokio::io::split(server_end);
        let (reader, writer) = tokio::io::split(client_end);
        let stop = CancellationToken::new();
        let server = tokio::spawn(server.serve(server_reader, server_writer, stop.clone()));
        let mut client = TestClient {
            reader: BufReader::new(reader),
            writer,
            next_id: 0,
            tools: Vec::new(),
            outputs: HashMap::new(),
            stop,
            server,
            timeout: Duration::from_secs(60),
        };
        let version = ProtocolVersion::LATEST_LEGACY.as_str();
        let init = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "teaagent-testing", "version": env!("CARGO_PKG_VERSION")},
        });
        match client.request("initialize", init).await {
            Ok(_) => {}
            Err(TestError::Io(_) | TestError::Protocol(_)) if client.server.is_finished() => {
                return Err(client.server_end().await);
            }
            Err(e) => return Err(e),
        }
        client.notify("notifications/initialized", json!({})).await?;
        let mut cursor: Option<Value> = None;
        loop {
            let params = match cursor.take() {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = client.request("tools/list", params).await?;
            let Some(tools) = page["tools"].as_array() else {
                return Err(TestError::Protocol(format!("`tools/list` answered without `tools`: {page}")));
            };
            client.tools.extend(tools.iter().cloned());
            match page.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => break,
            }
        }
        for tool in &client.tools {
            let (Some(name), Some(schema)) = (tool["name"].as_str(), tool.get("outputSchema")) else {
                continue;
            };
            let validator = Validator::compile(schema).map_err(|e| {
                TestError::Protocol(format!("tool `{name}`: its outputSchema cannot be checked: {e}"))
            })?;
            client.outputs.insert(name.to_owned(), validator);
        }
        Ok(client)
    }

    /// How long each request waits for its answer from now on (60 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The tools the server listed, in its order.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// `{"tools": [...]}`, everything `tools/list` answered: what a snapshot of the server's
    /// interface should hold (`insta::assert_json_snapshot!(client.tools_list())`).
    pub fn tools_list(&self) -> Value {
        json!({ "tools": self.tools })
    }

    /// Calls `name` with `arguments` and checks the result as the official SDK clients do:
    /// - a JSON-RPC error is [`TestError::Rpc`];
    /// - a tool with an `outputSchema` whose result is not an error must carry
    ///   `structuredContent` that satisfies the schema, else [`TestError::InvalidOutput`];
    /// - a result the server replaced because the tool's output broke its own schema is
    ///   [`TestError::InvalidOutput`] too, with the server's explanation.
    ///
    /// A tool's own failure, and arguments refused by the schema, are `Ok` results with
    /// [`ToolResult::is_error`] (what the model reads).
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<ToolResult, TestError> {
        let raw = self.request("tools/call", json!({"name": name, "arguments": arguments})).await?;
        let result = ToolResult { raw };
        if result.is_error() {
            let meta = &result.raw["_meta"];
            if meta["reason"] == OUTPUT_MISMATCH_REASON {
                let problems = meta["errors"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|e| ArgumentError {
                        pointer: e["pointer"].as_str().unwrap_or_default().to_owned(),
                        message: e["message"].as_str().unwrap_or_default().to_owned(),
                    })
                    .collect();
                return Err(TestError::InvalidOutput {
                    tool: name.to_owned(),
                    problems,
                    explanation: Some(result.text()),
                });
            }
            return Ok(result);
        }
        if let Some(validator) = self.outputs.get(name) {
            let problems = match result.structured() {
                None => vec![ArgumentError::new(
                    "",
                    "missing: the tool has an outputSchema but returned no structuredContent",
                )],
                Some(value) if validator.is_valid(value) => Vec::new(),
                Some(value) => crate::schema::argument_errors(validator, value),
            };
            if !problems.is_empty() {
                return Err(TestError::InvalidOutput { tool: name.to_owned(), problems, explanation: None });
            }
        }
        Ok(result)
    }

    /// Sends any request and returns its `result` (a JSON-RPC error is [`TestError::Rpc`]).
    /// Requests the server sends meanwhile are answered `-32601` (this client offers no
    /// capabilities); notifications are skipped.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, TestError> {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&line).await?;
        let what = format!("`{method}` (id {id})");
        match tokio::time::timeout(self.timeout, self.answer(id)).await {
            Ok(answer) => answer,
            Err(_) => Err(TestError::Timeout(format!("{what} after {:?}", self.timeout))),
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), TestError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// Ends the input, as a client that exits does, and waits for the server to stop.
    pub async fn finish(mut self) -> Result<(), TestError> {
        self.writer.shutdown().await?;
        match tokio::time::timeout(self.timeout, &mut self.server).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(TestError::Io(e)),
            Ok(Err(e)) => Err(TestError::Protocol(format!("the server's task failed: {e}"))),
            Err(_) => {
                self.stop.cancel();
                Err(TestError::Timeout("the server did not stop after its input ended".into()))
            }
        }
    }

    async fn send(&mut self, message: &Value) -> Result<(), TestError> {
        let mut line = serde_json::to_vec(message).map_err(|e| TestError::Protocol(e.to_string()))?;
        line.push(b'\n');
        self.writer.write_all(&line).await?;
        self.writer.flush().await?;
        Ok(())
    }

    async fn answer(&mut self, id: u64) -> Result<Value, TestError> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line).await? == 0 {
                return Err(TestError::Protocol("the server closed its output".into()));
            }
            let message: Value = serde_json::from_str(&line)
                .map_err(|e| TestError::Protocol(format!("not JSON ({e}): {}", line.trim_end())))?;
            let Some(their_id) = message.get("id").filter(|_| message.get("method").is_none()) else {
                // A request of the server's (answered: no capabilities here) or a notification.
                if let (Some(request_id), Some(method)) = (message.get("id"), message["method"].as_str()) {
                    let refusal = json!({"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": -32601, "message": format!("the test client does not offer `{method}`")}});
                    self.send(&refusal).await?;
                }
                continue;
            };
            if their_id != &json!(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(TestError::Rpc {
                    code: error["code"].as_i64().unwrap_or_default(),
                    message: error["message"].as_str().unwrap_or_default().to_owned(),
                    data: error.get("data").cloned(),
                });
            }
            return match message.get("result") {
                Some(result) => Ok(result.clone()),
                None => {
                    Err(TestError::Protocol(format!("an answer with neither result nor error: {message}")))
                }
            };
        }
    }

    /// Why the server task ended before answering.
    async fn server_end(&mut self) -> TestError {
        match (&mut self.server).await {
            Ok(Err(e)) => TestError::Io(e),
            Ok(Ok(())) => TestError::Protocol("the server stopped before answering `initialize`".into()),
            Err(e) => TestError::Protocol(format!("the server's task failed: {e}")),
        }
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
