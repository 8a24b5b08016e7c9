//! A server built on teaagent-core with tools that misbehave on purpose (slow, panicking,
//! blocking, chatty), for the end-to-end tests. Knobs come from the environment:
//!
//! - `FIXTURE_EXTRA_TOOLS=N`: N more tools `extra_000`…, for pagination;
//! - `FIXTURE_PAGE_SIZE`, `FIXTURE_MAX_LINE`, `FIXTURE_MAX_IN_FLIGHT`, `FIXTURE_MAX_QUEUED`,
//!   `FIXTURE_TIMEOUT_MS`, `FIXTURE_GRACE_MS`: the matching [`ServerConfig`] fields.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_core::{Behavior, CallToolResult, Error, Handler, Registry, Server, ServerConfig, ToolDef};

fn schema(properties: Value) -> Value {
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

fn tool(name: &'static str, description: &'static str, properties: Value, handler: Handler) -> ToolDef {
    ToolDef::builder(name)
        .description(description)
        .origin(concat!("fixture::", line!()))
        .input_schema(schema(properties))
        .behavior(Behavior { read_only: true, ..Behavior::default() })
        .handler(handler)
        .build()
}

fn u64_arg(args: &serde_json::Map<String, Value>, name: &str, default: u64) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(default)
}

fn tools() -> Vec<ToolDef> {
    let mut tools = vec![
        tool(
            "echo",
            "Echo `text` back.",
            json!({"text": {"type": "string"}}),
            Handler::new(|_, args| async move {
                Ok(CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
            }),
        ),
        tool(
            "slow",
            "Sleep `ms` milliseconds in `steps` steps, reporting progress after each.",
            json!({"ms": {"type": "integer"}, "steps": {"type": "integer"}}),
            Handler::new(|ctx, args| async move {
                let (ms, steps) = (u64_arg(&args, "ms", 1000), u64_arg(&args, "steps", 1).max(1));
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(ms / steps)).await;
                    ctx.progress(step as f64, Some(steps as f64), Some(&format!("step {step} of {steps}")));
                }
                Ok(CallToolResult::text(format!("slept {ms} ms")))
            }),
        ),
        tool(
            "blocking",
            "Block a thread for `ms` milliseconds (a sync tool).",
            json!({"ms": {"type": "integer"}}),
            Handler::blocking(|_, args| {
                std::thread::sleep(Duration::from_millis(u64_arg(&args, "ms", 1000)));
                Ok(CallToolResult::text("done"))
            }),
        ),
        tool(
            "panic",
            "Panic.",
            json!({}),
            Handler::new(|_, _| async { panic!("the fixture panicked on purpose") }),
        ),
        tool(
            "panic_blocking",
            "Panic inside a blocking tool.",
            json!({}),
            Handler::blocking(|_, _| panic!("the blocking fixture panicked on purpose")),
        ),
        tool(
            "fail",
            "Return a tool-level error.",
            json!({"message": {"type": "string"}}),
            Handler::new(|_, args| async move {
                Ok(CallToolResult::error(args.get("message").and_then(Value::as_str).unwrap_or("failed")))
            }),
        ),
        tool(
            "log",
            "Emit one log event at `level` (error, warn, info, debug).",
            json!({"level": {"type": "string"}, "message": {"type": "string"}}),
            Handler::new(|_, args| async move {
                let message = args.get("message").and_then(Value::as_str).unwrap_or("hello").to_owned();
                match args.get("level").and_then(Value::as_str) {
                    Some("error") => tracing::error!(target: "fixture", "{message}"),
                    Some("warn") => tracing::warn!(target: "fixture", "{message}"),
                    Some("debug") => tracing::debug!(target: "fixture", "{message}"),
                    _ => tracing::info!(target: "fixture", "{message}"),
                }
                Ok(CallToolResult::text("logged"))
            }),
        ),
        tool(
            "bad_args",
            "Refuse its arguments as the framework would.",
            json!({}),
            Handler::new(|ctx, _| async move {
                Err(Error::InvalidArguments { tool: ctx.tool().to_owned(), errors: vec![] })
            }),
        ),
    ];
    let extra = std::env::var("FIXTURE_EXTRA_TOOLS").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
    for i in 0..extra {
        tools.push(
            ToolDef::builder(format!("extra_{i:03}"))
                .description(format!("Extra tool number {i}."))
                .input_schema(schema(json!({})))
                .handler(Handler::new(move |_, _| async move { Ok(CallToolResult::text(i.to_string())) }))
                .build(),
        );
    }
    tools
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

fn main() -> ExitCode {
    let mut config = ServerConfig::default();
    if let Some(n) = env("FIXTURE_PAGE_SIZE") {
        config = config.tools_page_size(n);
    }
    if let Some(n) = env("FIXTURE_MAX_LINE") {
        config = config.max_line_bytes(n);
    }
    if let Some(n) = env("FIXTURE_MAX_IN_FLIGHT") {
        config = config.max_in_flight(n);
    }
    if let Some(n) = env("FIXTURE_MAX_QUEUED") {
        config = config.max_queued(n);
    }
    if let Some(ms) = env("FIXTURE_TIMEOUT_MS") {
        config = config.default_tool_timeout(Duration::from_millis(ms));
    }
    if let Some(ms) = env("FIXTURE_GRACE_MS") {
        config = config.shutdown_grace(Duration::from_millis(ms));
    }
    match Registry::builder().tools(tools()).build() {
        Ok(registry) => Server::new(registry).config(config).run_stdio(),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
