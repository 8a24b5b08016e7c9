//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) runs
//! against (tests/conformance.rs): every tool, resource and prompt its server scenarios call,
//! written the way a tool author writes them (`#[tool]`, [`Prompts`], a [`ResourceProvider`]).
//!
//! `conformance-fixture [ADDR]` serves Streamable HTTP at `http://ADDR/mcp` (default
//! `127.0.0.1:0`) and says `listening on http://…/mcp` on stderr once bound. Both protocol eras
//! are served on that one endpoint, with the default policy (every tool here is read-only, so
//! nothing needs an approval).

mod json_schema;
mod region;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_core::mcp::prompts::{GetPromptResult, PromptMessage};
use teaagent_core::mcp::resources::{ListResourcesResult, ReadResourceResult, Resource, ResourceTemplate};
use teaagent_core::mcp::{Content, EmbeddedResource};
use teaagent_core::{
    BoxFuture, ClientCapability, Error, InputRequest, PromptDef, Prompts, Registry, ResourceProvider, Server,
    SkillDef, Skills, ToolContext, ToolError, tool,
};

/// A 1×1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

fn image() -> Content {
    Content::Image { data: PNG.into(), mime_type: "image/png".into() }
}

fn text_resource(uri: &str, mime: &str, text: &str) -> Content {
    Content::Resource {
        resource: EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime.into()),
            text: Some(text.into()),
            blob: None,
        },
    }
}

fn pause() -> impl std::future::Future<Output = ()> {
    tokio::time::sleep(Duration::from_millis(50))
}

/// Returns a fixed text.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a PNG image.
#[tool(read_only)]
fn test_image_content() -> Content {
    image()
}

/// Returns a WAV sound.
#[tool(read_only)]
fn test_audio_content() -> Content {
    Content::Audio { data: WAV.into(), mime_type: "audio/wav".into() }
}

/// Returns an embedded text resource.
#[tool(read_only)]
fn test_embedded_resource() -> Content {
    text_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")
}

/// Returns text, an image and a resource.
#[tool(read_only)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        image(),
        text_resource("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
    ]
}

/// Reports progress three times, 50 ms apart.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: &ToolContext) -> &'static str {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            pause().await;
        }
        ctx.progress(step, Some(100.0), None);
    }
    "Progress test completed"
}

/// Logs three lines at info level, 50 ms apart.
#[tool(read_only)]
async fn test_tool_with_logging() -> &'static str {
    tracing::info!("Tool execution started");
    pause().await;
    tracing::info!("Tool processing data");
    pause().await;
    tracing::info!("Tool execution completed");
    "Logging test completed"
}

/// Logs a line (sent only to a request that asked for logs).
#[tool(read_only)]
fn test_logging_tool() -> &'static str {
    tracing::info!("test_logging_tool ran");
    "Logged once"
}

/// Always fails.
#[tool(read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Asks the client's model to answer a prompt.
#[tool(read_only)]
async fn test_sampling(
    ctx: &ToolContext,
    /// What to ask the model.
    prompt: String,
) -> Result<String, ToolError> {
    let answer = ctx.ask("sample", InputRequest::sample(prompt, 100)).await?;
    Ok(format!("LLM response: {}", answer["content"]["text"].as_str().unwrap_or_default()))
}

fn elicited(answer: &Value) -> String {
    format!(
        "action={}, content={}",
        answer["action"].as_str().unwrap_or("unknown"),
        answer.get("content").cloned().unwrap_or(json!({}))
    )
}

/// Asks the user for a name and an email.
#[tool(read_only)]
async fn test_elicitation(
    ctx: &ToolContext,
    /// What to tell the user.
    message: String,
) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let answer = ctx.ask("form", InputRequest::elicit(message, schema)).await?;
    Ok(format!("User response: {}", elicited(&answer)))
}

/// Asks for values that all have defaults (SEP-1034).
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(ctx: &ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        },
    });
    let answer = ctx.ask("defaults", InputRequest::elicit("Please review the defaults", schema)).await?;
    Ok(format!("Elicitation completed: {}", elicited(&answer)))
}

/// Asks with the five kinds of enum (SEP-1330).
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(ctx: &ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
    });
    let answer = ctx.ask("enums", InputRequest::elicit("Pick some options", schema)).await?;
    Ok(format!("Elicitation completed: {}", elicited(&answer)))
}

fn name_form(message: &str, field: &str) -> InputRequest {
    InputRequest::elicit(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
}

fn field<'a>(answer: &'a Value, name: &str) -> &'a str {
    answer["content"][name].as_str().unwrap_or("stranger")
}

