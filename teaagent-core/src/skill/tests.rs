use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::scratch::Scratch;

const MD: &str = "---\nname: notes\ndescription: Keep notes\nmetadata:\n  team: docs\n---\n# Notes\n";

fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::digest::hex(&crate::digest::sha256(bytes)))
}

#[test]
fn naming_rules() {
    for good in ["a", "notes", "pdf-2", "x".repeat(64).as_str()] {
        assert!(is_valid_name(good), "{good}");
    }
    for bad in ["", "-a", "a-", "a--b", "Notes", "a_b", "a.b", "é", "x".repeat(65).as_str()] {
        assert!(!is_valid_name(bad), "{bad}");
    }
}

#[test]
fn uris_round_trip_and_hostile_ones_are_refused() {
    let uri = loaded::uri("notes", "references/a b%.md");
    assert_eq!(uri, "skill://notes/references/a%20b%25.md");
    assert_eq!(parse_uri(&uri), Some(("notes".into(), "references/a b%.md".into())));
    assert_eq!(parse_uri("skill://notes"), Some(("notes".into(), String::new())));
    for bad in [
        "skill://notes/",
        "skill://notes/../x",
        "skill://notes//x",
        "skill://No/SKILL.md",
        "file:///x",
        "skill://notes/%2e%2e/x",
        "skill://notes/%zz",
    ] {
        assert_eq!(parse_uri(bad), None, "{bad}");
    }
}

#[test]
fn an_embedded_skill_has_its_manifest_and_bad_ones_are_left_out() {
    let skills = Skills::new()
        .skill(SkillDef::embedded("notes").file("SKILL.md", MD).file("references/style.md", "short\n"))
        .skill(SkillDef::embedded("wrong-name").file("SKILL.md", MD))
        .skill(SkillDef::embedded("Bad").file("SKILL.md", MD))
        .skill(SkillDef::embedded("none").file("README.md", "x"));
    let loaded = skills.load_all(true);
    assert_eq!(loaded.len(), 1);
    let m = &loaded[0].manifest;
    assert_eq!(m.uri, "skill://notes/SKILL.md");
    assert_eq!(m.frontmatter["metadata"]["team"], "docs");
    let uris: Vec<_> = m.resources.iter().map(|r| (r.uri.as_str(), r.digest.clone(), r.size)).collect();
    assert_eq!(
        uris,
        [
            ("skill://notes/SKILL.md", sha(MD.as_bytes()), MD.len() as u64),
            ("skill://notes/references/style.md", sha(b"short\n"), 6),
        ]
    );
    let children = loaded[0].directory("", "skill://notes").expect("a folder");
    let kinds: Vec<_> = children.iter().map(|c| (c.name.as_str(), c.mime_type.as_deref())).collect();
    assert_eq!(kinds, [("SKILL.md", Some("text/markdown")), ("references", Some("inode/directory"))]);
    assert!(loaded[0].directory("SKILL.md", "skill://notes/SKILL.md").is_err());
    assert!(loaded[0].directory("nope", "skill://notes/nope").is_err());
    let read = loaded[0].read("references/style.md", "u").expect("readable");
    assert_eq!(read.contents[0].text.as_deref(), Some("short\n"));
}

#[test]
fn a_folder_is_read_beneath_its_root_with_hidden_files_and_escaping_links_left_out() {
    let scratch = Scratch::new("skills-folder");
    let outside = Scratch::new("skills-outside");
    outside.write("secret.txt", "outside");
    scratch.write("skills/notes/SKILL.md", MD);
    scratch.write("skills/notes/references/a.md", "a\n");
    scratch.write("skills/notes/.env", "TOKEN=1\n");
    scratch.write("skills/other/SKILL.md", "---\nname: other\ndescription: d\n---\n");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        scratch.path().join("skills/notes/leak.txt"),
    )
    .expect("link");
    std::os::unix::fs::symlink("references/a.md", scratch.path().join("skills/notes/inside.md"))
        .expect("link");
    let workspace = Workspace::open(scratch.path()).expect("workspace");
    workspace.set_hidden(Arc::new(|_scope: &str, path: &Path| path.ends_with(".env")));
    let skills = Skills::new().workspace_root(&workspace, "skills").workspace_root(&workspace, "missing");
    let loaded = skills.find("notes", true).expect("served");
    let files: Vec<_> = loaded.manifest.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(files, ["skill://notes/SKILL.md", "skill://notes/inside.md", "skill://notes/references/a.md"]);
    assert!(matches!(
        loaded.read(".env", "u"),
        Err(crate::Error::Resource { reason: crate::error::ResourceRefusal::Hidden, .. })
    ));
    assert!(matches!(
        loaded.read("leak.txt", "u"),
        Err(crate::Error::Resource { reason: crate::error::ResourceRefusal::OutsideWorkspace, .. })
    ));
    let names: Vec<_> = skills.load_all(false).into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["notes", "other"]);
}
