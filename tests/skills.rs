//! Skills served by the real `teaagent mcp serve` (stdio): the workspace's (`.agents/skills`,
//! `.claude/skills`) and the user's own (`$TEAAGENT_HOME/skills`), under the workspace's
//! confinement and deny rules. A file a path deny rule hides, a file with a second hard link
//! (hidden while a path rule applies) and a link that leaves the root are neither in the
//! manifest nor readable; every digest and size is of the bytes on disk; a skill that breaks
//! the rules is left out with a warning on stderr, escaped; a legacy client reads skills as
//! resources.

use std::process::Command;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

/// `sha256:` and the hex SHA-256 of the file at `path`, by the system's `sha256sum`.
fn digest(path: &std::path::Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().expect("sha256sum");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    format!("sha256:{}", text.split_whitespace().next().expect("a digest"))
}

const DEPLOY: &str = "---\nname: deploy\ndescription: Deploy the service, step by step\nmetadata:\n  owner: ops\n  reviewed: no\n---\n\nFollow references/steps.md.\n";

/// A workspace with skills, a home with the user's own, and the server on it.
fn serve() -> (Tree, Tree, RawServer) {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/.agents/skills/deploy/SKILL.md", DEPLOY);
    tree.write("ws/.agents/skills/deploy/references/steps.md", "1. Build\n2. Ship\n");
    tree.write("ws/.agents/skills/deploy/.env", "TOKEN=secret\n");
    tree.write("ws/.agents/skills/deploy/references/shared.md", "two names\n");
    std::fs::hard_link(
        tree.path("ws/.agents/skills/deploy/references/shared.md"),
        tree.path("ws/shared-copy.md"),
    )
    .expect("hard link");
    tree.symlink("ws/.agents/skills/deploy/leak.md", tree.path("outside/secret.txt"));
    tree.write("ws/.claude/skills/Bad\u{1b}[2J/SKILL.md", "---\nname: bad\ndescription: x\n---\n");
    tree.write("ws/.claude/skills/mismatch/SKILL.md", "---\nname: other\ndescription: x\n---\n");
    tree.write("ws/.claude/skills/review/SKILL.md", "---\nname: review\ndescription: Review a change\n---\n");
    home.write(
        "skills/mine/SKILL.md",
        "---\nname: mine\ndescription: My own habits\n---\n\nShort commits.\n",
    );
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env("TEAAGENT_DENY", "*:path=**/.env")
        .env_remove("RUST_LOG");
    (tree, home, RawServer::start(cmd))
}

