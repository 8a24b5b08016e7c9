//! The path arguments of a call (`server/call.rs`): resolved beneath the workspace root,
//! confined (a built-in tool's) or checked as given (a tool of another program's), their digest,
//! and resolved again at admission.

use serde_json::Value;

use crate::digest::digest_of;
use crate::error::{Error, Failure, PathRefusal};
use crate::mcp::JsonObject;
use crate::server::shared::Shared;
use crate::tool::{ParamRole, ToolDef};
use crate::workspace::{PathError, Resolved, Target, Workspace};

/// A `#[path]` argument as step 2 resolved it.
pub(super) struct PathArg {
    pub(super) name: String,
    /// The path as the client gave it (resolved again at admission).
    pub(super) given: String,
    /// `None`: it did not resolve (a missing directory on the way); the tool says so itself.
    pub(super) resolved: Option<Both>,
}

/// An argument's entry (a link in the last component not followed) and target (followed), with
/// their identities at the moment they were resolved.
pub(super) struct Both {
    pub(super) entry: Resolved,
    pub(super) target: Resolved,
    pub(super) identity: (Identity, Identity),
    /// [`Resolved::display`] of each (`.` for the root), what policy matches.
    pub(super) shown: (String, String),
}

impl PathArg {
    pub(super) fn target_shown(&self) -> Option<&str> {
        self.resolved.as_ref().map(|b| b.shown.1.as_str())
    }

    pub(super) fn entry_shown(&self) -> Option<&str> {
        self.resolved.as_ref().map(|b| b.shown.0.as_str())
    }
}

/// Where a resolved path is: the directory that holds it (device and inode), the kind of entry
/// there (file, directory, link, nothing), its path relative to the root, and the directories
/// still to be created. The entry's own inode is left out on purpose: a file replaced by another
/// file under the same name in the same directory (an editor saving, another write of this
/// server) is still what was approved; a link, or another directory on the way, is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    pub(super) parent: Option<(u64, u64)>,
    pub(super) kind: Option<u32>,
    pub(super) relative: std::path::PathBuf,
    pub(super) missing: usize,
}

pub(super) fn identity(resolved: &Resolved) -> Identity {
    use std::os::fd::AsFd;
    let parent = rustix::fs::fstat(resolved.parent.as_fd()).ok().map(|st| (st.st_dev, st.st_ino));
    let kind = resolved.name.as_ref().and_then(|name| {
        rustix::fs::statat(resolved.parent.as_fd(), name.as_os_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|st| st.st_mode & 0o170_000)
    });
    Identity { parent, kind, relative: resolved.relative().to_path_buf(), missing: resolved.missing_dirs() }
}

/// Resolves one `#[path]` argument: the entry itself and, when its last component is a link,
/// where it leads (one walk otherwise). `Ok(None)`: missing or not a directory on the way.
pub(super) fn resolve_arg(workspace: &Workspace, given: &str) -> Result<Option<Both>, PathError> {
    let skip = |e: PathError| match e {
        PathError::NotFound | PathError::NotADirectory => Ok(None),
        other => Err(other),
    };
    let entry = match workspace.resolve_entry_for_create(given) {
        Ok(entry) => entry,
        Err(e) => return skip(e),
    };
    let (target, identity) = if entry.target() == Target::Symlink {
        let target = match workspace.resolve_for_create(given) {
            Ok(target) => target,
            Err(e) => return skip(e),
        };
        let identities = (identity(&entry), identity(&target));
        (target, identities)
    } else {
        // One entry: looked at once.
        let one = identity(&entry);
        (entry.clone(), (one.clone(), one))
    };
    let shown = (entry.display(), target.display());
    Ok(Some(Both { entry, target, identity, shown }))
}

