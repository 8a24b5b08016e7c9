//! The modern era (protocol `2026-07-28`) end to end, with the official Rust SDK's client
//! (rmcp 3.11) as the peer: `server/discover` instead of `initialize`, per-request `_meta`,
//! lists, calls, progress, per-request logs, cancellation, `subscriptions/listen`, the error
//! codes of the era, and approvals as multi round-trip requests — against the real binaries. The
//! same client forced to the legacy handshake is served by the same binaries.

#![allow(deprecated)] // rmcp marks the logging types deprecated (SEP-2577); MCP still has them.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode,
    FormElicitationCapability, Implementation, LoggingLevel, LoggingMessageNotificationParam,
    ProtocolVersion, RequestMetaObject, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{
    ClientCacheConfig, ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient,
    ServiceError, ServiceExt,
};
use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};
use tokio::sync::mpsc;

const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

#[derive(Debug, Clone)]
enum Event {
    Log(LoggingMessageNotificationParam),
}

/// A client that records notifications, answers every approval question the same way and keeps
/// what it was asked.
#[derive(Clone)]
struct Peer {
    elicitation: bool,
    legacy: Option<ProtocolVersion>,
    reply: Option<ElicitResult>,
    asked: Arc<Mutex<Vec<String>>>,
    events: mpsc::UnboundedSender<Event>,
}

impl ClientHandler for Peer {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.elicitation {
            caps.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        let config = ClientConfig::new(caps, Implementation::new("teaagent-modern-e2e", "0.1"));
        match &self.legacy {
            Some(version) => config.with_protocol_version(version.clone()),
            None => config,
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap_or_else(|p| p.into_inner()).push(message);
        }
        Ok(self.reply.clone().unwrap_or(ElicitResult::new(ElicitationAction::Decline)))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Log(params));
    }
}

type Client = RunningService<RoleClient, Peer>;

struct Connected {
    client: Client,
    events: mpsc::UnboundedReceiver<Event>,
    asked: Arc<Mutex<Vec<String>>>,
}

/// Spawns `cmd` and connects: `server/discover` first (modern), or `initialize` when `legacy`.
async fn connect(
    cmd: tokio::process::Command,
    elicitation: bool,
    reply: Option<ElicitResult>,
    legacy: Option<ProtocolVersion>,
) -> Connected {
    let (transport, _) =
        TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn the server");
    let (tx, events) = mpsc::unbounded_channel();
    let asked = Arc::default();
    let peer = Peer { elicitation, legacy: legacy.clone(), reply, asked: Arc::clone(&asked), events: tx };
    let client = match legacy {
        Some(_) => tokio::time::timeout(WAIT, peer.serve(transport)).await,
        None => {
            let mode =
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            tokio::time::timeout(WAIT, peer.serve_with_lifecycle(transport, mode)).await
        }
    }
    .expect("connected in time")
    .expect("the handshake succeeds");
    // Lists are cacheable in this era; these tests want every request to reach the server.
    client.set_response_cache_config(ClientCacheConfig::disabled()).await;
    Connected { client, events, asked }
}

fn command(bin: Bin, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    command_of(bin.path(), args, env)
}

fn command_of(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    tokio::process::Command::new(program).configure(move |c| {
        c.args(&args).envs(env.iter().map(|(k, v)| (k, v)));
    })
}

async fn timely<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(WAIT, f).await.expect("the server answered in time")
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

