//! Hardening, contained commands, against the real binary (the set-up:
//! `common/shell_setup.rs`): nothing a `shell_exec` command starts survives the call, however it
//! detaches (`setsid`, double fork, `nohup`, a daemon ignoring SIGTERM and SIGHUP), on the cgroup
//! path and on the subreaper fallback.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::{processes, shell_setup};
use shell_setup::{call, serve};

/// What every marker of this test process starts with.
fn marker_prefix() -> String {
    format!("7{:05}.", std::process::id() % 100_000)
}

thread_local! {
    /// The markers this test (its thread) handed out.
    static MINE: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A unique `sleep` argument: it marks the processes of one test command in `/proc`.
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let m = format!("{}{:03}", marker_prefix(), NEXT.fetch_add(1, Ordering::Relaxed));
    MINE.with(|mine| mine.borrow_mut().push(m.clone()));
    m
}

/// When a test fails midway (its server is SIGKILLed, so nothing cleans up), kills what this
/// test started, so no `sleep` outlives the run. Only its own markers: the tests of this file
/// run at once, and killing another test's commands would fail that test too and hide which
/// one failed first.
struct KillLeftoversOnFailure;

impl Drop for KillLeftoversOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for m in MINE.with(|mine| mine.take()) {
                kill_all(&alive_with(&m));
            }
        }
    }
}

