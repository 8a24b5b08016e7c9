//! The benchmark's baseline: the least a stdio MCP echo server can do. It reads a line, parses it
//! with `serde_json`, and writes the correct response — no async runtime, no framework, no
//! checks beyond what a correct answer needs. `benches/stdio/` compares the `echo` example
//! with it; it is not an example to copy.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn main() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
        let Some(id) = msg.get("id") else { continue };
        let result = match msg["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "baseline", "version": "0"}
            }),
            Some("tools/call") => json!({
                "content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}],
                "isError": false
            }),
            _ => json!({}),
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if serde_json::to_writer(&mut out, &response).is_err()
            || out.write_all(b"\n").is_err()
            || out.flush().is_err()
        {
            return;
        }
    }
}
