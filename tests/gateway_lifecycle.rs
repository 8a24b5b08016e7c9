//! The life of the gateway's external servers against the real `teaagent` binary (the
//! set-up: `common/gateway_setup.rs`): a crash mid-call answers `-32000`
//! (`external_server_exited`) and the server is restarted; `run` starts only the server of the
//! tool it calls; no child is left after teaagent exits (EOF, SIGTERM, and SIGKILL for the direct
//! child), not even one that left its group and session, on the cgroup and the subreaper path; a
//! restart ends what the previous run started; servers start after the client's first answers,
//! and a call does not wait for that; a restart stuck in the kernel does not hold the exit.

use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::json;
use teaagent_tests::Bin;

use crate::common::{gateway_setup, processes};
use gateway_setup::{Setup, call, gone, text_of, wait_until};

#[test]
fn a_crash_mid_call_answers_32000_and_the_server_comes_back() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let crashed = call(&mut server, "rogue__crash", json!({}));
    assert_eq!(crashed["error"]["code"], -32000, "{crashed}");
    assert_eq!(crashed["error"]["data"]["reason"], "external_server_exited", "{crashed}");
    // Restarted with a backoff: calls in between are refused as unavailable, never hang.
    let mut answered = None;
    wait_until("a restart", Duration::from_secs(20), || {
        let r = call(&mut server, "rogue__echo", json!({"text": "back"}));
        if r.get("result").is_some() {
            answered = Some(r);
            return true;
        }
        // Before the gateway has seen the exit, a call may still go to the dead process.
        let reason = &r["error"]["data"]["reason"];
        assert!(reason == "external_server_unavailable" || reason == "external_server_exited", "{r}");
        false
    });
    assert_eq!(text_of(&answered.expect("answered")), "echo: back");
    assert_eq!(setup.marked("started").len(), 2, "started, crashed, started again");
    let stderr = server.stderr_once(|s| s.contains("restarting"));
    assert!(stderr.contains("external server exited; restarting it"), "{stderr}");
    server.finish();
}

/// Hardening round 3, "contain external servers": what a server starts is killed with it,
/// also a process that left its group and session (`setsid` after a double fork), whichever way
/// teaagent stops and whichever containment mechanism it uses; and when a server is restarted,
/// what its previous run left is gone.
#[test]
fn no_child_is_left_after_teaagent_exits() {
    for mechanism in ["cgroup", "subreaper"] {
        for how in ["eof", "TERM", "KILL"] {
            let setup = Setup::new("");
            setup.allow("rogue");
            let mut server = setup
                .serve_with(&["--permission-mode", "allow"], &[("TEAAGENT_SHELL_CONTAINMENT", mechanism)]);
            let grandchild: u32 =
                text_of(&call(&mut server, "rogue__grandchild", json!({}))).parse().expect("pid");
            let detached: u32 = text_of(&call(&mut server, "rogue__detach", json!({}))).parse().expect("pid");
            let rogue = setup.marked("started");
            assert_eq!(rogue.len(), 1);
            let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", rogue[0])).unwrap_or_default();
            assert_eq!(
                mechanism == "cgroup",
                cgroup.lines().any(|l| l.starts_with("0::") && l.contains("/teaagent-server.")),
                "{mechanism}: the server runs in a cgroup of its own exactly on the cgroup path: {cgroup}"
            );
            match how {
                "eof" => server.close_stdin(),
                signal => server.signal(signal),
            }
            server.wait(Duration::from_secs(20));
            wait_until(&format!("rogue gone after {how}"), Duration::from_secs(10), || gone(rogue[0]));
            if how != "KILL" {
                for (what, pid) in [("grandchild", grandchild), ("detached process", detached)] {
                    wait_until(
                        &format!("the {what} gone after {how} ({mechanism})"),
                        Duration::from_secs(10),
                        || gone(pid),
                    );
                }
            } else {
                // A SIGKILLed teaagent runs no clean-up: only the kernel's parent-death signal
                // reaches the direct child (README: what the gateway cannot contain).
                let _ = Command::new("kill")
                    .arg("-KILL")
                    .arg(grandchild.to_string())
                    .arg(detached.to_string())
                    .status();
            }
        }
        // A restart ends the previous run's scope.
        let setup = Setup::new("");
        setup.allow("rogue");
        let mut server =
            setup.serve_with(&["--permission-mode", "allow"], &[("TEAAGENT_SHELL_CONTAINMENT", mechanism)]);
        let detached: u32 = text_of(&call(&mut server, "rogue__detach", json!({}))).parse().expect("pid");
        let _ = call(&mut server, "rogue__crash", json!({}));
        wait_until(
            &format!("the detached process gone after a restart ({mechanism})"),
            Duration::from_secs(10),
            || gone(detached),
        );
        server.finish();
    }
}

