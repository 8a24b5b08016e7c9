//! Workspace resources through the real server: listing pages that visit every file once on a
//! tree of thousands (gitignored files and `.git` absent), text and base64 blobs, MIME types,
//! the size cap, and not-found answers that are `-32602`, never the rate-limit code.

use std::collections::HashSet;
use std::process::Command;

use base64::Engine;
use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

fn server(tree: &Tree, home: &tempfile::TempDir, env: &[(&str, &str)]) -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root()).env("TEAAGENT_HOME", home.path()).envs(env.iter().copied());
    let mut server = RawServer::start(cmd);
    let init = server.initialize("2025-06-18");
    assert_eq!(init["capabilities"]["resources"], json!({"subscribe": false, "listChanged": false}));
    server
}

fn list_all(server: &mut RawServer) -> (Vec<Value>, usize) {
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = server.request("resources/list", params);
        let result = &page["result"];
        assert!(result.is_object(), "{page}");
        all.extend(result["resources"].as_array().expect("resources").iter().cloned());
        pages += 1;
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (all, pages),
        }
    }
}

#[test]
fn pagination_visits_every_file_exactly_once() {
    let tree = Tree::new();
    let mut expected =
        HashSet::from(["src/a.txt".to_owned(), ".gitignore".to_owned(), ".hidden/kept.txt".to_owned()]);
    for d in 0..30 {
        for f in 0..100 {
            let rel = format!("d{d:02}/sub{}/file {f:03}.txt", f % 7);
            tree.write(&format!("ws/{rel}"), "x");
            expected.insert(rel);
        }
    }
    tree.write("ws/.gitignore", "*.log\nbuild/\n");
    tree.write("ws/.hidden/kept.txt", "kept");
    for ignored in
        ["ws/app.log", "ws/d03/deep.log", "ws/build/out.bin", "ws/.git/HEAD", "ws/.git/objects/ab/cdef"]
    {
        tree.write(ignored, "ignored");
    }
    tree.symlink("ws/link-to-src", "src");
    let home = tempfile::tempdir().expect("home");
    let mut server = server(&tree, &home, &[("FIXTURE_RESOURCE_PAGE", "97")]);
    let (all, pages) = list_all(&mut server);
    let names: Vec<String> = all.iter().map(|r| r["name"].as_str().expect("name").to_owned()).collect();
    let unique: HashSet<String> = names.iter().cloned().collect();
    assert_eq!(names.len(), unique.len(), "a file was listed twice");
    assert_eq!(unique, expected, "listed ≠ the workspace's files");
    assert_eq!(pages, expected.len().div_ceil(97));
    for r in &all {
        let name = r["name"].as_str().expect("name");
        let uri = r["uri"].as_str().expect("uri");
        assert!(uri.starts_with("teaagent://workspace/"), "{uri}");
        if name.contains(' ') {
            assert!(uri.contains("%20") && !uri.contains(' '), "{uri}");
        }
        assert_eq!(r["mimeType"], "text/plain", "{r}");
        assert!(r["size"].is_u64());
    }
    // A bad cursor is -32602.
    let bad = server.request("resources/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(
        (bad["error"]["code"].clone(), bad["error"]["data"]["reason"].clone()),
        (json!(-32602), json!("invalid_cursor"))
    );
    server.finish();
}

#[test]
fn text_blob_mime_and_size_cap() {
    let tree = Tree::new();
    tree.write("ws/data.json", "{\"a\": 1}");
    tree.write("ws/lib.rs", "fn main() {}\n");
    std::fs::write(tree.path("ws/logo.png"), [0x89, b'P', b'N', b'G', 0, 1, 2, 255]).expect("png");
    std::fs::write(tree.path("ws/noext"), [0u8, 159, 146, 150]).expect("binary");
    std::fs::write(tree.path("ws/latin1.txt"), [b'c', b'a', b'f', 0xe9]).expect("latin1");
    tree.write("ws/big.txt", &"y".repeat(2000));
    let home = tempfile::tempdir().expect("home");
    let mut server = server(&tree, &home, &[("FIXTURE_RESOURCE_MAX", "1000")]);
    let read = |server: &mut RawServer, path: &str| {
        server.request("resources/read", json!({"uri": format!("teaagent://workspace/{path}")}))
    };
    let json_file = read(&mut server, "data.json");
    assert_eq!(
        json_file["result"]["contents"][0],
        json!({"uri": "teaagent://workspace/data.json", "mimeType": "application/json", "text": "{\"a\": 1}"})
    );
    let rust = read(&mut server, "lib.rs");
    assert_eq!(rust["result"]["contents"][0]["text"], "fn main() {}\n");
    for (path, mime, bytes) in [
        ("logo.png", "image/png", vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255]),
        ("noext", "application/octet-stream", vec![0u8, 159, 146, 150]),
        ("latin1.txt", "text/plain", vec![b'c', b'a', b'f', 0xe9]),
    ] {
        let answer = read(&mut server, path);
        let contents = &answer["result"]["contents"][0];
        assert_eq!(contents["mimeType"], mime, "{answer}");
        assert!(contents.get("text").is_none(), "{answer}");
        let blob = base64::engine::general_purpose::STANDARD
            .decode(contents["blob"].as_str().expect("blob"))
            .expect("base64");
        assert_eq!(blob, bytes);
    }
    let big = read(&mut server, "big.txt");
    assert_eq!(
        (big["error"]["code"].clone(), big["error"]["data"]["reason"].clone()),
        (json!(-32602), json!("too_large"))
    );
    let missing = read(&mut server, "nope.txt");
    assert_eq!(missing["error"]["code"], -32602, "never -32002, which means rate limit here");
    assert_eq!(
        missing["error"]["data"],
        json!({"uri": "teaagent://workspace/nope.txt", "reason": "not_found"})
    );
    let templates = server.request("resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "teaagent://workspace/{path}");
    server.finish();
}
