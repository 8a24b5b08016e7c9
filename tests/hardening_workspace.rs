//! Hardening: the workspace attack classes, each against the real binary
//! (`teaagent mcp serve`), each with a tree an attacker could commit or a call an injected prompt
//! could make.
//!
//! Every request has the raw driver's deadline as its watchdog: a server that hangs fails the
//! test by not answering, never by a timing assertion.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree, peak_memory};

/// `teaagent mcp serve --root ROOT` with a private home (and `config`, if any, as the user's
/// `config.toml`).
fn serve_with(root: &Path, config: Option<&str>) -> (RawServer, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("home");
    if let Some(config) = config {
        std::fs::write(home.path().join("config.toml"), config).expect("config");
    }
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
        .arg(root)
        .env("TEAAGENT_HOME", home.path());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    (server, home)
}

fn serve(root: &Path) -> (RawServer, tempfile::TempDir) {
    serve_with(root, None)
}

fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

/// The result of a call that must succeed (not `isError`), as text.
fn ok(server: &mut RawServer, tool: &str, args: Value) -> String {
    let answer = call(server, tool, args.clone());
    assert_eq!(answer["result"]["isError"], false, "{tool} {args}: {answer}");
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Every resource URI, through every page.
fn all_resources(server: &mut RawServer) -> Vec<String> {
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = server.request("resources/list", params);
        let result = &page["result"];
        assert!(result.is_object(), "{page}");
        for r in result["resources"].as_array().expect("resources") {
            uris.push(r["uri"].as_str().expect("uri").to_owned());
        }
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return uris,
        }
    }
    panic!("resources/list never ended");
}

/// Item 1: ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`, nested ones) that are
/// links to `/dev/zero`, FIFOs, or links to a file outside the root. find_files, search_text and resources/list
/// answer, and a linked ignore file outside the root is not read (its rule does not apply).
#[test]
fn special_ignore_files_neither_hang_nor_blow_up_nor_read_outside() {
    let tree = Tree::new();
    // The outside file would ignore every `.txt` file if it were read.
    tree.write("outside/rules", "*.txt\n");
    tree.write("ws/sub/deep/b.txt", "hello from b\n");
    tree.write("ws/other/c.txt", "hello from c\n");
    tree.write("ws/other/.gitignore", "ignored.txt\n");
    tree.write("ws/other/ignored.txt", "hello ignored\n");
    tree.symlink("ws/.gitignore", "/dev/zero");
    tree.fifo("ws/.ignore");
    tree.fifo("ws/sub/.gitignore");
    tree.symlink("ws/sub/.ignore", "/dev/zero");
    tree.symlink("ws/sub/deep/.gitignore", tree.path("outside/rules"));
    tree.symlink("ws/other/.ignore", "../../outside/rules");
    std::fs::create_dir_all(tree.path("ws/.git/info")).expect("git dir");
    tree.fifo("ws/.git/info/exclude");
    let (mut server, _home) = serve(&tree.root());
    for _ in 0..3 {
        let found = ok(&mut server, "find_files", json!({"pattern": "*.txt"}));
        let found: Value = serde_json::from_str(&found).expect("json");
        assert_eq!(
            found["files"],
            json!(["other/c.txt", "src/a.txt", "sub/deep/b.txt"]),
            "the regular .gitignore still applies, the special and outside ones are not read"
        );
        let hits = ok(&mut server, "search_text", json!({"pattern": "hello"}));
        let hits: Value = serde_json::from_str(&hits).expect("json");
        let paths: Vec<&str> =
            hits["matches"].as_array().expect("matches").iter().filter_map(|m| m["path"].as_str()).collect();
        assert_eq!(paths, ["other/c.txt", "src/a.txt", "sub/deep/b.txt"], "{hits}");
        let uris = all_resources(&mut server);
        for want in ["other/c.txt", "src/a.txt", "sub/deep/b.txt"] {
            assert!(uris.iter().any(|u| u.ends_with(want)), "{want} missing from {uris:?}");
        }
        assert!(!uris.iter().any(|u| u.ends_with("ignored.txt")), "{uris:?}");
    }
    // Searching beneath a directory applies the ignore files above it, inside the root only.
    let found = ok(&mut server, "find_files", json!({"pattern": "*.txt", "path": "other"}));
    assert!(found.contains("other/c.txt") && !found.contains("ignored.txt"), "{found}");
    assert!(peak_memory(server.pid()) < 200 << 20, "reading /dev/zero would grow the server without bound");
    server.finish();
}

