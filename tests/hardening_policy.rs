//! Hardening (issue 10): the policy attack classes, each against the real binary.
//!
//! - deny rules on commands are fail-closed (item 5);
//! - deny rules on paths cover every path argument, whatever they are called (item 6);
//! - an approval binds the target that was judged, not its spelling (item 7);
//! - a call refused at any step uses no grant and no rate-limit budget (item 8);
//! - command grants match whole words (item 9);
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

const WAIT: Duration = Duration::from_secs(30);

/// `teaagent mcp serve` on `tree` with `flags`, its home holding `config` (TOML) if not empty.
fn serve(tree: &Tree, home: &Tree, config: &str, flags: &[&str]) -> RawServer {
    if !config.is_empty() {
        std::fs::write(home.base().join("config.toml"), config).expect("config");
    }
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).args(flags).env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    // `initialize` is answered before the workspace lock is settled; any later line waits for
    // it, so after this answer the lock is this server's (or known to be another's).
    server.request("ping", json!({}));
    server
}

fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

fn code(answer: &Value) -> i64 {
    if answer["result"].is_object() { 0 } else { answer["error"]["code"].as_i64().unwrap_or(i64::MIN) }
}

// ---------------------------------------------------------------------------------------------
// Item 5: deny rules on commands.

#[test]
fn a_command_deny_rule_refuses_every_line_that_may_run_the_program() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "deny = [\"shell_exec:command=touch*\"]\n",
        &["--permission-mode", "danger-full-access"],
    );
    for attack in [
        "touch x",
        "true && touch x",
        "touch x; true",
        "echo | touch x",
        "true || touch x",
        "true & touch x",
        "true\ntouch x",
        "(touch x)",
        "{ touch x; }",
        "echo $(touch x)",
        "echo `touch x`",
        "eval touch x",
        "exec touch x",
        "command touch x",
        "builtin command touch x",
        "/usr/bin/env touch x",
        "env -S touch x",
        "env -Stouch",
        "nice -n 5 touch x",
        "nohup touch x",
        "time touch x",
        "timeout -s KILL 5 touch x",
        "echo x | xargs touch",
        "sudo -n touch x",
        "sh -c 'touch x'",
        "sh -c touch\\ x",
        "t'ouch' x",
        "\\touch x",
        "\"touch\" x",
        "TOUCH=1 touch x",
        "A=1 B=2 touch x",
        "/usr/bin/touch x",
        "/usr/bin/tou?h x",
        "/usr/bin/tou[c]h x",
        "to{uch,} x",
        "touch x > /dev/null",
        "busybox touch x",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": attack}));
        assert_eq!(code(&answer), -32001, "{attack:?}: {answer}");
        let rule = answer["error"]["data"]["rule"].as_str().unwrap_or_default();
        assert!(rule.contains("deny rule `shell_exec:command=touch*`"), "{rule}");
    }
    assert!(!tree.root().join("x").exists(), "no variant ran `touch`");
    // A line that provably runs no `touch` still runs.
    let fine = call(&mut server, "shell_exec", json!({"command": "echo fine"}));
    assert_eq!(code(&fine), 0, "{fine}");
    server.finish();
}

#[test]
fn a_deny_rule_with_several_words_finds_them_wherever_the_program_runs() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "deny = [\"shell_exec:command=git push*\"]\n",
        &["--permission-mode", "danger-full-access"],
    );
    for attack in [
        "git push",
        "git -C . push origin",
        "git --no-pager push",
        "env GIT_DIR=x git push --force",
        "/usr/bin/git push",
        "git push-all",
        "nice git -c x=y push",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": attack}));
        assert_eq!(code(&answer), -32001, "{attack:?}: {answer}");
    }
    for fine in ["git status", "echo pushed", "true"] {
        let answer = call(&mut server, "shell_exec", json!({"command": fine}));
        assert_eq!(code(&answer), 0, "{fine:?}: {answer}");
    }
    server.finish();
}

