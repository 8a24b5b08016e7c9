//! The workspace's files as MCP resources.
//!
//! `resources/list` walks the tree beneath the root's handle with [`Walk`] (`.gitignore`
//! honoured also outside git repositories, `.git` skipped, hidden files kept, links not followed,
//! paths policy hides left out) in sorted order. Between pages the walk itself is kept, paused (a few at a time, for a minute), so
//! paging through everything costs one walk. The cursor names that paused walk and the last path
//! returned; when the walk is gone (expired, evicted, another server's cursor), a new walk resumes
//! right after that path, pruning every directory that sorts entirely before it: either way a
//! page costs what it holds plus the path down to it, not the tree before it. A page's files
//! are statted for their sizes by a helper thread while the walk goes on (see `page`).
//!
//! `resources/read` parses the URI strictly ([`super::uri`]), resolves it like any tool path
//! (confinement, no special files), and returns `text` for UTF-8 files without NUL bytes and
//! base64 `blob` otherwise, up to a size cap. A file policy hides (a deny rule on paths, also
//! reached through a link) is refused with `-32602`, reason `hidden_by_policy`.

mod page;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;

use super::Workspace;
use super::resolve::{PathError, Target};
use super::uri::{self, UriError};
use super::walk::{Walk, WalkEntry};
use crate::BoxFuture;
use crate::cursor::{Cursor, fingerprint};
use crate::error::{Error, PathRefusal, ResourceRefusal};
use crate::mcp::EmbeddedResource;
use crate::mcp::resources::{ListResourcesResult, ReadResourceResult, ResourceTemplate};
use crate::resource::ResourceProvider;

/// Default entries per `resources/list` page.
pub const DEFAULT_PAGE_SIZE: usize = 500;
/// Default largest file `resources/read` returns.
pub const DEFAULT_MAX_READ: u64 = 10 * 1024 * 1024;

/// Serves a workspace's files as resources.
#[derive(Debug, Clone)]
pub struct WorkspaceResources {
    inner: Arc<Inner>,
}

struct Inner {
    workspace: Workspace,
    page_size: usize,
    max_read: u64,
    fingerprint: u64,
    paused: Mutex<Vec<Paused>>,
    next_walk: AtomicU64,
    helper: page::Helper,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceResources")
            .field("root", &self.workspace.root())
            .field("page_size", &self.page_size)
            .finish()
    }
}

/// A walk paused between two pages.
struct Paused {
    id: u64,
    walk: Walk,
    /// The last path returned (what the cursor says).
    last: PathBuf,
    /// A file already taken from the walk but not yet returned.
    pending: Option<WalkEntry>,
    paused_at: Instant,
}

/// Paused walks kept at once, and for how long.
const MAX_PAUSED: usize = 8;
const PAUSE_FOR: Duration = Duration::from_secs(60);

impl WorkspaceResources {
    /// Resources of `workspace`, 500 a page, files up to 10 MiB.
    pub fn new(workspace: Workspace) -> Self {
        Self::with_limits(workspace, DEFAULT_PAGE_SIZE, DEFAULT_MAX_READ)
    }

    /// With another page size and read cap.
    pub fn with_limits(workspace: Workspace, page_size: usize, max_read: u64) -> Self {
        let fingerprint = fingerprint([uri::display(workspace.root()).as_str()]);
        Self {
            inner: Arc::new(Inner {
                workspace,
                page_size: page_size.max(1),
                max_read,
                fingerprint,
                paused: Mutex::new(Vec::new()),
                next_walk: AtomicU64::new(1),
                helper: page::Helper::default(),
            }),
        }
    }