/// Needs the client's `sampling` capability (else `-32021`).
#[tool(read_only)]
async fn test_missing_capability(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx.ask("needs_sampling", InputRequest::sample("Say hello", 20)).await?;
    Ok(format!("Sampled: {}", answer["content"]["text"].as_str().unwrap_or_default()))
}

/// Streams progress, then answers (never a request to the client).
#[tool(read_only)]
async fn test_streaming_elicitation(ctx: &ToolContext) -> &'static str {
    ctx.progress(1.0, Some(2.0), Some("working"));
    pause().await;
    ctx.progress(2.0, Some(2.0), Some("done"));
    "Streaming complete"
}

/// Asks for the user's name (modern era: a multi round-trip request).
#[tool(read_only)]
async fn test_input_required_result_elicitation(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx.ask("user_name", name_form("What is your name?", "name")).await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the client's model a question.
#[tool(read_only)]
async fn test_input_required_result_sampling(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer =
        ctx.ask("capital_question", InputRequest::sample("What is the capital of France?", 100)).await?;
    Ok(format!("The model says: {}", answer["content"]["text"].as_str().unwrap_or_default()))
}

fn roots_of(answer: &Value) -> String {
    let roots: Vec<&str> =
        answer["roots"].as_array().into_iter().flatten().filter_map(|r| r["uri"].as_str()).collect();
    roots.join(", ")
}

/// Asks for the client's roots.
#[tool(read_only)]
async fn test_input_required_result_list_roots(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx.ask("client_roots", InputRequest::list_roots()).await?;
    Ok(format!("Client roots: {}", roots_of(&answer)))
}

/// Asks for a confirmation; the answer arrives with the sealed state.
#[tool(read_only)]
async fn test_input_required_result_request_state(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = InputRequest::elicit(
        "Please confirm",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    );
    let answer = ctx.ask("confirm", form).await?;
    Ok(format!("state-ok: confirmed={}", answer["content"]["ok"]))
}

/// Asks three questions of three kinds at once.
#[tool(read_only)]
async fn test_input_required_result_multiple_inputs(ctx: &ToolContext) -> Result<String, ToolError> {
    let answers = ctx
        .ask_all([
            ("user_name", name_form("What is your name?", "name")),
            ("greeting", InputRequest::sample("Generate a greeting", 50)),
            ("client_roots", InputRequest::list_roots()),
        ])
        .await?;
    Ok(format!(
        "{} {}! Roots: {}",
        answers["greeting"]["content"]["text"].as_str().unwrap_or("Hello"),
        field(&answers["user_name"], "name"),
        roots_of(&answers["client_roots"])
    ))
}

/// Asks one question, then another.
#[tool(read_only)]
async fn test_input_required_result_multi_round(ctx: &ToolContext) -> Result<String, ToolError> {
    let name = ctx.ask("step1", name_form("Step 1: What is your name?", "name")).await?;
    let color = ctx.ask("step2", name_form("Step 2: What is your favorite color?", "color")).await?;
    Ok(format!("{} likes {}", field(&name, "name"), field(&color, "color")))
}

/// Asks for a confirmation; a tampered state is refused.
#[tool(read_only)]
async fn test_input_required_result_tampered_state(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = InputRequest::elicit(
        "Please confirm",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    );
    ctx.ask("confirm", form).await?;
    Ok("confirmed".into())
}

/// Asks only what the client declared it can answer.
#[tool(read_only)]
async fn test_input_required_result_capabilities(ctx: &ToolContext) -> Result<String, ToolError> {
    let mut questions = Vec::new();
    if ctx.client_supports(ClientCapability::Elicitation) {
        questions.push(("user_name", name_form("What is your name?", "name")));
    }
    if ctx.client_supports(ClientCapability::Sampling) {
        questions.push(("greeting", InputRequest::sample("Generate a greeting", 50)));
    }
    if ctx.client_supports(ClientCapability::Roots) {
        questions.push(("client_roots", InputRequest::list_roots()));
    }
    let answers = ctx.ask_all(questions).await?;
    Ok(format!("Answered: {}", answers.keys().cloned().collect::<Vec<_>>().join(", ")))
}

/// The `test://` resources.
struct TestResources;

const STATIC_TEXT: &str = "This is the content of the static text resource.";

impl ResourceProvider for TestResources {
    fn list(&self, _cursor: Option<String>) -> BoxFuture<'static, Result<ListResourcesResult, Error>> {
        let resource = |uri: &str, name: &str, mime: &str, description: &str| Resource {
            uri: uri.into(),
            name: name.into(),
            mime_type: Some(mime.to_owned().into()),
            size: None,
            description: Some(description.into()),
        };
        let resources = vec![
            resource("test://static-text", "static-text", "text/plain", "A fixed text"),
            resource("test://static-binary", "static-binary", "image/png", "A fixed PNG image"),
            resource(
                "test://watched-resource",
                "watched-resource",
                "text/plain",
                "A resource to subscribe to",
            ),
        ];
        Box::pin(async move { Ok(ListResourcesResult { resources, next_cursor: None }) })
    }

    fn read(&self, uri: String) -> BoxFuture<'static, Result<ReadResourceResult, Error>> {
        Box::pin(async move {
            let content = |mime: &str, text: Option<String>, blob: Option<String>| EmbeddedResource {
                uri: uri.clone(),
                mime_type: Some(mime.into()),
                text,
                blob,
            };
            let contents = match uri.as_str() {
                "test://static-text" => content("text/plain", Some(STATIC_TEXT.into()), None),
                "test://watched-resource" => {
                    content("text/plain", Some("Watched resource content.".into()), None)
                }
                "test://static-binary" => content("image/png", None, Some(PNG.into())),
                other => match other.strip_prefix("test://template/").and_then(|r| r.strip_suffix("/data")) {
                    Some(id) if !id.is_empty() && !id.contains('/') => {
                        let body =
                            json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                        content("application/json", Some(body.to_string()), None)
                    }
                    _ => {
                        return Err(Error::Resource {
                            uri: uri.clone(),
                            reason: teaagent_core::error::ResourceRefusal::NotFound,
                        });
                    }
                },
            };
            Ok(ReadResourceResult { contents: vec![contents] })
        })
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: "test://template/{id}/data".into(),
            name: "template-data".into(),
            description: Some("Data for an id".into()),
            mime_type: Some("application/json".into()),
        }]
    }

    fn subscribable(&self) -> bool {
        true
    }
}