// ---------------------------------------------------------------------------------------------
// Item 6: deny rules on paths.

#[test]
fn a_path_deny_rule_covers_every_path_argument_of_every_tool() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/secrets/key.pem", "PRIVATE\n");
    tree.write("ws/pub/readme.txt", "public\n");
    tree.symlink("ws/pub/key", "../secrets/key.pem");
    let mut server =
        serve(&tree, &home, "deny = [\"*:path=secrets/**\"]\n", &["--permission-mode", "danger-full-access"]);
    for (tool, args) in [
        ("read_file", json!({"path": "secrets/key.pem"})),
        ("read_file", json!({"path": "./pub/../secrets/key.pem"})),
        // Through a link that leads there.
        ("read_file", json!({"path": "pub/key"})),
        ("file_info", json!({"path": "secrets/key.pem"})),
        // A directory whose children the rule denies.
        ("list_directory", json!({"path": "secrets"})),
        ("search_text", json!({"pattern": "PRIVATE", "path": "secrets"})),
        ("find_files", json!({"pattern": "*", "path": "secrets"})),
        // The rule says `path`; `from`, `to` and `cwd` are paths too.
        ("move_path", json!({"from": "secrets/key.pem", "to": "pub/stolen.pem"})),
        ("move_path", json!({"from": "pub/readme.txt", "to": "secrets/planted.txt"})),
        ("shell_exec", json!({"command": "cat key.pem", "cwd": "secrets"})),
        ("write_file", json!({"path": "secrets/key.pem", "content": "x"})),
        ("delete_path", json!({"path": "pub/key"})),
    ] {
        let answer = call(&mut server, tool, args.clone());
        assert_eq!(code(&answer), -32001, "{tool} {args}: {answer}");
    }
    assert_eq!(std::fs::read_to_string(tree.root().join("secrets/key.pem")).expect("kept"), "PRIVATE\n");
    assert!(tree.root().join("pub/key").symlink_metadata().is_ok(), "the link was not deleted");
    // Paths outside the rule still work.
    assert_eq!(code(&call(&mut server, "read_file", json!({"path": "pub/readme.txt"}))), 0);
    assert_eq!(code(&call(&mut server, "list_directory", json!({"path": "."}))), 0);
    server.finish();
}

/// The other half of item 6: what the rule denies is also left out of walks, searches and
/// resources. The walk helpers consult the filter this server installs
/// (`Workspace::set_hidden`); they land in another branch of issue 10.
#[test]
fn a_path_deny_rule_hides_the_files_from_searches_and_resources() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/secrets/key.pem", "PRIVATE\n");
    let mut server =
        serve(&tree, &home, "deny = [\"*:path=secrets/**\"]\n", &["--permission-mode", "danger-full-access"]);
    let search = call(&mut server, "search_text", json!({"pattern": "PRIVATE"}));
    assert!(!search.to_string().contains("PRIVATE"), "{search}");
    let found = call(&mut server, "find_files", json!({"pattern": "**/*.pem"}));
    assert!(!found.to_string().contains("key.pem"), "{found}");
    let listed = server.request("resources/list", json!({}));
    assert!(!listed.to_string().contains("key.pem"), "{listed}");
    let uri = format!("file://{}", tree.root().join("secrets/key.pem").display());
    let read = server.request("resources/read", json!({"uri": uri}));
    assert!(!read.to_string().contains("PRIVATE"), "{read}");
    server.finish();
}

// ---------------------------------------------------------------------------------------------
// Items 7 and 10: an rmcp client answering the approval questions.

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
    tree.write("ws/.git/hooks/README", "hooks\n");
    tree.symlink("ws/docs", ".git/hooks");
    let through_link = json!({"path": "docs/pre-commit", "content": "#!/bin/sh\npwn\n"});
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
    assert!(rule.contains("leads through a link to `.git/hooks/pre-commit`"), "{rule}");
    assert!(!tree.root().join(".git/hooks/pre-commit").exists());
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

