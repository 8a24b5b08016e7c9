//! Where a skill's files come from: given in memory by the author, or a folder read beneath a
//! [`Workspace`]'s root (confinement, hidden paths and deny rules as for every file the server
//! reads).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{MAX_DEPTH, MAX_FILE_SIZE, MAX_FILES, SkillFileError};
use crate::workspace::{EntryKind, PathError, Target, Workspace};

/// The scopes policy is asked about for a skill's files: what `resources/list` and
/// `resources/read` may not show is neither listed in the manifest nor read.
const SCOPES: [&str; 2] = ["resources/list", "resources/read"];

/// One skill's files.
#[derive(Clone)]
pub(crate) enum Files {
    /// Given by the author: paths (`/`-separated, relative to the skill) to their bytes.
    Embedded(Arc<BTreeMap<String, Arc<[u8]>>>),
    /// A folder beneath a workspace's root (`dir`, relative to the root).
    Folder { workspace: Workspace, dir: PathBuf },
}

impl Files {
    /// Every file served and its size, `/`-separated paths relative to the skill, sorted; at most
    /// [`MAX_FILES`] (more is an error: the manifest would not be complete). In a folder: links
    /// to files that stay beneath the root are followed, links to directories are not; what
    /// policy hides, special files and names that are not UTF-8 are left out.
    pub(crate) fn list(&self) -> Result<Vec<(String, u64)>, SkillFileError> {
        match self {
            Files::Embedded(files) => Ok(files.iter().map(|(p, b)| (p.clone(), b.len() as u64)).collect()),
            Files::Folder { workspace, dir } => {
                let mut out = Vec::new();
                walk(workspace, dir, "", 0, &mut out)?;
                out.sort();
                Ok(out)
            }
        }
    }

    /// The bytes of the file at `path` (relative to the skill, `/`-separated), as read.
    pub(crate) fn read(&self, path: &str) -> Result<Arc<[u8]>, SkillFileError> {
        if path.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
            return Err(SkillFileError::NotFound);
        }
        match self {
            Files::Embedded(files) => files.get(path).cloned().ok_or(SkillFileError::NotFound),
            Files::Folder { workspace, dir } => read_file(workspace, &dir.join(path)).map(Arc::from),
        }
    }

    /// Whether `path` (relative to the skill) is a directory of it.
    pub(crate) fn is_dir(&self, path: &str, listed: &[(String, u64)]) -> bool {
        path.is_empty()
            || listed.iter().any(|(f, _)| f.strip_prefix(path).is_some_and(|rest| rest.starts_with('/')))
    }
}

fn hidden(workspace: &Workspace, resolved: &crate::workspace::Resolved) -> bool {
    SCOPES.iter().any(|scope| workspace.hides_file(scope, resolved))
}

fn walk(
    workspace: &Workspace,
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, u64)>,
) -> Result<(), SkillFileError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let resolved = workspace.resolve(dir).map_err(path_error)?;
    let entries = resolved.read_dir().map_err(path_error)?;
    for entry in entries {
        let Some(name) = entry.name.to_str() else { continue };
        let path = dir.join(name);
        let relative = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") };
        match entry.meta.kind {
            EntryKind::Dir => {
                let Ok(sub) = workspace.resolve_no_follow(&path) else { continue };
                if !hidden(workspace, &sub) {
                    walk(workspace, &path, &relative, depth + 1, out)?;
                }
            }
            // A link is followed only to a file beneath the root.
            EntryKind::File | EntryKind::Symlink => {
                let Ok(file) = workspace.resolve(&path) else { continue };
                if let Target::File { size, .. } = file.target()
                    && !hidden(workspace, &file)
                {
                    out.push((relative, size));
                }
            }
            EntryKind::Special => {}
        }
        if out.len() > MAX_FILES {
            return Err(SkillFileError::TooManyFiles);
        }
    }
    Ok(())
}

fn path_error(e: PathError) -> SkillFileError {
    match e {
        PathError::NotFound | PathError::NotADirectory => SkillFileError::NotFound,
        PathError::Refused { .. } => SkillFileError::Outside,
        PathError::Io(e) => SkillFileError::Io(e.to_string()),
    }
}

/// Reads one file beneath the root: resolved as any path (links that leave the root refused),
/// hidden ones refused, at most [`MAX_FILE_SIZE`] bytes.
fn read_file(workspace: &Workspace, path: &Path) -> Result<Vec<u8>, SkillFileError> {
    let resolved = workspace.resolve(path).map_err(path_error)?;
    if hidden(workspace, &resolved) {
        return Err(SkillFileError::Hidden);
    }
    match resolved.target() {
        Target::File { size, .. } if size > MAX_FILE_SIZE => return Err(SkillFileError::TooLarge),
        Target::File { .. } => {}
        _ => return Err(SkillFileError::NotFound),
    }
    let file = resolved.open_read().map_err(path_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes).map_err(|e| SkillFileError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(SkillFileError::TooLarge);
    }
    Ok(bytes)
}

/// The skill folders directly beneath `dir` (relative to the workspace's root): every directory
/// (or link to one beneath the root) that policy does not hide, sorted by name. A missing `dir`
/// has none.
pub(crate) fn folders(workspace: &Workspace, dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(resolved) = workspace.resolve(dir) else { return Vec::new() };
    if resolved.target() != Target::Dir || hidden(workspace, &resolved) {
        return Vec::new();
    }
    let Ok(entries) = resolved.read_dir() else { return Vec::new() };
    entries
        .into_iter()
        .filter(|e| matches!(e.meta.kind, EntryKind::Dir | EntryKind::Symlink))
        .map(|e| (e.name.to_string_lossy().into_owned(), dir.join(&e.name)))
        .filter(|(_, path)| {
            workspace.resolve(path).is_ok_and(|r| r.target() == Target::Dir && !hidden(workspace, &r))
        })
        .collect()
}
