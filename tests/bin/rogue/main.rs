//! A deliberately misbehaving external MCP server for the gateway tests, written by hand (no
//! framework, so it can do what a framework would not let it).
//!
//! ```text
//! rogue [--tools FILE] [--marker DIR] [--noise]
//! ```
//!
//! - `--tools FILE` (or `ROGUE_TOOLS=FILE`): the tool list it offers, read at every `tools/list`
//!   (a test changes it to pull the rug). Without it, [`default_tools`].
//! - `--marker DIR`: writes `DIR/started-PID` when it starts, `DIR/cancelled-ID` when a call
//!   is cancelled, `DIR/grandchild-PID` for the process `grandchild` leaves behind.
//! - `--noise`: writes lines that are not JSON-RPC on stdout before every answer.
//! - `--page-size N`: lists its tools N a page (`nextCursor`).
//! - `--raw-list FILE`: answers `tools/list` with FILE's text as the `tools` value, unparsed.
//! - `--answer-all`: a call of a tool it does not have answers `reached NAME ARGS`.
//!
//! Its tools, whatever it lists: `echo {text}`; `env` (its whole environment, as JSON);
//! `crash` (exits at once, mid-call); `slow {steps?, pause_ms?, message_bytes?}` (progress every
//! 50 ms or `pause_ms`, its messages padded with `message_bytes` more, for `steps` steps, or until
//! cancelled); `grandchild` (starts `sleep 1000` and answers its pid); `detach` (the
//! same, double-forked and `setsid`); `big {bytes, id_last?}` (a text of that size, the id
//! last when asked); `hang_long {bytes}` (the first `bytes` of a reply, then a minute's stall);
//! `flood {count, interval_us}` (that many `list_changed` notifications); `spew` (replies to
//! requests never made, from then on, as fast as the pipe takes them); `stderr_flood {lines,
//! line_bytes?}` (that many lines on stderr, at once, each padded with `line_bytes` more);
//! `ask_unread {count, id_bytes}` (that many requests, each with an id that large, then three
//! seconds without reading stdin); `announce`
//! (sends `notifications/tools/list_changed`); `fail` (answers a JSON-RPC error `-32001`, which
//! must not pass for teaagent's policy denial); `blocks` (an image and a block of an unknown
//! type); `raw {line}` (answers with `line` as it is, each `ID` in it the request's id). It always writes two lines to stderr at start, one with a terminal escape.

#![allow(clippy::print_stdout, clippy::print_stderr)] // stdout is its protocol; stderr its log

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

struct Rogue {
    out: Mutex<std::io::Stdout>,
    tools: Option<PathBuf>,
    marker: Option<PathBuf>,
    noise: bool,
    page_size: Option<usize>,
    raw_list: Option<PathBuf>,
    answer_all: bool,
    cancelled: Mutex<HashSet<String>>,
}