fn kill_all(lines: &[String]) {
    for line in lines {
        if let Some(pid) = line.split(':').next() {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
    }
}

/// Live processes whose command line contains `marker` (zombies have none), as `PID: CMDLINE`.
fn alive_with(marker: &str) -> Vec<String> {
    processes::with_marker(marker).into_iter().map(|(pid, cmdline)| format!("{pid}: {cmdline}")).collect()
}

/// The zombie children of `pid`.
fn zombie_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Waits (bounded) until no process carries `marker`; fails with the survivors.
fn assert_gone(marker: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = alive_with(marker);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            // Do not leave them running for the next test run.
            kill_all(&left);
            panic!("{what}: processes survived the call: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until the server has no zombie child.
fn assert_no_zombies(server: &RawServer, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !zombie_children(server.pid()).is_empty() {
        assert!(Instant::now() < deadline, "{what}: zombie children {:?}", zombie_children(server.pid()));
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until a process runs `sleep MARKER`: the command has really started it.
fn wait_started(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !alive_with(marker).iter().any(|l| l.contains(&format!(": sleep {marker}"))) {
        assert!(Instant::now() < deadline, "`sleep {marker}` never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Shell lines that wait (bounded) until a process has the argument MARKER (`sleep MARKER`), so
/// the call ends only after the detached process exists; if it never does, the command fails
/// (exit 97) and so does the test. Plain `grep -z` over `/proc/*/cmdline` (procps may be
/// missing); the last character in brackets keeps grep from finding its own pattern.
fn until_started(marker: &str) -> String {
    let (head, last) = marker.split_at(marker.len() - 1);
    let found = format!("grep -qzx -e '{head}[{last}]' /proc/[0-9]*/cmdline 2>/dev/null");
    // Decided once: a process caught between two `exec`s (`env` → `setsid` → `sleep`) may show
    // an empty command line for an instant, so a second look could miss what the first saw.
    format!(
        "i=0; seen=0; while [ $i -lt 1000 ]; do if {found}; then seen=1; break; fi; sleep 0.01; i=$((i+1)); done\n\
         [ $seen = 1 ] || {{ echo 'never started: {marker}'; exit 97; }}"
    )
}

/// A command line built around a marker.
type Line = fn(&str) -> String;

/// Ways a command detaches a process from its shell: (what, marker, command line), each
/// running `sleep MARKER` with its own marker. Some only the cgroup path can catch.
fn detaching(cgroup_path: bool) -> Vec<(&'static str, String, String)> {
    let mut variants: Vec<(&'static str, Line)> = vec![
        ("setsid in the background", |m| format!("setsid sh -c 'sleep {m}' &")),
        ("double fork", |m| format!("( ( sleep {m} & ) & )")),
        ("nohup", |m| format!("nohup sleep {m} >/dev/null 2>&1 &")),
        ("a daemon ignoring SIGTERM and SIGHUP", |m| {
            format!(
                "setsid sh -c 'trap \"\" TERM HUP INT; while :; do sleep {m}; done' </dev/null >/dev/null 2>&1 &"
            )
        }),
        ("an emptied environment", |m| format!("env -i setsid sleep {m} &")),
    ];
    if Command::new("setsid").args(["--fork", "true"]).status().is_ok_and(|s| s.success()) {
        variants.push(("setsid --fork", |m| format!("setsid --fork sleep {m}")));
    }
    if cgroup_path {
        variants.push(("an emptied environment and no pipes", |m| {
            format!("env -i setsid sleep {m} </dev/null >/dev/null 2>&1 &")
        }));
        variants.push(("a nested cgroup", |m| {
            format!(
                "cg=$(awk '{{for (i = 7; i < NF; i++) if ($i == \"-\") {{ if ($(i+1) == \"cgroup2\") print $5; break }}}}' /proc/self/mountinfo | head -n 1)$(sed -n 's/^0:://p' /proc/self/cgroup)\n\
                 mkdir -p \"$cg/inner\" && setsid sh -c 'echo $$ > \"$1/inner/cgroup.procs\" && exec sleep {m}' sh \"$cg\" &"
            )
        }));
    }
    variants
        .into_iter()
        .map(|(what, line)| {
            let m = marker();
            let line = line(&m);
            (what, m, line)
        })
        .collect()
}

/// A server whose `shell_exec` uses `mechanism` (`cgroup` or `subreaper`), with a rate limit
/// that the tests do not reach; `None` when this machine cannot give a cgroup per call.
fn contained(mechanism: &str) -> Option<(RawServer, Tree, Tree)> {
    let (tree, home) = (Tree::new(), Tree::new());
    home.write("config.toml", "[tools.shell_exec]\nrate_limit = { max_calls = 1000, window_secs = 60 }\n");
    let mut server = serve(&tree, &home, &[("TEAAGENT_SHELL_CONTAINMENT", mechanism)]);
    let probe = call(&mut server, "shell_exec", json!({"command": "cat /proc/self/cgroup"}));
    let text = probe["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    let in_own_cgroup = text.lines().any(|l| l.starts_with("0::") && l.contains("/teaagent-shell."));
    if mechanism == "cgroup" {
        if text.contains("cgroup containment is not available") {
            teaagent_tests::skip(&format!("this machine gives the server no writable cgroup v2: {text}"));
            return None;
        }
        assert!(in_own_cgroup, "the command runs in its call's cgroup: {probe}");
    } else {
        assert!(!in_own_cgroup, "the fallback uses no cgroup: {probe}");
    }
    Some((server, tree, home))
}

fn detached_processes_die_when_the_shell_exits(mechanism: &str) {
    let _cleanup = KillLeftoversOnFailure;
    let Some((mut server, _tree, _home)) = contained(mechanism) else { return };
    // Without pipes and environment, only the cgroup recognises a process once its shell is gone.
    for (what, m, line) in detaching(mechanism == "cgroup") {
        let command = format!("{line}\n{}\necho started", until_started(&m));
        let answer = call(&mut server, "shell_exec", json!({"command": command}));
        assert_eq!(answer["result"]["isError"], false, "{what}: {answer}");
        assert_gone(&m, &format!("{mechanism}, {what}"));
        assert_no_zombies(&server, &format!("{mechanism}, {what}"));
    }
    server.finish();
}

#[test]
fn cgroup_path_detached_processes_die_when_the_shell_exits() {
    detached_processes_die_when_the_shell_exits("cgroup");
}

#[test]
fn subreaper_path_detached_processes_die_when_the_shell_exits() {
    detached_processes_die_when_the_shell_exits("subreaper");
}

/// All the ways at once, then a long foreground command: (markers, command line). While the
/// shell runs, the fallback finds by ancestry even a process without environment and pipes.
fn all_detaching_then_wait(mechanism: &str) -> (Vec<String>, String) {
    let mut variants = detaching(mechanism == "cgroup");
    if mechanism != "cgroup" {
        let m = marker();
        let line = format!("env -i setsid sleep {m} </dev/null >/dev/null 2>&1 &");
        variants.push(("an emptied environment and no pipes", m, line));
    }
    let mut command = String::new();
    for (_, m, line) in &variants {
        command.push_str(&format!("{line}\n{}\n", until_started(m)));
    }
    command.push_str("sleep 600\n");
    (variants.into_iter().map(|(_, m, _)| m).collect(), command)
}

fn everything_dies_on_timeout_cancel_and_server_exit(mechanism: &str) {
    let _cleanup = KillLeftoversOnFailure;
    let Some((mut server, _tree, _home)) = contained(mechanism) else { return };

    // Timeout.
    let (markers, command) = all_detaching_then_wait(mechanism);
    let answer = call(&mut server, "shell_exec", json!({"command": command, "timeout_secs": 1}));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(answer["result"]["isError"] == true && text.starts_with("timed out"), "{answer}");
    for m in &markers {
        assert_gone(m, &format!("{mechanism}, timeout"));
    }
    assert_no_zombies(&server, &format!("{mechanism}, timeout"));

    // Cancellation (notifications/cancelled) while everything runs.
    let (markers, command) = all_detaching_then_wait(mechanism);
    server.send_json(&json!({"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": {"name": "shell_exec", "arguments": {"command": command}}}));
    markers.iter().for_each(|m| wait_started(m));
    server.notify("notifications/cancelled", json!({"requestId": "long"}));
    for m in &markers {
        assert_gone(m, &format!("{mechanism}, cancel"));
    }
    assert_no_zombies(&server, &format!("{mechanism}, cancel"));

    // Server exit: stdin closes while everything runs.
    let (markers, command) = all_detaching_then_wait(mechanism);
    server.send_json(&json!({"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": {"name": "shell_exec", "arguments": {"command": command}}}));
    markers.iter().for_each(|m| wait_started(m));
    server.finish();
    for m in &markers {
        assert_gone(m, &format!("{mechanism}, server exit"));
    }
}

#[test]
fn cgroup_path_everything_dies_on_timeout_cancel_and_server_exit() {
    everything_dies_on_timeout_cancel_and_server_exit("cgroup");
}

#[test]
fn subreaper_path_everything_dies_on_timeout_cancel_and_server_exit() {
    everything_dies_on_timeout_cancel_and_server_exit("subreaper");
}

/// One call's end kills its own processes, not those of a call still running.
fn concurrent_calls_keep_their_own_processes(mechanism: &str) {
    let _cleanup = KillLeftoversOnFailure;
    let Some((mut server, _tree, _home)) = contained(mechanism) else { return };
    let (a, a_detached) = (marker(), marker());
    let long = format!("sleep {a} & setsid sh -c 'sleep {a_detached}' & wait");
    server.send_json(&json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "shell_exec", "arguments": {"command": long}}}));
    wait_started(&a);
    wait_started(&a_detached);
    for (what, m, line) in detaching(mechanism == "cgroup") {
        let command = format!("{line}\n{}\necho started", until_started(&m));
        let answer = call(&mut server, "shell_exec", json!({"command": command}));
        assert_eq!(answer["result"]["isError"], false, "{what}: {answer}");
        assert_gone(&m, &format!("{mechanism}, {what}"));
    }
    let runs = |m: &str| alive_with(m).iter().any(|l| l.contains(&format!(": sleep {m}")));
    assert!(runs(&a), "{mechanism}: the running call lost its job");
    assert!(runs(&a_detached), "{mechanism}: the running call lost its daemon");
    server.notify("notifications/cancelled", json!({"requestId": "a"}));
    assert_gone(&a, &format!("{mechanism}, the first call"));
    assert_gone(&a_detached, &format!("{mechanism}, the first call"));
    assert_no_zombies(&server, mechanism);
    server.finish();
}

#[test]
fn cgroup_path_concurrent_calls_keep_their_own_processes() {
    concurrent_calls_keep_their_own_processes("cgroup");
}

#[test]
fn subreaper_path_concurrent_calls_keep_their_own_processes() {
    concurrent_calls_keep_their_own_processes("subreaper");
}

/// A server that is PID 1 (as in a container) adopts every orphan of its commands: on the cgroup
/// path too, it reaps the ones its calls killed. Needs `unshare` with the right to make PID
/// namespaces (root); skipped otherwise.
#[test]
fn a_server_that_is_pid_1_leaves_no_zombies() {
    let _cleanup = KillLeftoversOnFailure;
    let probe =
        Command::new("unshare").args(["--pid", "--fork", "--mount-proc", "--kill-child", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        teaagent_tests::skip("cannot make a PID namespace here");
        return;
    }
    for mechanism in ["cgroup", "subreaper"] {
        let (tree, home) = (Tree::new(), Tree::new());
        home.write(
            "config.toml",
            "[tools.shell_exec]\nrate_limit = { max_calls = 1000, window_secs = 60 }\n",
        );
        let mut cmd = Command::new("unshare");
        cmd.args(["--pid", "--fork", "--mount-proc", "--kill-child", "--"])
            .arg(Bin::Teaagent.path())
            .args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
            .arg(tree.root())
            .env("TEAAGENT_HOME", home.base())
            .env("TEAAGENT_SHELL_CONTAINMENT", mechanism);
        let mut server = RawServer::start(cmd);
        server.initialize("2025-06-18");
        let probe = call(&mut server, "shell_exec", json!({"command": "echo $PPID; cat /proc/self/cgroup"}));
        let text = probe["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        if text.contains("cgroup containment is not available") {
            teaagent_tests::skip(&format!("the cgroup path: {text}"));
            server.finish();
            continue;
        }
        assert!(text.contains("--- stdout ---\n1\n"), "the server is PID 1: {text}");
        // The server's pid as this test sees it: the only child of `unshare`.
        let pid = std::fs::read_to_string(format!("/proc/{}/task/{}/children", server.pid(), server.pid()))
            .ok()
            .and_then(|c| c.split_whitespace().next().and_then(|p| p.parse::<u32>().ok()))
            .expect("the server under unshare");
        for (what, m, line) in detaching(false) {
            let command = format!("{line}\n{}\necho started", until_started(&m));
            let answer = call(&mut server, "shell_exec", json!({"command": command}));
            assert_eq!(answer["result"]["isError"], false, "{mechanism}, {what}: {answer}");
            assert_gone(&m, &format!("{mechanism} as PID 1, {what}"));
            let deadline = Instant::now() + Duration::from_secs(10);
            while !zombie_children(pid).is_empty() {
                assert!(
                    Instant::now() < deadline,
                    "{mechanism} as PID 1, {what}: zombie children {:?}",
                    zombie_children(pid)
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        server.finish();
    }
}

/// Without a cgroup it may write (an unprivileged user outside a delegated cgroup), `auto`
/// falls back to the subreaper and still contains the command. When the tests run as root, the
/// server runs as `nobody` through `setpriv`; otherwise the server is already unprivileged.
#[test]
fn auto_falls_back_to_the_subreaper_without_a_writable_cgroup() {
    let _cleanup = KillLeftoversOnFailure;
    let (tree, home) = (Tree::new(), Tree::new());
    let config = "[tools.shell_exec]\nrate_limit = { max_calls = 1000, window_secs = 60 }\n";
    let Some((mut cmd, home_dir)) = teaagent_tests::unprivileged::teaagent(&tree, &home, Some(config)) else {
        return;
    };
    cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", &home_dir)
        .env_remove("TEAAGENT_SHELL_CONTAINMENT");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let probe = call(&mut server, "shell_exec", json!({"command": "id -u; cat /proc/self/cgroup"}));
    let text = probe["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    if text.contains("/teaagent-shell.") {
        teaagent_tests::skip(&format!("this unprivileged server may create cgroups (delegated): {text}"));
        server.finish();
        return;
    }
    assert_eq!(probe["result"]["isError"], false, "{probe}");
    for (what, m, line) in detaching(false) {
        let command = format!("{line}\n{}\necho started", until_started(&m));
        let answer = call(&mut server, "shell_exec", json!({"command": command}));
        assert_eq!(answer["result"]["isError"], false, "{what}: {answer}");
        assert_gone(&m, &format!("auto without cgroup, {what}"));
        assert_no_zombies(&server, &format!("auto without cgroup, {what}"));
    }
    server.finish();
}