fn mcp_error<T: std::fmt::Debug>(outcome: Result<T, ServiceError>) -> ErrorData {
    match outcome {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

#[tokio::test]
async fn every_binary_serves_discover_list_and_call_in_the_modern_era_and_the_legacy_one() {
    let home = Tree::new();
    let ws = Tree::new();
    let root = ws.root();
    let root = root.to_str().expect("utf-8 path");
    let home = home.base();
    let home = home.to_str().expect("utf-8 path");
    for bin in [Bin::Echo, Bin::Fixture, Bin::Teaagent] {
        let cli_args: &[&str] = if bin == Bin::Teaagent { &["mcp", "serve", "--root", root] } else { &[] };
        for legacy in [None, Some(ProtocolVersion::V_2025_11_25)] {
            let Connected { client, .. } =
                connect(command(bin, cli_args, &[("TEAAGENT_HOME", home)]), false, None, legacy.clone())
                    .await;
            let info = client.peer_info().expect("the server answered the handshake");
            let expected = if legacy.is_some() { "2025-11-25" } else { "2026-07-28" };
            assert_eq!(info.protocol_version.as_str(), expected, "{bin:?}");
            let server = info.server_info.as_ref().expect("serverInfo");
            assert_eq!(
                (server.name.as_str(), server.version.as_str()),
                ("teaagent", env!("CARGO_PKG_VERSION"))
            );
            assert!(info.capabilities.tools.is_some(), "{bin:?}");

            let tools = timely(client.list_tools(None)).await.expect("tools/list");
            assert!(!tools.tools.is_empty());
            let names: Vec<String> = tools.tools.iter().map(|t| t.name.to_string()).collect();
            if legacy.is_none() {
                assert_eq!(tools.ttl_ms, Some(3_600_000), "{bin:?}: the tool list is cacheable");
                let mut sorted = names.clone();
                sorted.sort();
                let again = timely(client.list_tools(None)).await.expect("tools/list again");
                let again: Vec<String> = again.tools.iter().map(|t| t.name.to_string()).collect();
                assert_eq!(names, again, "{bin:?}: the order is deterministic");
                let discovered =
                    timely(client.discover(RequestMetaObject::new())).await.expect("server/discover");
                assert_eq!(discovered.supported_versions, vec![ProtocolVersion::V_2026_07_28]);
                assert!(discovered.capabilities.tools.is_some());
            }
            if bin != Bin::Teaagent {
                let result = timely(client.call_tool(
                    CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "héllo 🦀"}))),
                ))
                .await
                .expect("tools/call");
                assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("héllo 🦀"));
            } else {
                assert!(names.contains(&"read_file".to_owned()));
                std::fs::write(ws.path("ws/note.txt"), "modern\n").expect("write");
                let result = timely(client.call_tool(
                    CallToolRequestParams::new("read_file").with_arguments(args(json!({"path": "note.txt"}))),
                ))
                .await
                .expect("tools/call");
                assert!(result.content[0].as_text().is_some_and(|t| t.text.contains("modern")), "{result:?}");
            }
            timely(client.cancel()).await.expect("shut down");
        }
    }
}

#[tokio::test]
async fn errors_carry_the_codes_of_the_modern_era() {
    let env = [("FIXTURE_RATE", "echo=1/60")];
    let Connected { client, .. } = connect(command(Bin::Fixture, &[], &env), false, None, None).await;
    let unknown = mcp_error(timely(client.call_tool(CallToolRequestParams::new("missing"))).await);
    assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(unknown.data, Some(json!({"tool": "missing", "reason": "unknown_tool"})));
    let panicked = mcp_error(timely(client.call_tool(CallToolRequestParams::new("panic"))).await);
    assert_eq!(
        (panicked.code.0, panicked.data.as_ref().map(|d| d["reason"].clone())),
        (-32000, Some(json!("panic")))
    );
    // Arguments that fail the schema are an isError result (as from 2025-11-25 on).
    let refused = timely(
        client.call_tool(CallToolRequestParams::new("slow").with_arguments(args(json!({"ms": "soon"})))),
    )
    .await
    .expect("a result");
    assert_eq!(refused.is_error, Some(true));
    // The rate limit is -32004 here: -32002 is never sent to a modern peer.
    let echo = || CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "x"})));
    timely(client.call_tool(echo())).await.expect("the first call is within the limit");
    let limited = mcp_error(timely(client.call_tool(echo())).await);
    assert_eq!(limited.code.0, -32004, "{limited:?}");
    let data = limited.data.expect("data");
    assert_eq!(data["reason"], "rate_limited");
    assert!(data["retryAfterSeconds"].as_u64().is_some_and(|s| (1..=60).contains(&s)), "{data}");
    // A version the server does not speak: -32022 with the supported list.
    let mut meta = RequestMetaObject::new();
    meta.set_protocol_version(ProtocolVersion::V_2025_06_18);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("missing")));
    let sent =
        timely(client.send_request_with_option(request, PeerRequestOptions::default().with_meta(meta)))
            .await
            .expect("sent");
    let unsupported = mcp_error(timely(sent.await_response()).await);
    assert_eq!(unsupported.code.0, -32022);
    assert_eq!(unsupported.data, Some(json!({"supported": ["2026-07-28"], "requested": "2025-06-18"})));
    timely(client.cancel()).await.expect("shut down");
}

