//! Hardening round 3, "Secrets and the environment", against the real binary (the set-up:
//! `common/shell_setup.rs`): a command never sees the server's own secrets, and by default no
//! credential of the user; `[shell.env]` decides the rest. Every `TEAAGENT_*` variable the code
//! reads is declared in one place, which says whether it is a secret.

use serde_json::json;
use teaagent_tests::Tree;

use crate::common::shell_setup;
use shell_setup::{call, serve};

/// `env` as a `shell_exec` command sees it, with the server's environment `env` and `config`.
fn command_env(config: &str, env: &[(&str, &str)]) -> String {
    let (tree, home) = (Tree::new(), Tree::new());
    home.write("config.toml", config);
    let mut server = serve(&tree, &home, env);
    let answer = call(&mut server, "shell_exec", json!({"command": "env"}));
    server.finish();
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned()
}

#[test]
fn commands_never_see_the_servers_secrets_nor_by_default_the_users_credentials() {
    // A fleet configured on a real Redis that wants a password, the password in a variable the
    // configuration names, and the user's own credentials in the environment.
    let redis = teaagent_tests::services::Redis::start();
    // TEAAGENT_REDIS_PASSWORD is the password the URL of the environment is used with.
    let password = "redis-secret-2";
    redis.command(&["CONFIG", "SET", "requirepass", password]).expect("set the password");
    let config = format!("[state]\nredis_url = {:?}\npassword_env = \"FLEET_PASS\"\n", redis.url());
    let config = config.as_str();
    let key = "ab".repeat(32);
    let url = redis.url();
    let env = [
        ("TEAAGENT_REDIS_URL", url.as_str()),
        ("TEAAGENT_REDIS_PASSWORD", password),
        ("FLEET_PASS", "fleet-secret-3"),
        ("TEAAGENT_REQUEST_STATE_KEY", key.as_str()),
        ("TEAAGENT_HTTP_TOKENS", "ci:http-secret-4-0123456789"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-5"),
        ("GITHUB_TOKEN", "gh-secret-6"),
        ("Db_Password", "db-secret-7"),
        ("VISIBLE_SETTING", "plain-value"),
    ];
    let seen = command_env(config, &env);
    assert!(seen.contains("VISIBLE_SETTING=plain-value") && seen.contains("PATH="), "{seen}");
    for secret in [
        "url-secret-1",
        "redis-secret-2",
        "fleet-secret-3",
        &"ab".repeat(32),
        "http-secret-4",
        "aws-secret-5",
        "gh-secret-6",
        "db-secret-7",
    ] {
        assert!(!seen.contains(secret), "`{secret}` reached the command:\n{seen}");
    }
    // The user brings back what a build needs, and sets values; the server's own stay out.
    let config = format!(
        "{config}[shell.env]\ninclude = [\"GITHUB_TOKEN\"]\nexclude = [\"VISIBLE_*\"]\nset = {{ CI = \"1\", TEAAGENT_REDIS_PASSWORD = \"set\" }}\n"
    );
    let seen = command_env(&config, &env);
    assert!(seen.contains("GITHUB_TOKEN=gh-secret-6") && seen.contains("CI=1"), "{seen}");
    assert!(
        !seen.contains("VISIBLE_SETTING")
            && !seen.contains("redis-secret-2")
            && !seen.contains("TEAAGENT_REDIS_PASSWORD"),
        "{seen}"
    );
    let seen = command_env("[shell.env]\ninherit_secrets = true\n", &env);
    assert!(seen.contains("aws-secret-5") && !seen.contains("redis-secret-2"), "{seen}");
}

/// Every `TEAAGENT_*` variable the code reads is declared in `config::VARIABLES` (which says
/// whether it is a secret), so a new secret cannot be forgotten by the environment filter.
#[test]
fn every_teaagent_variable_is_declared_in_one_place() {
    let declared: Vec<&str> = teaagent_core::config::VARIABLES.iter().map(|v| v.name).collect();
    let mut missing = Vec::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![root.join("teaagent-core/src"), root.join("teaagent-cli/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            for (at, _) in text.match_indices("\"TEAAGENT_") {
                // `"TEAAGENT_"` itself is a prefix, not a variable.
                let name: String =
                    text[at + 1..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
                if !name.ends_with('_') && !declared.contains(&name.as_str()) {
                    missing.push(format!("{}: {name}", path.display()));
                }
            }
        }
    }
    assert!(missing.is_empty(), "read but not declared in config::VARIABLES: {missing:#?}");
}

/// Nor through `/proc`: a sandboxed command cannot read the server's environment (the server
/// is not dumpable, and a command runs in a user namespace, root's too, so it holds no
/// capability over the server). As root before the user namespace, it could.
#[test]
fn a_sandboxed_command_cannot_read_the_servers_environment() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut cmd = std::process::Command::new(teaagent_tests::Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "allow", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env("TEAAGENT_REDIS_PASSWORD", "redis-secret-8")
        .env("DEPLOY_TOKEN", "user-secret-9");
    let mut server = teaagent_tests::RawServer::start(cmd);
    server.initialize("2025-06-18");
    let command = "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/$PPID/task/$PPID/environ";
    let answer = call(&mut server, "shell_exec", json!({"command": command}));
    let seen = answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{answer}"));
    assert!(seen.contains("exit code:") && seen.contains("Permission denied"), "{seen}");
    for secret in ["redis-secret-8", "user-secret-9", "TEAAGENT_HOME="] {
        assert!(!seen.contains(secret), "`{secret}` reached the command:\n{seen}");
    }
    server.finish();
}
