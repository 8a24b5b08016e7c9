//! The trust store (README, "Other MCP servers behind teaagent"): `$TEAAGENT_HOME/trust.json`, one record per external MCP server
//! name — `allow` or `deny` — with a fingerprint of what was decided on: the command, its
//! arguments, the names of its environment variables (the values only of those that decide
//! which code runs), the SHA-256 of the executable the command resolves to, and of every file
//! its arguments name (`pins.rs`). A server may start only when it is allowed and its
//! fingerprint still matches; a denial always holds. Writes are atomic, under a file lock.
//!
//! The store is read and written through [`Home`]: never through a link, only a regular file of
//! at most [`MAX_CONFIG_BYTES`]. A store that others may write (group or world writable, or not
//! owned by the user) cannot vouch for anything: its records are **ignored** (fail closed: every
//! server counts as not decided) with a warning on stderr, until `chmod 600` fixes it or a new
//! decision replaces it (written with user-only permissions, keeping none of its records).
//!
//! **Pinned tool lists** (rug-pull protection, [`teaagent_core::gateway`]): `allow` starts the
//! server once, shows its tools in full (what the model will read), and pins them with the
//! decision: the record holds the list's SHA-256, and the list itself is kept next to the store
//! as `trust-tools-<sha256>.json` (content-addressed: a file whose content does not hash to its
//! name is refused, so the pin cannot be edited behind the record). `mcp serve` offers the
//! pinned descriptions and schemas, and withholds a server whose live list differs.
//!
//! Everything shown (`list`, `inspect`) comes from configuration files and the store, so every
//! value is escaped visibly ([`shown`]): a control sequence, a bidirectional override
//! or a zero-width character in a name, command or argument is shown, never interpreted, and
//! nothing is cut but long runs of one character (folded with their count).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use teaagent_core::home::{Home, MAX_CONFIG_BYTES};
use teaagent_core::visible::shown;

use teaagent_core::PermissionMode;
use teaagent_core::gateway::{GatewayOptions, Launch, Pins, ToolList};
use teaagent_core::sandbox::Sandbox;

use crate::config::McpServer;
use crate::pins::{self, PinnedFile};

const FILE_NAME: &str = "trust.json";
const LOCK_NAME: &str = "trust.lock";

/// allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Decision {
    Allow,
    Deny,
}

/// What a decision was made on (and `pins.rs`: what of it is pinned beyond the command line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fingerprint {
    command: String,
    args: Vec<String>,
    env_names: Vec<String>,
    executable: Option<PathBuf>,
    executable_sha256: Option<String>,
    /// Files the arguments name (a script an interpreter runs), hashed.
    #[serde(default)]
    files: Vec<PinnedFile>,
    /// Values of the variables that decide which code runs (`PATH`, `PYTHONPATH`, …).
    #[serde(default)]
    code_env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    decision: Decision,
    fingerprint: Fingerprint,
    decided_at: String,
    /// The SHA-256 of the tool list pinned at `allow` (none for a denial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tools_sha256: Option<String>,
}

/// The most a pinned tool list may take (a large server's schemas, far from this).
const MAX_PIN_BYTES: u64 = 64 * 1024 * 1024;

/// Pinned lists [`read_pin`] keeps in memory (one per server allowed; all are forgotten when full).
const MAX_PINS_KEPT: usize = 64;

fn pin_file(sha256: &str) -> String {
    format!("trust-tools-{sha256}.json")
}

/// Whether a server may start, and with which pinned tools.
pub(crate) enum Verdict {
    /// Allowed, unchanged, with this pinned list.
    Start(ToolList),
    /// Not started, and why.
    Refuse(String),
}

/// What the record says about starting the server as configured now.
pub(crate) fn verdict(record: Option<&Record>, now: &Fingerprint) -> Verdict {
    let Some(record) = record else {
        return Verdict::Refuse("not decided (allow it with `teaagent mcp trust allow`)".into());
    };
    if record.decision == Decision::Deny {
        return Verdict::Refuse("denied".into());
    }
    if let Some(why) = pins::unpinned_package(&now.command, &now.args) {
        return Verdict::Refuse(why);
    }
    if record.fingerprint != *now {
        let what: Vec<&str> =
            differences(&record.fingerprint, now).into_iter().map(|(what, _, _)| what).collect();
        return Verdict::Refuse(format!(
            "changed since it was allowed ({}; `teaagent mcp trust inspect` shows how)",
            what.join(", ")
        ));
    }
    let Some(sha) = &record.tools_sha256 else {
        return Verdict::Refuse(
            "allowed before tool lists were pinned: allow it again to pin the tools it offers".into(),
        );
    };
    match read_pin(sha) {
        Ok(list) => Verdict::Start(list),
        Err(why) => Verdict::Refuse(format!("{why}: allow it again")),
    }
}

