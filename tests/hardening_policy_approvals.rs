//! Hardening: approvals, each against the real binary, with an rmcp client answering
//! the approval questions (the set-up: `common/policy_setup.rs`).
//!
//! - an approval binds the target that was judged, not its spelling (item 7);
//! - a call the rate limit refuses is not asked about (item 8);
//! - approval questions show every value escaped and uncut (item 10).

#![allow(deprecated)]

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use teaagent_core::digest::call_digest;
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::policy_setup;
use policy_setup::{call, code, serve};

const WAIT: Duration = Duration::from_secs(30);

/// Something to do to the workspace while a question is open.
type Meanwhile = Arc<Mutex<Option<Box<dyn FnOnce() + Send>>>>;

/// A client that, when asked, first runs `meanwhile` (to change the workspace while the question
/// is open), keeps the question and answers `reply`.
#[derive(Clone)]
struct Answering {
    reply: ElicitResult,
    meanwhile: Meanwhile,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Answering {
    fn new(decision: &str) -> Self {
        Self {
            reply: ElicitResult::new(ElicitationAction::Accept).with_content(json!({"decision": decision})),
            meanwhile: Arc::default(),
            asked: Arc::default(),
        }
    }

    fn before_answering(&self, action: impl FnOnce() + Send + 'static) {
        *self.meanwhile.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(action));
    }

    fn questions(&self) -> Vec<String> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(caps, Implementation::new("hardening-test", "0"))
            .with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap_or_else(|p| p.into_inner()).push(message);
        }
        if let Some(action) = self.meanwhile.lock().unwrap_or_else(|p| p.into_inner()).take() {
            action();
        }
        Ok(self.reply.clone())
    }
}

async fn prompted(tree: &Tree, home: &Tree, handler: Answering) -> RunningService<RoleClient, Answering> {
    let cmd = tokio::process::Command::new(Bin::Teaagent.path()).configure(|c| {
        c.args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
            .arg(tree.root())
            .env("TEAAGENT_HOME", home.base())
            .stdin(std::process::Stdio::piped());
    });
    let (transport, _) =
        TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn().expect("spawn");
    tokio::time::timeout(WAIT, handler.serve(transport)).await.expect("in time").expect("initialize")
}

async fn tool(
    client: &RunningService<RoleClient, Answering>,
    name: &'static str,
    args: Value,
) -> Result<CallToolResultText, (i32, Value)> {
    let params =
        CallToolRequestParams::new(name).with_arguments(args.as_object().cloned().unwrap_or_default());
    match tokio::time::timeout(WAIT, client.call_tool(params)).await.expect("in time") {
        Ok(result) => Ok(CallToolResultText {
            text: result
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.clone())
                .unwrap_or_default(),
            is_error: result.is_error.unwrap_or(false),
        }),
        Err(ServiceError::McpError(e)) => Err((e.code.0, e.data.unwrap_or(Value::Null))),
        Err(other) => panic!("unexpected: {other:?}"),
    }
}

#[derive(Debug)]
struct CallToolResultText {
    text: String,
    is_error: bool,
}

fn swap_for_link(dir: &Path, to: &str) {
    let old = dir.with_extension("old");
    std::fs::rename(dir, &old).expect("move the directory away");
    std::os::unix::fs::symlink(to, dir).expect("put a link in its place");
}

