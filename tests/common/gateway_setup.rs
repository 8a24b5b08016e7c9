//! The set-up of the gateway's end-to-end tests (`gateway_*.rs`): a home whose configuration
//! declares `rogue` (a server written to misbehave, `tests/bin/rogue`), a workspace, and helpers
//! to allow it, serve, call and watch processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// A home with `[mcp_servers.rogue]` (and `extra` config), a workspace, a marker directory.
pub(crate) struct Setup {
    pub(crate) home: Tree,
    pub(crate) tree: Tree,
    pub(crate) markers: PathBuf,
    pub(crate) tools_file: PathBuf,
}

impl Setup {
    pub(crate) fn new(extra: &str) -> Self {
        Self::with_rogue(Bin::Rogue.path(), extra)
    }

    pub(crate) fn with_rogue(rogue: &Path, extra: &str) -> Self {
        Self::with_rogue_args(rogue, &[], extra)
    }

    /// `rogue` with `more_args` after the usual ones.
    pub(crate) fn with_rogue_args(rogue: &Path, more_args: &[&str], extra: &str) -> Self {
        let (home, tree) = (Tree::new(), Tree::new());
        let markers = home.path("markers");
        std::fs::create_dir_all(&markers).expect("markers");
        let tools_file = home.path("rogue-tools.json");
        std::fs::write(&tools_file, default_tools().to_string()).expect("tools");
        home.write(
            "config.toml",
            &format!(
                // Three tools a page: every test reads the list through its pagination. The tool
                // list's file is named in the environment, whose values the trust store does not
                // pin (a file an argument names is pinned).
                "[mcp_servers.rogue]\ncommand = {:?}\nargs = [\"--marker\", {:?}, \"--noise\", \"--page-size\", \"3\"{}]\nenv = {{ ROGUE_VISIBLE = \"yes\", ROGUE_TOOLS = {:?} }}\nsandbox = {{ writable = [{:?}] }}\n{extra}",
                rogue.display().to_string(),
                markers.display().to_string(),
                more_args.iter().map(|a| format!(", {a:?}")).collect::<String>(),
                tools_file.display().to_string(),
                markers.display().to_string()
            ),
        );
        Setup { home, tree, markers, tools_file }
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(args)
            .current_dir(self.tree.root())
            .env("TEAAGENT_HOME", self.home.base())
            .env("ROGUE_SECRET", "teaagent's environment must not reach the child")
            .env_remove("RUST_LOG");
        cmd
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command(args).stdin(Stdio::null()).output().expect("run teaagent")
    }

    pub(crate) fn allow(&self, name: &str) -> String {
        let out = self.run(&["mcp", "trust", "allow", name]);
        assert!(out.status.success(), "allow {name}: {}", String::from_utf8_lossy(&out.stderr));
        // `allow` started it once to read its tools; the tests count starts from here.
        self.clear_markers();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn serve(&self, flags: &[&str]) -> RawServer {
        let mut server = self.serve_raw(flags);
        server.initialize("2025-11-25");
        server
    }

    /// `mcp serve` with no handshake yet.
    pub(crate) fn serve_raw(&self, flags: &[&str]) -> RawServer {
        let root = self.tree.root();
        let mut args = vec!["mcp", "serve", "--root", root.to_str().expect("utf-8")];
        args.extend_from_slice(flags);
        RawServer::start(self.command(&args))
    }

    /// `mcp serve`, initialized, its stderr not read until [`RawServer::read_stderr`].
    pub(crate) fn serve_stderr_unread(&self, flags: &[&str]) -> RawServer {
        let root = self.tree.root();
        let mut args = vec!["mcp", "serve", "--root", root.to_str().expect("utf-8")];
        args.extend_from_slice(flags);
        let mut server = RawServer::start_stderr_unread(self.command(&args));
        server.initialize("2025-11-25");
        server
    }

    /// `mcp serve`, initialized, with these environment variables set.
    pub(crate) fn serve_with(&self, flags: &[&str], env: &[(&str, &str)]) -> RawServer {
        let root = self.tree.root();
        let mut args = vec!["mcp", "serve", "--root", root.to_str().expect("utf-8")];
        args.extend_from_slice(flags);
        let mut cmd = self.command(&args);
        cmd.envs(env.iter().copied());
        let mut server = RawServer::start(cmd);
        server.initialize("2025-11-25");
        server
    }

    pub(crate) fn clear_markers(&self) {
        for entry in std::fs::read_dir(&self.markers).expect("markers").flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
    }

    /// Pids of the markers named `prefix-PID`.
    pub(crate) fn marked(&self, prefix: &str) -> Vec<u32> {
        std::fs::read_dir(&self.markers)
            .expect("markers")
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix(&format!("{prefix}-"))?.parse().ok())
            .collect()
    }

    pub(crate) fn set_tools(&self, tools: &Value) {
        std::fs::write(&self.tools_file, tools.to_string()).expect("tools");
    }
}

pub(crate) fn default_tools() -> Value {
    let schema = |props: Value| json!({"type": "object", "properties": props});
    let names = [
        ("echo", "Echo the text back.", schema(json!({"text": {"type": "string"}}))),
        ("env", "Show the environment.", schema(json!({}))),
        ("crash", "Exit mid-call.", schema(json!({}))),
        (
            "slow",
            "Report progress until done or cancelled.",
            schema(json!({"steps": {"type": "integer", "minimum": 0}})),
        ),
        ("grandchild", "Leave a process behind.", schema(json!({}))),
        ("detach", "Leave a detached process behind.", schema(json!({}))),
        (
            "big",
            "Answer a large text.",
            schema(json!({"bytes": {"type": "integer"}, "id_last": {"type": "boolean"}})),
        ),
        ("hang_long", "Start a long reply and stall.", schema(json!({"bytes": {"type": "integer"}}))),
        (
            "flood",
            "Say the tool list changed, many times.",
            schema(json!({"count": {"type": "integer"}, "interval_us": {"type": "integer"}})),
        ),
        ("spew", "Reply to nothing, endlessly.", schema(json!({}))),
        (
            "stderr_flood",
            "Write many lines on stderr.",
            schema(json!({"lines": {"type": "integer"}, "line_bytes": {"type": "integer"}})),
        ),
        (
            "ask_unread",
            "Ask many things, not reading the answers.",
            schema(json!({"count": {"type": "integer"}, "id_bytes": {"type": "integer"}})),
        ),
        ("announce", "Say the tool list changed.", schema(json!({}))),
        ("fail", "Answer an error.", schema(json!({}))),
        ("blocks", "Answer unusual content.", schema(json!({}))),
        ("raw", "Answer with the line given.", schema(json!({"line": {"type": "string"}}))),
    ];
    Value::Array(
        names
            .into_iter()
            .map(|(name, description, schema)| {
                let mut tool = json!({"name": name, "description": description, "inputSchema": schema});
                if name == "echo" {
                    // A lie: the gateway never trusts it.
                    tool["annotations"] = json!({"readOnlyHint": true, "destructiveHint": false});
                }
                tool
            })
            .collect(),
    )
}

pub(crate) fn tool_names(server: &mut RawServer) -> Vec<String> {
    let listed = server.request("tools/list", json!({}));
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect()
}

pub(crate) fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

pub(crate) fn text_of(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
        .to_owned()
}

/// Whether process `pid` is gone (or a zombie nobody waits for yet).
pub(crate) fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

pub(crate) fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} did not happen within {limit:?}");
        std::thread::sleep(Duration::from_millis(25));
    }
}
