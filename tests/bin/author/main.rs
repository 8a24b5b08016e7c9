//! A server written the way a tool author writes one (the README's first-tool shape), with the
//! mistakes authors make, for the end-to-end tests of `tests/authors.rs`. `AUTHOR_MODE` picks:
//!
//! - unset: a plain `fn main` with `Registry::builder().registered()` and `run_stdio()`;
//! - `tokio-run-stdio`: `run_stdio()` inside `#[tokio::main]` (must serve, and name
//!   `serve_stdio().await`);
//! - `tokio-current-thread-run-stdio`: the same in `#[tokio::main(flavor = "current_thread")]`;
//! - `tokio-serve-stdio`: `serve_stdio().await` inside `#[tokio::main]` (the form that works);
//! - `no-tools`: the `.registered()` call forgotten (a server with no tools);
//! - `bad-registry`: an invalid hand-built tool, the registry error met by `.expect(...)`;
//! - `code-policy`: the policy fixed in code (`.policy(Policy::new(WorkspaceWrite))`), which
//!   ignores the `TEAAGENT_*` variables and the configuration files (`tests/library_policy.rs`);
//! - `workspace`: a server with a workspace (`AUTHOR_ROOT`), whose `.teaagent/config.toml` may
//!   tighten the policy;
//! - `serve-streams`, `serve-streams-environment`: `Server::serve` on stdin/stdout (the form for
//!   other transports and tests), which reads the environment only after
//!   `.policy_from_environment()`;
//! - `no-state`: the `.state(...)` call forgotten (tools take `State<Notes>`, the server has none);
//! - `no-state-serve-stdio`: the same with `serve_stdio().await`, its error printed by the author;
//! - `blocking-prompt`: a prompt `nap` whose async handler blocks its thread
//!   (`tests/blocking_tools.rs`).
//!
//! `delete_note` is the destructive tool of `tests/library_policy.rs`: refused in the default
//! mode unless the environment or the user's configuration allows it.
//!
//! Every other mode serves with `.state(Notes::default())`: `add_note` and `list_notes` share it.
//!
//! The `plan` tool takes nested arguments (an `Option<Enum>`, a nested object with an optional
//! enum inside, a `Bounded`) and `halve` a parameter whose decoding checks more than its schema
//! says: what the argument-error reports of `tests/argument_errors.rs` are about.

mod blocking;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use teaagent_core::{
    Bounded, CallToolResult, Handler, InputRequest, Json, PermissionMode, Policy, Registry, Server, State,
    ToolContext, ToolDef, ToolError, tool,
};

/// Echo the text back unchanged.
#[tool(read_only, idempotent, rate_limit(max_calls = 3, window_secs = 60))]
async fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// One word and where it starts.
#[derive(Serialize, JsonSchema)]
struct Word {
    /// The word.
    word: String,
    /// Its byte offset in the text.
    at: usize,
}

/// The words of a text with their offsets (a structured output that is a list).
#[tool(read_only, rate_limit(max_calls = 5, window_secs = 0.5))]
fn words(
    /// The text to split.
    text: String,
) -> Json<Vec<Word>> {
    let mut at = 0;
    let mut out = Vec::new();
    for word in text.split(' ') {
        if !word.is_empty() {
            out.push(Word { word: word.to_owned(), at });
        }
        at += word.len() + 1;
    }
    Json(out)
}

/// How many characters a text has (a structured output that is a number).
#[tool(read_only)]
fn length(
    /// The text to measure.
    text: String,
) -> Json<usize> {
    Json(text.chars().count())
}

/// A structured output that is an object: stays unwrapped.
#[derive(Serialize, JsonSchema)]
struct Stats {
    /// Characters.
    chars: usize,
}

/// The statistics of a text (a structured output that is an object).
#[tool(read_only)]
fn stats(
    /// The text to measure.
    text: String,
) -> Json<Stats> {
    Json(Stats { chars: text.chars().count() })
}

/// The notes every call shares (the server's state).
#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Vec<String>>>);

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Adds a note; answers how many there are.
#[tool]
fn add_note(
    State(notes): State<Notes>,
    /// The note's text.
    text: String,
) -> String {
    let mut notes = notes.lock();
    notes.push(text);
    format!("{} notes", notes.len())
}

