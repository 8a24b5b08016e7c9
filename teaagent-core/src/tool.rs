//! What a tool is: its definition (name, description, schemas, annotations, tier, rate limit,
//! parameter roles, handler) and the context a running call gets.
//!
//! The `#[tool]` attribute generates a [`ToolDef`]; until then (and in tests) definitions are
//! written by hand with [`ToolDef::builder`]. A definition is checked when a
//! [`Registry`](crate::Registry) is built, never per request.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::BoxFuture;
use crate::error::Error;
use crate::mcp::{CallToolResult, JsonObject};

pub(crate) mod board;
mod bounded;
mod context;
pub(crate) mod escalation;
pub mod inputs;
mod output;
pub(crate) mod prepared;
pub mod state;

pub use bounded::Bounded;
pub use context::ToolContext;
pub use inputs::{ClientCapability, InputError, InputRequest};
pub use output::{IntoToolOutput, Json, ToolError};
pub use state::{MissingState, State, StateNeed};

pub use crate::mcp::{Behavior, Tier};

/// At most `max_calls` admitted calls in any window of `window` (sliding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls admitted per window (at least 1).
    pub max_calls: u32,
    /// The window (positive).
    pub window: Duration,
}

/// The role of a parameter that policy and confinement look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamRole {
    /// Names a workspace path: confined before the body runs; grants match its normalised form.
    Path,
    /// A shell command line: grants match it by prefix.
    Command,
}

/// How the policy checks the arguments of a tool whose arguments go to another program (an
/// external server's, `crate::gateway`): its `Path` arguments (a string, or a list of strings)
/// are resolved in the workspace for the policy to match but passed on as given, never confined
/// (a path outside the workspace is the other program's business); and the arguments whose role
/// could not be established are named, so that a deny rule with an argument that names the tool
/// refuses it rather than miss what it cannot see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ForeignArgs {
    /// The arguments its schema declares: one a call adds beyond them is not checked.
    pub(crate) known: Vec<String>,
    /// Declared arguments that may hold a path or a command line, but whose role is not known.
    pub(crate) unchecked: Vec<String>,
}

/// A tool defined by `#[tool]`: the attribute implements this for a type of the same name as the
/// function, so a registry can list it explicitly with `RegistryBuilder::add::<name>()`.
pub trait DefineTool {
    /// The tool's definition (schemas built now, once).
    fn tool_def() -> ToolDef;
}

/// A tool's future: its result, or a framework error (bad arguments, refused path, ...).
pub type ToolFuture = BoxFuture<'static, Result<CallToolResult, Error>>;

/// Runs one call of a tool with the (validated) arguments object.
#[derive(Clone)]
pub struct Handler {
    run: Arc<dyn Fn(ToolContext, JsonObject) -> ToolFuture + Send + Sync>,
    /// Made by [`Handler::blocking`]: each call runs on the blocking thread pool.
    blocking: bool,
}

impl Handler {
    /// A handler from an async function.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(ToolContext, JsonObject) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, Error>> + Send + 'static,
    {
        Handler { run: Arc::new(move |ctx, args| Box::pin(f(ctx, args))), blocking: false }
    }

    /// A handler from a blocking function: it runs on the blocking thread pool so it never
    /// stalls the runtime's workers (a panic inside still reaches the caller as a panic).
    pub fn blocking<F>(f: F) -> Self
    where
        F: Fn(ToolContext, JsonObject) -> Result<CallToolResult, Error> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let handler = Handler::new(move |ctx, args| {
            let f = Arc::clone(&f);
            async move {
                // The request's log level goes along to the blocking thread (`logging`).
                match tokio::task::spawn_blocking(crate::logging::in_request_scope(move || f(ctx, args)))
                    .await
                {
                    Ok(result) => result,
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    Err(e) => Err(Error::Internal { details: e.to_string() }),
                }
            }
        });
        Handler { blocking: true, ..handler }
    }

    /// Starts one call.
    pub fn call(&self, ctx: ToolContext, args: JsonObject) -> ToolFuture {
        (self.run)(ctx, args)
    }

    /// Whether each call runs on the blocking thread pool ([`Handler::blocking`]).
    pub fn is_blocking(&self) -> bool {
        self.blocking
    }
}

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Handler")
    }
}

