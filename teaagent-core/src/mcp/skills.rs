//! The skills extension (`io.modelcontextprotocol/skills`, protocol 2026-07-28): `skills/list`,
//! `skills/get` and `resources/directory/read`.

use serde::{Deserialize, Serialize};

use super::JsonObject;
use super::resources::Resource;

/// The extension's identifier, the key of its declaration in `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// One skill as listed: its `SKILL.md`'s URI, its frontmatter, and every file it has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillManifest {
    /// `skill://<name>/SKILL.md`.
    pub uri: String,
    /// The `SKILL.md`'s frontmatter, every key as the file has it (`name` and `description`
    /// among them).
    pub frontmatter: JsonObject,
    /// Every file of the skill (its `SKILL.md` included), each readable with `resources/read`.
    pub resources: Vec<SkillFile>,
}

/// One file of a skill: its URI, the SHA-256 of its bytes and their number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFile {
    /// `skill://<name>/<path>`.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Bytes.
    pub size: u64,
}

/// `skills/list` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// One page of skills.
    pub skills: Vec<SkillManifest>,
    /// The next page's cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `skills/get` params.
#[derive(Debug, Clone, Deserialize)]
pub struct GetSkillParams {
    /// The skill's `SKILL.md` URI.
    pub uri: String,
}

/// `skills/get` result.
#[derive(Debug, Clone, Serialize)]
pub struct GetSkillResult {
    /// The skill.
    pub skill: SkillManifest,
}

/// `resources/directory/read` params.
#[derive(Debug, Clone, Deserialize)]
pub struct DirectoryReadParams {
    /// A directory's URI (no trailing slash).
    pub uri: String,
    /// A cursor from an earlier page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `resources/directory/read` result: the directory's children (directories have the MIME type
/// [`DIRECTORY_MIME_TYPE`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryReadResult {
    /// The children.
    pub resources: Vec<Resource>,
    /// The next page's cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The MIME type of a directory among a directory's children.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