/// Lists the notes, one a line (state next to the context, used through `Deref`).
#[tool(read_only)]
async fn list_notes(ctx: &ToolContext, notes: State<Notes>) -> String {
    let _ = ctx.tool();
    notes.lock().join("\n")
}

/// Picks the `n`th letter of the alphabet (a parameter bounded with `#[schemars(range)]`).
#[tool(read_only)]
fn letter(
    /// Which letter, 1-based.
    #[schemars(range(min = 1, max = 26))]
    n: u8,
    /// Upper case?
    #[schemars(extend("default" = false))]
    upper: Option<bool>,
) -> String {
    let c = char::from(b'a' + n.saturating_sub(1));
    if upper.unwrap_or(false) { c.to_ascii_uppercase().to_string() } else { c.to_string() }
}

/// How urgent a task is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    Medium,
    High,
}

/// A part of the day.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Slot {
    /// Before noon.
    Morning,
    /// After six in the evening.
    Evening,
}

/// When a task is due.
#[derive(Debug, Deserialize, JsonSchema)]
struct Due {
    /// Days from today.
    days: u32,
    /// The part of that day, if it matters.
    at: Option<Slot>,
}

/// Plan a task (nested arguments: an optional enum, an object with an optional enum inside).
#[tool(read_only)]
fn plan(
    /// What to do.
    #[schemars(length(min = 1))]
    title: String,
    /// How urgent (default `medium`).
    priority: Option<Priority>,
    /// When it is due.
    due: Due,
    /// How many times (1 to 10, default 1).
    repeat: Option<Bounded<1, 10>>,
) -> String {
    let when = match due.at {
        Some(slot) => format!("in {} days ({slot:?})", due.days),
        None => format!("in {} days", due.days),
    };
    let times = repeat.map_or(1, Bounded::get);
    format!("{title}: {:?}, {when}, {times}×", priority.unwrap_or(Priority::Medium))
}

/// An even number: the schema says "an integer", decoding says more (a check the schema cannot
/// state, so it is met after schema validation).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(try_from = "u32")]
struct Even(u32);

impl TryFrom<u32> for Even {
    type Error = String;

    fn try_from(n: u32) -> Result<Self, String> {
        if n.is_multiple_of(2) { Ok(Even(n)) } else { Err(format!("{n} is odd; pass an even number")) }
    }
}

/// How many distinct numbers a set has (`uniqueItems` in its schema: a long set must be checked
/// in linear time).
#[tool(read_only)]
fn count_distinct(
    /// The numbers, each once.
    numbers: std::collections::HashSet<u64>,
) -> String {
    numbers.len().to_string()
}

/// Halve an even number.
#[tool(read_only)]
fn halve(
    /// The number to halve.
    n: Even,
) -> String {
    (n.0 / 2).to_string()
}

/// Delete a note for good (destructive: needs an approval in the default mode).
#[tool(destructive)]
async fn delete_note(
    /// The note's title.
    title: String,
) -> String {
    format!("deleted {title}")
}

/// What an author's structured output commonly holds: fields left out when empty, a field
/// written as `null`, a default, a flattened part and an enum (`tests/sdk_clients.rs`,
/// `tests/structured_output.rs`: the SDK clients and the test kit must accept it).
#[derive(Serialize, JsonSchema)]
struct Profile {
    /// The name.
    name: String,
    /// A nickname, left out when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    nickname: Option<String>,
    /// Tags, left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    /// An email, written as `null` when unknown.
    email: Option<String>,
    /// The score (always written).
    #[serde(default)]
    score: u32,
    /// The kind.
    kind: Kind,
    /// Where it lives, flattened into the profile.
    #[serde(flatten)]
    place: Place,
}

/// What kind of profile.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    /// A person.
    Person,
    /// A team.
    Team,
}

/// A place.
#[derive(Serialize, JsonSchema)]
struct Place {
    /// The city.
    city: String,
    /// The country, left out when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    country: Option<String>,
}

/// A profile, with every optional part left out unless `full`.
#[tool(read_only)]
fn profile(
    /// Fill every optional field.
    full: bool,
) -> Json<Profile> {
    Json(Profile {
        name: "Ada".into(),
        nickname: full.then(|| "ada".into()),
        tags: if full { vec!["math".into()] } else { Vec::new() },
        email: full.then(|| "ada@example.com".into()),
        score: 3,
        kind: if full { Kind::Team } else { Kind::Person },
        place: Place { city: "London".into(), country: full.then(|| "UK".into()) },
    })
}