    /// One page of resources after `cursor` (blocking: it walks the file system).
    pub fn list_blocking(&self, cursor: Option<&str>) -> Result<ListResourcesResult, Error> {
        let (walk_id, after) = match cursor {
            None => (None, None),
            Some(text) => {
                let c = Cursor::decode(text, "resources", self.inner.fingerprint)?;
                let (id, path) = c.position.split_once('/').ok_or_else(|| invalid_cursor(text))?;
                let id: u64 = id.parse().map_err(|_| invalid_cursor(text))?;
                let path =
                    uri::parse(&format!("{}{}", uri::PREFIX, path)).map_err(|_| invalid_cursor(text))?;
                (Some(id), Some(path))
            }
        };
        let resumed = match (walk_id, &after) {
            (Some(id), Some(after)) => self.take_paused(id, after),
            _ => None,
        };
        // A paused walk is already past the cursor; a new one must skip what comes before it.
        let skip_to = if resumed.is_some() { None } else { after.clone() };
        let mut paused = match resumed {
            Some(paused) => paused,
            None => Paused {
                id: self.inner.next_walk.fetch_add(1, Ordering::Relaxed),
                walk: self.walker(after.clone())?,
                last: PathBuf::new(),
                pending: None,
                paused_at: Instant::now(),
            },
        };
        let page::Page { resources, last, next } = page::take(
            &self.inner.helper,
            &mut paused.walk,
            paused.pending.take(),
            self.inner.page_size,
            |file| skip_to.as_deref().is_none_or(|a| file.relative() > a),
        );
        let next_cursor = match (next, last) {
            (Some(next), Some(last)) => {
                let position = format!("{}/{}", paused.id, &uri::to_uri(&last)[uri::PREFIX.len()..]);
                paused.pending = Some(next);
                paused.last = last;
                self.pause(paused);
                Some(
                    Cursor { list: "resources".into(), position, fingerprint: self.inner.fingerprint }
                        .encode(),
                )
            }
            _ => None,
        };
        Ok(ListResourcesResult { resources, next_cursor })
    }

    /// A sorted walk of the workspace's files, pruned to what comes after `after`.
    fn walker(&self, after: Option<PathBuf>) -> Result<Walk, Error> {
        let ws = &self.inner.workspace;
        let failed = |e: PathError| Error::Internal { details: format!("listing the workspace: {e}") };
        let root = ws.resolve(".").map_err(failed)?;
        Ok(Walk::new(ws, &root, "resources/list").map_err(failed)?.after(after))
    }

    /// The paused walk `id`, if it is still kept and stopped where the cursor says.
    fn take_paused(&self, id: u64, after: &Path) -> Option<Paused> {
        let mut paused = self.inner.paused.lock().unwrap_or_else(|p| p.into_inner());
        let at = paused.iter().position(|p| p.id == id && p.last == after)?;
        Some(paused.swap_remove(at))
    }

    fn pause(&self, walk: Paused) {
        let mut paused = self.inner.paused.lock().unwrap_or_else(|p| p.into_inner());
        paused.retain(|p| p.paused_at.elapsed() < PAUSE_FOR);
        if paused.len() >= MAX_PAUSED {
            // Forget the oldest; its cursor still works, by resuming after its path.
            if let Some(oldest) = paused.iter().enumerate().min_by_key(|(_, p)| p.paused_at).map(|(i, _)| i) {
                paused.swap_remove(oldest);
            }
        }
        paused.push(Paused { paused_at: Instant::now(), ..walk });
    }