/// Resolves every `#[path]` argument beneath the workspace root. Where the path really leads
/// (every link followed) must stay inside, and is what path grants match; the tool is handed the
/// path of the entry itself, normalised (directories resolved, `.` for the root, a link in the
/// last component left as named, so deleting or moving a link acts on the link). A refusal is
/// `-32602` naming the argument, the path as given and why. Tools that are not read-only are also
/// refused files with more than one hard link (the other name may be outside); the write itself
/// checks again at the moment of use.
pub(super) fn confine_paths(
    shared: &Shared,
    tool: &ToolDef,
    mut args: JsonObject,
) -> Result<(JsonObject, Vec<PathArg>), Error> {
    let roles: Vec<&str> = tool
        .param_roles()
        .filter(|(name, role)| *role == ParamRole::Path && args.get(*name).is_some_and(Value::is_string))
        .map(|(name, _)| name)
        .collect();
    if roles.is_empty() {
        return Ok((args, Vec::new()));
    }
    let Some(workspace) = &shared.workspace else {
        return Err(Error::ToolFailed {
            tool: tool.name().to_owned(),
            reason: Failure::Internal,
            details: "this tool takes a workspace path, but the server was started without a workspace"
                .into(),
        });
    };
    let mut paths = Vec::new();
    for name in roles {
        let Some(Value::String(given)) = args.get(name) else { continue };
        let given = given.clone();
        let refused = |reason| Error::PathRefused {
            tool: tool.name().to_owned(),
            argument: name.to_owned(),
            path: given.clone(),
            reason,
        };
        let resolved = match resolve_arg(workspace, &given) {
            Ok(resolved) => resolved,
            Err(PathError::Refused { reason, .. }) => return Err(refused(reason)),
            Err(e) => {
                return Err(Error::ToolFailed {
                    tool: tool.name().to_owned(),
                    reason: Failure::Internal,
                    details: e.to_string(),
                });
            }
        };
        if let Some(both) = &resolved {
            // A tool that may write reaches nothing in a `.git` or `.teaagent` directory, by
            // its name or where a link leads.
            if !tool.behavior().read_only
                && [&both.entry, &both.target].iter().any(|r| workspace.unwritable(r.relative()).is_some())
            {
                return Err(refused(PathRefusal::Unwritable));
            }
            // A tool that may write must not reach a file that has another name somewhere else.
            if let Target::File { links, .. } = both.target.target()
                && links > 1
                && !tool.behavior().read_only
            {
                return Err(refused(PathRefusal::HardLinked));
            }
            if both.target.relative().to_str().is_none() || both.entry.relative().to_str().is_none() {
                return Err(refused(PathRefusal::InvalidPath));
            }
            args.insert(name.to_owned(), Value::String(both.shown.0.clone()));
        }
        paths.push(PathArg { name: name.to_owned(), given, resolved });
    }
    Ok((args, paths))
}

/// What the policy sees of a tool of another program's call beyond its resolved paths.
#[derive(Debug, Default)]
pub(super) struct ForeignCheck {
    /// Path values that lead outside the workspace from inside it (a link), by their spelling
    /// (normalised): rules still match the name.
    pub(super) spelled: Vec<(String, String)>,
    /// Arguments the rules cannot look into ([`crate::policy::CallFacts::unchecked`]).
    pub(super) unchecked: Vec<String>,
}

/// The path arguments of a tool of another program (`crate::tool::ForeignArgs`), resolved for the
/// policy and left as given: each string of a path argument (or of a list of them) that resolves
/// in the workspace; one that resolves outside it is the other program's business, but if it is
/// spelled inside the workspace (a link leading out), its spelling is matched too. An argument
/// the schema did not declare, a path argument of another type, or a path that cannot be
/// resolved (no workspace, a loop, a special file) cannot be checked.
pub(super) fn foreign_paths(
    shared: &Shared,
    tool: &ToolDef,
    declared: &crate::tool::ForeignArgs,
    args: &JsonObject,
) -> (Vec<PathArg>, ForeignCheck) {
    let mut check = ForeignCheck { spelled: Vec::new(), unchecked: declared.unchecked.clone() };
    check.unchecked.extend(args.keys().filter(|k| !declared.known.contains(k)).cloned());
    let mut paths = Vec::new();
    for (name, _) in tool.param_roles().filter(|(_, role)| *role == ParamRole::Path) {
        let values: Vec<&str> = match args.get(name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) if many.iter().all(Value::is_string) => {
                many.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                check.unchecked.push(name.to_owned());
                continue;
            }
        };
        let Some(workspace) = &shared.workspace else {
            check.unchecked.push(name.to_owned());
            continue;
        };
        for given in values {
            match resolve_arg(workspace, given) {
                Ok(Some(resolved)) => paths.push(PathArg {
                    name: name.to_owned(),
                    given: given.to_owned(),
                    resolved: Some(resolved),
                }),
                // Not there yet (a directory on the way is missing, and the other program may
                // create it): matched as spelled.
                Ok(None) => {
                    let spelled = lexical(shared, given);
                    if spelled.starts_with("..") {
                        check.unchecked.push(name.to_owned());
                    } else {
                        check.spelled.push((name.to_owned(), spelled));
                    }
                }
                Err(PathError::Refused { reason: PathRefusal::OutsideWorkspace, .. }) => {
                    let path = std::path::Path::new(given);
                    if path.is_relative() || workspace.strip_root(path).is_some() {
                        let spelled = lexical(shared, given);
                        if !spelled.starts_with("..") {
                            check.spelled.push((name.to_owned(), spelled));
                        }
                    }
                }
                Err(_) => check.unchecked.push(name.to_owned()),
            }
        }
    }
    (paths, check)
}

