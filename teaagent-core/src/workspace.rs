//! The workspace: the one directory tools and resources may reach.
//!
//! - [`Workspace`] is the root, canonicalised once and held open. Every path from a client goes
//!   through [`Workspace::resolve`]: component by component, relative to open directory handles,
//!   never following a symbolic link without checking where it leads, so the check and the use
//!   are made on the same handles (no window for a swapped symlink to escape through).
//! - [`lock`] is the global lock registry that keeps two servers from writing one workspace.
//! - `walk` walks the tree beneath the root's handle (`find_files`, `search_text`,
//!   `resources/list`): ignore files honoured, links never followed, nothing reached by name from
//!   above the root.
//! - `resources` serves the workspace's files as MCP resources, under `uri`'s
//!   `teaagent://workspace/…` URIs.
//!
//! `walk`, `uri` and `resources` come with the `builtin-tools` feature (off by default; see the
//! crate's docs): only the built-in tools and the shipped server use them, and they bring the
//! `ignore` crate along. Confinement ([`Workspace::resolve`], `#[path]` parameters) and [`lock`]
//! are always there.
//!
//! The root's path is kept for messages and for absolute paths from clients, never to open
//! anything: everything is opened beneath the handle taken at start, so renaming the root and
//! putting a link in its place afterwards changes nothing the server reaches.

mod fs;
pub mod lock;
mod off_limits;
mod resolve;
#[cfg(feature = "builtin-tools")]
pub mod resources;
#[cfg(feature = "builtin-tools")]
pub mod uri;
#[cfg(feature = "builtin-tools")]
pub mod walk;

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

pub use fs::{DirEntryInfo, EntryKind, Metadata};
pub use off_limits::{UNWRITABLE_DIRS, git_dir_named_in};
pub use resolve::{PathError, Resolved, Target};

/// The workspace root, held open. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    /// The root as it was given (made absolute, links not resolved), when that differs from the
    /// canonical root and has no `..`: absolute paths spelled under it are accepted too.
    given: Option<PathBuf>,
    dir: Arc<OwnedFd>,
    /// Where teaagent's home lies beneath the root, if it does (`off_limits`).
    home: Option<PathBuf>,
    /// Where the git directory the root's `.git` file names lies beneath it, if it does.
    git_dir: Option<PathBuf>,
    hidden: OnceLock<Arc<HiddenPaths>>,
    /// Which scopes path deny rules apply to ([`Workspace::hides_file`]).
    hides_links: OnceLock<Arc<LinkScopes>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("home", &self.home)
            .field("hides", &self.hidden.get().is_some())
            .finish()
    }
}

/// Which workspace paths policy hides (deny rules on paths): called with the scope asking (a
/// tool's name, or `resources/list` / `resources/read`) and a path relative to the root, `/`
/// separated; `true` hides it.
pub type HiddenPaths = dyn Fn(&str, &Path) -> bool + Send + Sync;

/// Which scopes path deny rules apply to (a tool's name, `resources/read`, ...): a file with
/// several hard links is hidden from them ([`Workspace::hides_file`]).
pub type LinkScopes = dyn Fn(&str) -> bool + Send + Sync;

impl Workspace {
    /// Opens `root` (canonicalised once, here) as a workspace. The spelling it was given in is
    /// kept too (made absolute, e.g. `/x/link` for a root reached through a link), so an absolute
    /// path under either is inside; `..` in the given spelling would make it ambiguous, so such a
    /// spelling is not kept.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        let given = std::path::absolute(root.as_ref())
            .ok()
            .filter(|p| !p.components().any(|c| c == std::path::Component::ParentDir));
        let root = std::fs::canonicalize(root.as_ref()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot use {} as the workspace root: {e}", root.as_ref().display()),
            )
        })?;
        let dir = Arc::new(resolve::open_dir(rustix::fs::CWD, &root)?);
        // Compared by components: `/x/link/` and `/x/link` are the same spelling.
        let given = given.filter(|g| g.components().ne(root.components()));
        let home = off_limits::home_beneath(&root);
        let git_dir = off_limits::git_dir_beneath(&root);
        Ok(Self {
            inner: Arc::new(Inner {
                root,
                given,
                dir,
                home,
                git_dir,
                hidden: OnceLock::new(),
                hides_links: OnceLock::new(),
            }),
        })
    }

    /// Installs the policy's hidden paths (once; every clone of this workspace shares them).
    /// Walks, searches, listings and resources leave hidden paths out; returns `false` when a
    /// filter was installed already.
    pub fn set_hidden(&self, hidden: Arc<HiddenPaths>) -> bool {
        self.inner.hidden.set(hidden).is_ok()
    }

    /// Whether `relative` (workspace-relative) is hidden from `scope`: by policy, or because it
    /// is in teaagent's home, which is hidden from every scope.
    pub fn is_hidden(&self, scope: &str, relative: &Path) -> bool {
        self.in_home(relative) || self.inner.hidden.get().is_some_and(|hide| hide(scope, relative))
    }

    /// Whether `relative` (workspace-relative, physical) is in teaagent's home, which no tool
    /// reaches (`off_limits`).
    pub fn in_home(&self, relative: &Path) -> bool {
        self.inner.home.as_deref().is_some_and(|home| relative.starts_with(home))
    }

    /// Installs which scopes path deny rules apply to (once): a file with several hard links is
    /// hidden from them ([`Workspace::hides_file`]).
    pub fn set_hides_links(&self, scopes: Arc<LinkScopes>) -> bool {
        self.inner.hides_links.set(scopes).is_ok()
    }

    /// Whether policy hides what `resolved` names from `scope`: by its name, or because it is a
    /// file with other names and a path deny rule applies to `scope` (the rule holds for the
    /// file, and a file with several names may be a denied one).
    pub fn hides_file(&self, scope: &str, resolved: &Resolved) -> bool {
        self.is_hidden(scope, resolved.relative()) || (resolved.links() > 1 && self.hides_links(scope))
    }

    /// Whether files with several hard links are hidden from `scope`.
    pub fn hides_links(&self, scope: &str) -> bool {
        self.inner.hides_links.get().is_some_and(|applies| applies(scope))
    }

    /// The canonical root (for messages; nothing is opened by this path).
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The root as given at start, when it differs from [`Workspace::root`] (a root given
    /// through a link).
    pub fn given_root(&self) -> Option<&Path> {
        self.inner.given.as_deref()
    }

    /// `path` (absolute) relative to the root, under the canonical root or the root as given;
    /// compared component by component, never as a string prefix.
    pub(crate) fn strip_root<'a>(&self, path: &'a Path) -> Option<&'a Path> {
        path.strip_prefix(self.root())
            .ok()
            .or_else(|| self.given_root().and_then(|given| path.strip_prefix(given).ok()))
    }
}
