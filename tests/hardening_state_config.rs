//! Hardening, against the real binary (the set-up: `common/state_setup.rs`):
//! configuration values out of range exit 2 naming the key, the file and the range; a grant
//! whose expiry is too far away is a usage error, not a crash.

use std::process::Output;

use teaagent_tests::Tree;

use crate::common::state_setup;
use state_setup::{new_home, read_a, stderr, teaagent_in};

#[test]
fn every_out_of_range_config_value_exits_2_naming_key_file_and_range() {
    let tree = Tree::new();
    let root = tree.root();
    let rate = |max: &str, window: &str| {
        format!("[tools.shell_exec]\nrate_limit = {{ max_calls = {max}, window_secs = {window} }}\n")
    };
    let window = "tools.shell_exec.rate_limit.window_secs";
    let max_calls = "tools.shell_exec.rate_limit.max_calls";
    let timeout = "tools.read_file.timeout_secs";
    let mut cases: Vec<(String, &str, &str)> = Vec::new();
    for w in ["1e300", "-1", "nan", "inf", "-inf", "0", "0.0", "1e-300", "\"60\"", "true", "99999999999"] {
        cases.push((rate("10", w), window, "0.001 to 2592000"));
    }
    for m in ["0", "-5", "1e300", "99999999999", "4294967296", "2.5", "\"ten\"", "-9223372036854775808"] {
        cases.push((rate(m, "60"), max_calls, "1 to 1000000"));
    }
    for t in ["0", "-1", "1e300", "18446744073709551", "nan", "1.5", "[1]"] {
        cases.push((format!("[tools.read_file]\ntimeout_secs = {t}\n"), timeout, "1 to 86400"));
    }
    for (text, key, range) in &cases {
        // The user's file, `--config`, and the workspace's file.
        let home = new_home();
        std::fs::write(home.path().join("config.toml"), text).expect("config");
        let out = read_a(home.path(), &root);
        check_range_error(&out, text, key, range, "config.toml");

        let named = tree.path("named.toml");
        std::fs::write(&named, text).expect("config");
        let empty = new_home();
        let out = teaagent_in(
            empty.path(),
            &root,
            &["run", "read_file", "--args", "{}", "--config", &named.display().to_string()],
        );
        check_range_error(&out, text, key, range, "named.toml");

        std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
        std::fs::write(root.join(".teaagent/config.toml"), text).expect("config");
        let out = teaagent_in(empty.path(), &root, &["mcp", "serve"]);
        check_range_error(&out, text, key, range, ".teaagent/config.toml");
        std::fs::remove_file(root.join(".teaagent/config.toml")).expect("rm");
    }
    // The edges themselves are allowed.
    let home = new_home();
    std::fs::write(
        home.path().join("config.toml"),
        "[tools.shell_exec]\nrate_limit = { max_calls = 1000000, window_secs = 0.001 }\ntimeout_secs = 86400\n\
         [tools.read_file]\nrate_limit = { max_calls = 1, window_secs = 2592000 }\ntimeout_secs = 1\n",
    )
    .expect("config");
    let out = read_a(home.path(), &root);
    assert!(out.status.success(), "{}", stderr(&out));
}

fn check_range_error(out: &Output, text: &str, key: &str, range: &str, file: &str) {
    let message = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{text}: {message}");
    assert!(out.stdout.is_empty(), "{text}: stdout is protocol only");
    assert!(message.contains(file), "{text}: names the file: {message}");
    assert!(message.contains(&format!("`{key}`")), "{text}: names the key: {message}");
    assert!(message.contains(range), "{text}: gives the range: {message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn a_grant_flag_with_an_expiry_too_far_away_is_a_usage_error_not_a_crash() {
    let tree = Tree::new();
    let home = new_home();
    for expires in ["500000000000y", "580000000000y", "99999-01-01T00:00:00Z"] {
        let grant = format!("read_file;expires={expires}");
        let out = teaagent_in(
            home.path(),
            &tree.root(),
            &["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#, "--grant", &grant],
        );
        assert_eq!(out.status.code(), Some(2), "{expires}: {}", stderr(&out));
        assert!(stderr(&out).contains("expires"), "{}", stderr(&out));
        // The same rule in a configuration file.
        std::fs::write(home.path().join("config.toml"), format!("grants = [\"{grant}\"]\n")).expect("config");
        let out = read_a(home.path(), &tree.root());
        assert_eq!(out.status.code(), Some(2), "{expires}: {}", stderr(&out));
        assert!(stderr(&out).contains("grants[0]"), "{}", stderr(&out));
        std::fs::remove_file(home.path().join("config.toml")).expect("rm");
    }
}
