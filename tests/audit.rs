//! `teaagent audit` against the real binary, on records written by real calls (`teaagent run`
//! with the shipped tools) in a temporary `TEAAGENT_HOME`: the table, each filter, `--json`,
//! `--follow` across a rotation and its end (a closed pipe, Ctrl-C), hostile and broken lines, no
//! log at all; and the log's rotation by `[audit] max_bytes` and `keep` under concurrent writers.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use teaagent_tests::{Bin, Tree};

/// `teaagent ARGS` with `TEAAGENT_HOME=home`.
fn teaagent(home: &Path, args: &[&str]) -> Output {
    Command::new(Bin::Teaagent.path())
        .args(args)
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A workspace with a file to read, and a home.
struct Setup {
    ws: Tree,
    home: Tree,
}

impl Setup {
    fn new(config: &str) -> Self {
        let (ws, home) = (Tree::new(), Tree::new());
        ws.write("ws/notes.md", "hello\n");
        if !config.is_empty() {
            home.write("config.toml", config);
        }
        Self { ws, home }
    }

    /// `teaagent run TOOL --args ARGS FLAGS…` on the workspace: a real call, audited.
    fn run(&self, tool: &str, args: &str, flags: &[&str]) -> Output {
        let root = self.ws.root();
        let mut all = vec!["run", tool, "--args", args, "--root", root.to_str().expect("utf-8")];
        all.extend_from_slice(flags);
        teaagent(&self.home.base(), &all)
    }

    fn read(&self) {
        let out = self.run("read_file", r#"{"path": "notes.md"}"#, &[]);
        assert!(out.status.success(), "{}", stderr(&out));
    }

    /// A write refused by `read-only`.
    fn denied_write(&self) {
        let out = self.run(
            "write_file",
            r#"{"path": "new.md", "content": "x"}"#,
            &["--permission-mode", "read-only"],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    }

    fn audit(&self, args: &[&str]) -> Output {
        let mut all = vec!["audit"];
        all.extend_from_slice(args);
        teaagent(&self.home.base(), &all)
    }

    /// Every line of every file of the log (`audit.jsonl.N`, …, `audit.jsonl`), each checked
    /// to be a whole JSON record.
    fn log_lines(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.home.base())
            .expect("home")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("audit.jsonl"))
            .collect();
        let number =
            |n: &str| n.strip_prefix("audit.jsonl.").map_or(0, |k| k.parse::<u32>().expect("number"));
        names.sort_by_key(|n| std::cmp::Reverse(number(n)));
        let mut lines = Vec::new();
        for name in names {
            let text = std::fs::read_to_string(self.home.path(&name)).expect("log file");
            assert!(text.is_empty() || text.ends_with('\n'), "{name} ends with a whole line");
            for (i, line) in text.lines().enumerate() {
                let record: Value =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}: {line}", i + 1));
                assert!(record["outcome"].is_string(), "{name}:{}: {line}", i + 1);
                lines.push(line.to_owned());
            }
        }
        lines
    }
}

/// The table's rows (without the header), split into columns at runs of two spaces.
fn rows(table: &str) -> Vec<Vec<String>> {
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    assert!(header.starts_with("TIME") && header.contains("DECISION") && header.ends_with("RULE"), "{table}");
    lines
        .map(|l| l.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_owned).collect())
        .collect()
}

