//! Every supported form compiles and builds a valid registry.

use std::collections::BTreeMap;

use teaagent_core::{CallToolResult, Content, Json, Registry, State, ToolContext, ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    /// What to find.
    text: String,
    /// Where.
    scope: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Found {
    count: u32,
}

/// An async tool with a context, required and optional parameters and roles.
#[tool(destructive, idempotent, tier = "high", title = "Run", rate_limit(max_calls = 10, window_secs = 0.5), timeout_secs = 30)]
async fn run(
    ctx: &ToolContext,
    /// The command.
    #[command]
    command: String,
    /// Where.
    #[path]
    cwd: Option<String>,
    /// Environment.
    env: Option<BTreeMap<String, String>>,
) -> Result<String, ToolError> {
    Ok(format!("{} {command} {cwd:?} {env:?}", ctx.tool()))
}

/// A sync tool taking its arguments as one struct, with structured output.
#[tool(read_only, name = "find-things")]
fn find(ctx: ToolContext, #[args] query: Query) -> Json<Found> {
    let _ = (ctx.tool(), query.scope);
    Json(Found { count: query.text.len() as u32 })
}

/// Shared state (cloned per call).
#[derive(Clone, Default)]
struct Counter(std::sync::Arc<std::sync::atomic::AtomicU32>);

/// Limits, another state type.
#[derive(Clone)]
struct Limit(u32);

/// State, by pattern and by name, next to the context and to bounded parameters.
#[tool]
async fn count(
    State(counter): State<Counter>,
    ctx: &ToolContext,
    limit: teaagent_core::State<Limit>,
    /// How much to add.
    #[schemars(range(min = 1, max = 10))]
    by: u32,
    /// A label.
    #[schemars(length(max = 8))]
    #[allow(unused_variables)]
    label: Option<String>,
) -> String {
    let _ = ctx.tool();
    let n = counter.0.fetch_add(by, std::sync::atomic::Ordering::Relaxed);
    format!("{}", n.min(limit.0.0))
}

/// State beside an `#[args]` struct.
#[tool(read_only)]
fn find_counted(State(counter): State<Counter>, #[args] query: Query) -> String {
    let _ = (counter, query.scope);
    query.text
}

/// No parameters, no return value.
#[tool(stateful, open_world)]
async fn ping() {}

/// A full result.
#[tool]
fn picture() -> Result<CallToolResult, String> {
    Ok(CallToolResult::contents(vec![Content::text("a"), Content::text("b")]))
}

/// A raw identifier.
#[tool(read_only)]
fn r#type(
    /// A keyword-named parameter.
    r#in: String,
) -> &'static str {
    let _ = r#in;
    "ok"
}

/// Only served when listed explicitly.
#[tool(unregistered, read_only)]
fn opt_in() -> String {
    String::new()
}

/// Arguments mirrored into headers (opt-in, so the counts above stay).
#[tool(unregistered, read_only)]
fn mirrored(
    /// A string.
    #[header("Region")]
    region: String,
    /// An optional integer.
    #[header("X-Days_2")]
    days: Option<u16>,
    /// A boolean.
    #[header("Metric")]
    metric: bool,
) -> String {
    format!("{region} {days:?} {metric}")
}

fn written_schema() -> serde_json::Value {
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"text": {"type": "string", "x-mcp-header": "Text"}, "scope": {"type": "string"}},
        "required": ["text"],
        "if": {"required": ["scope"]},
        "then": {"properties": {"text": {"minLength": 1}}}
    })
}

/// A schema as written.
#[tool(unregistered, read_only, input_schema = written_schema)]
fn written(#[args] query: Query) -> String {
    query.text
}

mod renamed {
    use teaagent_core as core_again;

    /// Found through a renamed path to the core crate.
    #[core_again::tool(crate = core_again, read_only)]
    pub(crate) fn renamed() -> String {
        String::new()
    }
}

fn main() {
    let registry = Registry::builder()
        .add::<run>()
        .add::<find>()
        .add::<ping>()
        .add::<picture>()
        .add::<r#type>()
        .add::<renamed::renamed>()
        .registered()
        .build()
        .expect("a valid registry");
    assert_eq!(registry.len(), 8);
    let count = registry.get("count").expect("count");
    let needs: Vec<_> = count.state_needs().map(|n| n.type_id()).collect();
    assert_eq!(needs, [std::any::TypeId::of::<Counter>(), std::any::TypeId::of::<Limit>()]);
    let schema = count.input_schema();
    assert_eq!(schema["properties"]["by"]["maximum"], 10);
    assert_eq!(schema["properties"]["label"]["maxLength"], 8);
    assert_eq!(schema["required"], serde_json::json!(["by"]));
    assert_eq!(registry.get("find_counted").expect("find_counted").state_needs().count(), 1);
    let server = teaagent_core::Server::new(registry.clone());
    assert!(server.check_state().is_err(), "no state given");
    let server = server.state(Counter::default()).state(Limit(3));
    assert!(server.check_state().is_ok());
    let run = registry.get("run").expect("run");
    assert_eq!(run.tier(), teaagent_core::Tier::High);
    assert_eq!(run.param_roles().collect::<Vec<_>>().len(), 2);
    assert!(registry.get("find-things").expect("find").output_schema().is_some());
    assert!(registry.get("type").is_some());
    assert!(registry.get("opt_in").is_none(), "an unregistered tool is not collected");
    let explicit = Registry::builder().add::<opt_in>().registered().build().expect("valid");
    assert_eq!(explicit.len(), 9);
    let listing = registry.listing();
    let run_entry = listing.iter().find(|t| t["name"] == "run").expect("listed");
    assert_eq!(run_entry["inputSchema"]["required"], serde_json::json!(["command"]));
    let type_entry = listing.iter().find(|t| t["name"] == "type").expect("listed");
    assert!(type_entry["inputSchema"]["properties"]["in"].is_object());
    let opt_in = Registry::builder().add::<mirrored>().add::<written>().build().expect("valid");
    let mirrored = opt_in.header_params("mirrored");
    let headers: Vec<_> = mirrored.iter().map(|p| (p.property.as_str(), p.header.as_str())).collect();
    assert_eq!(headers, [("region", "Region"), ("days", "X-Days_2"), ("metric", "Metric")]);
    let written = opt_in.get("written").expect("written");
    assert_eq!(written.input_schema(), &written_schema());
    assert!(written.input_schema_is_as_written());
    assert_eq!(opt_in.header_params("written").len(), 1);
}
