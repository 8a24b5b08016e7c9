//! `teaagent mcp tools`: the tools a server would offer, built-in and external, as a table or
//! JSON.

use std::process::ExitCode;

use anyhow::Context;
use teaagent_core::gateway::SEPARATOR;
use teaagent_core::{Registry, visible};

use super::print_table;
use crate::{external, sandbox};

/// `mcp tools [--json]`: the built-in tools and those of every declared external server, with
/// each one's state.
pub(crate) fn list(json: bool) -> anyhow::Result<ExitCode> {
    let listing = external::listing()?;
    let registry = Registry::builder()
        .tools(teaagent_core::builtin_tools::builtin())
        .tools(listing.tools.iter().cloned())
        .build()
        .context("the tools are invalid")?;
    if json {
        let entries: Vec<serde_json::Value> = registry
            .listing()
            .into_iter()
            .map(|mut entry| {
                let name = entry["name"].as_str().unwrap_or_default().to_owned();
                if let Some((server, state)) = listing.server_of(&name) {
                    entry["_meta"] =
                        serde_json::json!({"io.teaagent/server": server, "io.teaagent/state": state});
                }
                entry
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(ExitCode::SUCCESS);
    }
    let annotations = |t: &teaagent_core::ToolDef| {
        let b = t.behavior();
        let flags: Vec<&str> = [
            (b.read_only, "read-only"),
            (b.destructive, "destructive"),
            (b.idempotent, "idempotent"),
            (b.stateful, "stateful"),
            (b.open_world, "open-world"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        flags.join(", ")
    };
    let limit = |t: &teaagent_core::ToolDef| {
        t.rate_limit().map_or("-".to_owned(), |l| format!("{} per {}s", l.max_calls, l.window.as_secs_f64()))
    };
    let mut rows: Vec<[String; 4]> = Vec::new();
    let mut external_rows: Vec<[String; 5]> = Vec::new();
    for t in registry.iter() {
        match listing.server_of(t.name()) {
            None => rows.push([t.name().to_owned(), t.tier().to_string(), annotations(t), limit(t)]),
            Some((server, state)) => external_rows.push([
                t.name().to_owned(),
                visible::shown(server),
                t.tier().to_string(),
                limit(t),
                state.to_owned(),
            ]),
        }
    }
    for [server, state] in &listing.refused {
        external_rows.push([
            format!("{}{SEPARATOR}*", visible::shown(server)),
            visible::shown(server),
            "-".into(),
            "-".into(),
            visible::escape(state),
        ]);
    }
    print_table(&["TOOL", "TIER", "ANNOTATIONS", "RATE LIMIT"], &rows);
    println!();
    println!("shell_exec commands run {}.", sandbox::in_force()?);
    if !external_rows.is_empty() {
        println!();
        println!("external tools (not read-only, open-world; destructive from tier high):");
        print_table(&["TOOL", "SERVER", "TIER", "RATE LIMIT", "STATE"], &external_rows);
    }
    Ok(ExitCode::SUCCESS)
}
