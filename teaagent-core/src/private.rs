//! What the `#[tool]` attribute's generated code uses. Not a public API: it changes whenever the
//! attribute does. Generated code reaches serde, serde_json, schemars and inventory only through
//! here, so a tool author needs no direct dependency on them and never hits a version skew.

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::pointer::{join_segment, push_segment};

pub use crate::error::{ArgumentError, Error};
pub use crate::mcp::tasks::{TaskStart, TaskSupport};
pub use crate::mcp::{CallToolResult, JsonObject};
pub use crate::registry::registration::{ToolRegistration, registered};
pub use crate::schema::{ObjectSchema, args_schema};
pub use crate::tool::{Behavior, Handler, IntoToolOutput, ParamRole, Tier, ToolContext, ToolDef};

/// What a tool parameter (or an `#[args]` struct) must be to be decoded. With [`ParamSchema`],
/// the two halves of "a type that can be a tool parameter": two traits so that each missing half
/// gets its own error and note (rustc shows the note of the bound that is not met).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "tool parameters must implement `Deserialize`, `JsonSchema` and `Send`",
    note = "derive them on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait ParamValue: DeserializeOwned + Send + 'static {}

impl<T: DeserializeOwned + Send + 'static> ParamValue for T {}

/// What a tool parameter (or an `#[args]` struct) must be to have a schema: schemars 1's
/// `JsonSchema`. A type that derives another version's (`schemars = "0.8"` in the author's
/// `Cargo.toml`) lands here too, hence the second note.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "tool parameters must implement `Deserialize`, `JsonSchema` and `Send`",
    note = "derive them on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`",
    note = "if you did derive `JsonSchema`, your `schemars` is not the one teaagent uses: teaagent needs schemars 1 (`schemars = \"1\"` in Cargo.toml; `cargo tree --duplicates` lists both versions)"
)]
pub trait ParamSchema: JsonSchema {}

impl<T: JsonSchema> ParamSchema for T {}

/// What the newtype that carries a parameter's `#[schemars(...)]` must be (see `codegen.rs` in
/// teaagent-macros). It derives `JsonSchema`, so it lacks one only when schemars refused the
/// attributes, with an error on them: this says so, rather than asking the author to derive
/// `JsonSchema` on a type they never wrote.
#[diagnostic::on_unimplemented(
    message = "the `#[schemars(...)]` attributes of this parameter were refused",
    label = "the error on the attribute's contents says why",
    note = "`{Self}` is the newtype `#[tool]` puts a parameter's `#[schemars(...)]` on: it has no schema while schemars refuses them"
)]
pub trait AttributedSchema: JsonSchema {}

impl<T: JsonSchema> AttributedSchema for T {}

/// One parameter: its schema and its decoding. Only [`Param::new`] requires `T: ParamValue` and
/// `T: ParamSchema`, so a parameter of the wrong type gets one error per missing half, on its type.
pub struct Param<T> {
    decode: fn(Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>>,
    schema: fn(&mut ObjectSchema, &str, Option<&str>, bool),
}

impl<T> Clone for Param<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Param<T> {}

impl<T> Param<T> {
    /// The parameter of type `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self
    where
        T: ParamValue + ParamSchema,
    {
        Param {
            decode: |v| serde_path_to_error::deserialize(v),
            schema: |s, name, description, required| s.property::<T>(name, description, required),
        }
    }

    /// The parameter of type `T`, the newtype carrying a parameter's `#[schemars(...)]`.
    pub fn with_attributes() -> Self
    where
        T: ParamValue + AttributedSchema,
    {
        Self::new()
    }

    /// Adds the parameter to the input schema.
    pub fn describe(&self, schema: &mut ObjectSchema, name: &str, description: Option<&str>, required: bool) {
        (self.schema)(schema, name, description, required);
    }
}

/// The arguments object being decoded; collects every problem before failing.
pub struct Args {
    tool: &'static str,
    object: JsonObject,
    errors: Vec<ArgumentError>,
}

impl Args {
    /// Starts decoding `object` for `tool`.
    pub fn new(tool: &'static str, object: JsonObject) -> Self {
        Self { tool, object, errors: Vec::new() }
    }

    /// A required parameter (`None` when missing or invalid; the problem is recorded).
    pub fn required<T>(&mut self, param: Param<T>, name: &str) -> Option<T> {
        match self.object.remove(name) {
            None => {
                self.errors.push(ArgumentError {
                    pointer: join_segment("", name),
                    message: format!("missing required property `{name}`"),
                });
                None
            }
            Some(value) => self.decode(param, name, value),
        }
    }

    /// An optional parameter: absent and `null` are both `None`.
    pub fn optional<T>(&mut self, param: Param<T>, name: &str) -> Option<Option<T>> {
        match self.object.remove(name) {
            None | Some(Value::Null) => Some(None),
            Some(value) => self.decode(param, name, value).map(Some),
        }
    }

    fn decode<T>(&mut self, param: Param<T>, name: &str, value: Value) -> Option<T> {
        match (param.decode)(value) {
            Ok(v) => Some(v),
            Err(e) => {
                let mut pointer = join_segment("", name);
                pointer.push_str(&pointer_of(&e));
                // serde's words may quote the value: bounded and escaped.
                self.errors.push(ArgumentError::new(pointer, e.into_inner().to_string()));
                None
            }
        }
    }

    /// Fails with every problem found, including properties no parameter takes.
    pub fn finish(mut self) -> Result<(), Error> {
        for key in self.object.keys() {
            self.errors.push(ArgumentError::new(join_segment("", key), format!("unknown property `{key}`")));
        }
        if self.errors.is_empty() {
            Ok(())
        } else {
            // In pointer order, like the schema step's report.
            self.errors.sort_by(|a, b| crate::schema::compare_pointers(&a.pointer, &b.pointer));
            Err(Error::InvalidArguments { tool: self.tool.to_owned(), errors: self.errors })
        }
    }