#[test]
fn real_calls_read_as_a_table_filtered_and_as_their_json_lines() {
    let setup = Setup::new("");
    let out = setup.audit(&[]);
    assert!(out.status.success() && out.stdout.is_empty(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no audit log"), "a missing log says so: {}", stderr(&out));

    setup.read();
    setup.denied_write();
    let out = setup.audit(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!out.stdout.contains(&0x1b), "no colour when stdout is not a terminal");
    let table = rows(&stdout(&out));
    let summary: Vec<(&str, &str, &str, &str)> =
        table.iter().map(|r| (r[1].as_str(), r[2].as_str(), r[3].as_str(), r[4].as_str())).collect();
    assert_eq!(summary.len(), 3, "{}", stdout(&out));
    assert_eq!(summary[0], ("-", "read_file", "allowed", "-"));
    assert_eq!((summary[1].0, summary[1].1, summary[1].2), ("-", "read_file", "completed"));
    assert!(summary[1].3.ends_with("ms") || summary[1].3.ends_with('s'), "a duration: {}", summary[1].3);
    assert_eq!(summary[2], ("-", "write_file", "denied", "-"));
    assert!(table[2][5].contains("read-only"), "the rule that decided: {:?}", table[2]);
    assert!(table.iter().all(|r| r[0].ends_with('Z')), "times: {table:?}");

    // Each filter.
    let only = |args: &[&str]| -> Vec<String> {
        let out = setup.audit(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        if out.stdout.is_empty() {
            return Vec::new();
        }
        rows(&stdout(&out)).into_iter().map(|r| format!("{} {}", r[2], r[3])).collect()
    };
    assert_eq!(only(&["--tool", "write_file"]), ["write_file denied"]);
    assert_eq!(only(&["--decision", "denied"]), ["write_file denied"]);
    assert_eq!(only(&["--decision", "completed", "--tool", "read_file"]), ["read_file completed"]);
    assert_eq!(only(&["--since", "1h"]).len(), 3);
    assert!(only(&["--since", "2999-01-01T00:00:00Z"]).is_empty());
    assert!(stderr(&setup.audit(&["--since", "2999-01-01T00:00:00Z"])).contains("no record matches"));
    assert_eq!(only(&["--since", "2000-01-01T00:00:00Z"]).len(), 3);

    // A value that is not one: a usage error listing the valid ones.
    let out = setup.audit(&["--decision", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("allowed, denied, refused, rate_limited, locked, completed, failed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(setup.audit(&["--since", "yesterday-ish"]).status.code(), Some(2));

    // `--json`: the lines of the file as they are, filtered the same way.
    let file = std::fs::read_to_string(setup.home.path("audit.jsonl")).expect("log");
    let out = setup.audit(&["--json"]);
    assert_eq!(stdout(&out), file);
    let out = setup.audit(&["--json", "--decision", "denied"]);
    let denied: Vec<&str> = file.lines().filter(|l| l.contains(r#""outcome":"denied""#)).collect();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), denied);
}

#[test]
fn hostile_values_are_escaped_and_lines_that_are_no_record_are_reported_and_skipped() {
    let setup = Setup::new("");
    setup.read();
    let good = std::fs::read_to_string(setup.home.path("audit.jsonl")).expect("log");
    let first = good.lines().next().expect("a record");
    let hostile = first.replace(r#""tool":"read_file""#, r#""tool":"x\u001b[2J\u202egnp.exe""#);
    // A record, a line that is none, a hostile record, and a record still being written.
    let text = format!("{first}\nnot json at all\n{hostile}\n{{\"time\":\"2026-");
    std::fs::write(setup.home.path("audit.jsonl"), text).expect("write");
    let out = setup.audit(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{202e}'), "{shown:?}");
    assert!(shown.contains(r"x\e[2J\u{202e}gnp.exe"), "{shown}");
    assert_eq!(rows(&shown).len(), 2, "{shown}");
    let warned = stderr(&out);
    assert!(warned.contains("audit.jsonl:2:") && warned.contains("skipped"), "{warned}");
    assert!(!warned.contains("audit.jsonl:4"), "a record still being written is no error: {warned}");
}

/// `teaagent audit ARGS` running, its stdout's lines sent as they come; after `most` lines
/// its stdout is closed (as `| head -n MOST` does).
fn spawn_audit(setup: &Setup, args: &[&str], most: usize) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(Bin::Teaagent.path())
        .arg("audit")
        .args(args)
        .env("TEAAGENT_HOME", setup.home.base())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("teaagent audit");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().take(most) {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The lines that arrive until `done` says enough (at most 10 s).
fn lines_until(rx: &mpsc::Receiver<String>, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while !done(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => got.push(line),
            Err(_) => panic!("not there in time; got {got:#?}"),
        }
    }
    got
}

/// Waits up to 5 s for `child` to end.
fn ended(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn follow_prints_new_records_across_rotations_and_ends_on_ctrl_c() {
    // Small files: each call's two records make the log rotate every other call or so.
    let setup = Setup::new("[audit]\nmax_bytes = 1024\nkeep = 5\n");
    setup.denied_write();
    let (mut child, rx) = spawn_audit(&setup, &["--follow", "--json"], usize::MAX);
    let first = lines_until(&rx, |got| !got.is_empty());
    assert!(first[0].contains(r#""outcome":"denied""#), "the backlog first: {first:?}");
    for _ in 0..4 {
        setup.read();
    }
    let got = lines_until(&rx, |got| got.len() >= 8);
    assert!(std::fs::metadata(setup.home.path("audit.jsonl.2")).is_ok(), "rotated more than once");
    // Exactly the records written since it started, once each, in order.
    assert_eq!(got, setup.log_lines()[1..], "every record, once, in order");
    // Ctrl-C ends it at once, successfully (also where this test's own runner ignores SIGINT,
    // as a script's background job does).
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(killed.success());
    let status = ended(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "nothing more");
}

#[test]
fn follow_shows_the_first_record_of_a_new_log_as_a_table_and_ends_when_its_reader_goes() {
    let setup = Setup::new("");
    let (mut child, rx) = spawn_audit(&setup, &["--follow"], 2);
    std::thread::sleep(Duration::from_millis(300));
    setup.denied_write();
    let got = lines_until(&rx, |got| got.len() >= 2);
    assert!(got[0].starts_with("TIME"), "{got:?}");
    assert!(got[1].contains("write_file") && got[1].contains("denied"), "{got:?}");
    // Its reader went away after two lines (`| head -n 2`): it notices and ends, successfully.
    let status = ended(&mut child);
    assert!(status.success(), "{status:?}");
}

#[test]
fn rotation_keeps_at_most_keep_old_files_and_concurrent_writers_tear_no_record() {
    let setup = Setup::new("[audit]\nmax_bytes = 1024\nkeep = 3\n");
    // Four writers at once, each making real calls.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..5 {
                    setup.read();
                }
            });
        }
    });
    let mut names: Vec<String> = std::fs::read_dir(setup.home.base())
        .expect("home")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("audit.jsonl"))
        .collect();
    names.sort();
    assert_eq!(names, ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]);
    // Every line of every file is a whole record (`log_lines` checks), and the newest survive.
    let lines = setup.log_lines();
    assert!(lines.len() >= 4 && lines.len() < 40, "{}", lines.len());
    let out = setup.audit(&["--json"]);
    assert!(out.status.success() && stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), lines, "oldest file first, every record");

    // Out of range: the file and key are named, the range said, nothing runs.
    let bad = Setup::new("[audit]\nmax_bytes = 100\n");
    let out = bad.run("read_file", r#"{"path": "notes.md"}"#, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`audit.max_bytes` = 100 is out of range")
            && stderr(&out).contains("config.toml"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    // A terminal for stdout: util-linux's `script` runs the command on a pseudo-terminal.
    if Command::new("script").arg("--version").output().is_err() {
        return teaagent_tests::skip("`script` (util-linux) is not installed: no pseudo-terminal to test on");
    }
    let setup = Setup::new("");
    setup.read();
    setup.denied_write();
    let on_terminal = |no_color: Option<&str>| -> String {
        let mut cmd = Command::new("script");
        let line = format!("'{}' audit", Bin::Teaagent.path().display());
        cmd.args(["-qec", &line, "/dev/null"]).env("TEAAGENT_HOME", setup.home.base()).env_remove("NO_COLOR");
        if let Some(value) = no_color {
            cmd.env("NO_COLOR", value);
        }
        let out = cmd.stdin(Stdio::null()).output().expect("script");
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let coloured = on_terminal(None);
    assert!(coloured.contains("\u{1b}[31mdenied\u{1b}[0m"), "{coloured:?}");
    assert!(coloured.contains("\u{1b}[32mcompleted\u{1b}[0m"), "{coloured:?}");
    let plain = on_terminal(Some("1"));
    assert!(plain.contains("denied") && !plain.contains('\u{1b}'), "{plain:?}");
    // An empty NO_COLOR is no request.
    assert!(on_terminal(Some("")).contains('\u{1b}'));
}