/// A path as spelled, normalised without looking at the file system (`./a//b` → `a/b`, `a/../b`
/// → `b`, the root's own absolute spelling (canonical or as given) stripped, `.` for the root), to compare with where it
/// leads. A spelling that climbs above the root keeps its `..` (and so never equals a target).
pub(super) fn lexical(shared: &Shared, given: &str) -> String {
    use std::path::Component;
    let path = std::path::Path::new(given);
    let path = match &shared.workspace {
        Some(ws) => ws.strip_root(path).unwrap_or(path),
        None => path,
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => parts.push(name),
            Component::ParentDir if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            Component::ParentDir => parts.push("..".as_ref()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    if parts.is_empty() {
        return ".".to_owned();
    }
    parts.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Resolves every `#[path]` argument of a tool that may write again and checks that each still
/// names what it named when the call was decided; `Err(argument)` when one changed. Returns the
/// fresh resolutions, for the tool: from here on it acts through their open directories, so a
/// swap while the call waits for its turn cannot move the effect elsewhere.
pub(super) fn recheck(
    shared: &Shared,
    tool: &ToolDef,
    paths: &[PathArg],
) -> Result<Vec<(String, Resolved, Resolved)>, String> {
    let Some(workspace) = &shared.workspace else { return Ok(Vec::new()) };
    // A read-only tool changes nothing that an approval could be about; it resolves again at
    // the moment of use, where confinement holds.
    if tool.behavior().read_only {
        return Ok(Vec::new());
    }
    let mut fresh = Vec::new();
    for arg in paths {
        let now = resolve_arg(workspace, &arg.given).map_err(|_| arg.name.clone())?;
        match (&arg.resolved, now) {
            (None, None) => {}
            (Some(then), Some(now)) if then.identity == now.identity => {
                let hard_linked = matches!(now.target.target(), Target::File { links, .. } if links > 1);
                if hard_linked {
                    return Err(arg.name.clone());
                }
                fresh.push((arg.name.clone(), now.entry, now.target));
            }
            _ => return Err(arg.name.clone()),
        }
    }
    Ok(fresh)
}

/// The first path argument that leads to a file with several hard links, when a path deny rule
/// applies to `tool` ([`crate::Workspace::hides_links`]).
pub(super) fn linked_file<'a>(shared: &Shared, tool: &str, paths: &'a [PathArg]) -> Option<&'a str> {
    shared.workspace.as_ref().filter(|ws| ws.hides_links(tool))?;
    paths
        .iter()
        .find(|p| p.resolved.as_ref().is_some_and(|both| both.target.links() > 1))
        .map(|p| p.name.as_str())
}

/// What every `#[path]` argument resolves to, as one digest: its name, the entry and target as
/// shown, and their identities (the directories that hold them and the kinds of entry there).
pub(super) fn targets_digest(paths: &[PathArg]) -> String {
    // Most tools take no path: their digest is always the same one.
    if paths.is_empty() {
        static NO_PATHS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        return NO_PATHS.get_or_init(|| digest_of(&[])).clone();
    }
    let parts: Vec<String> = paths
        .iter()
        .map(|p| match &p.resolved {
            Some(both) => format!("{}\0{}\0{}\0{:?}", p.name, both.shown.0, both.shown.1, both.identity),
            None => format!("{}\0(unresolved)\0{}", p.name, p.given),
        })
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    digest_of(&parts)
}
