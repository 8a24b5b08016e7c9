//! The tool registry: every tool definition, checked once when built, with the `tools/list`
//! entries serialised once for all sessions.
//!
//! ```
//! use teaagent_core::{CallToolResult, Handler, Registry, ToolDef};
//! use serde_json::json;
//!
//! let echo = ToolDef::builder("echo")
//!     .description("Echo the text back.")
//!     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
//!     .handler(Handler::new(|_ctx, args| async move {
//!         Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default()))
//!     }))
//!     .build();
//! let registry = Registry::builder().tool(echo).build().expect("a valid registry");
//! assert_eq!(registry.len(), 1);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::cursor::{Cursor, fingerprint};
use crate::error::{ArgumentError, Error};
use crate::mcp::{CallToolResult, JsonObject};
use crate::schema::Validator;
use crate::schema::headers::HeaderParam;
use crate::schema::validate::lookup::member;
use crate::tool::ToolDef;

mod check;
mod output;
mod prepare;
pub(crate) mod registration;
pub use check::is_valid_tool_name;
pub use output::{OUTPUT_MISMATCH_REASON, OutputMismatch};
use prepare::prepare;
#[cfg(feature = "gateway")]
pub(crate) use prepare::prepare_alone;

/// Each tool's place by its name. Every call looks its tool up here by the name the client
/// chose, so the hash is foldhash's: a few instructions for a short name where std's SipHash took
/// ~160 a call. It is seeded per process (address-space randomization and the clock), so names
/// that collide cannot be written down in advance; a client's name only looks up, and the names
/// stored are the server's tools and its external servers' listed ones (bounded in number). No
/// new crate: serde_json already builds foldhash.
type ByName = HashMap<String, usize, foldhash::fast::RandomState>;

/// The checked, immutable set of tools a server offers.
#[derive(Debug, Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

struct Inner {
    tools: Vec<Arc<ToolDef>>,
    /// Each tool's input-schema validator (same order as `tools`), compiled when the registry
    /// was built.
    validators: Vec<Validator>,
    /// Each tool's output-schema validator, for tools with an `outputSchema` (same order).
    outputs: Vec<Option<Validator>>,
    /// Whether a tool's mismatching output was already logged (once per tool).
    warned: Vec<AtomicBool>,
    /// Each tool's arguments mirrored into headers (same order as `tools`).
    headers: Vec<Vec<HeaderParam>>,
    by_name: ByName,
    /// `tools/list` entries, serialised once.
    listing: Vec<Box<RawValue>>,
    fingerprint: u64,
}

/// Collects definitions; [`RegistryBuilder::build`] checks them all.
#[derive(Debug, Default)]
pub struct RegistryBuilder {
    defs: Vec<ToolDef>,
}

/// Why a registry could not be built: every problem found, not just the first.
///
/// Its `Debug` form is its `Display` form (one problem a line), because `Debug` is what users
/// see most: `.build().expect("...")`, `.unwrap()` and `fn main() -> Result<_, RegistryError>`
/// print it, and a `RegistryError { problems: ["...", ...] }` on one line with escaped quotes
/// is hard to read. The problems stay reachable as the `problems` field.
#[derive(Clone, PartialEq, thiserror::Error)]
#[error("invalid tool registry:\n{}", problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct RegistryError {
    /// Each problem, in definition order.
    pub problems: Vec<String>,
}

impl fmt::Debug for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("tools", &self.tools).finish_non_exhaustive()
    }
}

impl Registry {
    /// Checks a call's arguments against the tool's input schema (compiled once, when the
    /// registry was built) and reports every violation with its JSON pointer. `null` given for an
    /// optional property means "absent" (models often send it) and is removed first.
    pub fn check_arguments(&self, tool: &str, args: &mut JsonObject) -> Result<(), Vec<ArgumentError>> {
        match self.position(tool) {
            Some(at) => self.check_arguments_at(at, args),
            None => Ok(()),
        }
    }