impl Rogue {
    fn send(&self, message: &Value) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if self.noise {
            let _ = writeln!(out, "rogue says hello on stdout \u{1b}[31m(not JSON)");
        }
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    /// Writes `line` as it is (and a newline).
    fn send_raw(&self, line: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn mark(&self, name: &str, contents: &str) {
        if let Some(dir) = &self.marker {
            let _ = std::fs::write(dir.join(name), contents);
        }
    }

    fn answer(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn text(&self, id: &Value, text: &str) {
        self.answer(id, json!({"content": [{"type": "text", "text": text}], "isError": false}));
    }

    fn tool_list(&self) -> Value {
        match &self.tools {
            Some(file) => std::fs::read_to_string(file)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_else(default_tools),
            None => default_tools(),
        }
    }

    fn call(self: &Arc<Self>, id: Value, params: &Value) {
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let args = params["arguments"].clone();
        let token = params["_meta"]["progressToken"].clone();
        match name.as_str() {
            "echo" => self.text(&id, &format!("echo: {}", args["text"].as_str().unwrap_or_default())),
            "env" => {
                let env: serde_json::Map<String, Value> =
                    std::env::vars().map(|(k, v)| (k, Value::String(v))).collect();
                self.text(&id, &Value::Object(env).to_string());
            }
            "crash" => std::process::exit(3),
            "slow" => {
                let steps = args["steps"].as_u64();
                // `pause_ms: 0` sends the last progress and the reply back to back.
                let pause = Duration::from_millis(args["pause_ms"].as_u64().unwrap_or(50));
                // `message_bytes: N` pads each progress message with N more bytes.
                let padding = "m".repeat(args["message_bytes"].as_u64().unwrap_or(0) as usize);
                let me = self.clone();
                std::thread::spawn(move || {
                    let mut step = 0u64;
                    loop {
                        if me.cancelled.lock().unwrap_or_else(|p| p.into_inner()).contains(&id.to_string()) {
                            me.mark(&format!("cancelled-{id}"), "cancelled");
                            return;
                        }
                        if steps.is_some_and(|s| step >= s) {
                            me.text(&id, &format!("done after {step} steps"));
                            return;
                        }
                        step += 1;
                        if !token.is_null() {
                            me.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                                "progressToken": token, "progress": step, "message": format!("step {step}{padding}")
                            }}));
                        }
                        std::thread::sleep(pause);
                    }
                });
            }
            "grandchild" => match std::process::Command::new("sleep").arg("1000").spawn() {
                Ok(child) => {
                    self.mark(&format!("grandchild-{}", child.id()), "");
                    self.text(&id, &child.id().to_string());
                }
                Err(e) => self.text(&id, &format!("cannot spawn: {e}")),
            },
            // A double fork and `setsid`: a process outside its group and session, whose parent
            // is gone.
            "detach" => match std::process::Command::new("/bin/sh")
                .args(["-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!"])
                .output()
            {
                Ok(out) => {
                    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                    self.mark(&format!("detached-{pid}"), "");
                    self.text(&id, &pid);
                }
                Err(e) => self.text(&id, &format!("cannot spawn: {e}")),
            },
            // `bytes` of text; `id_last`: the id written after the result, as the TypeScript
            // SDK writes its replies.
            "big" => {
                let text = "b".repeat(args["bytes"].as_u64().unwrap_or(0) as usize);
                let result = json!({"content": [{"type": "text", "text": text}]});
                if args["id_last"].as_bool() == Some(true) {
                    self.send_raw(&format!("{{\"result\":{result},\"jsonrpc\":\"2.0\",\"id\":{id}}}"));
                } else {
                    self.answer(&id, result);
                }
            }
            // The start of a reply of `bytes` bytes that does not end for a minute.
            "hang_long" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0) as usize;
                let me = self.clone();
                std::thread::spawn(move || {
                    let mut out = me.out.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = write!(
                        out,
                        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
                    );
                    let chunk = "h".repeat(64 * 1024);
                    for _ in 0..bytes / chunk.len() {
                        let _ = out.write_all(chunk.as_bytes());
                    }
                    let _ = out.flush();
                    std::thread::sleep(Duration::from_secs(60));
                    let _ = writeln!(out, "\"}}]}}}}");
                });
            }
            // `count` notifications that the tool list changed, `interval_us` apart.
            "flood" => {
                let count = args["count"].as_u64().unwrap_or(0);
                let interval = Duration::from_micros(args["interval_us"].as_u64().unwrap_or(500));
                for _ in 0..count {
                    self.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                    std::thread::sleep(interval);
                }
                self.text(&id, &format!("sent {count}"));
            }
            // Replies to requests never made, as fast as the pipe takes them, until stdout
            // closes; answered at once.
            "spew" => {
                let me = self.clone();
                std::thread::spawn(move || {
                    let line = "{\"jsonrpc\":\"2.0\",\"id\":987654321,\"result\":{\"content\":[]}}\n";
                    let batch = line.repeat(64 * 1024 / line.len());
                    loop {
                        let mut out = me.out.lock().unwrap_or_else(|p| p.into_inner());
                        if out.write_all(batch.as_bytes()).and_then(|()| out.flush()).is_err() {
                            return;
                        }
                    }
                });
                self.text(&id, "spewing");
            }
            // `count` requests to teaagent, each with an id of `id_bytes` bytes, then three
            // seconds without reading stdin (where the answers wait).
            "ask_unread" => {
                let count = args["count"].as_u64().unwrap_or(0);
                let id_bytes = args["id_bytes"].as_u64().unwrap_or(1) as usize;
                for i in 0..count {
                    let big_id = format!("{i}-{}", "i".repeat(id_bytes));
                    self.send(&json!({"jsonrpc": "2.0", "id": big_id, "method": "sampling/createMessage"}));
                }
                std::thread::sleep(Duration::from_secs(3));
                self.text(&id, &format!("asked {count}"));
            }
            // `lines` lines on stderr, as fast as it takes them, each padded with `line_bytes`.
            "stderr_flood" => {
                let lines = args["lines"].as_u64().unwrap_or(0);
                let padding = "p".repeat(args["line_bytes"].as_u64().unwrap_or(0) as usize);
                let mut err = std::io::stderr().lock();
                for i in 0..lines {
                    let _ = writeln!(err, "flood line {i}{padding}");
                }
                drop(err);
                self.text(&id, &format!("wrote {lines}"));
            }
            "announce" => {
                self.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                self.text(&id, "announced");
            }
            "fail" => self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32001, "message": "rogue refuses", "data": {"reason": "approval_denied"}
            }})),
            "blocks" => self.answer(
                &id,
                json!({"content": [
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                    {"type": "hologram", "data": "?"}
                ]}),
            ),
            // `line`, written as it is as the reply, with each `ID` in it the request's id.
            "raw" => self.send_raw(&args["line"].as_str().unwrap_or_default().replace("ID", &id.to_string())),
            // `--answer-all`: any other tool says what reached it.
            other if self.answer_all => self.text(&id, &format!("reached {other} {args}")),
            _ => self.send(
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no such tool"}}),
            ),
        }
    }
}