#[tokio::test]
async fn an_approved_call_acts_on_what_was_approved_or_not_at_all() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/.git/hooks/README", "hooks\n");
    tree.write("ws/docs/guide.md", "guide\n");
    tree.write("ws/keep/guide.md", "keep me\n");
    let root = tree.root();

    // Baseline: approved and unchanged, the write happens where it was asked.
    let answering = Answering::new("once");
    let client = prompted(&tree, &home, answering.clone()).await;
    let ok = tool(&client, "write_file", json!({"path": "docs/pre-commit", "content": "notes"})).await;
    assert!(ok.as_ref().is_ok_and(|r| !r.is_error && r.text.starts_with("created")), "{ok:?}");
    std::fs::remove_file(root.join("docs/pre-commit")).expect("written where asked");

    // 1. The directory becomes a link to `.git/hooks` while the question is open.
    let docs = root.join("docs");
    answering.before_answering(move || swap_for_link(&docs, ".git/hooks"));
    let swapped =
        tool(&client, "write_file", json!({"path": "docs/pre-commit", "content": "#!/bin/sh\npwn\n"})).await;
    let Err((code, data)) = swapped else { panic!("expected a refusal, got {swapped:?}") };
    assert_eq!(code, -32001, "{data}");
    assert!(data["rule"].as_str().unwrap_or_default().contains("changed"), "{data}");
    assert!(!root.join(".git/hooks/pre-commit").exists(), "nothing landed in .git/hooks");
    assert!(!root.join("docs.old/pre-commit").exists(), "nor in the moved directory");
    std::fs::remove_file(root.join("docs")).expect("unlink");
    std::fs::rename(root.join("docs.old"), root.join("docs")).expect("restore");

    // 2. The file itself becomes a link while the question is open.
    let guide = root.join("docs/guide.md");
    answering.before_answering(move || {
        std::fs::remove_file(&guide).expect("remove");
        std::os::unix::fs::symlink("../.git/hooks/pre-commit", &guide).expect("link");
    });
    let swapped = tool(&client, "write_file", json!({"path": "docs/guide.md", "content": "pwn"})).await;
    assert_eq!(swapped.as_ref().err().map(|e| e.0), Some(-32001), "{swapped:?}");
    assert!(!root.join(".git/hooks/pre-commit").exists());
    std::fs::remove_file(root.join("docs/guide.md")).expect("unlink");
    std::fs::write(root.join("docs/guide.md"), "guide\n").expect("restore");

    // 3. A delete whose directory is swapped for another one holding the same name.
    let docs = root.join("docs");
    answering.before_answering(move || swap_for_link(&docs, "keep"));
    let deleted = tool(&client, "delete_path", json!({"path": "docs/guide.md"})).await;
    assert_eq!(deleted.as_ref().err().map(|e| e.0), Some(-32001), "{deleted:?}");
    assert_eq!(std::fs::read_to_string(root.join("keep/guide.md")).expect("kept"), "keep me\n");
    assert_eq!(std::fs::read_to_string(root.join("docs.old/guide.md")).expect("kept"), "guide\n");

    assert_eq!(answering.questions().len(), 4, "every call was asked about");
    tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
}

#[test]
fn a_preapproval_covers_a_path_only_where_it_is_spelled() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/deploy/keys/README", "keys\n");
    tree.symlink("ws/docs", "deploy/keys");
    let through_link = json!({"path": "docs/authorized_keys", "content": "ssh-ed25519 AAAA attacker\n"});
    let plain = json!({"path": "notes/today.md", "content": "x"});
    let digests = [call_digest("write_file", &through_link), call_digest("write_file", &plain)];
    let mut server = serve(
        &tree,
        &home,
        "",
        &["--permission-mode", "read-only", "--preapprove", &digests[0], "--preapprove", &digests[1]],
    );
    let refused = call(&mut server, "write_file", through_link);
    assert_eq!(code(&refused), -32001, "{refused}");
    let rule = refused["error"]["data"]["rule"].as_str().unwrap_or_default();
    assert!(rule.contains("leads through a link to `deploy/keys/authorized_keys`"), "{rule}");
    assert!(!tree.root().join("deploy/keys/authorized_keys").exists());
    assert_eq!(code(&call(&mut server, "write_file", plain)), 0, "a plain preapproved call runs");
    server.finish();
}

#[tokio::test]
async fn nobody_is_asked_about_a_call_the_rate_limit_refuses() {
    let (tree, home) = (Tree::new(), Tree::new());
    std::fs::write(
        home.base().join("config.toml"),
        "[tools.write_file]\nrate_limit = { max_calls = 1, window_secs = 600.0 }\n",
    )
    .expect("config");
    let answering = Answering::new("once");
    let client = prompted(&tree, &home, answering.clone()).await;
    let first = tool(&client, "write_file", json!({"path": "a.md", "content": "x"})).await;
    assert!(first.as_ref().is_ok_and(|r| !r.is_error), "{first:?}");
    let second = tool(&client, "write_file", json!({"path": "b.md", "content": "x"})).await;
    assert_eq!(second.as_ref().err().map(|e| e.0), Some(-32002), "{second:?}");
    assert_eq!(answering.questions().len(), 1, "the refused call was not asked about");
    assert!(!tree.root().join("b.md").exists());
    tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
}

