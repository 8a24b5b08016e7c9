//! `teaagent mcp install CLIENT` and `teaagent mcp uninstall CLIENT`: teaagent's entry written
//! into, or removed from, the file where a client reads its servers ([`crate::clients`]), or
//! printed (`mcp-json`).
//!
//! The entry starts this binary (its canonical absolute path) with `mcp serve --root ROOT` (the
//! canonical absolute root) and the flags given. Installing compares first: an entry that is
//! already there as given writes nothing (no backup either). A user-level file goes only where
//! the client's own directory exists (a client never started there would not read it); a
//! project-level file and its directory are created inside the root when missing.

mod diff;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::{InstallArgs, TargetArgs, UninstallArgs};
use crate::clients::edit::{self, Outcome};
use crate::clients::error::show;
use crate::clients::{self, Client, ClientError, Entry, Env, Location, file};

/// Permissions of a user-level file teaagent creates (it may hold `--env` values).
const USER_FILE_MODE: u32 = 0o600;
/// Permissions of a project-level file teaagent creates (meant to be shared).
const PROJECT_FILE_MODE: u32 = 0o644;

/// `teaagent mcp install CLIENT`.
pub(crate) fn install(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let root = root(args.root.as_deref())?;
    let entry = entry(&args, &root)?;
    if args.client == clients::MCP_JSON {
        if args.target.project {
            return Err(ClientError::NoProjectFile { client: "mcp-json" }.into());
        }
        let mut servers = serde_json::Map::new();
        servers.insert(entry.name.clone(), entry.to_json(false));
        let document = serde_json::json!({ "mcpServers": servers });
        println!("{}", serde_json::to_string_pretty(&document)?);
        return Ok(ExitCode::SUCCESS);
    }
    let client = known(&args.client)?;
    let location = locate(client, &root, args.target.project)?;
    if !location.project && !installed(&location) {
        return Err(ClientError::NotInstalled { client: client.name, dir: location.dir }.into());
    }
    let old = file::read(&location.file)?;
    let (outcome, new) = edit::install(client, &location.file, old.as_deref().unwrap_or_default(), &entry)?;
    let code = finish(client, &location, old.as_deref(), outcome, &new, &args.target)?;
    // Two entries serving one root would hold its workspace lock against each other.
    for other in client.entries_in(&location.file, &new)? {
        if other.name != entry.name && other.is_teaagent() && other.root() == entry.root() {
            println!(
                "note: `{}` in the same file also starts teaagent for {}; remove one with `teaagent mcp uninstall {} --name NAME`",
                visible(&other.name),
                show(&root),
                client.id
            );
        }
    }
    Ok(code)
}

/// `teaagent mcp uninstall CLIENT`.
pub(crate) fn uninstall(args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let client = known(&args.client)?;
    let root = if args.target.project { root(args.root.as_deref())? } else { PathBuf::new() };
    let location = locate(client, &root, args.target.project)?;
    let name = &args.target.name;
    let Some(old) = file::read(&location.file)? else {
        println!("{} does not exist: there is no `{name}` to remove, nothing changed", show(&location.file));
        return Ok(ExitCode::SUCCESS);
    };
    let (outcome, new) = edit::uninstall(client, &location.file, &old, name)?;
    finish(client, &location, Some(&old), outcome, &new, &args.target)
}

fn known(id: &str) -> anyhow::Result<&'static Client> {
    // clap checked the name against the same table.
    clients::find(id).ok_or_else(|| anyhow::anyhow!("unknown client `{id}`"))
}