/// Item 2: a file of one 64 MiB line costs read_file and search_text far less than its size,
/// and read_file says what it showed (never "lines 1 to 0").
#[test]
fn one_huge_line_is_not_held_in_memory() {
    let tree = Tree::new();
    let size = 64 << 20;
    let mut line = b"needle ".to_vec();
    line.resize(size, b'x');
    std::fs::write(tree.path("ws/huge.txt"), &line).expect("huge file");
    drop(line);
    tree.write("ws/small.txt", "a needle in a small file\n");
    let (mut server, _home) = serve(&tree.root());
    let text = ok(&mut server, "read_file", json!({"path": "huge.txt"}));
    assert!(text.starts_with("needle xxx"), "the line's beginning is shown");
    assert!(text.contains("[truncated: line 1 is 64.0 MiB long"), "{}", &text[text.len() - 400..]);
    assert!(!text.contains("lines 1 to 0"));
    assert!(text.len() < 300 * 1024);
    let with_offset = ok(&mut server, "read_file", json!({"path": "huge.txt", "offset": 1, "limit": 1}));
    assert!(with_offset.contains("[truncated: line 1"), "a range holding the long line is cut too");
    let hits = ok(&mut server, "search_text", json!({"pattern": "needle"}));
    let hits: Value = serde_json::from_str(&hits).expect("json");
    assert_eq!(hits["matches"][0]["path"], "small.txt", "{hits}");
    assert!(hits["skipped"].as_str().unwrap_or_default().contains("huge.txt"), "{hits}");
    let info = ok(&mut server, "file_info", json!({"path": "huge.txt"}));
    assert!(info.contains("\"lines\":1"), "{info}");
    let peak = peak_memory(server.pid());
    assert!(peak < 40 << 20, "peak RSS {} MiB for a 64 MiB line", peak >> 20);
    server.finish();
}

/// Item 2: pathological patterns are refused with -32602 naming the argument, never a panic,
/// and the server keeps serving.
#[test]
fn pathological_patterns_are_invalid_params() {
    let tree = Tree::new();
    let (mut server, _home) = serve(&tree.root());
    let stars = "*".repeat(100_000);
    let cases = [
        ("find_files", json!({"pattern": stars}), "/pattern"),
        ("find_files", json!({"pattern": format!("{}a", "*?".repeat(3000))}), "/pattern"),
        ("search_text", json!({"pattern": "a".repeat(100_000)}), "/pattern"),
        ("search_text", json!({"pattern": r"\w{500}\w{500}"}), "/pattern"),
        ("search_text", json!({"pattern": "(?:a{1000}){1000}"}), "/pattern"),
        ("search_text", json!({"pattern": "x", "glob": stars}), "/glob"),
    ];
    for (tool, args, pointer) in cases {
        let answer = call(&mut server, tool, args.clone());
        assert_eq!(answer["error"]["code"], -32602, "{tool}: {answer}");
        assert_eq!(answer["error"]["data"]["reason"], "invalid_arguments", "{answer}");
        assert_eq!(answer["error"]["data"]["errors"][0]["pointer"], pointer, "{answer}");
        let still = ok(&mut server, "find_files", json!({"pattern": "*.txt"}));
        assert!(still.contains("src/a.txt"), "the server keeps serving: {still}");
    }
    // A plain mistake stays a tool error the agent can correct.
    let wrong = call(&mut server, "search_text", json!({"pattern": "(unclosed"}));
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    server.finish();
}

