//! One skill as served now: its files read, their digests and sizes, its frontmatter checked;
//! and what the methods answer from it (manifest, `resources/list` entry, file reads, folder
//! listings).

use base64::Engine as _;

use super::source::Files;
use super::{MAX_SKILL_MD, MAX_SKILL_SIZE, frontmatter, is_valid_name};
use crate::error::{Error, ParamsProblem, ResourceRefusal};
use crate::mcp::EmbeddedResource;
use crate::mcp::JsonObject;
use crate::mcp::resources::{ReadResourceResult, Resource};
use crate::mcp::skills::{DIRECTORY_MIME_TYPE, SkillFile, SkillManifest};

/// The scheme of skill URIs.
pub(crate) const SCHEME: &str = "skill://";
/// Every skill's instructions.
const SKILL_MD: &str = "SKILL.md";

/// One skill, loaded.
#[derive(Clone)]
pub(crate) struct Loaded {
    pub(crate) name: String,
    files: Files,
    /// Its files' paths, sorted, and their sizes (as read for a digest, else as listed).
    listed: Vec<(String, u64)>,
    pub(crate) manifest: SkillManifest,
}

impl Loaded {
    /// Lists the skill `name`'s files and checks it; the problem, said for a person, when it
    /// cannot be served. With `digests` every file is read for its manifest entry; without (to
    /// read one file, list a folder or list resources) only its `SKILL.md`, and the manifest
    /// lists only that.
    pub(super) fn load(name: String, files: Files, digests: bool) -> Result<Self, String> {
        if !is_valid_name(&name) {
            return Err("its name must be 1 to 64 of a-z, 0-9 and `-`, not starting or ending with `-`, without `--`; rename its folder".into());
        }
        let mut listed = files.list().map_err(|e| format!("listing its files: {e}"))?;
        if !listed.iter().any(|(f, _)| f == SKILL_MD) {
            return Err(format!("it has no {SKILL_MD}"));
        }
        let too_large = || format!("its files are larger than {MAX_SKILL_SIZE} bytes together");
        if listed.iter().map(|(_, size)| size).sum::<u64>() > MAX_SKILL_SIZE {
            return Err(too_large());
        }
        let mut resources = Vec::with_capacity(listed.len());
        let mut total = 0u64;
        let mut skill_md = None;
        for (path, size) in &mut listed {
            if !digests && path != SKILL_MD {
                continue;
            }
            let bytes = files.read(path).map_err(|e| format!("reading {path}: {e}"))?;
            // The size as read (a file may have grown since it was listed).
            *size = bytes.len() as u64;
            total += *size;
            if total > MAX_SKILL_SIZE {
                return Err(too_large());
            }
            resources.push(SkillFile {
                uri: uri(&name, path),
                digest: format!("sha256:{}", crate::digest::hex(&crate::digest::sha256(&bytes))),
                size: *size,
            });
            if path == SKILL_MD {
                skill_md = Some(bytes);
            }
        }
        let skill_md = skill_md.unwrap_or_default();
        if skill_md.len() as u64 > MAX_SKILL_MD {
            return Err(format!("its {SKILL_MD} is larger than {MAX_SKILL_MD} bytes"));
        }
        let text = std::str::from_utf8(&skill_md).map_err(|_| format!("its {SKILL_MD} is not UTF-8"))?;
        let frontmatter = frontmatter::parse(text).map_err(|e| format!("its {SKILL_MD}: {e}"))?;
        check_frontmatter(&name, &frontmatter)?;
        let manifest = SkillManifest { uri: uri(&name, SKILL_MD), frontmatter, resources };
        Ok(Self { name, files, listed, manifest })
    }

    /// Its `SKILL.md` in `resources/list`: named and described as its frontmatter says.
    pub(crate) fn listing(&self) -> Resource {
        let text = |key: &str| self.manifest.frontmatter.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        Resource {
            uri: self.manifest.uri.clone(),
            name: text("name").unwrap_or_else(|| self.name.clone()),
            mime_type: Some("text/markdown".into()),
            size: self.manifest.resources.iter().find(|r| r.uri == self.manifest.uri).map(|r| r.size),
            description: text("description"),
        }
    }