/// Sends `request`, with `logLevel` in its `_meta` when `level` is given, and waits for its answer.
async fn send_with_level(client: &Client, request: ClientRequest, level: Option<LoggingLevel>) {
    let mut options = PeerRequestOptions::default();
    if let Some(level) = level {
        let mut meta = RequestMetaObject::new();
        meta.set_log_level(level);
        options = options.with_meta(meta);
    }
    let sent = timely(client.send_request_with_option(request, options)).await.expect("sent");
    timely(sent.await_response()).await.expect("answered");
}

// Progress under the modern handshake is `protocol_client.rs`'s test, which runs in both eras.
#[tokio::test]
async fn per_request_logs_and_cancellation() {
    let Connected { client, mut events, .. } =
        connect(command(Bin::Fixture, &[], &[]), false, None, None).await;
    let log = |message: &str| {
        ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("log")
                .with_arguments(args(json!({"level": "warn", "message": message}))),
        ))
    };
    // Without `logLevel` in `_meta`, a request gets no `notifications/message`; with it, the
    // request's events at or above that level.
    send_with_level(&client, log("unasked"), None).await;
    send_with_level(&client, log("asked"), Some(LoggingLevel::Warning)).await;
    send_with_level(&client, log("below the level"), Some(LoggingLevel::Error)).await;
    // Let late notifications arrive, then look at everything that came.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut logs = Vec::new();
    while let Ok(Event::Log(l)) = events.try_recv() {
        logs.push(l);
    }
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0].level, LoggingLevel::Warning);
    assert_eq!(logs[0].data["message"], "asked");

    // Cancellation: the call is abandoned, and the server goes on serving.
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(args(json!({"ms": 60000}))),
    ));
    let handle = timely(client.send_cancellable_request(request, PeerRequestOptions::no_options()))
        .await
        .expect("sent");
    timely(handle.cancel(Some("changed my mind".into()))).await.expect("cancel sent");
    let after = timely(
        client.call_tool(CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "after"})))),
    )
    .await
    .expect("echo");
    assert_eq!(after.content[0].as_text().map(|t| t.text.as_str()), Some("after"));
    timely(client.cancel()).await.expect("shut down");
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_and_ends_when_cancelled() {
    let Connected { client, .. } = connect(command(Bin::Fixture, &[], &[]), false, None, None).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = timely(client.listen(filter)).await.expect("acknowledged");
    // The lists never change while this server runs: nothing is promised.
    assert_eq!(subscription.acknowledged(), &SubscriptionFilter::default());
    let echo = timely(
        client.call_tool(CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "x"})))),
    )
    .await
    .expect("calls go on while a stream is open");
    assert_eq!(echo.content[0].as_text().map(|t| t.text.as_str()), Some("x"));
    timely(subscription.cancel()).await.expect("cancelled");
    timely(client.call_tool(CallToolRequestParams::new("echo").with_arguments(args(json!({"text": "y"})))))
        .await
        .expect("and after it");
    timely(client.cancel()).await.expect("shut down");
}

fn prompt_server(ws: &Tree, home: &Tree) -> tokio::process::Command {
    let root = ws.root();
    let home = home.base();
    command(
        Bin::Teaagent,
        &["mcp", "serve", "--root", root.to_str().expect("utf-8"), "--permission-mode", "prompt"],
        &[("TEAAGENT_HOME", home.to_str().expect("utf-8"))],
    )
}

fn create(path: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("create_file").with_arguments(args(json!({"path": path, "content": "made\n"})))
}

fn accept(decision: &str) -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": decision})))
}

