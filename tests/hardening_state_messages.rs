//! Hardening, what teaagent says, against the real binary (the set-up:
//! `common/state_setup.rs`):
//!
//! - `mcp trust list|inspect` show every value escaped (item 10);
//! - `teaagent run` says a tool's error on stderr too (item 17).

use teaagent_tests::{Bin, Tree};

use crate::common::state_setup;
use state_setup::{new_home, read_a, stderr, stdout, teaagent_in};

// ---------------------------------------------------------------------------------------------
// Item 10: `mcp trust list|inspect` show every value escaped.

const RAW: [char; 5] = ['\u{1b}', '\u{202e}', '\u{200b}', '\u{7}', '\u{2028}'];

#[test]
fn trust_list_and_inspect_escape_every_value() {
    let tree = Tree::new();
    let home = new_home();
    let padding = "a".repeat(20_000);
    let config = format!(
        "[mcp_servers.\"ev\\u001b[2Kil\\u202e\\u200bname\\nsecond\"]\n\
         command = \"/bin/tr\\u200bue\\u001b[2K\\nfake\"\n\
         args = [\"--x\\u001b[31m\", \"a\\u202eb\", \"line\\nbreak\", \"{padding}; rm -rf ~\"]\n\
         env = {{ \"K\\u001b[1m\" = \"v\" }}\n"
    );
    std::fs::write(home.path().join("config.toml"), &config).expect("config");
    let name = "ev\u{1b}[2Kil\u{202e}\u{200b}name\nsecond";
    for args in [&["mcp", "trust", "list"][..], &["mcp", "trust", "inspect", name]] {
        let out = teaagent_in(home.path(), &tree.root(), args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        for c in RAW {
            assert!(!text.contains(c), "{args:?}: raw {c:?} in {text}");
        }
        assert!(text.contains(r"ev\e[2Kil\u{202e}\u{200b}name\nsecond"), "{args:?}: {text}");
        assert!(text.contains(r"/bin/tr\u{200b}ue\e[2K\nfake"), "{args:?}: {text}");
    }
    let inspect = stdout(&teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "inspect", name]));
    assert!(inspect.contains(r#""--x\e[31m""#) && inspect.contains(r#""a\u{202e}b""#), "{inspect}");
    assert!(inspect.contains(r#""line\nbreak""#) && inspect.contains(r"K\e[1m"), "{inspect}");
    assert!(inspect.contains("; rm -rf ~"), "the end of a long argument is shown: {inspect}");
    assert!(inspect.contains("more⟫"), "padding is folded with its count: {inspect}");
    // Every line of the output is one field: no value broke a line.
    assert!(inspect.lines().all(|l| l.contains(':')), "{inspect}");

    // A decision (on a command that starts: `allow` reads its tools), then a changed argument:
    // the differences are escaped too.
    let config = config.replace(r"/bin/tr\u200bue\u001b[2K\nfake", &Bin::Rogue.path().display().to_string());
    std::fs::write(home.path().join("config.toml"), &config).expect("config");
    let allow = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "allow", name]);
    assert!(allow.status.success(), "{}", stderr(&allow));
    for c in RAW {
        assert!(!stdout(&allow).contains(c), "{}", stdout(&allow));
    }
    std::fs::write(home.path().join("config.toml"), config.replace("a\\u202eb", "a\\u202ec"))
        .expect("config");
    let changed = stdout(&teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "inspect", name]));
    assert!(changed.contains("changed:   args") && changed.contains(r"a\u{202e}c"), "{changed}");
    for c in RAW {
        assert!(!changed.contains(c), "raw {c:?}: {changed}");
    }
}

// ---------------------------------------------------------------------------------------------
// Item 17: `teaagent run` says a tool's error on stderr too.

#[test]
fn run_reports_a_tool_error_on_stderr_with_exit_1() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    for extra in [&[][..], &["--json"]] {
        let mut args = vec!["run", "read_file", "--args", r#"{"path": "missing.txt"}"#];
        args.extend_from_slice(extra);
        let out = teaagent_in(home.path(), &root, &args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        let message = stderr(&out);
        assert!(message.contains("read_file") && message.contains("no such file"), "{extra:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(stdout(&out).contains("no such file"), "stdout keeps the result: {}", stdout(&out));
    }
    // A message that quotes untrusted text (a file name) is escaped on stderr.
    let out = teaagent_in(
        home.path(),
        &root,
        &["run", "read_file", "--args", r#"{"path": "mis\u001b[2Ksing\nx"}"#],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    // Success says nothing on stderr.
    let ok = read_a(home.path(), &root);
    assert!(ok.status.success() && ok.stderr.is_empty(), "{}", stderr(&ok));
}