    /// `resources/read` of its file at `path`.
    pub(crate) fn read(&self, path: &str, uri_text: &str) -> Result<ReadResourceResult, Error> {
        let refused = |reason| Error::Resource { uri: uri_text.to_owned(), reason };
        let bytes = self.files.read(path).map_err(|e| match e {
            super::SkillFileError::NotFound => refused(ResourceRefusal::NotFound),
            super::SkillFileError::Hidden => refused(ResourceRefusal::Hidden),
            super::SkillFileError::TooLarge => refused(ResourceRefusal::TooLarge),
            super::SkillFileError::Outside => refused(ResourceRefusal::OutsideWorkspace),
            other => Error::Internal { details: format!("reading {uri_text}: {other}") },
        })?;
        let mime = mime_type(path);
        let contents = match std::str::from_utf8(&bytes) {
            Ok(text) if !text.contains('\0') => EmbeddedResource {
                uri: uri(&self.name, path),
                mime_type: Some(if mime == BINARY { "text/plain" } else { mime }.to_owned()),
                text: Some(text.to_owned()),
                blob: None,
            },
            _ => EmbeddedResource {
                uri: uri(&self.name, path),
                mime_type: Some(mime.to_owned()),
                text: None,
                blob: Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            },
        };
        Ok(ReadResourceResult { contents: vec![contents] })
    }

    /// The children of its folder `path` (`""` for the skill's own), or `-32602` when that is
    /// not one of its folders.
    pub(crate) fn directory(&self, path: &str, uri_text: &str) -> Result<Vec<Resource>, Error> {
        if !self.files.is_dir(path, &self.listed) {
            return Err(Error::InvalidParams {
                reason: ParamsProblem::NotADirectory,
                details: format!("{uri_text} is not a folder of a skill this server serves"),
            });
        }
        let prefix = if path.is_empty() { String::new() } else { format!("{path}/") };
        let mut children: Vec<Resource> = Vec::new();
        for (file, size) in &self.listed {
            let Some(rest) = file.strip_prefix(&prefix) else { continue };
            let (child, is_dir) = match rest.split_once('/') {
                Some((dir, _)) => (dir, true),
                None => (rest, false),
            };
            let child_path = format!("{prefix}{child}");
            if children.last().is_some_and(|c| c.uri == uri(&self.name, &child_path)) {
                continue;
            }
            children.push(Resource {
                uri: uri(&self.name, &child_path),
                name: child.to_owned(),
                mime_type: Some(if is_dir { DIRECTORY_MIME_TYPE } else { mime_type(file) }.into()),
                size: if is_dir { None } else { Some(*size) },
                description: None,
            });
        }
        Ok(children)
    }
}

/// The frontmatter's `name` is the skill's, and it has a `description`.
fn check_frontmatter(name: &str, frontmatter: &JsonObject) -> Result<(), String> {
    match frontmatter.get("name") {
        Some(serde_json::Value::String(n)) if n == name => {}
        Some(serde_json::Value::String(n)) => {
            return Err(format!(
                "its frontmatter's name is `{n}`, but its folder is `{name}`: they must be the same"
            ));
        }
        _ => return Err(format!("its frontmatter has no `name: {name}`")),
    }
    match frontmatter.get("description") {
        Some(serde_json::Value::String(d)) if !d.trim().is_empty() => Ok(()),
        _ => Err("its frontmatter has no `description` (what the skill is for, and when to use it)".into()),
    }
}

/// The URI of the skill `name`'s file (or folder) at `path` (`""`: the skill's folder).
pub(crate) fn uri(name: &str, path: &str) -> String {
    let mut out = format!("{SCHEME}{name}");
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        out.push('/');
        for b in segment.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// A skill URI's name and path (decoded; `""` for the skill's folder), if it is one.
pub(crate) fn parse_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !is_valid_name(name) || rest.ends_with('/') {
        return None;
    }
    let mut bytes = Vec::with_capacity(path.len());
    let mut raw = path.bytes();
    while let Some(b) = raw.next() {
        if b == b'%' {
            let hi = raw.next().and_then(crate::digest::hex_value)?;
            let lo = raw.next().and_then(crate::digest::hex_value)?;
            bytes.push(hi << 4 | lo);
        } else {
            bytes.push(b);
        }
    }
    let path = String::from_utf8(bytes).ok()?;
    if !path.is_empty() && path.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
        return None;
    }
    Some((name.to_owned(), path))
}

const BINARY: &str = "application/octet-stream";

/// A MIME type from the file's name.
fn mime_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "py" => "text/x-python",
        "sh" | "bash" => "application/x-sh",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => BINARY,
    }
}