#[tokio::test]
async fn approvals_are_multi_round_trip_requests_for_the_cli_in_prompt_mode() {
    let (ws, home) = (Tree::new(), Tree::new());

    // Accept once: asked for every call, and each call runs.
    let Connected { client, asked, .. } =
        connect(prompt_server(&ws, &home), true, accept("once"), None).await;
    let made = timely(client.call_tool(create("a.txt"))).await.expect("approved");
    assert_ne!(made.is_error, Some(true), "{made:?}");
    assert_eq!(std::fs::read_to_string(ws.path("ws/a.txt")).expect("created"), "made\n");
    timely(client.call_tool(create("b.txt"))).await.expect("approved");
    let questions = asked.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(questions.len(), 2, "once means once");
    assert!(questions[0].contains("create_file") && questions[0].contains("a.txt"), "{}", questions[0]);
    timely(client.cancel()).await.expect("shut down");

    // For the session: the same call is not asked about again, another one is.
    let Connected { client, asked, .. } =
        connect(prompt_server(&ws, &home), true, accept("session"), None).await;
    timely(client.call_tool(create("c.txt"))).await.expect("approved");
    std::fs::remove_file(ws.path("ws/c.txt")).expect("remove");
    timely(client.call_tool(create("c.txt"))).await.expect("approved for the session");
    assert_eq!(asked.lock().unwrap_or_else(|p| p.into_inner()).len(), 1);
    timely(client.call_tool(create("d.txt"))).await.expect("approved");
    assert_eq!(asked.lock().unwrap_or_else(|p| p.into_inner()).len(), 2, "another path is asked about");
    timely(client.cancel()).await.expect("shut down");

    // Decline, cancel and anything but an approving answer deny (-32001), and nothing is created.
    for (reply, why) in [
        (ElicitResult::new(ElicitationAction::Decline), "declined by the user"),
        (ElicitResult::new(ElicitationAction::Cancel), "dismissed by the user"),
        (accept("deny").expect("reply"), "denied by the user"),
        (accept("maybe").expect("reply"), "malformed"),
        (ElicitResult::new(ElicitationAction::Accept), "no `decision`"),
    ] {
        let Connected { client, asked, .. } =
            connect(prompt_server(&ws, &home), true, Some(reply), None).await;
        let denied = mcp_error(timely(client.call_tool(create("never.txt"))).await);
        assert_eq!(denied.code.0, -32001, "{why}");
        let data = denied.data.expect("data");
        assert!(data["rule"].as_str().is_some_and(|r| r.contains(why)), "{why}: {data}");
        assert_eq!(asked.lock().unwrap_or_else(|p| p.into_inner()).len(), 1);
        assert!(!ws.path("ws/never.txt").exists(), "{why}: nothing was created");
        timely(client.cancel()).await.expect("shut down");
    }

    // A client that cannot show a form, and a server with no terminal (started in a session of
    // its own, so whoever runs the tests is never asked on theirs): -32021 naming the capability.
    let root = ws.root();
    let home_dir = home.base();
    let detached = command_of(
        "setsid",
        &[
            Bin::Teaagent.path().to_str().expect("utf-8"),
            "mcp",
            "serve",
            "--root",
            root.to_str().expect("utf-8"),
            "--permission-mode",
            "prompt",
        ],
        &[("TEAAGENT_HOME", home_dir.to_str().expect("utf-8"))],
    );
    let Connected { client, .. } = connect(detached, false, None, None).await;
    let missing = mcp_error(timely(client.call_tool(create("never.txt"))).await);
    assert_eq!(missing.code.0, -32021, "{missing:?}");
    assert_eq!(missing.data.expect("data")["requiredCapabilities"], json!({"elicitation": {}}));
    assert!(!ws.path("ws/never.txt").exists());
    timely(client.cancel()).await.expect("shut down");

    // The audit log has every decision.
    let audit = std::fs::read_to_string(home.base().join("audit.jsonl")).expect("audit log");
    assert!(
        audit.contains("approved by the user (once)") && audit.contains("declined by the user"),
        "{audit}"
    );
}
