//! Hardening round 3, "what runs is what was allowed", against the real `teaagent` binary:
//!
//! - the executable is run from the very file that was hashed: one swapped at its path while
//!   servers start never runs (before, it ran in some starts);
//! - a script an interpreter is told to run (a file an argument names) is pinned: changed, the
//!   server is not started, and `trust inspect` says what changed;
//! - the values of variables that decide which code runs (`PYTHONPATH`, `PATH`, …) are pinned,
//!   the others' are not; `inspect` says which is which;
//! - a package runner without an exact version (`npx -y pkg`) is neither allowed nor started.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use teaagent_tests::Bin;

use crate::common::gateway_setup;
use gateway_setup::{Setup, call, text_of};

#[test]
fn an_executable_swapped_while_servers_start_never_runs() {
    const STARTS: usize = 30;
    let probe = Setup::new("");
    let bin = probe.home.path("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    // Both small (a swap is quick, so the race is hit often): the allowed one starts rogue.
    let good = bin.join("good");
    std::fs::write(&good, format!("#!/bin/sh\nexec {:?} \"$@\"\n", Bin::Rogue.path().display().to_string()))
        .expect("good");
    let exe = bin.join("server");
    std::fs::write(&exe, "").expect("placeholder");
    let setup = Setup::with_rogue(&exe, "");
    // The one never allowed leaves a mark where the server's sandbox lets it write.
    let evil_ran = setup.markers.join("evil-ran");
    let evil = bin.join("evil");
    std::fs::write(&evil, format!("#!/bin/sh\necho ran > '{}'\nexit 1\n", evil_ran.display())).expect("evil");
    for file in [&good, &evil] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::fs::copy(&good, &exe).expect("install");
    setup.allow("rogue");
    // The mark works: the evil one, run as the server would be, leaves it.
    let status = std::process::Command::new(&evil).status().expect("evil");
    assert!(!status.success() && evil_ran.exists());
    std::fs::remove_file(&evil_ran).expect("reset");
    // Swap the file at the path back and forth (atomically, by rename) while servers start.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, exe, good, evil, bin) =
            (stop.clone(), exe.clone(), good.clone(), evil.clone(), bin.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let source = if n.is_multiple_of(2) { &evil } else { &good };
                let staged = bin.join(format!("staged-{n}"));
                std::fs::copy(source, &staged).expect("stage");
                std::fs::rename(&staged, &exe).expect("swap");
                n += 1;
                std::thread::sleep(Duration::from_micros(200));
            }
            std::fs::copy(&good, bin.join("staged-final")).expect("stage");
            std::fs::rename(bin.join("staged-final"), &exe).expect("restore");
        })
    };
    let mut started = 0;
    for _ in 0..STARTS {
        let mut server = setup.serve(&["--permission-mode", "allow"]);
        let answer = call(&mut server, "rogue__echo", json!({"text": "hi"}));
        if answer["result"]["content"][0]["text"] == "echo: hi" {
            started += 1;
        }
        server.finish();
        assert!(!evil_ran.exists(), "an executable that was never allowed ran");
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");
    assert!(!evil_ran.exists(), "an executable that was never allowed ran");
    // The allowed one still runs when it is what is there (the test saw starts, not only refusals).
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "ok"}))), "echo: ok");
    server.finish();
    eprintln!("{started} of {STARTS} starts during the swapping ran the allowed executable");
}

/// `rogue` started through `/bin/sh SCRIPT`, with `env` in its configuration.
fn through_a_script(env: &str) -> (Setup, std::path::PathBuf) {
    let setup = Setup::new("");
    let script = setup.home.path("start-rogue.sh");
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    // The configuration `Setup` wrote, with the command moved into the script.
    let rogue = Bin::Rogue.path().display().to_string();
    std::fs::write(&script, format!("#!/bin/sh\nexec {rogue:?} \"$@\"\n")).expect("script");
    let config = config
        .replacen(
            &format!("command = {rogue:?}\nargs = ["),
            &format!("command = \"/bin/sh\"\nargs = [{:?}, ", script.display().to_string()),
            1,
        )
        .replacen("env = { ROGUE_VISIBLE = \"yes\",", &format!("env = {{ ROGUE_VISIBLE = \"yes\", {env}"), 1);
    setup.home.write("config.toml", &config);
    (setup, script)
}

