//! The configuration files' unit tests: what each key does, and the errors that name it.

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Result<Choices, ConfigError> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
    Choices::from_variables(|name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

#[test]
fn the_shared_state_is_checked_and_its_password_comes_from_the_environment() {
    let file = Path::new("/home/u/.teaagent/config.toml");
    let written = |url: &str| StateConfig { redis_url: Some(url.into()), ..StateConfig::default() };
    let env = |name: &str| (name == ENV_REDIS_PASSWORD).then(|| "p@ss:w/rd".to_owned());
    let state = state_settings(&written("redis://db:6379/1"), file, &env).expect("good");
    assert_eq!(state.redis_url, "redis://:p%40ss%3Aw%2Frd@db:6379/1");
    assert_eq!((state.prefix.as_str(), state.timeout.as_millis()), ("teaagent:", 500));
    assert!(!format!("{state:?}").contains("p%40ss"), "no password in Debug");
    let own = state_settings(&written("rediss://:inline@db"), file, &env).expect("good");
    assert_eq!(own.redis_url, "rediss://:inline@db", "a password in the URL stays");
    for (config, why) in [
        (written("http://db"), "redis or rediss"),
        (written("db:6379"), "not a redis://"),
        (StateConfig::default(), "needs `redis_url`"),
        (StateConfig { timeout_ms: Some(0), ..written("redis://db") }, "timeout_ms"),
    ] {
        let e = state_settings(&config, file, &env).expect_err("refused").to_string();
        assert!(e.contains(why) && e.contains("config.toml"), "{e}");
    }
    // The environment's URL wins over the file's, keeping the file's other settings.
    let mut settings = Settings {
        state: Some(StateSettings { prefix: "teaagent:prod:".into(), ..state }),
        ..Settings::default()
    };
    let vars = |name: &str| match name {
        ENV_REDIS_URL => Some("redis://other:7000".to_owned()),
        _ => None,
    };
    settings.state_from_environment(&vars).expect("good");
    let state = settings.state.expect("state");
    assert_eq!((state.redis_url.as_str(), state.prefix.as_str()), ("redis://other:7000", "teaagent:prod:"));
    let bad = |name: &str| (name == ENV_REDIS_URL).then(|| "memcached://x".to_owned());
    let e = Settings::default().state_from_environment(&bad).expect_err("refused").to_string();
    assert!(e.contains(ENV_REDIS_URL), "{e}");
}

#[test]
fn request_state_keys_come_from_two_variables() {
    let (a, b) = ("ab".repeat(32), "cd".repeat(32));
    let choices = vars(&[(ENV_REQUEST_STATE_KEY, &a), (ENV_REQUEST_STATE_PREVIOUS_KEY, &b)]).expect("keys");
    let (key, previous) = choices.request_state_keys.expect("chosen");
    assert_eq!(key, RequestStateKey::parse(&a).expect("key"));
    assert_eq!(previous, Some(RequestStateKey::parse(&b).expect("key")));
    assert!(vars(&[]).expect("none").request_state_keys.is_none());
    for (pairs, var) in [
        (vec![(ENV_REQUEST_STATE_KEY, "short")], ENV_REQUEST_STATE_KEY),
        (
            vec![(ENV_REQUEST_STATE_KEY, a.as_str()), (ENV_REQUEST_STATE_PREVIOUS_KEY, "zz")],
            ENV_REQUEST_STATE_PREVIOUS_KEY,
        ),
        (vec![(ENV_REQUEST_STATE_PREVIOUS_KEY, b.as_str())], ENV_REQUEST_STATE_PREVIOUS_KEY),
    ] {
        let e = vars(&pairs).expect_err("refused").to_string();
        assert!(e.contains(var), "{e}");
    }
}

#[test]
fn rules_are_one_per_line_and_may_hold_semicolons_and_spaces() {
    let choices = vars(&[
        (ENV_GRANTS, "delete_note;uses=3\n\n  shell_exec:command=cargo test*  \r\nedit_file:path={a,b}/**\n"),
        (ENV_DENY, "*:path=secrets/**"),
        (ENV_PERMISSION_MODE, " read-only "),
        (ENV_PREAPPROVE, &format!("sha256:{0}, SHA256:{0}\nsha256:{0}", "a".repeat(64))),
    ])
    .expect("valid");
    assert_eq!(
        choices.grants,
        ["delete_note;uses=3", "shell_exec:command=cargo test*", "edit_file:path={a,b}/**"]
    );
    assert_eq!(choices.deny, ["*:path=secrets/**"]);
    assert_eq!(choices.permission_mode, Some(PermissionMode::ReadOnly));
    assert_eq!(choices.preapprove.len(), 3);
    assert!(choices.preapprove.iter().all(|d| d.starts_with("sha256:")));
    let none = vars(&[(ENV_GRANTS, ""), (ENV_PERMISSION_MODE, "")]).expect("empty is unset");
    assert!(none.grants.is_empty() && none.permission_mode.is_none());
}

#[test]
fn bad_values_name_the_variable() {
    for (var, value, says) in [
        (ENV_PERMISSION_MODE, "yolo", "unknown permission mode `yolo`"),
        (ENV_GRANTS, "ok\nx;uses=many", "`uses` must be a number"),
        (ENV_DENY, "x:path", "write `TOOL:ARG=PATTERN`"),
        (ENV_PREAPPROVE, "sha256:abc", "expected `sha256:` and 64 hex digits"),
    ] {
        let e = vars(&[(var, value)]).expect_err(value).to_string();
        assert!(e.starts_with(&format!("environment variable {var}: ")), "{e}");
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn later_choices_win() {
    let env = Choices {
        permission_mode: Some(PermissionMode::ReadOnly),
        grants: vec!["a".into()],
        ..Choices::default()
    };
    let flags = Choices {
        permission_mode: Some(PermissionMode::Allow),
        grants: vec!["b".into()],
        ..Choices::default()
    };
    let both = env.clone().then(flags);
    assert_eq!(both.permission_mode, Some(PermissionMode::Allow));
    assert_eq!(both.grants, ["a", "b"]);
    assert_eq!(env.then(Choices::default()).permission_mode, Some(PermissionMode::ReadOnly));
}