/// The pinned list whose hash is `sha256`, checked against it.
///
/// Read once per process: the list is named by its hash and checked against it, so a list
/// already read is the list the file holds (several servers of one package share one pin, and a
/// server's restart asks again).
fn read_pin(sha256: &str) -> Result<ToolList, String> {
    static READ: Mutex<BTreeMap<String, ToolList>> = Mutex::new(BTreeMap::new());
    if let Some(list) = READ.lock().unwrap_or_else(PoisonError::into_inner).get(sha256).cloned() {
        return Ok(list);
    }
    let list = read_pin_file(sha256)?;
    let mut kept = READ.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() >= MAX_PINS_KEPT {
        kept.clear();
    }
    kept.insert(sha256.to_owned(), list.clone());
    Ok(list)
}

fn read_pin_file(sha256: &str) -> Result<ToolList, String> {
    let home = home().map_err(|e| format!("{e:#}"))?;
    if !sha256.bytes().all(|b| b.is_ascii_hexdigit()) || sha256.len() != 64 {
        return Err("its pinned tool list is damaged".into());
    }
    let bytes = match home.read(&pin_file(sha256), MAX_PIN_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err("its pinned tool list is missing".into()),
        Err(e) => return Err(format!("its pinned tool list cannot be read ({e})")),
    };
    let tools: Vec<serde_json::Value> =
        serde_json::from_slice(&bytes).map_err(|_| "its pinned tool list is damaged".to_owned())?;
    let list = ToolList::new(tools);
    if list.sha256() != sha256 {
        return Err("its pinned tool list does not match the record".into());
    }
    Ok(list)
}

/// How to start the server as configured now (the executable its fingerprint resolved).
pub(crate) fn launch(name: &str, server: &McpServer, now: &Fingerprint) -> anyhow::Result<Launch> {
    let Some(program) = now.executable.clone() else {
        anyhow::bail!("the command `{}` of `{}` is not found", shown(&server.command), shown(name));
    };
    Ok(Launch {
        name: name.to_owned(),
        program,
        args: server.args.clone(),
        cwd: None,
        pins: Pins {
            executable_sha256: now.executable_sha256.clone(),
            files: now.files.iter().map(|f| (f.path.clone(), f.sha256.clone())).collect(),
        },
        env: server.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        sandbox: server_sandbox(name, server)?,
        max_result_bytes: server.max_result_bytes(),
    })
}

/// The sandbox of an external server (`[mcp_servers.NAME.sandbox]`): by default it may write
/// only a temporary directory of its own and may reach the network; `unrestricted = true` runs
/// it without one. A machine that cannot enforce it refuses to start the server, saying so.
fn server_sandbox(name: &str, server: &McpServer) -> anyhow::Result<Option<Sandbox>> {
    let config = &server.sandbox;
    if config.unrestricted {
        return Ok(None);
    }
    let file = Path::new("config.toml");
    let writable = config.writable_dirs(name, file)?;
    let sandbox = Sandbox::for_mode(PermissionMode::WorkspaceWrite)
        .network(config.network.unwrap_or(true))
        .writable(writable);
    if let Ok(home) = teaagent_core::home::dir() {
        return Ok(Some(sandbox.hide(home)));
    }
    Ok(Some(sandbox))
}

/// Reads a server's tool list once (starting and stopping it).
pub(crate) fn probe(launch: &Launch) -> anyhow::Result<ToolList> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let list = runtime.block_on(teaagent_core::gateway::probe(launch, GatewayOptions::default()));
    list.map_err(|why| anyhow::anyhow!("cannot read the tools of `{}`: {why}", shown(&launch.name)))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    servers: BTreeMap<String, Record>,
}