/// A tool's complete definition.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub(crate) name: Cow<'static, str>,
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) input_schema: Value,
    /// The input schema is the author's as written ([`ToolDefBuilder::input_schema_as_written`]):
    /// it may name its dialect with `$schema`.
    pub(crate) schema_as_written: bool,
    pub(crate) output_schema: Option<Value>,
    /// The schemas arguments and results are checked against, when they are not the ones shown
    /// (an external server's schema in another dialect, rewritten by [`crate::schema::dialect`]).
    pub(crate) checked_schemas: Option<(Value, Option<Value>)>,
    pub(crate) behavior: Behavior,
    pub(crate) tier: Option<Tier>,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) params: Vec<(Cow<'static, str>, ParamRole)>,
    /// The state types the handler takes ([`State`]), checked against the server's before serving.
    pub(crate) states: Vec<StateNeed>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) origin: Cow<'static, str>,
    pub(crate) handler: Option<Handler>,
    /// Set for a tool whose arguments go to another program ([`ForeignArgs`]).
    pub(crate) foreign: Option<ForeignArgs>,
    /// Whether it runs as a task for a client that supports tasks (`#[tool(task)]`).
    pub(crate) task: crate::mcp::tasks::TaskSupport,
    /// When its call becomes a task (`#[tool(task_start = "body")]`).
    pub(crate) task_start: crate::mcp::tasks::TaskStart,
    /// What a registry derives from it, when derived before the registry was built.
    pub(crate) prepared: prepared::PreparedSlot,
}