    /// The error for a parameter that decoded to nothing without a recorded problem (cannot
    /// happen; kept so generated code never panics).
    pub fn lost(tool: &'static str) -> Error {
        Error::Internal { details: format!("arguments of `{tool}` were lost while decoding") }
    }
}

/// The `#[args]` struct: its schema and decoding. Only [`ArgsType::new`] requires `T: ParamValue`
/// and `T: ParamSchema`, so an arguments type of the wrong kind gets its errors on its type.
pub struct ArgsType<T> {
    schema: fn() -> Value,
    decode: fn(Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>>,
}

impl<T> Clone for ArgsType<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ArgsType<T> {}

impl<T> ArgsType<T> {
    /// The arguments struct `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self
    where
        T: ParamValue + ParamSchema,
    {
        ArgsType { schema: args_schema::<T>, decode: |v| serde_path_to_error::deserialize(v) }
    }

    /// The whole input schema.
    pub fn schema(&self) -> Value {
        (self.schema)()
    }

    /// Decodes the arguments object.
    pub fn decode(&self, tool: &'static str, object: JsonObject) -> Result<T, Error> {
        (self.decode)(Value::Object(object)).map_err(|e| {
            let pointer = pointer_of(&e);
            Error::InvalidArguments {
                tool: tool.to_owned(),
                errors: vec![ArgumentError::new(pointer, e.into_inner().to_string())],
            }
        })
    }
}

fn pointer_of(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let mut pointer = String::new();
    for segment in e.path().iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => push_segment(&mut pointer, &index.to_string()),
            serde_path_to_error::Segment::Map { key } => push_segment(&mut pointer, key),
            serde_path_to_error::Segment::Enum { variant } => push_segment(&mut pointer, variant),
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    pointer
}

/// A tool's return type: its output schema and its conversion. Only [`Output::new`] requires
/// `R: IntoToolOutput`, so a bad return type gets one error, on the type.
pub struct Output<R> {
    schema: fn() -> Option<Value>,
    finish: fn(R) -> Result<CallToolResult, Error>,
}

impl<R> Clone for Output<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Output<R> {}

impl<R> Output<R> {
    /// The output of type `R`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self
    where
        R: IntoToolOutput,
    {
        Output { schema: R::output_schema, finish: R::into_tool_result }
    }

    /// The `outputSchema`, if structured.
    pub fn schema(&self) -> Option<Value> {
        (self.schema)()
    }

    /// The `tools/call` result of a returned value.
    pub fn finish(&self, value: R) -> Result<CallToolResult, Error> {
        (self.finish)(value)
    }
}

/// Shared state: what a `State<T>` parameter's `T` must be. Only for the message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shared state",
    label = "state is cloned for every call and shared between threads",
    note = "state must be `Clone + Send + Sync + 'static`: wrap it in an `Arc` (with a `Mutex` or `RwLock` for what changes) and derive `Clone`"
)]
pub trait SharedState: Clone + Send + Sync + 'static {}

impl<T: Clone + Send + Sync + 'static> SharedState for T {}

/// A parameter the attribute read as state (its type's last segment is `State`, with one type
/// argument). Only `teaagent_core::State<T>` implements it, so another type called `State` gets
/// this error on its type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not teaagent's `State<T>`",
    label = "a parameter of a type named `State<...>` receives the server's shared state",
    note = "use `teaagent_core::State<T>` (registered with `Server::new(registry).state(value)`); for an argument, give its type another name or a type alias"
)]
pub trait StateParameter: Send + 'static {
    /// The state type.
    type Value: SharedState;
    /// Wraps the value.
    fn wrap(value: Self::Value) -> Self;
}

impl<T: SharedState> StateParameter for crate::tool::State<T> {
    type Value = T;
    fn wrap(value: T) -> Self {
        crate::tool::State(value)
    }
}

/// A `State<T>` parameter: declares `T` on the definition and takes it from each call's context.
/// Only [`StateParam::new`] requires `S: StateParameter`, so a wrong type gets one error.
pub struct StateParam<S> {
    declare: fn(crate::tool::ToolDefBuilder) -> crate::tool::ToolDefBuilder,
    take: fn(&ToolContext) -> Option<S>,
    type_name: fn() -> &'static str,
}

impl<S> Clone for StateParam<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for StateParam<S> {}

impl<S> StateParam<S> {
    /// The state parameter of type `S`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self
    where
        S: StateParameter,
    {
        StateParam {
            declare: |b| b.needs_state::<S::Value>(),
            take: |ctx| ctx.state::<S::Value>().cloned().map(S::wrap),
            type_name: std::any::type_name::<S::Value>,
        }
    }

    /// Records the need on the definition (checked against the server before serving).
    pub fn declare(&self, builder: crate::tool::ToolDefBuilder) -> crate::tool::ToolDefBuilder {
        (self.declare)(builder)
    }

    /// The state for one call. Under a server it is always there (checked before serving); a
    /// context made by hand may lack it.
    pub fn take(&self, ctx: &ToolContext, tool: &str) -> Result<S, Error> {
        (self.take)(ctx).ok_or_else(|| Error::Internal {
            details: format!(
                "tool `{tool}` takes `State<{ty}>`, which this call has none of: serve it with `Server::new(registry).state(value)`, or give a context made by hand one with `ToolContext::with_state(value)`",
                ty = (self.type_name)()
            ),
        })
    }
}