/// The fingerprint of a server as configured now, for a server started in the current
/// directory.
pub(crate) fn fingerprint(server: &McpServer) -> Fingerprint {
    fingerprint_in(server, &std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
}

/// The fingerprint of a server as configured now, started in `base` (where the files its
/// arguments name are looked for).
pub(crate) fn fingerprint_in(server: &McpServer, base: &Path) -> Fingerprint {
    let executable = resolve(&server.command);
    let executable_sha256 = executable.as_deref().and_then(teaagent_core::gateway::sha256_of);
    Fingerprint {
        command: server.command.clone(),
        args: server.args.clone(),
        env_names: server.env.keys().cloned().collect(),
        files: pins::files(&server.args, base, executable.as_deref()),
        code_env: pins::code_env(&server.env),
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

fn home() -> anyhow::Result<Home> {
    Home::open().context("cannot use $TEAAGENT_HOME")
}

/// The store's records; a store others may write is ignored (see the module docs).
fn read(home: &Home) -> anyhow::Result<TrustFile> {
    let path = home.file(FILE_NAME);
    let empty = TrustFile { version: 1, servers: BTreeMap::new() };
    if let Some(loose) = home.loose_permissions(FILE_NAME) {
        tracing::warn!(
            "{} is {loose}: its records are ignored (every server counts as not decided); run `chmod 600` on it, or decide again",
            shown(&path.display().to_string())
        );
        return Ok(empty);
    }
    match home.read(FILE_NAME, MAX_CONFIG_BYTES)? {
        Some(bytes) => serde_json::from_slice(&bytes).with_context(|| {
            format!("{} is not a valid trust store; move it aside to start over", path.display())
        }),
        None => Ok(empty),
    }
}

/// Records a decision for `name` as configured now (an `allow` with the tool list it pins).
/// `fingerprint` is the server's as it was when the decision was shown (an `allow` pins the
/// executable whose tools were read: one swapped since no longer matches, so it is not started).
pub(crate) fn decide(
    name: &str,
    fingerprint: Fingerprint,
    decision: Decision,
    tools: Option<&ToolList>,
) -> anyhow::Result<Record> {
    let home = home()?;
    let path = home.file(FILE_NAME);
    let record = Record {
        decision,
        fingerprint,
        decided_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        tools_sha256: tools.map(|t| t.sha256().to_owned()),
    };
    if let Some(list) = tools {
        let mut body = serde_json::to_vec_pretty(list.tools())?;
        body.push(b'\n');
        home.write_atomic(&pin_file(list.sha256()), &body)
            .with_context(|| format!("cannot write {}", home.file(&pin_file(list.sha256())).display()))?;
    }
    home.locked(LOCK_NAME, || {
        let mut file = read(&home).map_err(|e| std::io::Error::other(format!("{e:#}")))?;
        file.version = 1;
        file.servers.insert(name.to_owned(), record.clone());
        let mut body = serde_json::to_vec_pretty(&file)?;
        body.push(b'\n');
        home.write_atomic(FILE_NAME, &body)
    })
    .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(record)
}

impl Record {
    /// Whether the decision was a denial.
    pub(crate) fn is_denied(&self) -> bool {
        self.decision == Decision::Deny
    }
}

impl Fingerprint {
    /// The executable the command resolved to, if it resolved.
    pub(crate) fn executable(&self) -> Option<&Path> {
        self.executable.as_deref()
    }
}

/// Every record.
pub(crate) fn records() -> anyhow::Result<BTreeMap<String, Record>> {
    Ok(read(&home()?)?.servers)
}

/// What a record says about a server as configured now.
pub(crate) fn status(record: Option<&Record>, now: &Fingerprint) -> &'static str {
    match record {
        None => "not decided: teaagent will not start it",
        Some(r) if r.decision == Decision::Deny => "denied: teaagent will never start it",
        Some(r) if r.fingerprint != *now => {
            "CHANGED since it was allowed: teaagent will not start it until allowed again"
        }
        Some(r) if r.tools_sha256.is_none() => {
            "allowed before tool lists were pinned: teaagent will not start it until allowed again"
        }
        Some(_) => "allowed, and the fingerprint matches: teaagent may start it",
    }
}

/// A list of strings as shown: each escaped and quoted (`"` inside is written `\"`).
fn shown_list(items: &[String]) -> String {
    let quoted: Vec<String> =
        items.iter().map(|a| format!("\"{}\"", shown(a).replace('"', "\\\""))).collect();
    format!("[{}]", quoted.join(", "))
}

/// `teaagent mcp trust inspect`: every value escaped (see the module docs).
pub(crate) fn describe(name: &str, server: &McpServer, record: Option<&Record>) -> String {
    let now = fingerprint(server);
    let mut out = String::new();
    out.push_str(&format!("server:      {}\n", shown(name)));
    out.push_str(&format!("command:     {}\n", shown(&server.command)));
    out.push_str(&format!("args:        {}\n", shown_list(&server.args)));
    out.push_str(&format!(
        "env names:   {}\n",
        if now.env_names.is_empty() {
            "(none)".into()
        } else {
            now.env_names.iter().map(|n| shown(n)).collect::<Vec<_>>().join(", ")
        }
    ));
    match (&now.executable, &now.executable_sha256) {
        (Some(exe), Some(sha)) => {
            out.push_str(&format!("executable:  {} (sha256 {sha})\n", shown(&exe.display().to_string())))
        }
        _ => out.push_str("executable:  not found on PATH\n"),
    }
    match record {
        None => out.push_str("record:      none\n"),
        Some(r) => {
            let decision = match r.decision {
                Decision::Allow => "allow",
                Decision::Deny => "deny",
            };
            out.push_str(&format!("record:      {decision}, decided {}\n", shown(&r.decided_at)));
            if r.fingerprint != now {
                for (what, then, now) in differences(&r.fingerprint, &now) {
                    out.push_str(&format!("  changed:   {what}: was {then}, is {now}\n"));
                }
            }
        }
    }
    out.push_str(&pinned_lines(server, &now));
    out.push_str(&format!("status:      {}\n", status(record, &now)));
    match record.and_then(|r| r.tools_sha256.as_ref()) {
        Some(sha) => out.push_str(&format!("tools:       pinned, sha256 {sha}\n")),
        None => out.push_str("tools:       none pinned\n"),
    }
    // The live list is read only from a server that may start (allowed and unchanged).
    if let Verdict::Start(pinned) = verdict(record, &now) {
        match launch(name, server, &now).and_then(|l| probe(&l)) {
            Ok(live) if live.sha256() == pinned.sha256() => {
                out.push_str(&format!("live tools:  {} tools, the same as pinned\n", live.tools().len()))
            }
            Ok(live) => {
                out.push_str(
                    "live tools:  CHANGED since it was allowed: teaagent withholds its tools until allowed again\n",
                );
                for line in pinned.differences(&live) {
                    out.push_str(&format!("  {line}\n"));
                }
            }
            Err(e) => out.push_str(&format!("live tools:  not read: {}\n", visible_error(&e))),
        }
    }
    out
}

/// What of the server is pinned and what is not (`pins.rs`), for `inspect`.
fn pinned_lines(server: &McpServer, now: &Fingerprint) -> String {
    let mut out = String::from(
        "pinned:      the command, the arguments, the environment's names, the executable (run from the very file that was hashed)\n",
    );
    for file in &now.files {
        out.push_str(&format!(
            "  file:      {} = {} (sha256 {})\n",
            shown(&file.arg),
            shown(&file.path.display().to_string()),
            file.sha256
        ));
    }
    for (name, value) in &now.code_env {
        out.push_str(&format!("  value:     {}=\"{}\"\n", shown(name), shown(value).replace('"', "\\\"")));
    }
    if let Some(package) = pins::package(&server.command, &server.args) {
        let how = if package.exact {
            "an exact version: pinned"
        } else {
            "NOT an exact version: not allowed to start"
        };
        out.push_str(&format!(
            "  package:   {} (run by {}; {how})\n",
            shown(&package.spec),
            shown(&package.runner)
        ));
    }
    let unpinned: Vec<String> =
        server.env.keys().filter(|k| !pins::loads_code(k)).map(|k| shown(k)).collect();
    out.push_str("not pinned:  what the files import, the interpreter's own libraries, a package's dependencies beyond its version");
    if !unpinned.is_empty() {
        out.push_str(&format!(", the values of {}", unpinned.join(", ")));
    }
    out.push('\n');
    out
}

fn visible_error(e: &anyhow::Error) -> String {
    e.chain().map(|c| teaagent_core::visible::escape(&c.to_string())).collect::<Vec<_>>().join(": ")
}

fn differences(then: &Fingerprint, now: &Fingerprint) -> Vec<(&'static str, String, String)> {
    let one = |s: &str| format!("\"{}\"", shown(s).replace('"', "\\\""));
    let path = |p: &Option<PathBuf>| p.as_ref().map_or("none".to_owned(), |p| one(&p.display().to_string()));
    let sha = |s: &Option<String>| s.as_deref().map_or("none".to_owned(), one);
    let mut out = Vec::new();
    if then.command != now.command {
        out.push(("command", one(&then.command), one(&now.command)));
    }
    if then.args != now.args {
        out.push(("args", shown_list(&then.args), shown_list(&now.args)));
    }
    if then.env_names != now.env_names {
        out.push(("env names", shown_list(&then.env_names), shown_list(&now.env_names)));
    }
    if then.executable != now.executable {
        out.push(("executable", path(&then.executable), path(&now.executable)));
    }
    if then.executable_sha256 != now.executable_sha256 {
        out.push(("executable sha256", sha(&then.executable_sha256), sha(&now.executable_sha256)));
    }
    if then.files != now.files {
        let files = |list: &[PinnedFile]| {
            let items: Vec<String> = list
                .iter()
                .map(|f| format!("{} (sha256 {})", one(&f.path.display().to_string()), f.sha256))
                .collect();
            format!("[{}]", items.join(", "))
        };
        out.push(("files its arguments name", files(&then.files), files(&now.files)));
    }
    if then.code_env != now.code_env {
        let values = |map: &BTreeMap<String, String>| {
            let items: Vec<String> = map.iter().map(|(k, v)| format!("{}={}", shown(k), one(v))).collect();
            format!("[{}]", items.join(", "))
        };
        out.push(("values of variables that load code", values(&then.code_env), values(&now.code_env)));
    }
    out
}