    /// Reads one resource (blocking).
    pub fn read_blocking(&self, uri_text: &str) -> Result<ReadResourceResult, Error> {
        let refused = |reason| Error::Resource { uri: uri_text.to_owned(), reason };
        let relative = uri::parse(uri_text).map_err(|e| match e {
            UriError::NotAWorkspaceUri | UriError::BadPath => refused(ResourceRefusal::InvalidUri),
        })?;
        let resolved = self.inner.workspace.resolve(&relative).map_err(|e| match e {
            PathError::Refused { reason: PathRefusal::SpecialFile, .. } => {
                refused(ResourceRefusal::SpecialFile)
            }
            PathError::Refused { reason: PathRefusal::InvalidPath, .. } => {
                refused(ResourceRefusal::InvalidUri)
            }
            PathError::Refused { reason: PathRefusal::TeaagentHome, .. } => {
                refused(ResourceRefusal::TeaagentHome)
            }
            PathError::Refused { .. } => refused(ResourceRefusal::OutsideWorkspace),
            PathError::NotFound | PathError::NotADirectory => refused(ResourceRefusal::NotFound),
            PathError::Io(e) => Error::Internal { details: format!("reading {uri_text}: {e}") },
        })?;
        // Where the URI really leads (links followed) is what policy is asked about.
        if self.inner.workspace.hides_file("resources/read", &resolved) {
            return Err(refused(ResourceRefusal::Hidden));
        }
        match resolved.target() {
            Target::File { size, .. } if size > self.inner.max_read => {
                return Err(refused(ResourceRefusal::TooLarge));
            }
            Target::File { .. } => {}
            Target::Missing => return Err(refused(ResourceRefusal::NotFound)),
            Target::Dir | Target::Symlink => return Err(refused(ResourceRefusal::SpecialFile)),
        }
        let file = resolved.open_read().map_err(|e| match e {
            PathError::NotFound => refused(ResourceRefusal::NotFound),
            PathError::Refused { reason: PathRefusal::SpecialFile, .. } => {
                refused(ResourceRefusal::SpecialFile)
            }
            PathError::Refused { .. } => refused(ResourceRefusal::OutsideWorkspace),
            other => Error::Internal { details: format!("reading {uri_text}: {other}") },
        })?;
        let mut bytes = Vec::new();
        file.take(self.inner.max_read + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Internal { details: format!("reading {uri_text}: {e}") })?;
        if bytes.len() as u64 > self.inner.max_read {
            return Err(refused(ResourceRefusal::TooLarge));
        }
        let canonical = uri::to_uri(resolved.relative());
        let contents = match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => EmbeddedResource {
                uri: canonical,
                mime_type: Some(guess_mime(resolved.relative(), Some(true)).to_owned()),
                text: Some(text),
                blob: None,
            },
            Ok(text) => blob(canonical, resolved.relative(), text.as_bytes()),
            Err(e) => blob(canonical, resolved.relative(), e.as_bytes()),
        };
        Ok(ReadResourceResult { contents: vec![contents] })
    }
}

fn blob(uri: String, relative: &Path, bytes: &[u8]) -> EmbeddedResource {
    EmbeddedResource {
        uri,
        mime_type: Some(guess_mime(relative, Some(false)).to_owned()),
        text: None,
        blob: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
    }
}

fn invalid_cursor(text: &str) -> Error {
    Error::InvalidParams {
        reason: crate::error::ParamsProblem::InvalidCursor,
        details: format!("cursor {text:?} was not issued by this server; start again without a cursor"),
    }
}

/// A MIME type from the file name; `is_text` (when known from the contents) settles names the
/// table does not know.
fn guess_mime(relative: &Path, is_text: Option<bool>) -> &'static str {
    if let Some(mime) = mime_guess::from_path(relative).first_raw() {
        return mime;
    }
    let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    const TEXT_NAMES: &[&str] = &[
        "Makefile",
        "Dockerfile",
        "LICENSE",
        "README",
        "CHANGELOG",
        "Cargo.lock",
        "Gemfile",
        "Rakefile",
        "Procfile",
    ];
    match is_text {
        Some(true) => "text/plain",
        Some(false) => "application/octet-stream",
        None if TEXT_NAMES.contains(&name) || name.starts_with('.') => "text/plain",
        None => "application/octet-stream",
    }
}

impl ResourceProvider for WorkspaceResources {
    fn list(&self, cursor: Option<String>) -> BoxFuture<'static, Result<ListResourcesResult, Error>> {
        let this = self.clone();
        Box::pin(async move { blocking(move || this.list_blocking(cursor.as_deref())).await })
    }

    fn read(&self, uri: String) -> BoxFuture<'static, Result<ReadResourceResult, Error>> {
        let this = self.clone();
        Box::pin(async move { blocking(move || this.read_blocking(&uri)).await })
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: uri::TEMPLATE.to_owned(),
            name: "workspace-file".to_owned(),
            description: Some(format!(
                "A file of the workspace {}, by its path relative to the root",
                self.inner.workspace.root().display()
            )),
            mime_type: None,
        }]
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => Err(Error::Internal { details: e.to_string() }),
    }
}
