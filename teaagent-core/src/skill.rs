//! Skills: folders of instructions an agent loads when a task calls for them, each with a
//! `SKILL.md` (YAML frontmatter with `name` and `description`, then Markdown) and any files it
//! refers to. A server offers them with [`Server::skills`](crate::Server::skills), the way it
//! offers prompts.
//!
//! ```
//! use teaagent_core::skill::{SkillDef, Skills};
//! use teaagent_core::{Registry, Server};
//!
//! # fn main() -> std::io::Result<()> {
//! let skills = Skills::new().skill(
//!     SkillDef::embedded("release-notes")
//!         .file("SKILL.md", "---\nname: release-notes\ndescription: Write the release notes\n---\n\nRead references/style.md first.\n")
//!         .file("references/style.md", "One line per change, newest first.\n"),
//! );
//! // Or from disk: one skill's folder, or a folder whose subfolders are skills.
//! # let dir = tempfile_dir()?;
//! let skills = skills.root(&dir)?;
//! let server = Server::new(Registry::builder().build().unwrap()).skills(skills);
//! # let _ = server;
//! # Ok(())
//! # }
//! # fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
//! #     let dir = std::env::temp_dir().join(format!("teaagent-skill-doc-{}", std::process::id()));
//! #     std::fs::create_dir_all(&dir)?;
//! #     Ok(dir)
//! # }
//! ```
//!
//! What a client gets (protocol 2026-07-28; the server declares
//! `extensions."io.modelcontextprotocol/skills": {"directoryRead": true}` and `resources`):
//! `skills/list` (the manifests: each skill's `skill://<name>/SKILL.md`, its frontmatter, and
//! every file with its size and `sha256:` digest), `skills/get` of one `SKILL.md` URI, and
//! `resources/directory/read` of `skill://<name>[/<folder>]`. In both eras every file is
//! readable with `resources/read` and every `SKILL.md` is in `resources/list` (named and
//! described as its frontmatter says, `text/markdown`), so a legacy client reaches skills as
//! resources; the `skills/*` methods and `resources/directory/read` are answered in the modern era
//! only (`-32601` in the legacy one, which has no extensions to declare them in).
//!
//! Decisions:
//! - Files are read when asked for, never cached: a skill edited on disk is served as it is now,
//!   and each digest and size is of the bytes as read (the same read as `resources/read`).
//!   Only `skills/list` and `skills/get` read every file of a skill; `resources/read`, a
//!   folder's listing and `resources/list` read its `SKILL.md` (to check the skill is served)
//!   and the file asked for.
//! - A skill's name is its folder's name (an embedded one's, the name given): 1 to 64 of
//!   `a-z`, `0-9` and `-`, not starting or ending with `-`, no `--`; its frontmatter's `name`
//!   must be the same, and its `description` a non-empty string. A skill that breaks a rule, or
//!   whose `SKILL.md` is not UTF-8 YAML frontmatter, is left out with a warning on stderr (once
//!   per problem), never an error for the others. Of two skills of one name, the first added
//!   is served.
//! - Bounds, so a hostile folder costs little: `SKILL.md` up to 1 MiB and its frontmatter up to
//!   64 KiB, nested at most 32 deep, 20,000 nodes with aliases expanded; a skill has at most
//!   512 files in folders at most 16 deep, each up to 8 MiB and all together up to 16 MiB (a
//!   skill over a bound is left out with a warning: a manifest must list every file).
//! - A folder is read beneath a [`Workspace`]'s root: links that leave the
//!   root are refused, special files skipped, links to directories not followed, and what the
//!   workspace hides (deny rules on paths, files with several hard links under them) is neither
//!   in the manifest nor readable (`-32602`, `hidden_by_policy`).
//! - `skills/get` of a URI that is no skill's `SKILL.md`, and `resources/directory/read` of one
//!   that is not a skill's folder, are `-32602`.

mod frontmatter;
mod loaded;
mod source;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use frontmatter::FrontmatterError;
pub(crate) use loaded::{Loaded, SCHEME, parse_uri};
use source::Files;

use crate::workspace::Workspace;

/// Most files one skill may have.
pub const MAX_FILES: usize = 512;
/// Largest file of a skill.
pub const MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;
/// Largest skill (all its files).
pub const MAX_SKILL_SIZE: u64 = 16 * 1024 * 1024;
/// Largest `SKILL.md`.
pub const MAX_SKILL_MD: u64 = 1024 * 1024;
/// Deepest folder of a skill.
pub(crate) const MAX_DEPTH: usize = 16;
/// Most skills served.
pub const MAX_SKILLS: usize = 1024;

/// Why a skill's file cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFileError {
    /// No such file.
    #[error("no such file")]
    NotFound,
    /// It leads outside the root it is read beneath.
    #[error("it leads outside the folder it is served from")]
    Outside,
    /// The permission policy hides it.
    #[error("it is hidden by the permission policy (a deny rule on its path)")]
    Hidden,
    /// Larger than [`MAX_FILE_SIZE`].
    #[error("it is larger than {MAX_FILE_SIZE} bytes")]
    TooLarge,
    /// More than [`MAX_FILES`] files.
    #[error("the skill has more than {MAX_FILES} files")]
    TooManyFiles,
    /// Reading failed.
    #[error("{0}")]
    Io(String),
}

/// One skill given by the author: its name and files.
#[derive(Clone)]
pub struct SkillDef {
    name: String,
    files: BTreeMap<String, Arc<[u8]>>,
}

impl std::fmt::Debug for SkillDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillDef").field("name", &self.name).field("files", &self.files.keys()).finish()
    }
}

