//! The trust store (SPEC §11): `$TEAAGENT_HOME/trust.json`, one record per external MCP server
//! name — `allow` or `deny` — with a fingerprint of what was decided on: the command, its
//! arguments, the names of its environment variables (not their values), and the SHA-256 of the
//! executable the command resolves to. A server may start only when it is allowed and its
//! fingerprint still matches; a denial always holds. Writes are atomic, under a file lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::McpServer;

const FILE_NAME: &str = "trust.json";
const LOCK_NAME: &str = "trust.lock";

/// allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Decision {
    Allow,
    Deny,
}

/// What a decision was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fingerprint {
    command: String,
    args: Vec<String>,
    env_names: Vec<String>,
    executable: Option<PathBuf>,
    executable_sha256: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    decision: Decision,
    fingerprint: Fingerprint,
    decided_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    servers: BTreeMap<String, Record>,
}

/// The fingerprint of a server as configured now.
pub(crate) fn fingerprint(server: &McpServer) -> Fingerprint {
    let executable = resolve(&server.command);
    let executable_sha256 = executable.as_deref().and_then(|p| std::fs::read(p).ok()).map(|bytes| {
        let digest = Sha256::digest(&bytes);
        digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
    });
    Fingerprint {
        command: server.command.clone(),
        args: server.args.clone(),
        env_names: server.env.keys().cloned().collect(),
        executable,
        executable_sha256,
    }
}

/// The executable a command names: a path as given, else the first match on `PATH`.
fn resolve(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return std::fs::canonicalize(command).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}

fn store_path() -> anyhow::Result<PathBuf> {
    Ok(teaagent_core::home::ensure().context("cannot use $TEAAGENT_HOME")?.join(FILE_NAME))
}

fn read(path: &Path) -> anyhow::Result<TrustFile> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!("{} is not a valid trust store; move it aside to start over", path.display())
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(TrustFile { version: 1, servers: BTreeMap::new() })
        }
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    }
}

/// Records a decision for `name` as configured now.
pub(crate) fn decide(name: &str, server: &McpServer, decision: Decision) -> anyhow::Result<Record> {
    let path = store_path()?;
    let lock = path.with_file_name(LOCK_NAME);
    let record = Record {
        decision,
        fingerprint: fingerprint(server),
        decided_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    teaagent_core::home::locked(&lock, || {
        let mut file = read(&path).map_err(|e| std::io::Error::other(e.to_string()))?;
        file.version = 1;
        file.servers.insert(name.to_owned(), record.clone());
        let mut body = serde_json::to_vec_pretty(&file)?;
        body.push(b'\n');
        teaagent_core::home::write_atomic(&path, &body)
    })
    .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(record)
}

/// Every record.
pub(crate) fn records() -> anyhow::Result<BTreeMap<String, Record>> {
    let path = store_path()?;
    Ok(read(&path)?.servers)
}

/// What a record says about a server as configured now.
pub(crate) fn status(record: Option<&Record>, now: &Fingerprint) -> &'static str {
    match record {
        None => "not decided: teaagent will not start it",
        Some(r) if r.decision == Decision::Deny => "denied: teaagent will never start it",
        Some(r) if r.fingerprint != *now => {
            "CHANGED since it was allowed: teaagent will not start it until allowed again"
        }
        Some(_) => "allowed, and the fingerprint matches: teaagent may start it",
    }
}

/// `teaagent mcp trust inspect`.
pub(crate) fn describe(name: &str, server: &McpServer, record: Option<&Record>) -> String {
    let now = fingerprint(server);
    let mut out = String::new();
    out.push_str(&format!("server:      {name}\n"));
    out.push_str(&format!("command:     {}\n", server.command));
    out.push_str(&format!("args:        {}\n", serde_json::to_string(&server.args).unwrap_or_default()));
    out.push_str(&format!(
        "env names:   {}\n",
        if now.env_names.is_empty() { "(none)".into() } else { now.env_names.join(", ") }
    ));
    match (&now.executable, &now.executable_sha256) {
        (Some(exe), Some(sha)) => out.push_str(&format!("executable:  {} (sha256 {sha})\n", exe.display())),
        _ => out.push_str("executable:  not found on PATH\n"),
    }
    match record {
        None => out.push_str("record:      none\n"),
        Some(r) => {
            let decision = match r.decision {
                Decision::Allow => "allow",
                Decision::Deny => "deny",
            };
            out.push_str(&format!("record:      {decision}, decided {}\n", r.decided_at));
            if r.fingerprint != now {
                for (what, then, now) in differences(&r.fingerprint, &now) {
                    out.push_str(&format!("  changed:   {what}: was {then}, is {now}\n"));
                }
            }
        }
    }
    out.push_str(&format!("status:      {}\n", status(record, &now)));
    out
}

fn differences(then: &Fingerprint, now: &Fingerprint) -> Vec<(&'static str, String, String)> {
    let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
    let mut out = Vec::new();
    if then.command != now.command {
        out.push(("command", show(&then.command), show(&now.command)));
    }
    if then.args != now.args {
        out.push(("args", show(&then.args), show(&now.args)));
    }
    if then.env_names != now.env_names {
        out.push(("env names", show(&then.env_names), show(&now.env_names)));
    }
    if then.executable != now.executable {
        out.push(("executable", show(&then.executable), show(&now.executable)));
    }
    if then.executable_sha256 != now.executable_sha256 {
        out.push(("executable sha256", show(&then.executable_sha256), show(&now.executable_sha256)));
    }
    out
}