fn prompts() -> Prompts {
    Prompts::new()
        .prompt(
            PromptDef::new("test_simple_prompt")
                .description("A prompt without arguments")
                .handler(|_, _| async { Ok(GetPromptResult::text("This is a simple prompt for testing.")) }),
        )
        .prompt(
            PromptDef::new("test_prompt_with_arguments")
                .description("A prompt with two arguments")
                .argument("arg1", "First argument", true)
                .argument("arg2", "Second argument", true)
                .complete("arg1", |typed, _| starting_with(&["paris", "park", "party", "hello"], typed))
                .complete("arg2", |typed, _| starting_with(&["world", "wonder"], typed))
                .handler(|_, args| async move {
                    Ok(GetPromptResult::text(format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        args["arg1"], args["arg2"]
                    )))
                }),
        )
        .prompt(
            PromptDef::new("test_prompt_with_embedded_resource")
                .description("A prompt that embeds a resource")
                .argument("resourceUri", "The resource to embed", true)
                .handler(|_, args| async move {
                    Ok(GetPromptResult::new(vec![
                        PromptMessage::user(text_resource(
                            &args["resourceUri"],
                            "text/plain",
                            "Embedded resource content for testing.",
                        )),
                        PromptMessage::user("Please process the embedded resource above."),
                    ]))
                }),
        )
        .prompt(PromptDef::new("test_prompt_with_image").description("A prompt with an image").handler(
            |_, _| async {
                Ok(GetPromptResult::new(vec![
                    PromptMessage::user(image()),
                    PromptMessage::user("Please analyze the image above."),
                ]))
            },
        ))
        .prompt(
            PromptDef::new("test_input_required_result_prompt")
                .description("A prompt that asks the user for its context first")
                .handler(|ctx, _| async move {
                    let answer = ctx
                        .ask("user_context", name_form("What context should the prompt use?", "context"))
                        .await?;
                    Ok(GetPromptResult::text(format!("Use this context: {}", field(&answer, "context"))))
                }),
        )
}

fn main() -> ExitCode {
    teaagent_core::logging::init("info");
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into());
    let registry = match Registry::builder().registered().build() {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let server = Server::new(registry)
        .server_info("teaagent-conformance-fixture", env!("CARGO_PKG_VERSION"))
        .resources(TestResources)
        .prompts(prompts())
        .skills(skills());
    teaagent_tests::serve_http(server, &addr)
}

