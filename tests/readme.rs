//! The README's first-tool section, followed as a new tool author
//! would: its `Cargo.toml` and `src/main.rs` become a fresh crate outside this workspace
//! (teaagent-core by path, every other version from this workspace's lock, offline), which must
//! build and serve: shared state across calls, a destructive tool refused with advice for *this*
//! server and allowed by the `TEAAGENT_GRANTS` line the README shows, a rate-limited tool.
//!
//! Every other Rust block of the README is built too, as written, in the same crate with the
//! README's `Cargo.toml` and the dependencies its text says to add (tool authors round 2: an
//! example that needed a dependency the manifest lacked passed as a doctest of teaagent-core,
//! which has it). The blocks are also doctests of teaagent-core (`ReadmeDoctests`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use teaagent_tests::{RawServer, Tree};

/// The section of the README that starts with `heading`, up to the next `## `.
fn section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme.find(heading).unwrap_or_else(|| panic!("no `{heading}` in the README"));
    let rest = &readme[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// The first fenced block of `section` whose info string starts with `lang`.
fn block(section: &str, lang: &str) -> String {
    let mut lines = section.lines().skip_while(|l| !l.starts_with(&format!("```{lang}")));
    assert!(lines.next().is_some(), "no ```{lang} block in the first-tool section");
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    body.join("\n") + "\n"
}

/// Every ```rust block of the README (not `ignore`), its rustdoc-hidden lines (`# …`) shown.
fn rust_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```rust") else { continue };
        let body: Vec<String> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .map(|l| match l.strip_prefix("# ") {
                Some(hidden) => hidden.to_owned(),
                None if l == "#" => String::new(),
                None => l.to_owned(),
            })
            .collect();
        if !info.contains("ignore") {
            blocks.push(body.join("\n") + "\n");
        }
    }
    blocks
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds the README's crate; returns its binary.
fn build_readme_crate(dir: &Tree) -> PathBuf {
    let readme = std::fs::read_to_string(workspace().join("README.md")).expect("read the README");
    let first_tool = section(&readme, "## Write your first tool");
    let dependency = r#"teaagent-core = { path = "../teaagent/teaagent-core" }"#;
    let manifest = block(first_tool, "toml");
    assert!(manifest.contains(dependency), "the README's Cargo.toml depends on a clone by path:\n{manifest}");
    let core = workspace().join("teaagent-core").canonicalize().expect("teaagent-core");
    let manifest = manifest.replace(dependency, &format!("teaagent-core = {{ path = {:?} }}", core));
    // The dependencies the README tells a reader to add for its other examples, as it spells them.
    // (insta, which "Test your tools" suggests, is only named in a comment of its example.)
    let tokio = r#"tokio = { version = "1", features = ["macros", "rt-multi-thread"] }"#;
    assert!(readme.contains(tokio), "the README no longer says to add `{tokio}`");
    let manifest = format!("{manifest}{tokio}\n");
    dir.write("notes/Cargo.toml", &manifest);
    dir.write("notes/src/main.rs", &block(first_tool, "rust"));
    // Every other Rust block of the README, as written (rustdoc's hidden `# ` lines included,
    // but for a hidden `fn main` in a test file): a program each, or a test file.
    for (i, code) in rust_blocks(&readme).into_iter().enumerate().skip(1) {
        if code.contains("#[tokio::test]") {
            let code: String =
                code.lines().filter(|l| l.trim() != "fn main() {}").map(|l| format!("{l}\n")).collect();
            dir.write(&format!("notes/tests/readme_{i}.rs"), &code);
        } else {
            dir.write(&format!("notes/src/bin/readme_{i}.rs"), &code);
        }
    }
    // The versions this workspace was tested with (cargo drops what the crate does not use).
    std::fs::copy(workspace().join("Cargo.lock"), dir.path("notes/Cargo.lock")).expect("copy the lock");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
        .join("readme-crate");
    let out = Command::new(cargo)
        .current_dir(dir.path("notes"))
        .args(["build", "--offline", "--bins", "--tests", "--message-format=json-render-diagnostics"])
        // Without debug info, which nothing here reads: with cargo's default (full) this build
        // took a quarter longer (92 s against 69 s from nothing, 18 s against 11 s again) and its
        // target 1.8 GB against 0.56 GB. Whether the crate builds and serves does not depend on it.
        .args(["--config", "profile.dev.debug=false"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the README's crate does not build:\n{stderr}");
    assert!(!stderr.contains("warning:"), "the README's crate builds with warnings:\n{stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|m| {
            // The program, not its test harness (`--tests` builds both).
            (m["target"]["name"] == "notes" && m["profile"]["test"] == false)
                .then(|| m["executable"].as_str().map(PathBuf::from))?
        })
        .expect("cargo names the notes binary")
}

fn call(server: &mut RawServer, tool: &str, arguments: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": arguments}))
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}"))
}

