//! Session approvals through the official SDK's client: in `prompt` mode the server asks with
//! `elicitation/create`, and only a well-formed approving answer lets the call run. A client
//! without the capability (and a server without a terminal) is denied, and the rule says why.

#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A client that answers every question the same way, and keeps what it was asked.
#[derive(Clone)]
struct Answering {
    version: ProtocolVersion,
    elicitation: bool,
    reply: Option<ElicitResult>,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.elicitation {
            caps.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        ClientConfig::new(caps, Implementation::new("elicitation-test", "0"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request {
            let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
            self.asked.lock().unwrap_or_else(|p| p.into_inner()).push((message, schema));
        }
        Ok(self.reply.clone().unwrap_or(ElicitResult::new(ElicitationAction::Decline)))
    }
}

async fn connect(tree: &Tree, home: &Tree, handler: Answering) -> RunningService<RoleClient, Answering> {
    let cmd = tokio::process::Command::new(Bin::Fixture.path()).configure(|c| {
        c.env("FIXTURE_ROOT", tree.root())
            .env("TEAAGENT_HOME", home.base())
            .env("FIXTURE_MODE", "prompt")
            .env("FIXTURE_ASK_TIMEOUT_MS", "5000")
            .stdin(std::process::Stdio::piped());
    });
    let (transport, _) =
        TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn().expect("spawn");
    tokio::time::timeout(WAIT, handler.serve(transport)).await.expect("in time").expect("initialize")
}

fn launch(command: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("launch")
        .with_arguments(json!({"command": command}).as_object().cloned().unwrap_or_default())
}

async fn run(client: &RunningService<RoleClient, Answering>, command: &str) -> Result<String, (i32, Value)> {
    match tokio::time::timeout(WAIT, client.call_tool(launch(command))).await.expect("in time") {
        Ok(result) => Ok(result.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default()),
        Err(ServiceError::McpError(e)) => Err((e.code.0, e.data.unwrap_or(Value::Null))),
        Err(other) => panic!("unexpected: {other:?}"),
    }
}

fn handler(version: ProtocolVersion, reply: Option<ElicitResult>) -> Answering {
    Answering { version, elicitation: true, reply, asked: Arc::default() }
}

#[tokio::test]
async fn approve_once_asks_every_time() {
    let (tree, home) = (Tree::new(), Tree::new());
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let answering = handler(
            version.clone(),
            Some(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": "once"}))),
        );
        let asked = Arc::clone(&answering.asked);
        let client = connect(&tree, &home, answering).await;
        assert_eq!(run(&client, "cargo test").await, Ok("launched cargo test".into()), "{version}");
        assert_eq!(run(&client, "cargo test").await, Ok("launched cargo test".into()));
        let asked = asked.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert_eq!(asked.len(), 2, "once means once");
        let (message, schema) = &asked[0];
        assert!(
            message.contains("launch") && message.contains("tier high") && message.contains("cargo test"),
            "{message}"
        );
        assert_eq!(schema["required"], json!(["decision"]), "{schema}");
        tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
    }
}

#[tokio::test]
async fn approve_for_the_session_covers_the_same_call_only() {
    let (tree, home) = (Tree::new(), Tree::new());
    let answering = handler(
        ProtocolVersion::V_2025_06_18,
        Some(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": "session"}))),
    );
    let asked = Arc::clone(&answering.asked);
    let client = connect(&tree, &home, answering).await;
    assert!(run(&client, "cargo test").await.is_ok());
    assert!(run(&client, "cargo test").await.is_ok());
    assert_eq!(asked.lock().unwrap_or_else(|p| p.into_inner()).len(), 1, "the session answer is remembered");
    assert!(run(&client, "cargo build").await.is_ok());
    assert_eq!(
        asked.lock().unwrap_or_else(|p| p.into_inner()).len(),
        2,
        "another command is asked about again"
    );
    tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
}

#[tokio::test]
async fn decline_cancel_and_garbage_deny() {
    let (tree, home) = (Tree::new(), Tree::new());
    for (reply, why) in [
        (ElicitResult::new(ElicitationAction::Decline), "declined by the user"),
        (ElicitResult::new(ElicitationAction::Cancel), "dismissed by the user"),
        (
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": "maybe"})),
            "malformed",
        ),
        (ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": 1})), "malformed"),
        (ElicitResult::new(ElicitationAction::Accept), "no `decision`"),
        (
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": "deny"})),
            "denied by the user",
        ),
    ] {
        let client = connect(&tree, &home, handler(ProtocolVersion::V_2025_06_18, Some(reply))).await;
        let denied = run(&client, "cargo test").await;
        let Err((code, data)) = denied else { panic!("expected a denial, got {denied:?}") };
        assert_eq!(code, -32001);
        assert!(data["rule"].as_str().unwrap_or_default().contains(why), "{why}: {data}");
        tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
    }
}

#[tokio::test]
async fn a_client_without_elicitation_is_denied_and_told_why() {
    let (tree, home) = (Tree::new(), Tree::new());
    let answering = Answering {
        version: ProtocolVersion::V_2025_06_18,
        elicitation: false,
        reply: None,
        asked: Arc::default(),
    };
    let asked = Arc::clone(&answering.asked);
    let client = connect(&tree, &home, answering).await;
    let Err((code, data)) = run(&client, "cargo test").await else { panic!("expected a denial") };
    assert_eq!(code, -32001);
    let rule = data["rule"].as_str().unwrap_or_default();
    assert!(rule.contains("does not support elicitation") && rule.contains("no terminal"), "{rule}");
    assert!(asked.lock().unwrap_or_else(|p| p.into_inner()).is_empty());
    // Read-only tools still run without asking.
    let read = tokio::time::timeout(
        WAIT,
        client.call_tool(
            CallToolRequestParams::new("peek")
                .with_arguments(json!({"path": "src/a.txt"}).as_object().cloned().unwrap_or_default()),
        ),
    )
    .await
    .expect("in time")
    .expect("peek");
    assert_eq!(read.content[0].as_text().map(|t| t.text.as_str()), Some("hello\n"));
    tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
}
