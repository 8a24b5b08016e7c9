//! The JSON files (`mcpServers`, VS Code's `servers`): read as JSON with comments and trailing
//! commas, the way these clients read them, and edited through jsonc-parser's concrete syntax
//! tree, so that every comment, blank line, indentation, trailing comma and key order outside
//! the entry stays as it was written. Nothing else JSON5 allows (single quotes, bare keys, hex
//! numbers) is accepted: the clients would reject it.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::{Map, Value};

use super::edit::Outcome;
use super::error::json_kind;
use super::{Client, ClientError, Entry, Format};

/// The keys of an entry teaagent writes; any other key in an existing entry (a timeout, a
/// `disabled` flag the user set) is kept.
const OWNED: &[&str] = &["type", "command", "args", "env"];

fn options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn key_of(client: &Client) -> (&'static str, bool) {
    match client.format {
        Format::Json { key, stdio_type } => (key, stdio_type),
        Format::CodexToml => ("mcpServers", false),
    }
}

/// `text` as a syntax tree, or where and why it is not JSON.
fn parse(path: &Path, text: &str) -> Result<CstRootNode, ClientError> {
    CstRootNode::parse(text, &options()).map_err(|e| ClientError::Parse {
        path: path.to_path_buf(),
        format: "JSON",
        line: e.line_display(),
        column: e.column_display(),
        message: e.kind().to_string(),
    })
}

/// The servers object of the document (`None` when it is empty or has no servers key), after
/// checking that the top level and the servers key are objects.
fn servers(
    client: &Client,
    path: &Path,
    root: &CstRootNode,
) -> Result<Option<Map<String, Value>>, ClientError> {
    let (key, _) = key_of(client);
    let shape = |what: String, found| ClientError::Shape {
        path: path.to_path_buf(),
        client: client.name,
        what,
        found,
    };
    match root.value().and_then(|v| v.to_serde_value()) {
        None => Ok(None),
        Some(Value::Object(mut top)) => match top.remove(key) {
            None => Ok(None),
            Some(Value::Object(servers)) => Ok(Some(servers)),
            Some(other) => Err(shape(format!("`{key}`"), json_kind(&other))),
        },
        Some(other) => Err(shape("the top level".into(), json_kind(&other))),
    }
}

/// The stdio servers `text` declares.
pub(super) fn entries(client: &Client, path: &Path, text: &str) -> Result<Vec<Entry>, ClientError> {
    let servers = servers(client, path, &parse(path, text)?)?.unwrap_or_default();
    Ok(servers.iter().filter_map(|(name, value)| Entry::from_json(name, value)).collect())
}

/// Refuses a document that writes the servers key, or the server `name`, more than once: an
/// edit would change one of them and the client might read the other.
fn check_unique(client: &Client, path: &Path, root: &CstRootNode, name: &str) -> Result<(), ClientError> {
    let (key, _) = key_of(client);
    let named = |object: &CstObject, wanted: &str| {
        object
            .properties()
            .iter()
            .filter(|p| p.name().and_then(|n| n.decoded_value().ok()).as_deref() == Some(wanted))
            .count()
    };
    let duplicate = |what: String| Err(ClientError::Duplicate { path: path.to_path_buf(), what });
    let Some(top) = root.object_value() else { return Ok(()) };
    if named(&top, key) > 1 {
        return duplicate(format!("`{key}`"));
    }
    if let Some(servers) = top.object_value(key)
        && named(&servers, name) > 1
    {
        return duplicate(format!("the server `{name}`"));
    }
    Ok(())
}

/// `text` with `entry` in it: added, or its owned keys replaced in place.
pub(super) fn install(
    client: &Client,
    path: &Path,
    text: &str,
    entry: &Entry,
) -> Result<(Outcome, String), ClientError> {
    let (key, stdio_type) = key_of(client);
    let root = parse(path, text)?;
    let existing = servers(client, path, &root)?.and_then(|mut s| s.remove(&entry.name));
    check_unique(client, path, &root, &entry.name)?;
    let Value::Object(wanted) = entry.to_json(stdio_type) else { unreachable!("an entry is an object") };
    let servers = root.object_value_or_set().object_value_or_set(key);
    let outcome = match (existing, servers.get(&entry.name)) {
        (Some(Value::Object(old)), Some(prop)) => {
            let owned: Map<String, Value> = old
                .iter()
                .filter(|(k, _)| OWNED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut expected = wanted.clone();
            if !stdio_type && let Some(kind) = old.get("type") {
                // Not ours to remove in a client whose entries need no type.
                expected.insert("type".into(), kind.clone());
            }
            if owned == expected {
                return Ok((Outcome::Unchanged, text.to_owned()));
            }
            let object = prop.object_value_or_set();
            for (k, v) in &wanted {
                match object.get(k) {
                    Some(p) if old.get(k) != Some(v) => p.set_value(input(v)),
                    Some(_) => {}
                    None => {
                        object.append(k, input(v));
                    }
                }
            }
            if !wanted.contains_key("env")
                && let Some(env) = object.get("env")
            {
                env.remove();
            }
            Outcome::Replaced(Entry::from_json(&entry.name, &Value::Object(old)))
        }
        (_, Some(prop)) => {
            prop.set_value(input(&Value::Object(wanted)));
            Outcome::Replaced(None)
        }
        (_, None) => {
            servers.append(&entry.name, input(&Value::Object(wanted)));
            Outcome::Added
        }
    };
    let mut out = root.to_string();
    if !out.ends_with('\n') && (text.is_empty() || text.ends_with('\n')) {
        out.push('\n');
    }
    Ok((outcome, out))
}

/// `text` without the server called `name` (unchanged when there is none).
pub(super) fn remove(
    client: &Client,
    path: &Path,
    text: &str,
    name: &str,
) -> Result<(Outcome, String), ClientError> {
    let (key, _) = key_of(client);
    let root = parse(path, text)?;
    let existing = servers(client, path, &root)?.and_then(|mut s| s.remove(name));
    check_unique(client, path, &root, name)?;
    let Some(old) = existing else { return Ok((Outcome::Absent, text.to_owned())) };
    let Some(prop) = root.object_value().and_then(|o| o.object_value(key)).and_then(|s| s.get(name)) else {
        return Ok((Outcome::Absent, text.to_owned()));
    };
    prop.remove();
    Ok((Outcome::Removed(Entry::from_json(name, &old)), root.to_string()))
}

/// A JSON value as the tree's input.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect()),
    }
}