#[test]
fn the_first_tool_section_builds_and_serves_as_it_says() {
    let dir = Tree::new();
    let notes = build_readme_crate(&dir);
    let home = Tree::new();
    let start = |grants: Option<&str>| {
        let mut cmd = Command::new(&notes);
        cmd.env("TEAAGENT_HOME", home.base()).env_remove("TEAAGENT_GRANTS").env_remove("RUST_LOG");
        cmd.env_remove("TEAAGENT_PERMISSION_MODE");
        if let Some(grants) = grants {
            cmd.env("TEAAGENT_GRANTS", grants);
        }
        let mut server = RawServer::start(cmd);
        let init = server.initialize("2025-06-18");
        assert_eq!(init["serverInfo"]["name"], "notes", "{init}");
        server
    };

    // Without a grant: state shared across calls, delete refused with this server's advice.
    let mut server = start(None);
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let search = tools.iter().find(|t| t["name"] == "search_notes").expect("search_notes");
    assert_eq!(search["annotations"]["rateLimit"], json!({"maxCalls": 10, "windowSeconds": 60}));
    assert_eq!(
        text(&call(&mut server, "add_note", json!({"title": "milk", "text": "buy oat milk"}))),
        "saved `milk`"
    );
    assert_eq!(
        text(&call(&mut server, "add_note", json!({"title": "oats", "text": "oat flakes"}))),
        "saved `oats`"
    );
    assert_eq!(text(&call(&mut server, "search_notes", json!({"word": "oat"}))), "milk\noats");
    let refused = call(&mut server, "delete_note", json!({"title": "milk"}));
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    let details = refused["error"]["data"]["details"].as_str().unwrap_or_default();
    assert!(details.contains("TEAAGENT_GRANTS='delete_note'"), "advice for this server: {details}");
    assert!(!details.contains("--grant"), "no flag this binary lacks: {details}");
    // The rate limit: 10 searches a minute, one was made.
    for _ in 0..9 {
        assert!(call(&mut server, "search_notes", json!({"word": "x"}))["result"].is_object());
    }
    let limited = call(&mut server, "search_notes", json!({"word": "x"}));
    assert_eq!(limited["error"]["code"], -32002, "{limited}");
    let stderr = server.stderr_once(|e| e.contains("tools that need an approval"));
    assert!(
        stderr.lines().any(|l| l.contains("tools that need an approval") && l.contains("delete_note")),
        "startup lists delete_note:\n{stderr}"
    );
    server.finish();

    // With the README's policy line for the client: the destructive tool runs.
    let mut server = start(Some("delete_note"));
    call(&mut server, "add_note", json!({"title": "milk", "text": "buy oat milk"}));
    assert_eq!(text(&call(&mut server, "delete_note", json!({"title": "milk"}))), "deleted `milk`");
    let gone = call(&mut server, "delete_note", json!({"title": "milk"}));
    assert_eq!((text(&gone), &gone["result"]["isError"]), ("no note titled `milk`", &json!(true)));
    server.finish();
}