impl ToolDef {
    /// Starts a definition. `origin` says where it was defined (shown when two tools share a
    /// name), e.g. `concat!(module_path!(), "::echo")`.
    pub fn builder(name: impl Into<Cow<'static, str>>) -> ToolDefBuilder {
        ToolDefBuilder(ToolDef {
            name: name.into(),
            title: None,
            description: Cow::Borrowed(""),
            input_schema: Value::Null,
            schema_as_written: false,
            output_schema: None,
            checked_schemas: None,
            behavior: Behavior::default(),
            tier: None,
            rate_limit: None,
            params: Vec::new(),
            states: Vec::new(),
            timeout: None,
            origin: Cow::Borrowed("(unknown origin)"),
            handler: None,
            foreign: None,
            task: crate::mcp::tasks::TaskSupport::Forbidden,
            task_start: crate::mcp::tasks::TaskStart::Call,
            prepared: prepared::PreparedSlot::default(),
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as kept (borrowed for a tool defined in code: cloning it allocates nothing).
    pub(crate) fn name_cow(&self) -> Cow<'static, str> {
        self.name.clone()
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The display title.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The input schema.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// Whether the input schema is kept as its author wrote it
    /// ([`ToolDefBuilder::input_schema_as_written`]).
    pub fn input_schema_is_as_written(&self) -> bool {
        self.schema_as_written
    }

    /// The output schema, for structured output.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The schema arguments are checked against: the input schema, or its 2020-12 rewrite.
    pub(crate) fn checked_input_schema(&self) -> &Value {
        self.checked_schemas.as_ref().map_or(&self.input_schema, |(input, _)| input)
    }

    /// The schema results are checked against: the output schema, or its 2020-12 rewrite.
    pub(crate) fn checked_output_schema(&self) -> Option<&Value> {
        match &self.checked_schemas {
            Some((_, output)) => output.as_ref(),
            None => self.output_schema.as_ref(),
        }
    }

    /// The behaviour flags.
    pub fn behavior(&self) -> Behavior {
        self.behavior
    }

    /// The tier, defaults applied.
    pub fn tier(&self) -> Tier {
        self.tier.unwrap_or_else(|| Tier::default_for(self.behavior))
    }

    /// The declared rate limit.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
    }

    /// How the arguments of a tool of another program are checked, if it is one.
    pub(crate) fn foreign(&self) -> Option<&ForeignArgs> {
        self.foreign.as_ref()
    }

    /// The parameters that have a role, in declaration order.
    pub fn param_roles(&self) -> impl Iterator<Item = (&str, ParamRole)> {
        self.params.iter().map(|(n, r)| (n.as_ref(), *r))
    }

    /// The state types the tool takes ([`State`]), in declaration order. A server refuses to
    /// start when it was not given one of them ([`MissingState`]).
    pub fn state_needs(&self) -> impl Iterator<Item = StateNeed> + '_ {
        self.states.iter().copied()
    }

    /// The tool's own timeout, if it declares one.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Whether the tool runs as a task (README, "Long-running tools as tasks").
    pub fn task_support(&self) -> crate::mcp::tasks::TaskSupport {
        self.task
    }

    /// When a call of it becomes a task ([`TaskStart`](crate::TaskStart)).
    pub fn task_start(&self) -> crate::mcp::tasks::TaskStart {
        self.task_start
    }

    /// Where the tool was defined.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The handler (always present in a registry).
    pub fn handler(&self) -> Option<&Handler> {
        self.handler.as_ref()
    }

    /// The annotations as sent on the wire.
    pub fn annotations(&self) -> crate::mcp::ToolAnnotations {
        let b = self.behavior;
        crate::mcp::ToolAnnotations {
            title: self.title.as_ref().map(|t| t.to_string()),
            read_only_hint: b.read_only,
            destructive_hint: b.destructive,
            idempotent_hint: b.idempotent,
            open_world_hint: b.open_world,
            read_only: b.read_only,
            destructive: b.destructive,
            idempotent: b.idempotent,
            stateful: b.stateful,
            security_tier: self.tier(),
            rate_limit: self.rate_limit.map(|limit| crate::mcp::ToolRateLimit {
                max_calls: limit.max_calls,
                window_seconds: limit.window.as_secs_f64(),
            }),
        }
    }

    /// The `tools/list` entry. Schemas that are not objects are left out here; the registry
    /// refuses such definitions before any listing is made.
    pub fn to_tool(&self) -> crate::mcp::Tool {
        let entry = self.tool_entry();
        crate::mcp::Tool {
            name: entry.name,
            title: entry.title,
            description: entry.description,
            input_schema: entry.input_schema.as_object().cloned().unwrap_or_default(),
            output_schema: entry.output_schema.and_then(|s| s.as_object().cloned()),
            annotations: entry.annotations,
            execution: entry.execution,
        }
    }

    /// The `tools/list` entry with its schemas borrowed (the registry serialises each entry once
    /// and needs no copy of them); an output schema that is not an object is left out.
    pub(crate) fn tool_entry(&self) -> crate::mcp::Tool<&Value> {
        crate::mcp::Tool {
            name: self.name.to_string(),
            title: self.title.as_ref().map(|t| t.to_string()),
            description: self.description.to_string(),
            input_schema: &self.input_schema,
            output_schema: self.output_schema.as_ref().filter(|s| s.is_object()),
            annotations: self.annotations(),
            execution: match self.task {
                crate::mcp::tasks::TaskSupport::Forbidden => None,
                support => Some(serde_json::json!({ "taskSupport": support })),
            },
        }
    }
}

/// Builds a [`ToolDef`] by hand.
#[derive(Debug)]
pub struct ToolDefBuilder(ToolDef);

impl ToolDefBuilder {
    /// The description (required).
    pub fn description(mut self, d: impl Into<Cow<'static, str>>) -> Self {
        self.0.description = d.into();
        self
    }
    /// A display title.
    pub fn title(mut self, t: impl Into<Cow<'static, str>>) -> Self {
        self.0.title = Some(t.into());
        self
    }
    /// The input schema (a JSON object schema with `type: object` and `properties`).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.0.input_schema = schema;
        self.0.schema_as_written = false;
        self
    }
    /// The input schema exactly as written, for a tool whose schema uses what the generated ones
    /// leave out (the [`schema`](crate::schema) module docs): `$schema` (JSON Schema 2020-12, the
    /// one dialect the validator speaks), `$defs` with `$ref` and `$anchor`, `allOf`/`anyOf`/
    /// `oneOf`, `if`/`then`/`else`. `tools/list` shows it verbatim and every call is validated
    /// against it; the registry still requires an object schema (`type: object` with
    /// `properties`) that its validator can compile, and checks its `x-mcp-header` annotations
    /// ([`crate::schema::headers`]). Clients that choke on `$ref` or `$defs` (the module docs
    /// name some) are the author's to consider. `#[tool(input_schema = path::to::fn)]` does this
    /// with the `Value` that function returns.
    ///
    /// ```
    /// use serde_json::json;
    /// use teaagent_core::{CallToolResult, Handler, Registry, ToolDef};
    ///
    /// let schema = json!({
    ///     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///     "type": "object",
    ///     "$defs": {"city": {"$anchor": "city", "type": "string", "minLength": 1}},
    ///     "properties": {"from": {"$ref": "#/$defs/city"}, "to": {"$ref": "#/$defs/city"}},
    ///     "required": ["from"],
    ///     "additionalProperties": false
    /// });
    /// let route = ToolDef::builder("route")
    ///     .description("Plan a route.")
    ///     .input_schema_as_written(schema.clone())
    ///     .handler(Handler::new(|_ctx, _args| async { Ok(CallToolResult::text("ok")) }))
    ///     .build();
    /// let registry = Registry::builder().tool(route).build().expect("a valid registry");
    /// assert_eq!(registry.listing()[0]["inputSchema"], schema);
    /// let mut args = json!({"from": ""}).as_object().cloned().unwrap_or_default();
    /// assert!(registry.check_arguments("route", &mut args).is_err(), "validated with `$defs`");
    /// ```
    pub fn input_schema_as_written(mut self, schema: Value) -> Self {
        self.0.input_schema = schema;
        self.0.schema_as_written = true;
        self
    }
    /// The output schema of structured results.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.0.output_schema = Some(schema);
        self
    }
    /// Checks arguments and results against these schemas instead of the ones shown (an
    /// external server's schemas rewritten into 2020-12 by [`crate::schema::dialect`]).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn checked_as(mut self, input: Value, output: Option<Value>) -> Self {
        self.0.checked_schemas = Some((input, output));
        self
    }
    /// Marks the tool's arguments as going to another program ([`ForeignArgs`]).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn foreign(mut self, args: ForeignArgs) -> Self {
        self.0.foreign = Some(args);
        self
    }
    /// Behaviour flags.
    pub fn behavior(mut self, b: Behavior) -> Self {
        self.0.behavior = b;
        self
    }
    /// An explicit tier.
    pub fn tier(mut self, t: Tier) -> Self {
        self.0.tier = Some(t);
        self
    }
    /// A rate limit.
    pub fn rate_limit(mut self, max_calls: u32, window: Duration) -> Self {
        self.0.rate_limit = Some(RateLimit { max_calls, window });
        self
    }
    /// Marks a parameter with a role.
    pub fn param_role(mut self, name: impl Into<Cow<'static, str>>, role: ParamRole) -> Self {
        self.0.params.push((name.into(), role));
        self
    }
    /// Declares that the handler reads the server's state of type `T` (with
    /// [`ToolContext::state`]): a server not given one ([`Server::state`](crate::Server::state))
    /// refuses to start, naming this tool, so the handler's lookup cannot fail at call time.
    /// The `#[tool]` attribute declares this for every [`State`] parameter. Declaring a type
    /// twice is the same as once.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use teaagent_core::{CallToolResult, Handler, ToolDef};
    ///
    /// #[derive(Clone)]
    /// struct Greeting(Arc<str>);
    ///
    /// let def = ToolDef::builder("greet")
    ///     .description("Greets")
    ///     .input_schema(serde_json::json!({"type": "object", "properties": {}}))
    ///     .needs_state::<Greeting>()
    ///     .handler(Handler::new(|ctx, _args| async move {
    ///         // Present: the server checked it before serving.
    ///         let text = ctx.state::<Greeting>().map_or("hello", |g| &*g.0).to_owned();
    ///         Ok(CallToolResult::text(text))
    ///     }))
    ///     .build();
    /// assert_eq!(def.state_needs().count(), 1);
    /// ```
    pub fn needs_state<T: Clone + Send + Sync + 'static>(mut self) -> Self {
        let need = StateNeed::of::<T>();
        if !self.0.states.contains(&need) {
            self.0.states.push(need);
        }
        self
    }
    /// The tool's own timeout.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.0.timeout = Some(t);
        self
    }
    /// Runs the tool as a task for a client that supports tasks: the call is answered at once
    /// with a handle and the tool runs on (`#[tool(task)]`, `#[tool(task = "required")]`). The
    /// tool's code is the same either way.
    pub fn task(mut self, support: crate::mcp::tasks::TaskSupport) -> Self {
        self.0.task = support;
        self
    }
    /// When a call becomes a task (`#[tool(task_start = "body")]`): before the body runs (the
    /// default), or when the body calls
    /// [`ToolContext::continue_as_task`](crate::ToolContext::continue_as_task) (see
    /// [`TaskStart`](crate::TaskStart)). Only for a tool that runs as a task
    /// ([`ToolDefBuilder::task`]); the registry refuses it on any other.
    pub fn task_start(mut self, start: crate::mcp::tasks::TaskStart) -> Self {
        self.0.task_start = start;
        self
    }
    /// Where the tool was defined.
    pub fn origin(mut self, o: impl Into<Cow<'static, str>>) -> Self {
        self.0.origin = o.into();
        self
    }
    /// The handler (required).
    pub fn handler(mut self, h: Handler) -> Self {
        self.0.handler = Some(h);
        self
    }
    /// The definition; the registry checks it when built.
    pub fn build(self) -> ToolDef {
        self.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;

    /// Adds to the shared counter.
    #[crate::tool(unregistered)]
    pub(crate) fn bump(
        State(counter): State<Arc<std::sync::atomic::AtomicU32>>,
        /// How much to add.
        by: u32,
    ) -> String {
        (counter.fetch_add(by, std::sync::atomic::Ordering::SeqCst) + by).to_string()
    }

    fn text(result: &crate::CallToolResult) -> String {
        serde_json::to_value(result).map(|v| v["content"][0]["text"].to_string()).unwrap_or_default()
    }

    #[tokio::test]
    async fn a_tool_gets_the_state_of_its_context_and_says_what_is_missing_without_it() {
        use crate::DefineTool;
        let def = bump::tool_def();
        let needs: Vec<_> = def.state_needs().collect();
        assert_eq!(needs, [StateNeed::of::<Arc<std::sync::atomic::AtomicU32>>()]);
        assert!(def.input_schema()["properties"].get("counter").is_none());
        let handler = def.handler().cloned().expect("a handler");
        let args = |by: u32| serde_json::json!({ "by": by }).as_object().cloned().unwrap_or_default();

        // A context made by hand without the state: an error naming it and the two ways to give it.
        let err = handler.call(crate::ToolContext::detached("bump"), args(1)).await.expect_err("no state");
        let message = err.to_string();
        assert!(
            message.contains("tool `bump` takes `State<alloc::sync::Arc<core::sync::atomic::AtomicU32>>`"),
            "{message}"
        );
        assert!(message.contains("ToolContext::with_state(value)"), "{message}");

        // With it, every call shares the one value.
        let counter = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let ctx = crate::ToolContext::detached("bump").with_state(Arc::clone(&counter));
        assert_eq!(text(&handler.call(ctx.clone(), args(2)).await.expect("ran")), "\"2\"");
        assert_eq!(text(&handler.call(ctx, args(3)).await.expect("ran")), "\"5\"");
        assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 5);
    }
}