    /// Where the tool called `name` is, for the `_at` methods: a call's pipeline looks its tool up
    /// once.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.inner.by_name.get(name).copied()
    }

    /// The tool at `at` (a [`Registry::position`]).
    pub(crate) fn at(&self, at: usize) -> &Arc<ToolDef> {
        &self.inner.tools[at]
    }

    /// [`Registry::check_arguments`] of the tool at `at` (a [`Registry::position`]).
    pub(crate) fn check_arguments_at(
        &self,
        at: usize,
        args: &mut JsonObject,
    ) -> Result<(), Vec<ArgumentError>> {
        let validator = &self.inner.validators[at];
        let schema = self.inner.tools[at].input_schema().as_object();
        let required = schema.and_then(|s| member(s, "required")).and_then(Value::as_array);
        args.retain(|key, value| !value.is_null() || required.is_some_and(|r| r.iter().any(|k| k == key)));
        let instance = Value::Object(std::mem::take(args));
        // A valid call (nearly every call) is one pass; only a refused one builds the report.
        // Both under a work budget: a value that makes validation blow up is refused, never
        // accepted or checked for minutes (`schema::validate`, "Bounded work").
        let checked = crate::schema::validate::within(&instance, || {
            if validator.is_valid(&instance) {
                Vec::new()
            } else {
                crate::schema::argument_errors(validator, &instance)
            }
        });
        let errors = checked.unwrap_or_else(|_| {
            vec![ArgumentError::new(
                "",
                "the arguments are too complex to check (nested too deeply, or with too many \
                 alternatives to try at once): send a smaller or shallower value",
            )]
        });
        if let Value::Object(object) = instance {
            *args = object;
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    /// Checks a result against the tool's `outputSchema` (compiled once, when the registry was
    /// built), as the official SDK clients do: a tool that declares one must return
    /// `structuredContent` that satisfies it, unless the result is an error (`isError: true`).
    /// A result that breaks the tool's own schema is never sent as if it were valid: it is
    /// replaced by an `isError` result naming the tool, each JSON pointer and the likely cause
    /// ([`OutputMismatch`]), and the first mismatch of each tool is logged on stderr.
    ///
    /// Returns whether the result was replaced.
    pub fn check_output(&self, tool: &str, result: &mut CallToolResult) -> bool {
        let Some(&i) = self.inner.by_name.get(tool) else { return false };
        let Some(validator) = &self.inner.outputs[i] else { return false };
        if result.is_error {
            return false;
        }
        let problems = match &result.structured_content {
            None => vec![ArgumentError {
                pointer: String::new(),
                message: "missing: the tool declares an `outputSchema`, so a result that is not an \
                          error must carry `structuredContent`"
                    .into(),
            }],
            Some(value) => {
                let checked = crate::schema::validate::within(value, || {
                    if validator.is_valid(value) {
                        Vec::new()
                    } else {
                        crate::schema::argument_errors(validator, value)
                    }
                });
                match checked {
                    Ok(problems) => problems,
                    Err(_) => vec![ArgumentError::new("", "too complex to check against the output schema")],
                }
            }
        };
        if problems.is_empty() {
            return false;
        }
        let mismatch = OutputMismatch { tool: tool.to_owned(), problems };
        if !self.inner.warned[i].swap(true, Ordering::Relaxed) {
            tracing::warn!(
                tool = %crate::visible::escape(tool),
                "{mismatch} (logged once per tool; the client got an error result instead)"
            );
        }
        *result = CallToolResult::error(mismatch.to_string()).with_meta(mismatch.data());
        true
    }

    /// Starts an empty builder.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.inner.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.inner.tools.is_empty()
    }

    /// A tool by name.
    pub fn get(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.position(name).map(|at| self.at(at))
    }

    /// The arguments of `tool` that clients mirror into `Mcp-Param-*` headers (its input
    /// schema's `x-mcp-header` annotations, [`crate::schema::headers`]); empty for an unknown tool.
    pub fn header_params(&self, tool: &str) -> &[HeaderParam] {
        self.inner.by_name.get(tool).map_or(&[], |&i| &self.inner.headers[i])
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ToolDef>> {
        self.inner.tools.iter()
    }

    /// Every `tools/list` entry as JSON, in order (what `teaagent mcp tools --json` prints).
    pub fn listing(&self) -> Vec<Value> {
        self.inner.listing.iter().map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null)).collect()
    }

    /// One page of `tools/list` as JSON text: `{"tools":[...],"nextCursor":...}`.
    pub fn list_page(&self, cursor: Option<&str>, page_size: usize) -> Result<Box<RawValue>, Error> {
        self.list_page_where(cursor, page_size, |_| true)
    }

    /// One page of `tools/list` of the tools `shown` keeps. A cursor is a position in the whole
    /// registry, so pages stay consistent when what is shown changes between them.
    pub fn list_page_where(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        shown: impl Fn(&ToolDef) -> bool,
    ) -> Result<Box<RawValue>, Error> {
        let total = self.inner.listing.len();
        let start = match cursor {
            None => 0,
            Some(text) => {
                let c = Cursor::decode(text, "tools", self.inner.fingerprint)?;
                match c.position.parse::<usize>() {
                    Ok(n) if n > 0 && n < total => n,
                    _ => {
                        return Err(Error::InvalidParams {
                            reason: crate::error::ParamsProblem::InvalidCursor,
                            details: format!("cursor {text:?} points outside the list"),
                        });
                    }
                }
            }
        };
        let mut tools = Vec::with_capacity(page_size.min(total - start.min(total)));
        let mut next = None;
        for i in start..total {
            if !shown(&self.inner.tools[i]) {
                continue;
            }
            if tools.len() == page_size.max(1) {
                next = Some(i);
                break;
            }
            tools.push(&*self.inner.listing[i]);
        }
        let next_cursor = next.map(|position| {
            Cursor {
                list: "tools".into(),
                position: position.to_string(),
                fingerprint: self.inner.fingerprint,
            }
            .encode()
        });
        // The entries are copied as they are: serialising raw values checks nothing again (a
        // page of built-in tools is about 10 KiB, which parsing cost more than the rest of
        // `tools/list`).
        serde_json::value::to_raw_value(&Page { tools, next_cursor })
            .map_err(|e| Error::Internal { details: e.to_string() })
    }
}