#[test]
fn a_granted_write_waiting_for_its_turn_lands_where_it_was_judged() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/.git/hooks/README", "hooks\n");
    tree.write("ws/docs/guide.md", "guide\n");
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env("FIXTURE_BUILTIN", "1")
        .env("FIXTURE_MODE", "read-only")
        .env("FIXTURE_GRANTS", "write_file:path=docs/**")
        .env("FIXTURE_MAX_IN_FLIGHT", "1");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    // The only turn is taken by a slow call; the write is decided, checked and then waits.
    server.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":1500}}}"#,
    );
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"docs/pre-commit","content":"pwn"}}}"#);
    std::thread::sleep(Duration::from_millis(300));
    swap_for_link(&tree.root().join("docs"), ".git/hooks");
    assert!(server.response(&json!(1))["result"].is_object());
    let write = server.response(&json!(2));
    // Either the write happened in the directory that was judged (now `docs.old`), or, had the
    // server not checked it before the swap, it was refused; never in `.git/hooks`.
    assert!(!tree.root().join(".git/hooks/pre-commit").exists(), "{write}");
    match code(&write) {
        0 => assert_eq!(
            std::fs::read_to_string(tree.root().join("docs.old/pre-commit")).expect("written where judged"),
            "pwn"
        ),
        -32001 => {}
        other => panic!("unexpected {other}: {write}"),
    }
    server.finish();
}

/// What a hostile command looks like: terminal control, bidi override, zero-width characters,
/// a line break, and 20,000 characters of padding before the part that matters.
fn hostile_command() -> String {
    format!(
        "echo hi\u{1b}[2K\u{1b}[1A\u{202e}gnp.txt\u{200b}\u{2066}\r\nsafe{}; rm -rf ~",
        " ".repeat(20_000)
    )
}

fn assert_shown_safely(question: &str) {
    for raw in ['\u{1b}', '\u{202e}', '\u{200b}', '\u{2066}', '\r'] {
        assert!(!question.contains(raw), "raw {raw:?} in the question: {question:?}");
    }
    for escaped in ["\\e[2K", "\\u{202e}", "\\u{200b}", "\\u{2066}", "\\r\\n"] {
        assert!(question.contains(escaped), "{escaped} missing: {question:?}");
    }
    assert!(question.contains("; rm -rf ~"), "the end of the command is shown: {question:?}");
    assert!(question.contains("19992 more"), "the fold says how much it stands for: {question:?}");
}

#[tokio::test]
async fn approval_questions_show_every_value_escaped_and_uncut() {
    let (tree, home) = (Tree::new(), Tree::new());
    let answering = Answering {
        reply: ElicitResult::new(ElicitationAction::Decline),
        meanwhile: Arc::default(),
        asked: Arc::default(),
    };
    let client = prompted(&tree, &home, answering.clone()).await;
    let denied = tool(&client, "shell_exec", json!({"command": hostile_command()})).await;
    assert_eq!(denied.as_ref().err().map(|e| e.0), Some(-32001), "{denied:?}");
    let questions = answering.questions();
    assert_eq!(questions.len(), 1);
    assert_shown_safely(&questions[0]);
    // One line per argument: the command's line break cannot start a fake line.
    let command_line = questions[0].lines().find(|l| l.starts_with("command: ")).expect("the command line");
    let size = format!("; rm -rf ~ ({} characters)", hostile_command().chars().count());
    assert!(command_line.ends_with(&size), "{command_line}");
    tokio::time::timeout(WAIT, client.cancel()).await.expect("in time").expect("shut down");
}

#[test]
fn terminal_questions_show_every_value_escaped_and_uncut() {
    let (tree, home) = (Tree::new(), Tree::new());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/with_tty.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script)
        .arg("n")
        .arg(Bin::Teaagent.path())
        .args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let denied = call(&mut server, "shell_exec", json!({"command": hostile_command()}));
    assert_eq!(code(&denied), -32001, "{denied}");
    // The terminal's output reaches stderr through the script: it may lag behind the answer.
    let terminal = server.stderr_once(|s| s.contains("allow?"));
    let question = &terminal[terminal.find("Allow `shell_exec`").expect("asked on the terminal")..];
    // (The terminal itself turns each line break the server writes into `\r\n`.)
    let question = question[..question.find("allow?").expect("the prompt")].replace("\r\n", "\n");
    assert_shown_safely(&question);
    server.finish();
}