/// The root as given (default: the current directory), canonical.
fn root(given: Option<&Path>) -> Result<PathBuf, ClientError> {
    let given = given.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let failed = |source| ClientError::Root { path: given.clone(), source };
    let root = given.canonicalize().map_err(failed)?;
    if !root.is_dir() {
        return Err(failed(std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory")));
    }
    Ok(root)
}

/// The entry `args` describe.
fn entry(args: &InstallArgs, root: &Path) -> anyhow::Result<Entry> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| anyhow::anyhow!("cannot find the path of this teaagent binary: {e}"))?;
    let text = |path: &Path| {
        path.to_str().map(str::to_owned).ok_or_else(|| ClientError::NotUtf8Path { path: path.to_path_buf() })
    };
    let mut argv: Vec<String> = vec!["mcp".into(), "serve".into(), "--root".into(), text(root)?];
    if let Some(mode) = args.permission_mode {
        argv.extend(["--permission-mode".to_owned(), mode.as_str().to_owned()]);
    }
    for grant in &args.grant {
        argv.extend(["--grant".to_owned(), grant.clone()]);
    }
    let mut env: Vec<(String, String)> = Vec::new();
    for (key, value) in &args.env {
        if env.iter().any(|(k, _)| k == key) {
            return Err(ClientError::DuplicateEnv { key: key.clone() }.into());
        }
        env.push((key.clone(), value.clone()));
    }
    Ok(Entry { name: args.target.name.clone(), command: text(&exe)?, args: argv, env })
}

/// The file to edit: the project's inside `root` (which it may not leave through a link), or
/// the user's.
fn locate(client: &Client, root: &Path, project: bool) -> Result<Location, ClientError> {
    if !project {
        return client.user_location(&Env::from_process()).ok_or(ClientError::NoHome { client: client.name });
    }
    let location = client.project_location(root).ok_or(ClientError::NoProjectFile { client: client.name })?;
    for path in [&location.dir, &location.file] {
        if let Ok(real) = path.canonicalize()
            && !real.starts_with(root)
        {
            return Err(ClientError::OutsideProject { path: path.clone(), target: real });
        }
    }
    Ok(location)
}

/// Whether the client was started on this machine: its directory (or its file) exists.
fn installed(location: &Location) -> bool {
    location.dir.is_dir() || location.file.exists()
}

/// Reports `outcome`, and writes `new` unless nothing changed or this is a dry run.
fn finish(
    client: &Client,
    location: &Location,
    old: Option<&str>,
    outcome: Outcome,
    new: &str,
    target: &TargetArgs,
) -> anyhow::Result<ExitCode> {
    let (path, name) = (show(&location.file), &target.name);
    match outcome {
        Outcome::Unchanged => {
            println!("`{name}` is already in {path} as given: nothing changed");
            return Ok(ExitCode::SUCCESS);
        }
        Outcome::Absent => {
            println!("there is no `{name}` in {path}: nothing changed");
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    if target.dry_run {
        print!("{}", diff::unified(&path, old, new));
        println!("dry run: {path} was not changed");
        return Ok(ExitCode::SUCCESS);
    }
    if location.project && !location.dir.is_dir() {
        std::fs::create_dir_all(&location.dir)
            .map_err(|source| ClientError::Write { path: location.dir.clone(), source })?;
    }
    let mode = if location.project { PROJECT_FILE_MODE } else { USER_FILE_MODE };
    let backup = file::write(&location.file, old, new, mode)?;
    let written = file::target(&location.file);
    let what = match &outcome {
        Outcome::Added if old.is_none() => format!("created {path} with `{name}`"),
        Outcome::Added => format!("added `{name}` to {path}"),
        Outcome::Replaced(Some(was)) => format!(
            "replaced `{name}` in {path} (it started {} {})",
            visible(&was.command),
            visible(&was.args.join(" "))
        ),
        Outcome::Replaced(None) => format!("replaced `{name}` in {path}"),
        Outcome::Removed(_) => format!("removed `{name}` from {path}"),
        Outcome::Unchanged | Outcome::Absent => unreachable!("returned above"),
    };
    println!("{what}");
    if written != location.file {
        println!("({path} is a link: its target {} was written)", show(&written));
    }
    if let Some(backup) = backup {
        println!("the previous file is kept as {}", show(&backup));
    }
    if !matches!(outcome, Outcome::Removed(_)) {
        println!("next: {}", client.after);
    }
    Ok(ExitCode::SUCCESS)
}

fn visible(text: &str) -> String {
    teaagent_core::visible::shown(text)
}
