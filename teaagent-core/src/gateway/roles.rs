//! The roles of an external tool's arguments (hardening: deny rules bind external tools too).
//!
//! A deny rule with an argument (`*:path=secrets/**`, `*:command=rm*`) can only refuse what it
//! can see: a path argument's value, a command argument's line. An external server's schema says
//! nothing about which of its arguments are paths or commands, so each argument gets a role:
//!
//! 1. **Declared** by the user, `[mcp_servers.NAME.roles]`: by tool (`"*"` for every tool of the
//!    server), then by argument (`"*"` for every argument): `"path"`, `"command"` or `"text"`
//!    (neither: the rules do not look at it).
//! 2. Else **inferred, conservatively**, from the schema: an argument that can hold no text (a
//!    number, a boolean, one of a fixed set of values) is text; one whose name or description
//!    says path (`path`, `file`, `dir`, `cwd`, `source`, `target`, `from`, `to`, …) is a path,
//!    one that says command (`command`, `cmd`, `script`, `shell`, …) a command — when its type
//!    lets the rules read it (a string, or a list of strings for a path).
//! 3. Every other argument that can hold text is **unchecked**: a deny rule with an argument
//!    that names the tool then refuses it, every call (`Policy::cannot_check`), and the server
//!    says so when it starts — fail closed. Declaring what the arguments are lifts it.
//!
//! Paths are matched where they lead in the workspace, as the built-in tools' are, but passed to
//! the external server as the model wrote them (`crate::tool::ForeignArgs`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::tool::{ForeignArgs, ParamRole};

/// What an argument of an external tool is, as the user declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRole {
    /// A path: deny rules and grants on paths match it (a string, or a list of strings).
    Path,
    /// A command line: deny rules and grants on commands match it.
    Command,
    /// Neither: the rules do not look at it.
    Text,
}

impl ArgRole {
    /// `"path"`, `"command"` or `"text"`.
    pub fn parse(text: &str) -> Option<ArgRole> {
        match text {
            "path" => Some(ArgRole::Path),
            "command" => Some(ArgRole::Command),
            "text" => Some(ArgRole::Text),
            _ => None,
        }
    }
}

/// Declared roles: by the server's own tool name (or `"*"`), then by argument (or `"*"`).
pub type DeclaredRoles = BTreeMap<String, BTreeMap<String, ArgRole>>;

/// Words of an argument's name that make it a path.
const PATH_WORDS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "filenames",
    "filepath",
    "filepaths",
    "dir",
    "dirs",
    "directory",
    "directories",
    "folder",
    "folders",
    "cwd",
    "workdir",
    "root",
    "dest",
    "destination",
    "source",
    "src",
    "target",
    "from",
    "to",
    "location",
];
/// Words of an argument's name that make it a command.
const COMMAND_WORDS: &[&str] =
    &["command", "commands", "cmd", "cmdline", "commandline", "script", "shell", "exec"];

/// The roles of the arguments of tool `tool` (the server's own name) whose input schema is
/// `schema` (module docs): `Path` and `Command` arguments, and the policy's [`ForeignArgs`].
pub(super) fn classify(
    tool: &str,
    schema: &Value,
    declared: &DeclaredRoles,
) -> (Vec<(String, ParamRole)>, ForeignArgs) {
    let mut roles = Vec::new();
    let mut foreign = ForeignArgs::default();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (arg, property) in properties.into_iter().flatten() {
        foreign.known.push(arg.clone());
        let role = declared_role(tool, arg, declared).or_else(|| inferred(arg, property));
        match role {
            Some(ArgRole::Path) => roles.push((arg.clone(), ParamRole::Path)),
            Some(ArgRole::Command) => roles.push((arg.clone(), ParamRole::Command)),
            Some(ArgRole::Text) => {}
            None => foreign.unchecked.push(arg.clone()),
        }
    }
    (roles, foreign)
}

