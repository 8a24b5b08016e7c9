//! The skills' methods ([`crate::skill`]): `skills/list`, `skills/get` and
//! `resources/directory/read` (modern era), and skills' files in `resources/list` and
//! `resources/read` (both eras) next to the resource provider's. Skills are read from disk on
//! the blocking pool.

use std::sync::Arc;

use super::shared::Shared;
use crate::cursor::{Cursor, fingerprint};
use crate::error::{Error, ParamsProblem, ResourceRefusal};
use crate::mcp::resources::{ListResourcesResult, ReadResourceResult};
use crate::mcp::skills::{
    DirectoryReadParams, DirectoryReadResult, GetSkillParams, GetSkillResult, ListSkillsResult,
};
use crate::skill::{Loaded, Skills, parse_uri};

/// Skills per `skills/list` page.
const PAGE_SIZE: usize = 50;

async fn blocking<T: Send + 'static>(
    skills: &Arc<Skills>,
    f: impl FnOnce(&Skills) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let skills = Arc::clone(skills);
    match tokio::task::spawn_blocking(move || f(&skills)).await {
        Ok(result) => result,
        Err(e) => Err(Error::Internal { details: format!("reading skills: {e}") }),
    }
}

fn list_fingerprint() -> u64 {
    fingerprint(["skills"])
}

/// `skills/list`: one page of manifests, by name.
pub(crate) async fn list(shared: &Shared, cursor: Option<String>) -> Result<ListSkillsResult, Error> {
    let after = match cursor {
        Some(text) => Some(Cursor::decode(&text, "skills", list_fingerprint())?.position),
        None => None,
    };
    blocking(&shared.skills, move |skills| {
        let loaded = skills.load_all(true);
        let mut page: Vec<Loaded> =
            loaded.into_iter().filter(|s| after.as_deref().is_none_or(|a| s.name.as_str() > a)).collect();
        let more = page.len() > PAGE_SIZE;
        page.truncate(PAGE_SIZE);
        let next_cursor = match (more, page.last()) {
            (true, Some(last)) => Some(
                Cursor {
                    list: "skills".into(),
                    position: last.name.clone(),
                    fingerprint: list_fingerprint(),
                }
                .encode(),
            ),
            _ => None,
        };
        Ok(ListSkillsResult { skills: page.into_iter().map(|s| s.manifest).collect(), next_cursor })
    })
    .await
}

/// `skills/get`: the manifest of the skill whose `SKILL.md` `uri` names.
pub(crate) async fn get(shared: &Shared, params: GetSkillParams) -> Result<GetSkillResult, Error> {
    let uri = params.uri;
    blocking(&shared.skills, move |skills| {
        let unknown = || Error::InvalidParams {
            reason: ParamsProblem::UnknownSkill,
            details: format!(
                "{uri} is not the SKILL.md of a skill this server serves (skills/list lists them)"
            ),
        };
        let (name, path) = parse_uri(&uri).ok_or_else(unknown)?;
        if path != "SKILL.md" {
            return Err(unknown());
        }
        let skill = skills.find(&name, true).ok_or_else(unknown)?;
        Ok(GetSkillResult { skill: skill.manifest })
    })
    .await
}

/// `resources/directory/read`: the children of a skill's folder.
pub(crate) async fn directory(
    shared: &Shared,
    params: DirectoryReadParams,
) -> Result<DirectoryReadResult, Error> {
    if let Some(text) = params.cursor {
        // No page of a folder is ever cut: no cursor was issued.
        Cursor::decode(&text, "skill-directory", list_fingerprint())?;
    }
    let uri = params.uri;
    blocking(&shared.skills, move |skills| {
        let not_a_folder = || Error::InvalidParams {
            reason: ParamsProblem::NotADirectory,
            details: format!("{uri} is not a folder of a skill this server serves"),
        };
        let (name, path) = parse_uri(&uri).ok_or_else(not_a_folder)?;
        let skill = skills.find(&name, false).ok_or_else(not_a_folder)?;
        let resources = skill.directory(&path, &uri)?;
        Ok(DirectoryReadResult { resources, next_cursor: None })
    })
    .await
}

/// `resources/list`: every skill's `SKILL.md` first (on the first page), then the resource
/// provider's pages.
pub(crate) async fn list_resources(
    shared: &Shared,
    cursor: Option<String>,
) -> Result<ListResourcesResult, Error> {
    let mut skill_entries = Vec::new();
    if cursor.is_none() && !shared.skills.is_empty() {
        skill_entries = blocking(&shared.skills, |skills| {
            Ok(skills.load_all(false).iter().map(Loaded::listing).collect())
        })
        .await?;
    }
    let mut page = match &shared.resources {
        Some(provider) => provider.list(cursor).await?,
        None => {
            if let Some(text) = cursor {
                Cursor::decode(&text, "resources", 0)?;
            }
            ListResourcesResult { resources: Vec::new(), next_cursor: None }
        }
    };
    if !skill_entries.is_empty() {
        skill_entries.append(&mut page.resources);
        page.resources = skill_entries;
    }
    Ok(page)
}

/// Whether `resources/read` of `uri` is the skills' to answer.
pub(crate) fn reads(shared: &Shared, uri: &str) -> bool {
    !shared.skills.is_empty() && uri.starts_with(crate::skill::SCHEME)
}

/// `resources/read` of a skill's file.
pub(crate) async fn read_resource(shared: &Shared, uri: String) -> Result<ReadResourceResult, Error> {
    blocking(&shared.skills, move |skills| {
        let not_found = || Error::Resource { uri: uri.clone(), reason: ResourceRefusal::NotFound };
        let (name, path) = parse_uri(&uri).ok_or_else(not_found)?;
        if path.is_empty() {
            return Err(not_found());
        }
        let skill = skills.find(&name, false).ok_or_else(not_found)?;
        skill.read(&path, &uri)
    })
    .await
}