fn error_reason(answer: &Value) -> (i64, String) {
    let error = &answer["error"];
    assert!(error.is_object(), "expected an error: {answer}");
    (error["code"].as_i64().expect("code"), error["data"]["reason"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn workspace_and_home_skills_are_served_under_the_workspace_rules() {
    let (tree, home, mut server) = serve();
    let discover = server.request("server/discover", modern(json!({})));
    let capabilities = &discover["result"]["capabilities"];
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/skills"], json!({"directoryRead": true}));
    assert!(capabilities["resources"].is_object(), "{discover}");

    let list = server.request("skills/list", modern(json!({})));
    let result = &list["result"];
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(0), json!("private")),
        "{list}"
    );
    let skills = result["skills"].as_array().expect("skills");
    let names: Vec<_> =
        skills.iter().map(|s| s["frontmatter"]["name"].as_str().unwrap_or_default()).collect();
    assert_eq!(names, ["deploy", "mine", "review"], "{list}");

    // The manifest: only what is served, each digest and size of the bytes on disk.
    let deploy = &skills[0];
    assert_eq!(deploy["uri"], "skill://deploy/SKILL.md");
    assert_eq!(deploy["frontmatter"]["metadata"], json!({"owner": "ops", "reviewed": "no"}));
    let files: Vec<_> = deploy["resources"].as_array().expect("resources").iter().collect();
    let uris: Vec<_> = files.iter().map(|f| f["uri"].as_str().unwrap_or_default()).collect();
    assert_eq!(uris, ["skill://deploy/SKILL.md", "skill://deploy/references/steps.md"], "{deploy}");
    for (file, rel) in files.iter().zip(["SKILL.md", "references/steps.md"]) {
        let path = tree.path(&format!("ws/.agents/skills/deploy/{rel}"));
        assert_eq!(file["digest"], digest(&path), "{rel}");
        assert_eq!(file["size"], std::fs::metadata(&path).expect("size").len(), "{rel}");
        let read = server.request("resources/read", modern(json!({"uri": file["uri"]})));
        let text = read["result"]["contents"][0]["text"].as_str().expect("text");
        assert_eq!(text, std::fs::read_to_string(&path).expect("file"), "{rel}");
    }
    let mine = &skills[1];
    assert_eq!(mine["resources"][0]["digest"], digest(&home.path("skills/mine/SKILL.md")));

    // What is not served is refused when asked for by name.
    for (uri, reason) in [
        ("skill://deploy/.env", "hidden_by_policy"),
        ("skill://deploy/references/shared.md", "hidden_by_policy"),
        ("skill://deploy/leak.md", "outside_workspace"),
        ("skill://deploy/../../../outside/secret.txt", "not_found"),
        ("skill://mismatch/SKILL.md", "not_found"),
    ] {
        let read = server.request("resources/read", modern(json!({"uri": uri})));
        assert_eq!(error_reason(&read), (-32602, reason.to_owned()), "{uri}: {read}");
    }
    let unknown = server.request("skills/get", modern(json!({"uri": "skill://nope/SKILL.md"})));
    assert_eq!(error_reason(&unknown), (-32602, "unknown_skill".to_owned()));
    let got = server.request("skills/get", modern(json!({"uri": "skill://deploy/SKILL.md"})));
    assert_eq!(got["result"]["skill"], *deploy);

    // Folders: the skill's own and its subfolder; a file is no folder.
    let dir = server.request("resources/directory/read", modern(json!({"uri": "skill://deploy"})));
    let children: Vec<_> = dir["result"]["resources"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| (c["name"].as_str().unwrap_or_default(), c["mimeType"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(children, [("SKILL.md", "text/markdown"), ("references", "inode/directory")], "{dir}");
    let sub = server.request("resources/directory/read", modern(json!({"uri": "skill://deploy/references"})));
    let uris: Vec<_> =
        sub["result"]["resources"].as_array().expect("children").iter().map(|c| &c["uri"]).collect();
    assert_eq!(uris, [&json!("skill://deploy/references/steps.md")], "{sub}");
    let file = server.request("resources/directory/read", modern(json!({"uri": "skill://deploy/SKILL.md"})));
    assert_eq!(error_reason(&file).0, -32602);

    // Each SKILL.md is in resources/list, named and described by its frontmatter.
    let resources = server.request("resources/list", modern(json!({})));
    let listed = resources["result"]["resources"].as_array().expect("resources");
    let entry = listed.iter().find(|r| r["uri"] == "skill://deploy/SKILL.md").expect("listed");
    assert_eq!(
        (&entry["name"], &entry["description"], &entry["mimeType"]),
        (&json!("deploy"), &json!("Deploy the service, step by step"), &json!("text/markdown"))
    );
    assert!(listed.iter().all(|r| !r["uri"].as_str().unwrap_or_default().contains(".env")));

    // Bad skills are left out with a warning, escaped.
    let stderr = server.stderr_once(|s| s.contains("`mismatch`") && s.contains("Bad"));
    assert!(stderr.contains("the skill `mismatch` is not served"), "{stderr}");
    assert!(stderr.contains(r"Bad\e[2J"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    server.finish();
}

#[test]
fn a_legacy_client_reads_skills_as_resources_and_has_no_skills_methods() {
    let (_tree, home, mut server) = serve();
    let init = server.initialize("2025-11-25");
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    assert!(init["capabilities"].get("extensions").is_none(), "{init}");
    let read = server.request("resources/read", json!({"uri": "skill://mine/SKILL.md"}));
    let text = read["result"]["contents"][0]["text"].as_str().expect("text");
    assert_eq!(text, std::fs::read_to_string(home.path("skills/mine/SKILL.md")).expect("file"));
    let list = server.request("skills/list", json!({}));
    assert_eq!(list["error"]["code"], -32601, "{list}");
    server.finish();
}