impl SkillDef {
    /// A skill named `name` whose files are given with [`SkillDef::file`] (`include_str!` or
    /// `include_bytes!` keeps them in the binary). Its `SKILL.md` is one of them.
    pub fn embedded(name: impl Into<String>) -> Self {
        Self { name: name.into(), files: BTreeMap::new() }
    }

    /// A file at `path` (relative to the skill, `/`-separated: `SKILL.md`,
    /// `references/style.md`); a later one at the same path replaces it.
    pub fn file(mut self, path: impl Into<String>, contents: impl AsRef<[u8]>) -> Self {
        self.files.insert(path.into(), Arc::from(contents.as_ref()));
        self
    }
}

/// Where skills come from, in the order added.
#[derive(Clone)]
enum Source {
    /// Given by the author.
    Given(String, Files),
    /// One skill folder (`dir` beneath the workspace's root), named as the folder.
    Folder(String, Workspace, PathBuf),
    /// A folder of skill folders (`dir` beneath the workspace's root; missing is fine).
    Root(Workspace, PathBuf),
}

/// The skills a server offers.
#[derive(Clone, Default)]
pub struct Skills {
    sources: Vec<Source>,
    /// Problems already warned about (each said once).
    warned: Arc<Mutex<HashSet<String>>>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills").field("sources", &self.sources.len()).finish()
    }
}

impl Skills {
    /// No skills yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a skill given in code.
    pub fn skill(mut self, def: SkillDef) -> Self {
        self.sources.push(Source::Given(def.name, Files::Embedded(Arc::new(def.files))));
        self
    }

    /// Adds the skill in the folder `dir` (named as the folder), read beneath it.
    pub fn directory(mut self, dir: impl AsRef<Path>) -> std::io::Result<Self> {
        let workspace = Workspace::open(dir.as_ref())?;
        let name = workspace.root().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        self.sources.push(Source::Folder(name, workspace, PathBuf::from(".")));
        Ok(self)
    }

    /// Adds every skill folder in `dir` (each `<dir>/<name>/SKILL.md`), looked for whenever
    /// skills are listed: one added later is served without a restart.
    pub fn root(self, dir: impl AsRef<Path>) -> std::io::Result<Self> {
        let workspace = Workspace::open(dir.as_ref())?;
        Ok(self.workspace_root(&workspace, "."))
    }

    /// Adds every skill folder in `dir`, a path relative to `workspace`'s root (e.g.
    /// `.agents/skills`), read beneath that root under its confinement and hidden paths. A
    /// missing `dir` has no skills (until it is made).
    pub fn workspace_root(mut self, workspace: &Workspace, dir: impl AsRef<Path>) -> Self {
        self.sources.push(Source::Root(workspace.clone(), dir.as_ref().to_path_buf()));
        self
    }

    /// Whether no skill was added (then nothing about skills is declared or served).
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Every candidate skill now: its name and files, in the order added, first of a name
    /// kept.
    fn candidates(&self) -> Vec<(String, Files)> {
        let mut out: Vec<(String, Files)> = Vec::new();
        let push = |name: String, files: Files, out: &mut Vec<(String, Files)>| {
            if out.iter().any(|(n, _)| *n == name) {
                self.warn(&name, "another skill of the same name is served instead");
            } else if out.len() < MAX_SKILLS {
                out.push((name, files));
            }
        };
        for source in &self.sources {
            match source {
                Source::Given(name, files) => push(name.clone(), files.clone(), &mut out),
                Source::Folder(name, workspace, dir) => {
                    let files = Files::Folder { workspace: workspace.clone(), dir: dir.clone() };
                    push(name.clone(), files, &mut out);
                }
                Source::Root(workspace, dir) => {
                    for (name, path) in source::folders(workspace, dir) {
                        push(name, Files::Folder { workspace: workspace.clone(), dir: path }, &mut out);
                    }
                }
            }
        }
        out
    }

    /// Every skill that can be served now, sorted by name (blocking: with `digests` it reads
    /// every file, else each `SKILL.md`).
    pub(crate) fn load_all(&self, digests: bool) -> Vec<Loaded> {
        let mut loaded: Vec<Loaded> = self
            .candidates()
            .into_iter()
            .filter_map(|(name, files)| self.load(name, files, digests))
            .collect();
        loaded.sort_by(|a, b| a.name.cmp(&b.name));
        loaded
    }

    /// The skill named `name`, if it can be served now (blocking; `digests` as for
    /// [`Skills::load_all`]).
    pub(crate) fn find(&self, name: &str, digests: bool) -> Option<Loaded> {
        let (name, files) = self.candidates().into_iter().find(|(n, _)| n == name)?;
        self.load(name, files, digests)
    }

    fn load(&self, name: String, files: Files, digests: bool) -> Option<Loaded> {
        match Loaded::load(name.clone(), files, digests) {
            Ok(loaded) => Some(loaded),
            Err(problem) => {
                self.warn(&name, &problem);
                None
            }
        }
    }

    /// Says on stderr, once, that the skill `name` is not served and why.
    fn warn(&self, name: &str, problem: &str) {
        let key = format!("{name}\0{problem}");
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        if warned.len() < 10_000 && warned.insert(key) {
            tracing::warn!(
                "the skill `{}` is not served: {}",
                crate::visible::escape(name),
                crate::visible::escape(problem)
            );
        }
    }
}

/// Whether `name` follows the naming rules: 1 to 64 of `a-z`, `0-9`, `-`; no `-` first or last;
/// no `--`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests;
