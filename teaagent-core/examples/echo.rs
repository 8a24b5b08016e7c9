//! The hello-world of teaagent: one `echo` tool served over stdio.
//!
//! ```sh
//! cargo build --release -p teaagent-core --example echo
//! echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   | target/release/examples/echo
//! ```

use std::process::ExitCode;

use serde_json::json;
use teaagent_core::error::ArgumentError;
use teaagent_core::{Behavior, CallToolResult, Error, Handler, Registry, Server, ToolDef};

/// `{"text": string}` → the same text as one text content.
fn echo() -> ToolDef {
    ToolDef::builder("echo")
        .description("Echo the text back unchanged.")
        .origin(concat!(module_path!(), "::echo"))
        .behavior(Behavior { read_only: true, idempotent: true, ..Behavior::default() })
        .input_schema(json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to echo." } },
            "required": ["text"],
            "additionalProperties": false
        }))
        .handler(Handler::new(|_ctx, mut args| async move {
            match args.remove("text") {
                Some(serde_json::Value::String(text)) => Ok(CallToolResult::text(text)),
                _ => Err(Error::InvalidArguments {
                    tool: "echo".into(),
                    errors: vec![ArgumentError {
                        pointer: "/text".into(),
                        message: "a string is required".into(),
                    }],
                }),
            }
        }))
        .build()
}

fn main() -> ExitCode {
    match Registry::builder().tool(echo()).build() {
        Ok(registry) => Server::new(registry).run_stdio(),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
