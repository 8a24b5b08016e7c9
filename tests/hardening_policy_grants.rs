//! Hardening: grants, each against the real binary (the set-up:
//! `common/policy_setup.rs`).
//!
//! - a call refused at any step uses no grant and no rate-limit budget (item 8);
//! - command grants match whole words (item 9).

use std::time::Duration;

use serde_json::json;
use teaagent_tests::{RawServer, Tree};

use crate::common::policy_setup;
use policy_setup::{call, code, serve};

// ---------------------------------------------------------------------------------------------
// Item 8: nothing is used by a refused call.

#[test]
fn calls_refused_by_the_rate_limit_use_no_grant() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "[tools.write_file]\nrate_limit = { max_calls = 1, window_secs = 1.0 }\n",
        &["--permission-mode", "read-only", "--grant", "write_file:path=notes/**;uses=2"],
    );
    let write = |n: u32| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"tools/call\",\"params\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"notes/{n}.md\",\"content\":\"x\"}}}}}}\n"
        )
    };
    // One admitted, then two refused by the rate limit (sent together, inside one window).
    server.send_raw(format!("{}{}{}", write(1), write(2), write(3)).as_bytes());
    let codes: Vec<i64> = (1..=3).map(|id| code(&server.response(&json!(id)))).collect();
    assert_eq!(codes, [0, -32002, -32002]);
    // The second use of the grant is still there once the window has passed…
    std::thread::sleep(Duration::from_millis(1100));
    server.send_raw(write(4).as_bytes());
    assert_eq!(code(&server.response(&json!(4))), 0, "the refused calls used no grant");
    // …and it was the last one.
    std::thread::sleep(Duration::from_millis(1100));
    server.send_raw(write(5).as_bytes());
    assert_eq!(code(&server.response(&json!(5))), -32001);
    server.finish();
}

#[test]
fn calls_refused_by_the_lock_use_no_grant_and_no_budget() {
    let (tree, home) = (Tree::new(), Tree::new());
    let config = "[tools.write_file]\nrate_limit = { max_calls = 2, window_secs = 600 }\n";
    let flags = ["--permission-mode", "read-only", "--grant", "write_file:path=notes/**;uses=2"];
    let mut owner = serve(&tree, &home, config, &flags);
    let mut second = serve(&tree, &home, "", &flags);
    // Twelve pipelined calls to a locked root: every one is refused by the lock, none by the
    // rate limit (which they would have exhausted), and none takes a use of the grant.
    let mut batch = String::new();
    for id in 0..12 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"write_file\",\"arguments\":{{\"path\":\"notes/{id}.md\",\"content\":\"x\"}}}}}}\n"
        ));
    }
    second.send_raw(batch.as_bytes());
    for id in 0..12 {
        let answer = second.response(&json!(id));
        assert_eq!(code(&answer), -32003, "{answer}");
    }
    owner.signal("KILL");
    owner.wait(Duration::from_secs(10));
    let write = |server: &mut RawServer, n: u32| {
        code(&call(server, "write_file", json!({"path": format!("notes/after-{n}.md"), "content": "x"})))
    };
    assert_eq!(write(&mut second, 1), 0, "budget and grant are whole");
    assert_eq!(write(&mut second, 2), 0);
    assert_eq!(write(&mut second, 3), -32001, "and both uses are spent now");
    second.finish();
}

// ---------------------------------------------------------------------------------------------
// Item 9: command grants match whole words.

#[test]
fn command_grants_cover_their_words_and_nothing_glued_to_them() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "",
        &[
            "--permission-mode",
            "read-only",
            "--grant",
            "shell_exec:command=echo safe*",
            "--grant",
            "shell_exec:command=true ok",
        ],
    );
    for covered in ["echo safe", "echo safe and sound", "echo  safe\t'x y'"] {
        let answer = call(&mut server, "shell_exec", json!({"command": covered}));
        assert_eq!(code(&answer), 0, "{covered:?}: {answer}");
    }
    for refused in [
        "echo safex",
        "echo safe'x'",
        "echo safe\"x y\"",
        "echo 'safe' x",
        "echosafe",
        "true ok --config x",
        "true okay",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": refused}));
        assert_eq!(code(&answer), -32001, "{refused:?}: {answer}");
    }
    assert_eq!(code(&call(&mut server, "shell_exec", json!({"command": "true ok"}))), 0);
    server.finish();
}
