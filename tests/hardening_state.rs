//! Hardening (issue 10): the state attack classes, each against the real binary.
//!
//! - teaagent's own files (the workspace's and the user's configuration, `--config`, the trust
//!   store, the lock registry, the audit log) as links, FIFOs, devices or huge files: a clear
//!   error, never a hang, never an outside file's contents (item 1);
//! - configuration values out of range: exit 2 naming the key, the file and the range (item 3);
//! - zombie and forged lock records do not pin a workspace (item 4);
//! - links in or as `$TEAAGENT_HOME` are never written through; a trust store others may write
//!   is not trusted (item 13);
//! - one writer per workspace directory, however it is named (item 14);
//! - `mcp trust list|inspect` show every value escaped (item 10);
//! - `teaagent run` says a tool's error on stderr too (item 17).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// Longest a command may take before the test calls it hung (a watchdog, not a timing check).
const HUNG: Duration = Duration::from_secs(30);

/// Runs `teaagent ARGS` with `TEAAGENT_HOME=home` in `cwd`; kills it and fails if it hangs.
fn teaagent_in(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(Bin::Teaagent.path())
        .args(args)
        .current_dir(cwd)
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run teaagent");
    let deadline = Instant::now() + HUNG;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("teaagent {args:?} hung; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty home directory (user-only permissions).
fn new_home() -> tempfile::TempDir {
    let home = tempfile::Builder::new().prefix("teaagent-home-").tempdir().expect("home");
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    home
}

fn read_a(home: &Path, root: &Path) -> Output {
    teaagent_in(home, root, &["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#])
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

fn write_big(path: &Path, bytes: usize) {
    std::fs::write(path, "#".repeat(bytes)).expect("big file");
}

/// `teaagent mcp serve` on `root` (spelled as given), initialised.
fn serve(root: &Path, home: &Path, extra: &[&str]) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"])
        .arg(root)
        .args(extra)
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG");
    let mut server = RawServer::start(cmd);
    // The lock is settled right after the first line (`initialize` is answered before that),
    // and every later line waits for it: once a second line is answered, the lock is settled.
    server.initialize("2025-06-18");
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server
}

fn write_call(server: &mut RawServer, name: &str) -> Value {
    server.request("tools/call", json!({"name": "write_file", "arguments": {"path": name, "content": "x"}}))
}

// ---------------------------------------------------------------------------------------------
// Item 1: special files where teaagent reads its own files.

#[test]
fn a_workspace_config_that_is_a_link_out_a_fifo_a_device_or_huge_is_refused_unread() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    tree.write("outside/config.toml", "SECRET-FIRST-LINE = \"do not show\"\n");
    tree.write("outside/dir/config.toml", "SECRET-IN-DIR = 1\n");
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    let config = root.join(".teaagent/config.toml");
    type Make<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Make<'_>)> = vec![
        ("link to /dev/zero", Box::new(|| std::os::unix::fs::symlink("/dev/zero", &config).expect("link"))),
        (
            "link to /dev/urandom",
            Box::new(|| std::os::unix::fs::symlink("/dev/urandom", &config).expect("link")),
        ),
        ("fifo", Box::new(|| mkfifo(&config))),
        (
            "link to an outside file",
            Box::new(|| std::os::unix::fs::symlink(tree.path("outside/config.toml"), &config).expect("link")),
        ),
        (
            "relative link out",
            Box::new(|| std::os::unix::fs::symlink("../../outside/config.toml", &config).expect("link")),
        ),
        ("a directory", Box::new(|| std::fs::create_dir(&config).expect("mkdir"))),
        ("2 MiB", Box::new(|| write_big(&config, 2 * 1024 * 1024))),
    ];
    for (what, make) in cases {
        let _ = std::fs::remove_file(&config);
        let _ = std::fs::remove_dir(&config);
        make();
        let out = read_a(home.path(), &root);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {message}");
        assert!(out.stdout.is_empty(), "{what}: nothing is served");
        assert!(message.contains(".teaagent/config.toml"), "{what}: names the file: {message}");
        assert!(!message.contains("SECRET") && !message.contains("do not show"), "{what}: {message}");
        assert_eq!(message.lines().count(), 1, "{what}: {message}");
    }
    // The whole `.teaagent` directory as a link out of the root.
    std::fs::remove_dir_all(root.join(".teaagent")).expect("rm");
    std::os::unix::fs::symlink(tree.path("outside/dir"), root.join(".teaagent")).expect("link");
    let out = read_a(home.path(), &root);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("SECRET"), "{}", stderr(&out));
    // The server refuses to start the same way, rather than hang.
    std::fs::remove_file(root.join(".teaagent")).expect("rm");
    std::fs::create_dir(root.join(".teaagent")).expect("mkdir");
    mkfifo(&config);
    let out = teaagent_in(home.path(), &root, &["mcp", "serve"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_invalid_workspace_config_is_reported_without_echoing_its_bytes() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    let config = root.join(".teaagent/config.toml");
    let cases = [
        format!("a = {}\n", "[".repeat(500_000)),
        format!("a = {}\n", "{b=".repeat(100_000)),
        "permission_mode = \"\u{1b}[2K\u{202e}yolo\"\n".to_owned(),
        "\u{1b}]0;pwned\u{7} = 1\n".to_owned(),
        format!("x = \"{}\n", "\u{200b}".repeat(1000)),
        "\u{ff}\u{fe} = 1\n".to_owned(),
    ];
    for text in &cases {
        std::fs::write(&config, text).expect("config");
        let out = read_a(home.path(), &root);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{message}");
        assert!(out.stdout.is_empty());
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.len() < 2000, "the file's bytes are not echoed: {} bytes", message.len());
        for c in ['\u{1b}', '\u{202e}', '\u{200b}', '\u{7}'] {
            assert!(!message.contains(c), "raw {c:?}: {message}");
        }
    }
}

#[test]
fn a_link_inside_the_workspace_to_its_config_is_still_read() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    tree.write("ws/shared/teaagent.toml", "deny = [\"write_file\"]\n");
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    std::os::unix::fs::symlink("../shared/teaagent.toml", root.join(".teaagent/config.toml")).expect("link");
    let write = teaagent_in(
        home.path(),
        &root,
        &["run", "write_file", "--args", r#"{"path": "x.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(write.status.code(), Some(1), "denied by the linked file: {}", stderr(&write));
    assert!(!root.join("x.md").exists());
    assert!(read_a(home.path(), &root).status.success());
}

#[test]
fn the_users_own_files_as_fifos_devices_or_huge_files_are_errors_not_hangs() {
    let tree = Tree::new();
    let root = tree.root();
    // $TEAAGENT_HOME/config.toml
    for make in [
        (|p: &Path| mkfifo(p)) as fn(&Path),
        |p: &Path| std::os::unix::fs::symlink("/dev/zero", p).expect("link"),
        |p: &Path| write_big(p, 2 * 1024 * 1024),
    ] {
        let home = new_home();
        make(&home.path().join("config.toml"));
        let out = read_a(home.path(), &root);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("config.toml"), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    // --config FILE
    let home = new_home();
    let fifo = tree.path("fifo.toml");
    mkfifo(&fifo);
    for named in [Path::new("/dev/zero"), fifo.as_path(), Path::new("/nonexistent/config.toml")] {
        let out = teaagent_in(
            home.path(),
            &root,
            &[
                "run",
                "read_file",
                "--args",
                r#"{"path": "src/a.txt"}"#,
                "--config",
                &named.display().to_string(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{named:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&named.display().to_string()), "{}", stderr(&out));
    }
    // trust.json
    let home = new_home();
    mkfifo(&home.path().join("trust.json"));
    let out = teaagent_in(home.path(), &root, &["mcp", "trust", "list"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("trust.json") && stderr(&out).contains("FIFO"), "{}", stderr(&out));
    // The audit log: the write it would record is refused.
    let home = new_home();
    mkfifo(&home.path().join("audit.jsonl"));
    let out = teaagent_in(
        home.path(),
        &root,
        &["run", "write_file", "--args", r#"{"path": "w.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("audit"), "{}", stderr(&out));
    assert!(!root.join("w.md").exists(), "no unaudited write");
    // The registry: set aside and rebuilt.
    for make in [(|p: &Path| mkfifo(p)) as fn(&Path), |p: &Path| write_big(p, 9 * 1024 * 1024)] {
        let home = new_home();
        make(&home.path().join("workspace_registry.json"));
        let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
        let written = write_call(&mut server, "w.md");
        assert_eq!(written["result"]["isError"], false, "{written}; stderr: {}", server.stderr());
        server.finish();
        std::fs::remove_file(root.join("w.md")).expect("written");
        assert!(
            home.path().join("workspace_registry.json.corrupt").exists(),
            "the bad registry is set aside"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Item 3: configuration values out of range.

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

// ---------------------------------------------------------------------------------------------
// Item 4: zombie and forged lock records.

fn proc_stat(pid: u32) -> (char, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest: Vec<&str> = stat[stat.rfind(')').expect(")") + 1..].split_whitespace().collect();
    (rest[0].chars().next().expect("state"), rest[19].parse().expect("start"))
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id").trim().to_owned()
}

/// A registry holding one record for `root`, in the format the servers write.
fn plant_record(home: &Path, root: &Path, pid: u32, start: Option<u64>, boot: Option<&str>) {
    let meta = std::fs::metadata(root).expect("root");
    let record = json!({
        "workspace_path": root,
        "owner_pid": pid,
        "acquired_at": "2026-01-01T00:00:00Z",
        "owner_start": start,
        "boot_id": boot,
        "root_dev": meta.dev(),
        "root_ino": meta.ino(),
    });
    let body = serde_json::to_string_pretty(&json!({"version": 1, "locks": [record]})).expect("json");
    std::fs::write(home.join("workspace_registry.json"), body).expect("registry");
}

fn assert_writes(root: &Path, home: &Path, what: &str) {
    let mut server = serve(root, home, &["--permission-mode", "danger-full-access"]);
    let written = write_call(&mut server, "note.txt");
    assert_eq!(written["result"]["isError"], false, "{what}: {written}; stderr: {}", server.stderr());
    server.finish();
    std::fs::remove_file(root.join("note.txt")).expect("written");
}

#[test]
fn a_zombie_owner_does_not_pin_the_lock() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    let mut child = Command::new("true").spawn().expect("spawn");
    let pid = child.id();
    // Not reaped: once it exits it stays a zombie until `wait`.
    let deadline = Instant::now() + HUNG;
    while proc_stat(pid).0 != 'Z' {
        assert!(Instant::now() < deadline, "the child never became a zombie");
        std::thread::sleep(Duration::from_millis(5));
    }
    let start = proc_stat(pid).1;
    plant_record(home.path(), &root, pid, Some(start), Some(&boot_id()));
    assert_writes(&root, home.path(), "zombie");
    child.wait().expect("reap");
}

#[test]
fn forged_records_do_not_pin_the_lock() {
    let tree = Tree::new();
    let root = tree.root();
    let me = std::process::id();
    let (_, my_start) = proc_stat(me);
    let (_, init_start) = proc_stat(1);
    let boot = boot_id();
    let cases: Vec<(&str, u32, Option<u64>, Option<&str>)> = vec![
        ("pid 1, no start time, no boot id", 1, None, None),
        ("pid 1, no start time", 1, None, Some(&boot)),
        ("pid 1, wrong start time", 1, Some(init_start + 12345), Some(&boot)),
        ("pid 1, wrong boot id", 1, Some(init_start), Some("00000000-0000-0000-0000-000000000000")),
        ("pid 1, no boot id", 1, Some(init_start), None),
        ("a live process, wrong start time", me, Some(my_start + 1), Some(&boot)),
        ("a live process, no start time", me, None, Some(&boot)),
    ];
    for (what, pid, start, boot) in cases {
        let home = new_home();
        plant_record(home.path(), &root, pid, start, boot);
        assert_writes(&root, home.path(), what);
    }
}

// ---------------------------------------------------------------------------------------------
// Item 14: one writer per workspace directory, whatever its name.

#[test]
fn a_renamed_root_is_still_locked() {
    let tree = Tree::new();
    let home = new_home();
    let mut first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    std::fs::rename(tree.root(), tree.path("ws2")).expect("mv ws ws2");
    let mut second = serve(&tree.path("ws2"), home.path(), &["--permission-mode", "danger-full-access"]);
    let refused = write_call(&mut second, "b.txt");
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    assert_eq!(refused["error"]["data"]["ownerPid"], first.pid());
    assert!(!tree.path("ws2/b.txt").exists());
    // The owner still writes (the directory it opened at start).
    assert_eq!(write_call(&mut first, "a.txt")["result"]["isError"], false);
    assert!(tree.path("ws2/a.txt").exists());
    first.finish();
    // Once the owner is gone, the renamed root is free.
    assert_eq!(write_call(&mut second, "b.txt")["result"]["isError"], false);
    second.finish();
}

#[test]
fn a_root_spelled_through_a_link_is_the_same_workspace() {
    let tree = Tree::new();
    let home = new_home();
    tree.symlink("alias", tree.root());
    tree.symlink("alias-dir", tree.base());
    let first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    for spelled in [tree.path("alias"), tree.path("alias-dir/ws"), tree.path("ws/src/..")] {
        let mut second = serve(&spelled, home.path(), &["--permission-mode", "danger-full-access"]);
        let refused = write_call(&mut second, "b.txt");
        assert_eq!(refused["error"]["code"], -32003, "{spelled:?}: {refused}");
        second.finish();
    }
    assert!(!tree.root().join("b.txt").exists());
    first.finish();
}

#[test]
fn a_root_reached_through_a_bind_mount_is_the_same_workspace() {
    // A bind mount gives the same directory a second canonical path. It is made in a private
    // mount namespace (`unshare -Urm`), so the host's mounts are never touched.
    let probe = Command::new("unshare").args(["-Urm", "true"]).stderr(Stdio::null()).status();
    if !probe.is_ok_and(|s| s.success()) {
        teaagent_tests::skip("this system cannot make a private mount namespace (unshare -Urm)");
        return;
    }
    let tree = Tree::new();
    let home = new_home();
    std::fs::create_dir(tree.path("bound")).expect("mount point");
    let first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    let mut cmd = Command::new("unshare");
    cmd.args([
        "-Urm",
        "sh",
        "-c",
        r#"mount --bind "$1" "$2" && exec "$3" mcp serve --root "$2" --permission-mode danger-full-access"#,
        "sh",
    ])
    .arg(tree.root())
    .arg(tree.path("bound"))
    .arg(Bin::Teaagent.path())
    .env("TEAAGENT_HOME", home.path())
    .env_remove("RUST_LOG");
    let mut second = RawServer::start(cmd);
    second.initialize("2025-06-18");
    let refused = write_call(&mut second, "b.txt");
    assert_eq!(refused["error"]["code"], -32003, "{refused}; stderr: {}", second.stderr());
    assert!(!tree.root().join("b.txt").exists());
    second.finish();
    first.finish();
}

// ---------------------------------------------------------------------------------------------
// Item 13: teaagent's own files never follow links.

/// Every file (with contents) under `dir`.
fn contents(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        out.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
    }
    out.sort();
    out
}

#[test]
fn a_home_that_is_a_link_is_refused_and_nothing_is_written_through_it() {
    let tree = Tree::new();
    let real = new_home();
    let link = tree.path("home-link");
    std::os::unix::fs::symlink(real.path(), &link).expect("link");
    let out = teaagent_in(
        &link,
        &tree.root(),
        &["run", "write_file", "--args", r#"{"path": "w.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("symbolic link") && stderr(&out).contains("TEAAGENT_HOME"),
        "{}",
        stderr(&out)
    );
    assert!(contents(real.path()).is_empty(), "nothing written through the link");
    assert!(!tree.root().join("w.md").exists());
    let served = teaagent_in(&link, &tree.root(), &["mcp", "serve"]);
    assert_eq!(served.status.code(), Some(1), "{}", stderr(&served));
    let trust = teaagent_in(&link, &tree.root(), &["mcp", "trust", "list"]);
    assert_eq!(trust.status.code(), Some(1), "{}", stderr(&trust));
    assert!(contents(real.path()).is_empty());
}

#[test]
fn links_inside_the_home_are_never_written_through() {
    let tree = Tree::new();
    let root = tree.root();
    let outside = tempfile::tempdir().expect("outside");
    for name in ["audit.jsonl", "workspace_registry.json", "workspace_registry.lock"] {
        let home = new_home();
        let target = outside.path().join(format!("{name}.target"));
        std::fs::write(&target, "").expect("target");
        std::os::unix::fs::symlink(&target, home.path().join(name)).expect("link");
        let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
        let answer = write_call(&mut server, "n.txt");
        server.finish();
        assert_eq!(
            std::fs::read_to_string(&target).expect("target"),
            "",
            "{name}: written through: {answer}"
        );
        let _ = std::fs::remove_file(root.join("n.txt"));
        if name == "workspace_registry.json" {
            assert_eq!(answer["result"]["isError"], false, "the link is set aside: {answer}");
            assert!(!home.path().join(name).is_symlink(), "rebuilt as a file");
        }
    }
    // A hard link is not appended through either.
    let home = new_home();
    let target = outside.path().join("hard-linked");
    std::fs::write(&target, "").expect("target");
    std::fs::hard_link(&target, home.path().join("audit.jsonl")).expect("hard link");
    let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
    let answer = write_call(&mut server, "n.txt");
    server.finish();
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "", "{answer}");
    assert!(!root.join("n.txt").exists(), "no unaudited write: {answer}");
    // The user's configuration: refused at start, unread.
    let home = new_home();
    let target = outside.path().join("config.toml");
    std::fs::write(&target, "SECRET = 1\n").expect("target");
    std::os::unix::fs::symlink(&target, home.path().join("config.toml")).expect("link");
    let out = read_a(home.path(), &root);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link") && !stderr(&out).contains("SECRET"), "{}", stderr(&out));
    // A dangling link is not created through either.
    let home = new_home();
    let target = outside.path().join("created-by-link");
    std::os::unix::fs::symlink(&target, home.path().join("audit.jsonl")).expect("link");
    let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
    let answer = write_call(&mut server, "n.txt");
    server.finish();
    assert!(!target.exists(), "{answer}");
    // The trust store and its lock.
    for name in ["trust.json", "trust.lock"] {
        let home = new_home();
        let target = outside.path().join(format!("{name}.target"));
        std::fs::write(&target, "").expect("target");
        std::os::unix::fs::symlink(&target, home.path().join(name)).expect("link");
        std::fs::write(home.path().join("config.toml"), rogue_config("s")).expect("config");
        let out = teaagent_in(home.path(), &root, &["mcp", "trust", "allow", "s"]);
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "", "{name}: {}", stderr(&out));
    }
}

/// A configuration that declares `name` as the tests' MCP server (`allow` starts it once).
fn rogue_config(name: &str) -> String {
    format!("[mcp_servers.{name}]\ncommand = {:?}\n", Bin::Rogue.path().display().to_string())
}

#[test]
fn a_trust_store_others_may_write_is_not_trusted() {
    let tree = Tree::new();
    let home = new_home();
    std::fs::write(home.path().join("config.toml"), rogue_config("s")).expect("config");
    let allow = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "allow", "s"]);
    assert!(allow.status.success(), "{}", stderr(&allow));
    let store = home.path().join("trust.json");
    assert_eq!(std::fs::metadata(&store).expect("store").permissions().mode() & 0o777, 0o600);
    let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
    assert!(stdout(&list).contains("allowed, and the fingerprint matches"), "{}", stdout(&list));
    for mode in [0o666, 0o620, 0o602] {
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
        assert!(stdout(&list).contains("not decided"), "{mode:o}: {}", stdout(&list));
        assert!(
            stderr(&list).contains("trust.json") && stderr(&list).contains("writable"),
            "{}",
            stderr(&list)
        );
        let inspect = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "inspect", "s"]);
        assert!(stdout(&inspect).contains("record:      none"), "{}", stdout(&inspect));
    }
    // A home others may write is warned about.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
    assert!(stderr(&list).contains("writable by"), "{}", stderr(&list));
    assert_eq!(stderr(&list).matches("writable by").count(), 1, "said once: {}", stderr(&list));
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // So is a configuration file others may write.
    let config = home.path().join("config.toml");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o646)).expect("chmod");
    let out = read_a(home.path(), &tree.root());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("config.toml") && stderr(&out).contains("writable"), "{}", stderr(&out));
}

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