/// An output whose schema lies: it says `count` is an integer, the value is a string.
#[derive(Serialize, JsonSchema)]
struct Mislabeled {
    /// A count (declared as an integer, serialized as text).
    #[schemars(with = "u64")]
    count: String,
}

/// A tool whose structured output breaks its own schema (an author's mistake on purpose).
#[tool(read_only)]
fn mislabeled() -> Json<Mislabeled> {
    Json(Mislabeled { count: "three".into() })
}

/// The schema of a question asking for a name.
fn name_form() -> serde_json::Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

/// Greet the user by name, asking it when the client can answer; a guest otherwise (the tool
/// handles a client that cannot be asked: its result stands).
#[tool(read_only)]
async fn greet(ctx: &ToolContext) -> String {
    match ctx.ask("name", InputRequest::elicit("What is your name?", name_form())).await {
        Ok(answer) => format!("hello, {}", answer["content"]["name"].as_str().unwrap_or("stranger")),
        Err(_) => "hello, guest".to_owned(),
    }
}

/// Greet the user by name; a client that cannot be asked ends the call (`?`: `-32021`).
#[tool(read_only)]
async fn greet_by_name(ctx: &ToolContext) -> Result<String, ToolError> {
    let answer = ctx.ask("name", InputRequest::elicit("What is your name?", name_form())).await?;
    Ok(format!("hello, {}", answer["content"]["name"].as_str().unwrap_or("stranger")))
}

fn registry() -> Registry {
    Registry::builder().registered().build().expect("valid tools")
}

fn server() -> Server {
    Server::new(registry()).state(Notes::default())
}

#[tokio::main]
async fn tokio_run_stdio() -> ExitCode {
    server().run_stdio()
}

#[tokio::main(flavor = "current_thread")]
async fn tokio_current_thread_run_stdio() -> ExitCode {
    server().run_stdio()
}

#[tokio::main]
async fn tokio_serve_stdio(server: Server) -> ExitCode {
    teaagent_core::logging::init("info");
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// `Server::serve` over this process's stdin and stdout.
#[tokio::main(flavor = "current_thread")]
async fn serve_streams(server: Server) -> ExitCode {
    teaagent_core::logging::init("info");
    let shutdown = tokio_util::sync::CancellationToken::new();
    match server.serve(tokio::io::stdin(), tokio::io::stdout(), shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    match std::env::var("AUTHOR_MODE").unwrap_or_default().as_str() {
        "tokio-run-stdio" => tokio_run_stdio(),
        "tokio-current-thread-run-stdio" => tokio_current_thread_run_stdio(),
        "tokio-serve-stdio" => tokio_serve_stdio(server()),
        "no-state" => Server::new(registry()).run_stdio(),
        "no-state-serve-stdio" => tokio_serve_stdio(Server::new(registry())),
        // A common slip: the state given wrapped in an `Arc`, where the tools take `State<Notes>`.
        "arc-state" => Server::new(registry()).state(std::sync::Arc::new(Notes::default())).run_stdio(),
        "no-tools" => Server::new(Registry::builder().build().expect("valid tools")).run_stdio(),
        "bad-registry" => {
            let bad = ToolDef::builder("bad name")
                .description("A tool whose name has a space.")
                .input_schema(json!({"type": "object", "properties": {}}))
                .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
                .build();
            Server::new(Registry::builder().tool(bad).build().expect("valid tools")).run_stdio()
        }
        "code-policy" => server().policy(Policy::new(PermissionMode::WorkspaceWrite)).run_stdio(),
        // A server with a name of its own: its settings file is `servers/author-notes.toml`.
        "named" => server().server_info("author-notes", "1.0.0").run_stdio(),
        "workspace" => {
            let root = std::env::var_os("AUTHOR_ROOT").unwrap_or_else(|| ".".into());
            let workspace = teaagent_core::Workspace::open(root).expect("a workspace");
            server().workspace(workspace).run_stdio()
        }
        "blocking-prompt" => server().prompts(blocking::prompts()).run_stdio(),
        "misspelled-completer" => server().prompts(blocking::misspelled_completer()).run_stdio(),
        "serve-streams" => serve_streams(server()),
        "serve-streams-environment" => serve_streams(server().policy_from_environment()),
        _ => server().run_stdio(),
    }
}
