//! Codex's TOML file: `[mcp_servers.NAME]` tables, read and edited with toml_edit, which keeps
//! every comment, blank line, key order and spelling outside the entry as written.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::edit::Outcome;
use super::{Client, ClientError, Entry};

const KEY: &str = "mcp_servers";

fn parse(path: &Path, text: &str) -> Result<DocumentMut, ClientError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |s| s.start).min(text.len());
        let before = text.get(..at).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
        let message = e.message().lines().next().unwrap_or("not TOML").trim().to_owned();
        ClientError::Parse { path: path.to_path_buf(), format: "TOML", line, column, message }
    })
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => match v {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a date",
            Value::Array(_) => "an array",
            Value::InlineTable(_) => "a table",
        },
    }
}

/// Checks that `mcp_servers`, when present, is a table.
fn check(client: &Client, path: &Path, doc: &DocumentMut) -> Result<(), ClientError> {
    match doc.get(KEY) {
        Some(item) if !item.is_table_like() => Err(ClientError::Shape {
            path: path.to_path_buf(),
            client: client.name,
            what: format!("`{KEY}`"),
            found: kind(item),
        }),
        _ => Ok(()),
    }
}

fn entry(name: &str, table: &dyn TableLike) -> Option<Entry> {
    let command = table.get("command")?.as_str()?.to_owned();
    let args = match table.get("args") {
        None => Vec::new(),
        Some(args) => {
            args.as_array()?.iter().map(|a| a.as_str().map(str::to_owned)).collect::<Option<_>>()?
        }
    };
    let env = match table.get("env").and_then(Item::as_table_like) {
        None => Vec::new(),
        Some(env) => env.iter().filter_map(|(k, v)| Some((k.to_owned(), v.as_str()?.to_owned()))).collect(),
    };
    Some(Entry { name: name.to_owned(), command, args, env })
}

fn read(doc: &DocumentMut) -> Vec<Entry> {
    let Some(servers) = doc.get(KEY).and_then(Item::as_table_like) else { return Vec::new() };
    servers.iter().filter_map(|(name, item)| entry(name, item.as_table_like()?)).collect()
}

/// The stdio servers `text` declares.
pub(super) fn entries(client: &Client, path: &Path, text: &str) -> Result<Vec<Entry>, ClientError> {
    let doc = parse(path, text)?;
    check(client, path, &doc)?;
    Ok(read(&doc))
}

fn args(entry: &Entry) -> Value {
    Value::Array(entry.args.iter().map(String::as_str).collect::<Array>())
}

fn env(entry: &Entry) -> Value {
    let mut env = InlineTable::new();
    for (k, v) in &entry.env {
        env.insert(k, v.as_str().into());
    }
    Value::InlineTable(env)
}

fn same(a: &Entry, b: &Entry) -> bool {
    let sorted = |e: &Entry| {
        let mut env = e.env.clone();
        env.sort();
        env
    };
    a.command == b.command && a.args == b.args && sorted(a) == sorted(b)
}

/// `text` with `entry` in it: added as a `[mcp_servers.NAME]` table, or its `command`, `args`
/// and `env` replaced in place (other keys of the entry kept).
pub(super) fn install(
    client: &Client,
    path: &Path,
    text: &str,
    wanted: &Entry,
) -> Result<(Outcome, String), ClientError> {
    let mut doc = parse(path, text)?;
    check(client, path, &doc)?;
    let old = read(&doc).into_iter().find(|e| e.name == wanted.name);
    if old.as_ref().is_some_and(|old| same(old, wanted)) {
        return Ok((Outcome::Unchanged, text.to_owned()));
    }
    let inline = doc_is_inline(&doc);
    if doc.get(KEY).is_none() {
        let mut table = Table::new();
        table.set_implicit(true);
        doc.insert(KEY, Item::Table(table));
    }
    let Some(servers) = doc.get_mut(KEY).and_then(Item::as_table_like_mut) else {
        unreachable!("checked, or just inserted")
    };
    let outcome = match servers.get_mut(&wanted.name).and_then(Item::as_table_like_mut) {
        Some(existing) => {
            existing.insert("command", Item::Value(wanted.command.as_str().into()));
            existing.insert("args", Item::Value(args(wanted)));
            if wanted.env.is_empty() {
                existing.remove("env");
            } else {
                existing.insert("env", Item::Value(env(wanted)));
            }
            Outcome::Replaced(old)
        }
        None => {
            let replaced = servers.contains_key(&wanted.name);
            let item = if inline {
                let mut table = InlineTable::new();
                table.insert("command", wanted.command.as_str().into());
                table.insert("args", args(wanted));
                if !wanted.env.is_empty() {
                    table.insert("env", env(wanted));
                }
                Item::Value(Value::InlineTable(table))
            } else {
                let mut table = Table::new();
                table.insert("command", Item::Value(wanted.command.as_str().into()));
                table.insert("args", Item::Value(args(wanted)));
                if !wanted.env.is_empty() {
                    table.insert("env", Item::Value(env(wanted)));
                }
                Item::Table(table)
            };
            let Some(servers) = doc.get_mut(KEY).and_then(Item::as_table_like_mut) else {
                unreachable!("present")
            };
            servers.insert(&wanted.name, item);
            if replaced { Outcome::Replaced(None) } else { Outcome::Added }
        }
    };
    Ok((outcome, doc.to_string()))
}

/// Whether `mcp_servers` is written as an inline table (`mcp_servers = { … }`), whose entries
/// must be inline too.
fn doc_is_inline(doc: &DocumentMut) -> bool {
    matches!(doc.get(KEY), Some(Item::Value(Value::InlineTable(_))))
}

/// `text` without the server called `name` (unchanged when there is none).
pub(super) fn remove(
    client: &Client,
    path: &Path,
    text: &str,
    name: &str,
) -> Result<(Outcome, String), ClientError> {
    let mut doc = parse(path, text)?;
    check(client, path, &doc)?;
    let old = read(&doc).into_iter().find(|e| e.name == name);
    let Some(servers) = doc.get_mut(KEY).and_then(Item::as_table_like_mut) else {
        return Ok((Outcome::Absent, text.to_owned()));
    };
    if servers.remove(name).is_none() {
        return Ok((Outcome::Absent, text.to_owned()));
    }
    Ok((Outcome::Removed(old), doc.to_string()))
}
