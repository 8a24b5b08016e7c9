//! Every supported form compiles and builds a valid registry.

use std::collections::BTreeMap;

use teaagent_core::{CallToolResult, Content, Json, Registry, ToolContext, ToolError, tool};

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
    assert_eq!(registry.len(), 6);
    let run = registry.get("run").expect("run");
    assert_eq!(run.tier(), teaagent_core::Tier::High);
    assert_eq!(run.param_roles().collect::<Vec<_>>().len(), 2);
    assert!(registry.get("find-things").expect("find").output_schema().is_some());
    assert!(registry.get("type").is_some());
    assert!(registry.get("opt_in").is_none(), "an unregistered tool is not collected");
    let explicit = Registry::builder().add::<opt_in>().registered().build().expect("valid");
    assert_eq!(explicit.len(), 7);
    let listing = registry.listing();
    let run_entry = listing.iter().find(|t| t["name"] == "run").expect("listed");
    assert_eq!(run_entry["inputSchema"]["required"], serde_json::json!(["command"]));
    let type_entry = listing.iter().find(|t| t["name"] == "type").expect("listed");
    assert!(type_entry["inputSchema"]["properties"]["in"].is_object());
}