/// One page of `tools/list`, as it is written.
#[derive(serde::Serialize)]
struct Page<'a> {
    tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

impl RegistryBuilder {
    /// Adds one definition.
    pub fn tool(mut self, def: ToolDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Adds a tool defined with `#[tool]`: `builder.add::<read_file>()`.
    pub fn add<T: crate::tool::DefineTool>(self) -> Self {
        self.tool(T::tool_def())
    }

    /// Adds every tool that `#[tool]` registered in the linked program (link-time registration
    /// through `inventory`), ordered by name.
    ///
    /// Tools in the binary crate are always linked. A tool in a library is linked when the
    /// program uses something of the object file it lives in; when in doubt, list library tools
    /// explicitly with [`RegistryBuilder::add`] too: the same definition listed both ways counts
    /// once (two *different* definitions of one name are still refused).
    pub fn registered(mut self) -> Self {
        let mut defs: Vec<ToolDef> = registration::registered().map(|r| (r.build)()).collect();
        defs.sort_by(|a, b| a.name().cmp(b.name()));
        self.defs.extend(defs);
        self
    }

    /// Adds several definitions.
    pub fn tools(mut self, defs: impl IntoIterator<Item = ToolDef>) -> Self {
        self.defs.extend(defs);
        self
    }

    /// Checks every definition and builds the registry. Duplicate names are refused naming both
    /// definitions; every other rule of a tool definition that a hand-written definition could break is
    /// checked here too (the `#[tool]` attribute already checks them at compile time). Every
    /// input schema is compiled here for argument validation ([`crate::schema::validate`]): a
    /// schema with a keyword the validator does not know, or a `pattern` the `regex` crate
    /// refuses, is a problem of the registry naming the tool, its origin and the keyword, so it
    /// shows when the server starts, not at the tool's first call.
    pub fn build(mut self) -> Result<Registry, RegistryError> {
        // The same definition listed twice (explicitly and by registration) counts once.
        let mut seen = std::collections::HashSet::new();
        self.defs.retain(|d| seen.insert((d.name().to_owned(), d.origin().to_owned())));
        let mut problems = Vec::new();
        let mut by_name = ByName::default();
        for (i, def) in self.defs.iter().enumerate() {
            if let Some(&first) = by_name.get(def.name()) {
                problems.push(format!(
                    "duplicate tool name `{}`: defined by `{}` and by `{}`",
                    def.name(),
                    self.defs[first].origin(),
                    def.origin()
                ));
            } else {
                by_name.insert(def.name().to_owned(), i);
            }
        }
        let mut validators = Vec::with_capacity(self.defs.len());
        let mut outputs = Vec::with_capacity(self.defs.len());
        let mut headers = Vec::with_capacity(self.defs.len());
        let mut listing = Vec::with_capacity(self.defs.len());
        for def in &mut self.defs {
            // Derived before (`prepare_alone`) or now.
            match def.prepared.take().map_or_else(|| prepare(def), Ok) {
                Ok(prepared) => {
                    validators.push(prepared.input);
                    outputs.push(prepared.output);
                    headers.push(prepared.headers);
                    listing.push(prepared.entry);
                }
                Err(found) => problems.extend(found),
            }
        }
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let fingerprint = fingerprint(listing.iter().map(|r| r.get()));
        let tools: Vec<Arc<ToolDef>> = self.defs.into_iter().map(Arc::new).collect();
        let warned = tools.iter().map(|_| AtomicBool::new(false)).collect();
        let inner = Inner { tools, validators, outputs, warned, headers, by_name, listing, fingerprint };
        Ok(Registry { inner: Arc::new(inner) })
    }
}

impl Registry {
    /// A registry with no tools.
    pub(crate) fn empty() -> Self {
        Registry {
            inner: Arc::new(Inner {
                tools: Vec::new(),
                validators: Vec::new(),
                outputs: Vec::new(),
                warned: Vec::new(),
                headers: Vec::new(),
                by_name: ByName::default(),
                listing: Vec::new(),
                fingerprint: fingerprint(std::iter::empty()),
            }),
        }
    }
}

impl fmt::Display for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(|t| t.name()).collect();
        write!(f, "{} tools: {}", names.len(), names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallToolResult;
    use crate::tool::{Behavior, Handler, ToolDefBuilder};
    use serde_json::json;

    fn def(name: &'static str, origin: &'static str) -> ToolDef {
        ToolDef::builder(name)
            .description("d")
            .origin(origin)
            .input_schema(json!({"type": "object", "properties": {}}))
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
            .build()
    }

    #[test]
    fn duplicates_name_both_definitions() {
        let err = Registry::builder().tool(def("a", "m::one")).tool(def("a", "m::two")).build();
        let err = err.expect_err("duplicate");
        assert_eq!(err.problems, vec!["duplicate tool name `a`: defined by `m::one` and by `m::two`"]);
    }

    #[test]
    fn hand_written_mistakes_are_all_reported() {
        let bad = ToolDef::builder("bad name")
            .input_schema(json!({"type": "string"}))
            .behavior(Behavior { read_only: true, destructive: true, ..Behavior::default() })
            .rate_limit(0, std::time::Duration::from_secs(1))
            .task_start(crate::TaskStart::Body)
            .build();
        let err = Registry::builder().tool(bad).build().expect_err("invalid");
        assert_eq!(err.problems.len(), 7, "{err}");
        assert!(
            err.problems.iter().any(|p| p.contains("`task_start` is for a tool that runs as a task")),
            "{err}"
        );
    }

    #[test]
    fn a_schema_the_validator_cannot_check_is_refused_at_build() {
        let with = |schema: Value| {
            ToolDef::builder("odd")
                .description("d")
                .origin("m::odd")
                .input_schema(schema)
                .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
                .build()
        };
        let typo = with(json!({"type": "object", "properties": {"n": {"type": "integer", "minimun": 1}}}));
        let err = Registry::builder().tool(typo).build().expect_err("an unknown keyword");
        assert_eq!(err.problems.len(), 1, "{err}");
        let problem = &err.problems[0];
        assert!(
            problem.starts_with("tool `odd` (m::odd): the input schema cannot be validated:"),
            "{problem}"
        );
        assert!(problem.contains("`minimun`") && problem.contains("#/properties/n"), "{problem}");
        let lookahead =
            with(json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?!x)"}}}));
        let err = Registry::builder().tool(lookahead).build().expect_err("a pattern regex refuses");
        assert!(err.problems[0].contains("look-around"), "{err}");
    }

    #[test]
    fn arguments_are_checked_with_the_compiled_schema() {
        let tool = ToolDef::builder("t")
            .description("d")
            .input_schema(json!({
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 1}, "o": {"type": "string"}},
                "required": ["n"],
                "additionalProperties": false,
            }))
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
            .build();
        let reg = Registry::builder().tool(tool).build().expect("valid");
        let mut args = json!({"n": 2.0, "o": null}).as_object().cloned().expect("object");
        assert_eq!(reg.check_arguments("t", &mut args), Ok(()));
        assert!(!args.contains_key("o"), "a null optional is absent");
        let mut args = json!({"n": 0, "x": 1}).as_object().cloned().expect("object");
        let errors = reg.check_arguments("t", &mut args).expect_err("invalid");
        let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/n", "/x"]);
    }

    fn with_schema(schema: Value) -> ToolDefBuilder {
        ToolDef::builder("t")
            .description("d")
            .origin("m::t")
            .input_schema(schema)
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
    }

    #[test]
    fn header_annotations_are_read_and_checked_at_build() {
        let good = with_schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer"}}}));
        let reg = Registry::builder().tool(good.build()).build().expect("valid");
        let params = reg.header_params("t");
        assert_eq!(
            (params.len(), params[0].property.as_str(), params[0].header.as_str()),
            (1, "region", "Region")
        );
        assert!(reg.header_params("unknown").is_empty());
        let bad = with_schema(json!({"type": "object", "properties": {
            "a": {"type": "number", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}));
        let err = Registry::builder().tool(bad.build()).build().expect_err("broken annotations");
        assert_eq!(err.problems.len(), 1, "{err}");
        assert!(err.problems[0].starts_with("tool `t` (m::t): property `a`"), "{err}");
    }

    #[test]
    fn only_a_schema_kept_as_written_names_its_dialect_and_only_2020_12() {
        let dialect = |uri: &str| json!({"$schema": uri, "type": "object", "properties": {}, "$defs": {"x": {"$anchor": "x"}}});
        let shaped = with_schema(dialect("https://json-schema.org/draft/2020-12/schema")).build();
        let err = Registry::builder().tool(shaped).build().expect_err("$schema in a shaped schema");
        assert!(err.problems[0].contains("input_schema_as_written"), "{err}");
        let written = with_schema(json!({}))
            .input_schema_as_written(dialect("https://json-schema.org/draft/2020-12/schema"))
            .build();
        let reg = Registry::builder().tool(written).build().expect("2020-12 as written");
        assert_eq!(reg.listing()[0]["inputSchema"]["$defs"]["x"]["$anchor"], "x");
        let draft7 = with_schema(json!({}))
            .input_schema_as_written(dialect("http://json-schema.org/draft-07/schema#"))
            .build();
        let err = Registry::builder().tool(draft7).build().expect_err("another dialect");
        assert!(err.problems[0].contains("2020-12 only"), "{err}");
    }

    #[test]
    fn pages_and_cursors() {
        let reg = Registry::builder().tools(["a", "b", "c"].map(|n| def(n, "here"))).build().expect("valid");
        let first: Value = serde_json::from_str(reg.list_page(None, 2).expect("page").get()).expect("json");
        assert_eq!(first["tools"].as_array().map(Vec::len), Some(2));
        let cursor = first["nextCursor"].as_str().expect("cursor");
        let second: Value =
            serde_json::from_str(reg.list_page(Some(cursor), 2).expect("page").get()).expect("json");
        assert_eq!(second["tools"][0]["name"], "c");
        assert!(second.get("nextCursor").is_none());
        assert_eq!(reg.list_page(Some("bogus"), 2).expect_err("bad").code(), -32602);
    }
}