fn default_tools() -> Value {
    let schema = |props: Value| json!({"type": "object", "properties": props});
    json!([
        {"name": "echo", "description": "Echo the text back.", "inputSchema": schema(json!({"text": {"type": "string"}})),
         "annotations": {"readOnlyHint": true, "destructiveHint": false}},
        {"name": "env", "description": "Show the environment.", "inputSchema": schema(json!({}))},
        {"name": "crash", "description": "Exit mid-call.", "inputSchema": schema(json!({}))},
        {"name": "slow", "description": "Report progress until done or cancelled.",
         "inputSchema": schema(json!({"steps": {"type": "integer", "minimum": 0}}))},
        {"name": "grandchild", "description": "Leave a process behind.", "inputSchema": schema(json!({}))},
        {"name": "detach", "description": "Leave a detached process behind.", "inputSchema": schema(json!({}))},
        {"name": "big", "description": "Answer a large text.", "inputSchema": schema(json!({"bytes": {"type": "integer"}, "id_last": {"type": "boolean"}}))},
        {"name": "hang_long", "description": "Start a long reply and stall.", "inputSchema": schema(json!({"bytes": {"type": "integer"}}))},
        {"name": "flood", "description": "Say the tool list changed, many times.", "inputSchema": schema(json!({"count": {"type": "integer"}, "interval_us": {"type": "integer"}}))},
        {"name": "spew", "description": "Reply to nothing, endlessly.", "inputSchema": schema(json!({}))},
        {"name": "stderr_flood", "description": "Write many lines on stderr.", "inputSchema": schema(json!({"lines": {"type": "integer"}, "line_bytes": {"type": "integer"}}))},
        {"name": "ask_unread", "description": "Ask many things, not reading the answers.", "inputSchema": schema(json!({"count": {"type": "integer"}, "id_bytes": {"type": "integer"}}))},
        {"name": "announce", "description": "Say the tool list changed.", "inputSchema": schema(json!({}))},
        {"name": "fail", "description": "Answer an error.", "inputSchema": schema(json!({}))},
        {"name": "blocks", "description": "Answer unusual content.", "inputSchema": schema(json!({}))},
        {"name": "raw", "description": "Answer with the line given.", "inputSchema": schema(json!({"line": {"type": "string"}}))}
    ])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut rogue = Rogue {
        out: Mutex::new(std::io::stdout()),
        tools: None,
        marker: None,
        noise: false,
        page_size: None,
        raw_list: None,
        answer_all: false,
        cancelled: Mutex::new(HashSet::new()),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tools" => rogue.tools = args.next().map(PathBuf::from),
            "--marker" => rogue.marker = args.next().map(PathBuf::from),
            "--noise" => rogue.noise = true,
            "--page-size" => rogue.page_size = args.next().and_then(|n| n.parse().ok()),
            "--raw-list" => rogue.raw_list = args.next().map(PathBuf::from),
            "--answer-all" => rogue.answer_all = true,
            // Anything else is accepted and ignored (tests pass odd arguments to see them shown).
            other => eprintln!("rogue: ignoring the argument {other:?}"),
        }
    }
    // `ROGUE_TOOLS`: the tool list's file, named where the trust store pins no value (a file an
    // argument names is pinned: changing it would be a changed server, not a rug pull).
    if rogue.tools.is_none() {
        rogue.tools = std::env::var_os("ROGUE_TOOLS").map(PathBuf::from);
    }
    let rogue = Arc::new(rogue);
    rogue.mark(&format!("started-{}", std::process::id()), "");
    eprintln!("rogue started");
    eprintln!("rogue paints \u{1b}[31mred\u{1b}[0m");
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (message["method"].as_str(), id) {
            (Some("initialize"), Some(id)) => rogue.answer(
                &id,
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "rogue", "version": "0.0.1"}
                }),
            ),
            (Some("tools/list"), Some(id)) if rogue.raw_list.is_some() => {
                // The file's text as the `tools` value, unparsed (JSON serde_json would refuse).
                let raw =
                    rogue.raw_list.as_ref().and_then(|f| std::fs::read_to_string(f).ok()).unwrap_or_default();
                rogue.send_raw(&format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":{}}}}}",
                    raw.trim()
                ));
            }
            (Some("tools/list"), Some(id)) => {
                let all = rogue.tool_list().as_array().cloned().unwrap_or_default();
                let from: usize = params["cursor"].as_str().and_then(|c| c.parse().ok()).unwrap_or(0);
                let size = rogue.page_size.unwrap_or(usize::MAX);
                let page: Vec<Value> = all.iter().skip(from).take(size).cloned().collect();
                let mut result = json!({"tools": page});
                if from.saturating_add(size) < all.len() {
                    result["nextCursor"] = json!((from + size).to_string());
                }
                rogue.answer(&id, result);
            }
            (Some("tools/call"), Some(id)) => rogue.call(id, &params),
            (Some("notifications/cancelled"), None) => {
                rogue
                    .cancelled
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(params["requestId"].to_string());
            }
            (Some(_), Some(id)) => {
                rogue.send(
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "unknown"}}),
                );
            }
            _ => {}
        }
    }
}