/// The skills the `sep-2640-*` scenarios look at: the first listed has a subfolder (the
/// directory scenario needs a child that is a folder), and a frontmatter with more than `name`
/// and `description` (compared key by key with the file's).
fn skills() -> Skills {
    Skills::new()
        .skill(
            SkillDef::embedded("code-review")
                .file(
                    "SKILL.md",
                    "---\nname: code-review\ndescription: Review a change for bugs, in the order of references/checklist.md\n\
                     license: Apache-2.0\nmetadata:\n  version: \"1.0\"\n  strict: yes\n---\n\n# Code review\n\n\
                     Go through references/checklist.md, then run scripts/lint.sh.\n",
                )
                .file("references/checklist.md", "1. Tests\n2. Errors\n3. Names\n")
                .file("scripts/lint.sh", "#!/bin/sh\ncargo clippy -- -D warnings\n"),
        )
        .skill(SkillDef::embedded("release-notes").file(
            "SKILL.md",
            "---\nname: release-notes\ndescription: Write the release notes of a version\n---\n\nOne line per change.\n",
        ))
}

// --- Tasks (`io.modelcontextprotocol/tasks`): the tools the suite's `tasks-*` scenarios call.

/// Says hello (never a task).
#[tool(read_only)]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps `seconds`, then says so: a task for a client that supports tasks.
#[tool(read_only, task)]
async fn slow_compute(
    /// How long to work.
    seconds: u64,
    /// What the work is called.
    label: Option<String>,
) -> String {
    tokio::time::sleep(Duration::from_secs(seconds.min(3600))).await;
    format!("Computed {} in {seconds}s", label.unwrap_or_default())
}

/// Fails after a second with a tool error: only ever a task.
#[tool(read_only, task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("failing_job failed, as it always does"))
}

/// Panics, so its task ends `failed` with a protocol error rather than a result.
#[tool(read_only, task)]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job fails on purpose")
}

/// Asks the user to confirm before it (pretends to) delete a file. `filename` is optional: the
/// `http-header-validation` scenario calls the first tool listed with no arguments.
#[tool(read_only, task)]
async fn confirm_delete(
    ctx: &ToolContext,
    /// The file to delete.
    filename: Option<String>,
) -> Result<String, ToolError> {
    let filename = filename.unwrap_or_else(|| "(no file named)".into());
    if !ctx.client_supports(ClientCapability::Elicitation) {
        return Ok(format!("Kept {filename}: nobody to confirm the deletion"));
    }
    let schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Delete it?"}},
        "required": ["confirm"],
    });
    let answer = ctx.ask("confirm", InputRequest::elicit(format!("Delete {filename}?"), schema)).await?;
    let confirmed = answer["action"] == "accept" && answer["content"]["confirm"] == true;
    Ok(match confirmed {
        true => format!("Deleted {filename}"),
        false => format!("Kept {filename}"),
    })
}

/// Asks two questions at once and completes once both are answered.
#[tool(read_only, task)]
async fn multi_input(ctx: &ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    });
    let answers = ctx
        .ask_all([
            ("first", InputRequest::elicit("First part?", schema.clone())),
            ("second", InputRequest::elicit("Second part?", schema)),
        ])
        .await?;
    Ok(format!("Got {} and {}", elicited(&answers["first"]), elicited(&answers["second"])))
}

/// Asks the user's name in a plain round trip, then goes on as a task that greets them.
#[tool(read_only, task = "required", task_start = "body")]
async fn test_tool_with_task(
    ctx: &ToolContext,
    /// How long the task works (a tenth of a second when not given).
    seconds: Option<u64>,
    /// Ask a second question from the task, after it became one.
    ask_again: Option<bool>,
) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let answer = ctx.ask("name", InputRequest::elicit("What is your name?", schema.clone())).await?;
    ctx.continue_as_task().await;
    let work = seconds.map_or(Duration::from_millis(100), |s| Duration::from_secs(s.min(3600)));
    tokio::time::sleep(work).await;
    let again = match ask_again {
        Some(true) => elicited(&ctx.ask("again", InputRequest::elicit("And your name now?", schema)).await?),
        _ => String::new(),
    };
    Ok(format!("Hello, {} (from the task){again}", elicited(&answer)))
}

/// The values that start with what was typed.
fn starting_with(values: &[&str], typed: &str) -> Vec<String> {
    values.iter().filter(|v| v.starts_with(typed)).map(|v| v.to_string()).collect()
}