fn declared_role(tool: &str, arg: &str, declared: &DeclaredRoles) -> Option<ArgRole> {
    let of = |t: &str| declared.get(t).and_then(|args| args.get(arg).or_else(|| args.get("*"))).copied();
    of(tool).or_else(|| of("*"))
}

/// The role the schema gives `arg`, or `None` when it may hold text the rules cannot place.
fn inferred(arg: &str, property: &Value) -> Option<ArgRole> {
    let types = types_of(property);
    let textual = |t: &str| matches!(t, "string" | "array" | "object" | "any");
    if !types.iter().any(|t| textual(t)) || property.get("enum").is_some() || property.get("const").is_some()
    {
        return Some(ArgRole::Text);
    }
    let words = words(arg);
    let description = property.get("description").and_then(Value::as_str).unwrap_or("").to_lowercase();
    let said = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let role = if said(PATH_WORDS) {
        ArgRole::Path
    } else if said(COMMAND_WORDS) {
        ArgRole::Command
    } else if ["path", "file", "directory", "folder"].iter().any(|w| description.contains(w)) {
        ArgRole::Path
    } else if ["command", "shell"].iter().any(|w| description.contains(w)) {
        ArgRole::Command
    } else {
        return None;
    };
    // Only what the rules can read: a string (or, for a path, a list of strings).
    let readable = types.iter().all(|t| match (role, t.as_str()) {
        (_, "string" | "null") => true,
        (ArgRole::Path, "array") => {
            property.get("items").is_some_and(|items| types_of(items).iter().all(|t| t == "string"))
        }
        _ => false,
    });
    readable.then_some(role)
}

/// The JSON types a schema allows (`any` when it does not say).
fn types_of(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.extend(types_of(branch));
        }
    }
    if out.is_empty() {
        if schema.get("enum").is_some() || schema.get("const").is_some() {
            out.push("string".into());
        } else {
            out.push("any".into());
        }
    }
    if out.iter().any(|t| t == "integer") {
        out.push("number".into());
    }
    out
}

/// The words of a name: split at `_`, `-`, `.`, spaces and lower-to-upper case changes, lower
/// case (`filePath` → `file`, `path`).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    // A name written as one word (`filepath`, `workdir`) is also compared whole.
    let whole: String = name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
    if !out.contains(&whole) {
        out.push(whole);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_get_roles_from_the_configuration_then_conservatively_from_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "filePath": {"type": "string"},
            "source_dir": {"type": ["string", "null"]},
            "paths": {"type": "array", "items": {"type": "string"}},
            "cmd": {"type": "string"},
            "where": {"type": "string", "description": "The file to read."},
            "count": {"type": "integer"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "query": {"type": "string"},
            "options": {"type": "object"},
            "target": {"type": "object"},
            "title": {"type": "string"}
        }});
        let mut declared = DeclaredRoles::new();
        declared.entry("read".into()).or_default().insert("title".into(), ArgRole::Text);
        let (roles, foreign) = classify("read", &schema, &declared);
        let paths: Vec<&str> =
            roles.iter().filter(|(_, r)| *r == ParamRole::Path).map(|(a, _)| a.as_str()).collect();
        let commands: Vec<&str> =
            roles.iter().filter(|(_, r)| *r == ParamRole::Command).map(|(a, _)| a.as_str()).collect();
        assert_eq!(paths, ["path", "filePath", "source_dir", "paths", "where"]);
        assert_eq!(commands, ["cmd"]);
        // `target` says path but is an object: the rules cannot read it.
        assert_eq!(foreign.unchecked, ["query", "options", "target"]);
        assert_eq!(foreign.known.len(), 12);
        // "*" for every tool and every argument.
        declared.entry("*".into()).or_default().insert("*".into(), ArgRole::Text);
        let (_, foreign) = classify("other", &schema, &declared);
        assert!(foreign.unchecked.is_empty(), "{foreign:?}");
    }
}
