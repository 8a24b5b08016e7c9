//! The rules every tool definition meets before a registry is built ([`super::RegistryBuilder::build`]):
//! its name, description, schemas, behaviour, rate limit and handler.

use serde_json::Value;

use crate::tool::{Tier, ToolDef};

/// Whether `name` is a valid tool name: `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The `$schema` values a schema kept as written may name: the validator's dialect.
const DIALECTS: &[&str] =
    &["https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"];

pub(super) fn check(def: &ToolDef, problems: &mut Vec<String>) {
    let name = def.name();
    let mut problem = |what: String| problems.push(format!("tool `{name}` ({}): {what}", def.origin()));
    if !is_valid_tool_name(name) {
        problem("the name must match `^[A-Za-z0-9_-]{1,64}$`".into());
    }
    if def.description().trim().is_empty() {
        problem("a description is required".into());
    }
    match def.input_schema().as_object() {
        Some(o)
            if o.get("type") == Some(&Value::from("object"))
                && o.get("properties").is_some_and(Value::is_object) =>
        {
            let written = def.input_schema_is_as_written();
            match o.get("$schema") {
                None => {}
                Some(dialect) if written && DIALECTS.iter().any(|d| dialect == *d) => {}
                Some(dialect) if written => problem(format!(
                    "the input schema's `$schema` is {}: the validator speaks JSON Schema 2020-12 only (`{}`)",
                    crate::schema::preview(dialect),
                    DIALECTS[0]
                )),
                Some(_) => problem(
                    "the input schema must not carry `$schema` (clients refuse it); a schema meant to be shown as written is given with `input_schema_as_written`".into(),
                ),
            }
        }
        _ => problem("the input schema must be an object schema with `type: object` and `properties`".into()),
    }
    if let Some(out) = def.output_schema()
        && out.get("type") != Some(&Value::from("object"))
    {
        problem("the output schema must have `type: object` (MCP structured content is an object)".into());
    }
    let b = def.behavior();
    if b.read_only && b.destructive {
        problem("`read_only` contradicts `destructive`".into());
    }
    if b.read_only && b.stateful {
        problem("`read_only` contradicts `stateful`".into());
    }
    if b.read_only && def.tier() > Tier::Low {
        problem(format!("`read_only` tools must be tier `low`, not `{}`", def.tier()));
    }
    if let Some(limit) = def.rate_limit()
        && (limit.max_calls == 0 || limit.window.is_zero())
    {
        problem("a rate limit needs `max_calls` ≥ 1 and a positive window".into());
    }
    if def.handler().is_none() {
        problem("no handler".into());
    }
    if def.task_start() == crate::mcp::tasks::TaskStart::Body
        && def.task_support() == crate::mcp::tasks::TaskSupport::Forbidden
    {
        problem("`task_start` is for a tool that runs as a task: declare `task` too".into());
    }
    let properties = def.input_schema().get("properties").and_then(Value::as_object);
    for (param, _) in def.param_roles() {
        if !properties.is_some_and(|p| p.contains_key(param)) {
            problem(format!("the role of `{param}` names no property of the input schema"));
        }
    }
}