// ---------------------------------------------------------------------------------------------
// Item 8: nothing is used by a refused call.

#[test]
fn calls_refused_by_the_rate_limit_use_no_grant() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "[tools.write_file]\nrate_limit = { max_calls = 1, window_secs = 1.0 }\n",
        &["--permission-mode", "read-only", "--grant", "write_file:path=notes/**;uses=2"],
    );
    let write = |n: u32| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"tools/call\",\"params\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"notes/{n}.md\",\"content\":\"x\"}}}}}}\n"
        )
    };
    // One admitted, then two refused by the rate limit (sent together, inside one window).
    server.send_raw(format!("{}{}{}", write(1), write(2), write(3)).as_bytes());
    let codes: Vec<i64> = (1..=3).map(|id| code(&server.response(&json!(id)))).collect();
    assert_eq!(codes, [0, -32002, -32002]);
    // The second use of the grant is still there once the window has passed…
    std::thread::sleep(Duration::from_millis(1100));
    server.send_raw(write(4).as_bytes());
    assert_eq!(code(&server.response(&json!(4))), 0, "the refused calls used no grant");
    // …and it was the last one.
    std::thread::sleep(Duration::from_millis(1100));
    server.send_raw(write(5).as_bytes());
    assert_eq!(code(&server.response(&json!(5))), -32001);
    server.finish();
}

#[test]
fn calls_refused_by_the_lock_use_no_grant_and_no_budget() {
    let (tree, home) = (Tree::new(), Tree::new());
    let config = "[tools.write_file]\nrate_limit = { max_calls = 2, window_secs = 600 }\n";
    let flags = ["--permission-mode", "read-only", "--grant", "write_file:path=notes/**;uses=2"];
    let mut owner = serve(&tree, &home, config, &flags);
    let mut second = serve(&tree, &home, "", &flags);
    // Twelve pipelined calls to a locked root: every one is refused by the lock, none by the
    // rate limit (which they would have exhausted), and none takes a use of the grant.
    let mut batch = String::new();
    for id in 0..12 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"notes/{id}.md\",\"content\":\"x\"}}}}}}\n"
        ));
    }
    second.send_raw(batch.as_bytes());
    for id in 0..12 {
        let answer = second.response(&json!(id));
        assert_eq!(code(&answer), -32003, "{answer}");
    }
    owner.signal("KILL");
    owner.wait(Duration::from_secs(10));
    let write = |server: &mut RawServer, n: u32| {
        code(&call(server, "write_file", json!({"path": format!("notes/after-{n}.md"), "content": "x"})))
    };
    assert_eq!(write(&mut second, 1), 0, "budget and grant are whole");
    assert_eq!(write(&mut second, 2), 0);
    assert_eq!(write(&mut second, 3), -32001, "and both uses are spent now");
    second.finish();
}

// ---------------------------------------------------------------------------------------------
// Item 9: command grants match whole words.

#[test]
fn command_grants_cover_their_words_and_nothing_glued_to_them() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "",
        &[
            "--permission-mode",
            "read-only",
            "--grant",
            "shell_exec:command=echo safe*",
            "--grant",
            "shell_exec:command=true ok",
        ],
    );
    for covered in ["echo safe", "echo safe and sound", "echo  safe\t'x y'"] {
        let answer = call(&mut server, "shell_exec", json!({"command": covered}));
        assert_eq!(code(&answer), 0, "{covered:?}: {answer}");
    }
    for refused in [
        "echo safex",
        "echo safe'x'",
        "echo safe\"x y\"",
        "echo 'safe' x",
        "echosafe",
        "true ok --config x",
        "true okay",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": refused}));
        assert_eq!(code(&answer), -32001, "{refused:?}: {answer}");
    }
    assert_eq!(code(&call(&mut server, "shell_exec", json!({"command": "true ok"}))), 0);
    server.finish();
}
