//! The policy's advice and path rules on the real built-in tools: what a refusal tells the user
//! to do, quoted for where it goes; which tools need an approval; what deny rules hide.

use std::path::{Path, PathBuf};

use crate::policy::grant::Grant;
use crate::policy::*;
use crate::registry::Registry;
use crate::tool::ParamRole;

fn registry() -> Registry {
    Registry::builder().tools(crate::builtin_tools::builtin()).build().expect("the built-in tools")
}

/// A `move_path` call with awkward values, decided by a policy advising `advice`.
fn refusal(advice: Advice) -> String {
    let registry = registry();
    let tool = registry.get("move_path").expect("move_path");
    let call = CallFacts {
        unchecked: Vec::new(),
        tool,
        roles: vec![("from", ParamRole::Path, "it's \"a\"*.txt"), ("to", ParamRole::Path, "b\\c")],
        entries: Vec::new(),
        digest: "sha256:00",
        detours: Vec::new(),
        principal: None,
        session: None,
    };
    match Policy::new(PermissionMode::WorkspaceWrite).advice(advice).decide_now(&call) {
        Ok(Decision::Deny { details, .. }) => details,
        other => panic!("not refused: {other:?}"),
    }
}

/// A value with a line break or another control character is never turned into a rule: in
/// `TEAAGENT_GRANTS` (one rule per line) `echo hi⏎shell_exec` would become a grant of the
/// whole tool. Every form then advises only this exact call and the mode.
#[test]
fn values_with_line_breaks_are_never_advised_as_rules() {
    let registry = registry();
    for (tool, arg, role, value) in [
        ("shell_exec", "command", ParamRole::Command, "echo hi\nshell_exec"),
        ("shell_exec", "command", ParamRole::Command, "echo hi\rshell_exec"),
        ("delete_path", "path", ParamRole::Path, "a\ndelete_path"),
        ("delete_path", "path", ParamRole::Path, "a\u{1b}[2Jb"),
    ] {
        let call = CallFacts {
            unchecked: Vec::new(),
            tool: registry.get(tool).expect("tool"),
            roles: vec![(arg, role, value)],
            entries: Vec::new(),
            digest: "sha256:00",
            detours: Vec::new(),
            principal: None,
            session: None,
        };
        for advice in [
            Advice::Flags,
            Advice::Environment { file: Some(PathBuf::from("/h/c.toml")), shared: false },
            Advice::Code,
        ] {
            let details = match Policy::new(PermissionMode::WorkspaceWrite).advice(advice).decide_now(&call) {
                Ok(Decision::Deny { details, .. }) => details,
                other => panic!("not refused: {other:?}"),
            };
            for rule_form in ["--grant", "TEAAGENT_GRANTS", "grants =", ".grant("] {
                assert!(!details.contains(rule_form), "{value:?}: {details}");
            }
            assert!(details.contains("sha256:00") && details.contains("line break"), "{details}");
        }
    }
}

#[test]
fn denials_advise_what_works_for_the_server_quoted_for_where_it_goes() {
    let flags = refusal(Advice::Flags);
    assert!(
        flags.contains(r#"--grant 'move_path:from=it'\''s "a"[*].txt' --grant 'move_path:to=b[\]c'"#),
        "{flags}"
    );
    assert!(flags.contains("--preapprove sha256:00") && flags.contains("--permission-mode allow"), "{flags}");

    let env = refusal(Advice::Environment { file: Some(PathBuf::from("/h/config.toml")), shared: true });
    // Two rules: one per line, in bash's $'…' (backslash and quote escaped).
    assert!(
        env.contains(r#"TEAAGENT_GRANTS=$'move_path:from=it\'s "a"[*].txt\nmove_path:to=b[\\]c'"#),
        "{env}"
    );
    assert!(
        env.contains(
            r#"in /h/config.toml with grants = ["move_path:from=it's \"a\"[*].txt", "move_path:to=b[\\]c"]"#
        ),
        "{env}"
    );
    assert!(
        env.contains("TEAAGENT_PERMISSION_MODE=allow") && env.contains("TEAAGENT_PREAPPROVE=sha256:00"),
        "{env}"
    );
    assert!(!env.contains("--"), "{env}");

    let code = refusal(Advice::Code);
    assert!(
        code.contains(r#"`.grant("move_path:from=it's \"a\"[*].txt")?.grant("move_path:to=b[\\]c")?`"#),
        "{code}"
    );
    assert!(code.contains("Policy::new(PermissionMode::Allow)"), "{code}");

    // Each form allows exactly the call: the rules parse back and cover the values.
    for rule in ["move_path:from=it's \"a\"[*].txt", "move_path:to=b[\\]c"] {
        let grant = Grant::parse(rule).expect("the advised rule parses");
        let (arg, value) = if rule.contains("from") { ("from", "it's \"a\"*.txt") } else { ("to", "b\\c") };
        assert!(grant.covers_arg("move_path", arg, ParamRole::Path, value), "{rule}");
    }
}

#[test]
fn startup_lists_the_tools_that_need_an_approval() {
    let registry = registry();
    let line = Policy::new(PermissionMode::WorkspaceWrite).advice(Advice::Flags).approvals_needed(&registry);
    let line = line.expect("destructive tools need one");
    assert!(line.starts_with("tools that need an approval in workspace-write mode: "), "{line}");
    assert!(line.contains("delete_path (destructive, tier high)") && !line.contains("read_file"), "{line}");
    let granted = Policy::new(PermissionMode::WorkspaceWrite)
        .grant("delete_path")
        .and_then(|p| p.deny("shell_exec"))
        .expect("rules")
        .approvals_needed(&registry)
        .expect("others still need one");
    assert!(!granted.contains("delete_path") && !granted.contains("shell_exec"), "{granted}");
    let prompt = Policy::new(PermissionMode::Prompt).approvals_needed(&registry).expect("asks");
    assert!(prompt.starts_with("tools that ask the user in prompt mode: "), "{prompt}");
    assert!(Policy::new(PermissionMode::DangerFullAccess).approvals_needed(&registry).is_none());
}

#[test]
fn path_deny_rules_hide_from_the_tools_they_name_and_resources() {
    let policy = Policy::default()
        .deny("*:path=secrets/**")
        .and_then(|p| p.deny("read_file:path=private/*"))
        .and_then(|p| p.deny("*:command=rm*"))
        .expect("rules");
    let hidden = policy.hidden_paths(&registry()).expect("path rules hide paths");
    for scope in ["search_text", "find_files", "list_directory", "resources/list", "resources/read"] {
        assert!(hidden(scope, Path::new("secrets/a/key.pem")), "{scope}");
        assert!(!hidden(scope, Path::new("src/main.rs")), "{scope}");
        assert!(!hidden(scope, Path::new("private/x")), "{scope}: only read_file's rule");
    }
    assert!(hidden("read_file", Path::new("private/x")));
    // A command rule says nothing about paths, for any tool.
    assert!(!hidden("shell_exec", Path::new("rm.txt")));
    assert!(!hidden("read_file", Path::new("rm.txt")));
    assert!(!hidden("resources/read", Path::new("rmdir")));
    let commands_only = Policy::default().deny("shell_exec:command=rm*").expect("rule");
    assert!(commands_only.hidden_paths(&registry()).is_none());
}