/// Performance round 2, "first answer with external servers declared": starting them does not
/// share the machine with the client's first answers (`GatewayOptions::start_after`, 100 ms);
/// a call to one of their tools starts its server at once and is answered.
#[test]
fn servers_start_after_the_first_answers_and_a_call_does_not_wait_for_that() {
    let setup = Setup::new("");
    setup.allow("rogue");
    let spawned = SystemTime::now();
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let listed = server.request("tools/list", json!({}));
    assert!(
        listed.to_string().contains("rogue__echo"),
        "the pinned tools are listed before any start: {listed}"
    );
    wait_until("rogue started", Duration::from_secs(20), || !setup.marked("started").is_empty());
    let marker = std::fs::read_dir(&setup.markers).expect("markers").flatten().next().expect("a marker");
    let started = marker.metadata().and_then(|m| m.modified()).expect("when");
    let after = started.duration_since(spawned).unwrap_or_default();
    // (A file's time is the kernel's coarse clock: a few milliseconds of slack.)
    assert!(
        after >= Duration::from_millis(90),
        "the server started {after:?} after teaagent, before its delay"
    );
    server.finish();

    setup.clear_markers();
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "now"}))), "echo: now");
    assert_eq!(setup.marked("started").len(), 1);
    server.finish();
}

#[test]
fn run_starts_only_the_server_of_the_tool() {
    let others = tempfile::tempdir().expect("markers of the other server");
    let setup = Setup::new(&format!(
        "[mcp_servers.other]\ncommand = {:?}\nargs = [\"--marker\", {:?}]\nsandbox = {{ writable = [{:?}] }}\n",
        Bin::Rogue.path().display().to_string(),
        others.path().display().to_string(),
        others.path().display().to_string()
    ));
    setup.allow("rogue");
    setup.allow("other");
    for entry in std::fs::read_dir(others.path()).expect("markers").flatten() {
        std::fs::remove_file(entry.path()).expect("clear");
    }
    let out =
        setup.run(&["run", "rogue__echo", "--args", r#"{"text": "once"}"#, "--permission-mode", "allow"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "echo: once\n");
    assert_eq!(setup.marked("started").len(), 1, "rogue ran once, for the call");
    assert_eq!(
        std::fs::read_dir(others.path()).expect("markers").count(),
        0,
        "the other server never started"
    );
    let pid = setup.marked("started")[0];
    wait_until("rogue stopped after the call", Duration::from_secs(10), || gone(pid));
    // Refused like any call: workspace-write, tier high, no grant.
    let out = setup.run(&["run", "rogue__echo", "--args", r#"{"text": "no"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("approval"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A restart stuck waiting does not hold a stopping teaagent: here the restart's trust check
/// waits to remember the executable's new digest (the home's `file_digests.lock`, which this
/// test holds, and which teaagent is told to wait a minute for). Told to stop, teaagent exits
/// anyway, after its grace periods.
#[test]
fn a_restart_waiting_for_a_lock_does_not_hold_the_exit() {
    let own = tempfile::tempdir().expect("a copy of rogue");
    let rogue = own.path().join("rogue");
    std::fs::copy(Bin::Rogue.path(), &rogue).expect("copy rogue");
    let setup = Setup::with_rogue(&rogue, "");
    setup.allow("rogue");
    let mut server = setup.serve_with(&["--permission-mode", "allow"], &[("TEAAGENT_LOCK_WAIT", "60s")]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "up"}))), "echo: up");
    // The same bytes, a new version of the file to hash (its status change time moves), left
    // alone long enough to be remembered.
    let file = std::fs::File::open(&rogue).expect("open rogue");
    file.set_modified(SystemTime::now()).expect("touch");
    drop(file);
    std::thread::sleep(Duration::from_secs(3));
    let digests = std::fs::File::create(setup.home.path("file_digests.lock")).expect("lock file");
    rustix::fs::flock(&digests, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    let crashed = call(&mut server, "rogue__crash", json!({}));
    assert_eq!(crashed["error"]["data"]["reason"], "external_server_exited", "{crashed}");
    processes::wait_until_waiting_for_a_lock(|| server.stderr());
    server.close_stdin();
    let status = server.wait(Duration::from_secs(30));
    assert!(status.success(), "{status}\n{}", server.stderr());
    drop(digests);
}