/// Item 2, for searches: matching and context lines kept add up to at most the output cap
/// (256 KiB), whatever `context` × `max_results` × line length would come to.
#[test]
fn search_answers_are_bounded_by_the_output_cap() {
    let tree = Tree::new();
    tree.write("ws/src/wide.txt", &format!("{}\n", "a".repeat(9999)).repeat(6000));
    let (mut server, _home) = serve(&tree.root());
    let answer =
        call(&mut server, "search_text", json!({"pattern": "a", "context": 10, "max_results": 2000}));
    assert_eq!(answer["result"]["isError"], false, "{}", &answer.to_string()[..300]);
    let found = &answer["result"]["structuredContent"];
    assert!(found["truncated"].as_str().unwrap_or_default().contains("256.0 KiB"), "{}", found["truncated"]);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.len() < 1024 * 1024, "{} bytes of answer", text.len());
    assert!(!found["matches"].as_array().expect("matches").is_empty());
    server.finish();
}

/// Item 2, for the tool that holds a whole file: `edit_file` refuses a file over its cap and an
/// edit whose result would be over it (`replace_all` multiplying a large `new_text`), by
/// arithmetic before any of it is built; the file is left as it was and the server stays small.
#[test]
fn edits_are_bounded_by_their_cap_not_by_the_file_or_the_replacement() {
    let tree = Tree::new();
    tree.write("ws/many.txt", &"x".repeat(4000));
    std::fs::write(tree.path("ws/long.txt"), "y".repeat(17 * 1024 * 1024)).expect("17 MiB");
    let (mut server, _home) = serve(&tree.root());
    let amplified = call(
        &mut server,
        "edit_file",
        json!({"path": "many.txt", "old_text": "x", "new_text": "z".repeat(8192), "replace_all": true}),
    );
    assert_eq!(amplified["result"]["isError"], true, "{amplified}");
    let text = amplified["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("would be") && text.contains("16.0 MiB"), "{text}");
    assert_eq!(std::fs::read_to_string(tree.path("ws/many.txt")).expect("many"), "x".repeat(4000));
    let too_big =
        call(&mut server, "edit_file", json!({"path": "long.txt", "old_text": "y", "new_text": "z"}));
    assert_eq!(too_big["result"]["isError"], true, "{too_big}");
    assert!(too_big.to_string().contains("too large to edit"), "{too_big}");
    // Within the cap an edit works as before.
    let fine = ok(
        &mut server,
        "edit_file",
        json!({"path": "many.txt", "old_text": "xx", "new_text": "ab", "replace_all": true}),
    );
    assert!(fine.contains("2000 occurrences"), "{fine}");
    assert!(peak_memory(server.pid()) < 64 * 1024 * 1024, "peak RSS {} bytes", peak_memory(server.pid()));
    server.finish();
}

/// Item 11: after start, the root renamed and a link to an outside directory put in its place:
/// nothing lists or reads the outside directory.
#[test]
fn root_renamed_and_replaced_by_a_link() {
    let tree = Tree::new();
    let (mut server, _home) = serve(&tree.root());
    std::fs::rename(tree.root(), tree.path("ws.old")).expect("rename the root");
    tree.symlink("ws", tree.path("outside"));
    let found = ok(&mut server, "find_files", json!({"pattern": "*"}));
    assert!(found.contains("src/a.txt") && !found.contains("secret"), "{found}");
    let listing = ok(&mut server, "list_directory", json!({"path": ".", "depth": 3}));
    assert!(!listing.contains("secret"), "{listing}");
    let hits = ok(&mut server, "search_text", json!({"pattern": "secret|hello"}));
    assert!(hits.contains("src/a.txt") && !hits.contains("top secret"), "{hits}");
    let uris = all_resources(&mut server);
    assert!(uris.iter().all(|u| !u.contains("secret")), "{uris:?}");
    let read = call(&mut server, "read_file", json!({"path": "secret.txt"}));
    assert!(!read.to_string().contains("top secret"), "{read}");
    let resource = server.request("resources/read", json!({"uri": "teaagent://workspace/secret.txt"}));
    assert!(!resource.to_string().contains("top secret"), "{resource}");
    let info = call(&mut server, "file_info", json!({"path": "secret.txt"}));
    assert!(info["error"].is_object() || info["result"]["isError"] == true, "{info}");
    // Commands run in the directory served (entered through its handle), not where the name
    // leads now: in the root itself and in a `cwd` beneath it.
    for args in [json!({"command": "ls; cat secret.txt"}), json!({"command": "ls ..", "cwd": "src"})] {
        let ran = call(&mut server, "shell_exec", args.clone());
        let text = ran["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        let stdout = text.split("--- stdout ---").nth(1).and_then(|s| s.split("--- stderr ---").next());
        let stdout = stdout.unwrap_or_else(|| panic!("{args}: {ran}"));
        assert!(stdout.contains("src") && !stdout.contains("secret"), "{args}: {ran}");
        assert!(!text.contains("top secret"), "{args}: {ran}");
    }
    server.finish();
}

/// Item 12: subdirectories swapped with links to an outside directory while walks run: no
/// outside name or content ever comes back (a bounded number of calls).
#[test]
fn walk_races_never_leak_outside_names() {
    const DIRS: usize = 4;
    let tree = Tree::new();
    for i in 0..20 {
        tree.write(&format!("outside/leak/OUTSIDE_MARKER_{i}.txt"), "outside-content\n");
    }
    for d in 0..DIRS {
        for i in 0..5 {
            tree.write(&format!("ws/sub{d}/inside_{i}.txt"), "inside-content\n");
        }
    }
    let (mut server, _home) = serve(&tree.root());
    let stop = Arc::new(AtomicBool::new(false));
    let swappers: Vec<_> = (0..DIRS)
        .map(|d| {
            let stop = Arc::clone(&stop);
            let (sub, parked, tmp, target): (PathBuf, PathBuf, PathBuf, PathBuf) = (
                tree.path(&format!("ws/sub{d}")),
                tree.path(&format!("parked{d}")),
                tree.path(&format!("ws/sub{d}.tmp")),
                tree.path("outside/leak"),
            );
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // Directory out, link in ...
                    std::fs::rename(&sub, &parked).expect("park the directory");
                    std::os::unix::fs::symlink(&target, &tmp).expect("link");
                    std::fs::rename(&tmp, &sub).expect("link in place");
                    // ... and back.
                    std::fs::remove_file(&sub).expect("unlink");
                    std::fs::rename(&parked, &sub).expect("directory back");
                    swaps += 1;
                }
                swaps
            })
        })
        .collect();
    let leaked = |text: &str| text.contains("OUTSIDE_MARKER") || text.contains("outside-content");
    for round in 0..400 {
        let (tool, args) = match round % 4 {
            0 | 1 => ("find_files", json!({"pattern": "*.txt"})),
            2 => ("search_text", json!({"pattern": "content"})),
            _ => ("list_directory", json!({"path": ".", "depth": 3})),
        };
        let answer = call(&mut server, tool, args).to_string();
        assert!(!leaked(&answer), "{tool} leaked in round {round}: {answer}");
        if round % 10 == 0 {
            let answer = server.request("resources/list", json!({})).to_string();
            assert!(!leaked(&answer), "resources/list leaked in round {round}: {answer}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    for swapper in swappers {
        assert!(swapper.join().expect("swapper") > 0);
    }
    server.finish();
}

/// Item 15: a root given through a link (with a trailing slash) accepts absolute paths spelled
/// under the root as given and under the canonical root; look-alikes stay outside.
#[test]
fn root_given_through_a_link_accepts_both_spellings() {
    let tree = Tree::new();
    tree.symlink("link", tree.root());
    tree.write("link-evil/secret.txt", "evil\n");
    let given = format!("{}/", tree.path("link").display());
    let (mut server, _home) = serve(Path::new(&given));
    for path in [tree.path("link/src/a.txt"), tree.root().join("src/a.txt")] {
        let text = ok(&mut server, "read_file", json!({"path": path}));
        assert_eq!(text, "hello\n", "{}", path.display());
    }
    let found = ok(&mut server, "find_files", json!({"pattern": "*.txt", "path": tree.path("link/src")}));
    assert!(found.contains("src/a.txt"), "{found}");
    for outside in [
        tree.path("link-evil/secret.txt"),
        tree.path("link/../outside/secret.txt"),
        tree.path("link-evil/../link/../outside/secret.txt"),
        tree.path("ws-evil/secret.txt"),
    ] {
        let answer = call(&mut server, "read_file", json!({"path": outside}));
        assert_eq!(answer["error"]["code"], -32602, "{}: {answer}", outside.display());
    }
    server.finish();
}

/// Item 6: a path deny rule hides those files from every tool and from resources, also when a
/// link inside the workspace leads to them.
#[test]
fn deny_rule_on_paths_hides_from_every_tool_and_resources() {
    let tree = Tree::new();
    tree.write("ws/secrets/key.txt", "hidden-content\n");
    tree.write("ws/public/readme.txt", "public-content\n");
    tree.symlink("ws/innocent.txt", "secrets/key.txt");
    let (mut server, _home) = serve_with(&tree.root(), Some("deny = [\"*:path=secrets/**\"]\n"));
    let found = ok(&mut server, "find_files", json!({"pattern": "*.txt"}));
    assert!(found.contains("public/readme.txt") && !found.contains("key.txt"), "{found}");
    let hits = ok(&mut server, "search_text", json!({"pattern": "content"}));
    assert!(hits.contains("public-content") && !hits.contains("hidden-content"), "{hits}");
    let listing = ok(&mut server, "list_directory", json!({"path": ".", "depth": 3}));
    assert!(!listing.contains("key.txt"), "{listing}");
    for (tool, args) in [
        ("read_file", json!({"path": "innocent.txt"})),
        ("file_info", json!({"path": "innocent.txt"})),
        ("search_text", json!({"pattern": "content", "path": "innocent.txt"})),
    ] {
        let answer = call(&mut server, tool, args);
        assert!(!answer.to_string().contains("hidden-content"), "{tool}: {answer}");
        assert!(answer["error"].is_object() || answer["result"]["isError"] == true, "{tool}: {answer}");
    }
    let uris = all_resources(&mut server);
    assert!(uris.iter().any(|u| u.ends_with("public/readme.txt")), "{uris:?}");
    assert!(uris.iter().all(|u| !u.contains("secrets")), "{uris:?}");
    for uri in ["teaagent://workspace/secrets/key.txt", "teaagent://workspace/innocent.txt"] {
        let read = server.request("resources/read", json!({"uri": uri}));
        assert_eq!(read["error"]["code"], -32602, "{read}");
        assert_eq!(read["error"]["data"]["reason"], "hidden_by_policy", "{read}");
    }
    server.finish();
}

/// Hardening round 3, "Long names": every tool that writes handles a name as long as the file
/// system allows (255 bytes), also when it replaces the file through a temporary one.
#[test]
fn names_up_to_the_file_systems_limit_are_handled() {
    let tree = Tree::new();
    let (mut server, _home) = serve(&tree.root());
    for name in ["n".repeat(255), format!("{}.txt", "é".repeat(125))] {
        assert!(name.len() <= 255, "{}", name.len());
        ok(&mut server, "create_file", json!({"path": name, "content": "one\n"}));
        ok(&mut server, "write_file", json!({"path": name, "content": "two\n"}));
        ok(&mut server, "edit_file", json!({"path": name, "old_text": "two", "new_text": "three"}));
        assert_eq!(std::fs::read_to_string(tree.root().join(&name)).expect("written"), "three\n");
        let text = ok(&mut server, "read_file", json!({"path": name}));
        assert!(text.contains("three"), "{text}");
        let moved: String = std::iter::once('m').chain(name.chars().skip(1)).collect();
        ok(&mut server, "move_path", json!({"from": name, "to": moved}));
        ok(&mut server, "delete_path", json!({"path": moved}));
    }
    // Nothing was left behind: no temporary file in the workspace.
    let left: Vec<String> = std::fs::read_dir(tree.root())
        .expect("root")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    server.finish();
}

/// Hardening round 3, "Over-blocking through links": a root named through a link (`PWD` through
/// a link, a spelling with `..`) serves its files by every absolute spelling that leads inside,
/// and still refuses every one that leads out.
#[test]
fn a_root_named_through_links_serves_every_spelling_that_leads_inside() {
    let tree = Tree::new();
    let link = tree.path("link");
    std::os::unix::fs::symlink(tree.root(), &link).expect("a link to the workspace");
    let spellings = |base: &Path| {
        vec![
            base.join("src/a.txt"),
            base.join("./src/../src/a.txt"),
            tree.root().join("src/a.txt"),
            link.join("src/a.txt"),
        ]
    };
    // `--root .` from a directory reached through the link (the shell's PWD), and a root spelled
    // with `.` and `..`.
    let dotted = format!("{}/./src/..", link.display());
    for (root, cwd) in [(".".to_owned(), Some(link.clone())), (dotted, None)] {
        let home = tempfile::tempdir().expect("home");
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root", &root])
            .env("TEAAGENT_HOME", home.path());
        if let Some(cwd) = &cwd {
            cmd.current_dir(cwd).env("PWD", cwd);
        }
        let mut server = RawServer::start(cmd);
        server.initialize("2025-06-18");
        for path in spellings(&link) {
            let text = ok(&mut server, "read_file", json!({"path": path}));
            assert!(text.contains("hello"), "{root} / {}: {text}", path.display());
        }
        let written = link.join("src/new.txt");
        ok(&mut server, "write_file", json!({"path": written, "content": "x"}));
        assert!(tree.root().join("src/new.txt").exists());
        std::fs::remove_file(tree.root().join("src/new.txt")).expect("clean");
        // Still refused: what leads out, by any spelling.
        for outside in [
            tree.path("outside/secret.txt"),
            link.join("../outside/secret.txt"),
            tree.path("ws-evil/secret.txt"),
        ] {
            let refused = call(&mut server, "read_file", json!({"path": outside}));
            let text = refused.to_string();
            assert!(
                !text.contains("top secret") && !text.contains("evil twin"),
                "{}: {text}",
                outside.display()
            );
        }
        server.finish();
    }
}

/// Hardening round 3, "A hard link defeats a path deny rule": the rule holds for the file, so a
/// hard link inside the workspace to a denied file is refused by every tool and by resources.
#[test]
fn a_hard_link_to_a_denied_file_is_not_read_by_any_way() {
    let tree = Tree::new();
    tree.write("ws/secrets/key.txt", "KEYDATA-7f3a\n");
    tree.write("ws/public/readme.txt", "nothing to hide\n");
    std::fs::hard_link(tree.root().join("secrets/key.txt"), tree.root().join("public/key.txt"))
        .expect("hard link");
    let (mut server, _home) = serve_with(&tree.root(), Some("deny = [\"*:path=secrets/**\"]\n"));
    let read = call(&mut server, "read_file", json!({"path": "public/key.txt"}));
    assert!(!read.to_string().contains("KEYDATA"), "{read}");
    assert_eq!(read["error"]["code"], -32001, "{read}");
    let info = call(&mut server, "file_info", json!({"path": "public/key.txt"}));
    assert_eq!(info["error"]["code"], -32001, "{info}");
    let found = call(&mut server, "search_text", json!({"pattern": "KEYDATA"}));
    assert!(!found.to_string().contains("public/key.txt"), "{found}");
    let uri = "teaagent://workspace/public/key.txt";
    let resource = server.request("resources/read", json!({"uri": uri}));
    assert!(resource.get("error").is_some() && !resource.to_string().contains("KEYDATA"), "{resource}");
    assert!(!all_resources(&mut server).iter().any(|u| u.contains("key.txt")), "listed");
    // What has one name is read as before.
    assert!(ok(&mut server, "read_file", json!({"path": "public/readme.txt"})).contains("nothing to hide"));
    server.finish();
}