#[test]
fn a_script_and_the_variables_that_load_code_are_pinned_and_inspect_says_so() {
    let (setup, script) = through_a_script("PYTHONPATH = \"/opt/a\", API_TOKEN = \"t1\",");
    setup.allow("rogue");
    let inspect =
        String::from_utf8_lossy(&setup.run(&["mcp", "trust", "inspect", "rogue"]).stdout).into_owned();
    assert!(
        inspect.contains(&format!("file:      \"{}\"", script.display()))
            || inspect.contains("start-rogue.sh"),
        "{inspect}"
    );
    assert!(inspect.contains("value:     PYTHONPATH=\"/opt/a\""), "{inspect}");
    assert!(inspect.contains("not pinned:") && inspect.contains("API_TOKEN"), "{inspect}");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "a"}))), "echo: a");
    server.finish();

    // A token's value is not pinned: a new one still starts.
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    setup.home.write("config.toml", &config.replace("\"t1\"", "\"t2\""));
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "b"}))), "echo: b");
    server.finish();

    // A changed script is a changed server: not started, and inspect says how.
    let mut text = std::fs::read_to_string(&script).expect("script");
    text.push_str("# one more line\n");
    std::fs::write(&script, text).expect("script");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let refused = call(&mut server, "rogue__echo", json!({"text": "c"}));
    assert!(refused.get("error").is_some(), "{refused}");
    let stderr = server.stderr_once(|e| {
        e.contains("not starting external server `rogue`") && e.contains("files its arguments name")
    });
    assert!(
        stderr.contains("not starting external server `rogue`")
            && stderr.contains("files its arguments name"),
        "{stderr}"
    );
    server.finish();
    let inspect =
        String::from_utf8_lossy(&setup.run(&["mcp", "trust", "inspect", "rogue"]).stdout).into_owned();
    assert!(inspect.contains("changed:   files its arguments name"), "{inspect}");

    // So is a changed value of a variable that loads code.
    let (setup, _) = through_a_script("PYTHONPATH = \"/opt/a\",");
    setup.allow("rogue");
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    setup.home.write("config.toml", &config.replace("/opt/a", "/tmp/evil"));
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert!(call(&mut server, "rogue__echo", json!({"text": "d"})).get("error").is_some());
    let stderr = server.stderr_once(|e| e.contains("values of variables that load code"));
    assert!(stderr.contains("values of variables that load code"), "{stderr}");
    server.finish();
}

/// Each file is read once per version (its digest remembered by identity in
/// `$TEAAGENT_HOME/file_digests.json`); a changed file is read again even when it keeps its size
/// and its modification time: its status change time moved.
#[test]
fn a_remembered_digest_never_hides_a_changed_file() {
    let (setup, script) = through_a_script("");
    // Settled (changed more than two seconds ago): its digest is remembered from now on.
    std::thread::sleep(Duration::from_millis(2500));
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "a"}))), "echo: a");
    server.finish();
    let kept = std::fs::read_to_string(setup.home.path("file_digests.json")).expect("digests kept");
    let pinned =
        String::from_utf8_lossy(&setup.run(&["mcp", "trust", "inspect", "rogue"]).stdout).into_owned();
    assert!(kept.contains("digests"), "{kept}");

    // The same length, the same modification time, other bytes.
    let before = std::fs::metadata(&script).expect("script");
    let text = std::fs::read_to_string(&script).expect("script");
    let changed = text.replacen("exec", "EXEC", 1);
    assert_eq!(changed.len(), text.len());
    std::fs::write(&script, &changed).expect("script");
    std::fs::File::options()
        .write(true)
        .open(&script)
        .and_then(|f| f.set_modified(before.modified()?))
        .expect("mtime");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let refused = call(&mut server, "rogue__echo", json!({"text": "b"}));
    assert!(refused.get("error").is_some(), "a changed script started: {refused}\n{pinned}");
    let stderr = server.stderr_once(|e| e.contains("files its arguments name"));
    assert!(stderr.contains("files its arguments name"), "{stderr}");
    server.finish();
}

#[test]
fn a_package_without_an_exact_version_is_not_allowed() {
    let setup = Setup::new("");
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    setup.home.write(
        "config.toml",
        &format!(
            "{config}\n[mcp_servers.fetched]\ncommand = \"npx\"\nargs = [\"-y\", \"@example/mcp-server\"]\n"
        ),
    );
    let out = setup.run(&["mcp", "trust", "allow", "fetched"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("without an exact version") && stderr.contains("@example/mcp-server"),
        "{stderr}"
    );
    let inspect =
        String::from_utf8_lossy(&setup.run(&["mcp", "trust", "inspect", "fetched"]).stdout).into_owned();
    assert!(inspect.contains("NOT an exact version"), "{inspect}");
}
