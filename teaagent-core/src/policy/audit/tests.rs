//! The log under concurrent writers and rotation: every line of every file is a whole record,
//! none is lost while the old files are kept, and old files past `keep` are dropped.

use rustix::fs::FlockOperation;

use super::*;
use crate::scratch::Scratch;

fn record(tool: &str, rule: &str) -> AuditRecord<'static> {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    AuditRecord {
        time: AuditRecord::now(),
        tool: leak(tool),
        tier: "low",
        digest: "sha256:00",
        mode: "workspace-write",
        rule: leak(rule),
        outcome: "allowed",
        principal: None,
        sandbox: None,
        duration_ms: None,
    }
}

/// Every line of every file of the log, parsed (a torn or interleaved line fails here).
fn all_records(home: &Home) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for LogFile { name, file } in open_files(home).expect("open") {
        let mut lines = Lines::new(file);
        lines
            .read_new(|n, line| {
                let value = serde_json::from_slice(line)
                    .unwrap_or_else(|e| panic!("{name}:{n}: {e}: {}", String::from_utf8_lossy(line)));
                out.push((name.clone(), value));
                Ok(())
            })
            .expect("read");
        assert!(lines.incomplete().is_none(), "{name} ends with a whole line");
    }
    out
}

#[test]
fn concurrent_writers_and_rotations_lose_and_tear_nothing() {
    let dir = Scratch::new("audit-rotation");
    let home = Home::at(dir.path()).expect("home");
    let rotation = Rotation { max_bytes: 2048, keep: 1000 };
    let (threads, each) = (8, 60);
    std::thread::scope(|scope| {
        for t in 0..threads {
            // Each thread its own log with its own open files, as each server process has.
            let log = AuditLog::in_dir(home.clone()).rotation(rotation);
            scope.spawn(move || {
                for i in 0..each {
                    // Lines of different lengths, some long (a long rule).
                    let rule = "r".repeat((i * 37) % 700);
                    log.append(&record(&format!("t{t}-{i}"), &rule)).expect("append");
                }
            });
        }
    });
    let records = all_records(&home);
    assert_eq!(records.len(), threads * each, "no line lost");
    let files: std::collections::BTreeSet<&str> = records.iter().map(|(n, _)| n.as_str()).collect();
    assert!(files.len() > 10, "rotated many times: {files:?}");
    // Oldest first, and each thread's records in the order it wrote them.
    for t in 0..threads {
        let mine: Vec<usize> = records
            .iter()
            .filter_map(|(_, r)| r["tool"].as_str()?.strip_prefix(&format!("t{t}-"))?.parse().ok())
            .collect();
        assert_eq!(mine, (0..each).collect::<Vec<_>>(), "thread {t}'s records in order");
    }
    // Writers that look at the size at the same moment may each add their line: a file passes
    // the limit by at most the lines of the other writers.
    for name in file_names(&home).expect("names") {
        let size = home.stat(&name).expect("stat").map_or(0, |s| s.size);
        assert!(size <= 2048 + threads as u64 * 1024, "{name} has {size} bytes");
    }
}

#[test]
fn at_most_keep_old_files_are_kept_and_the_newest_survive() {
    let dir = Scratch::new("audit-keep");
    let home = Home::at(dir.path()).expect("home");
    // Left by a larger `keep` before: dropped at the next rotation.
    for stale in ["audit.jsonl.3", "audit.jsonl.4"] {
        std::fs::write(dir.path().join(stale), "{}\n").expect("stale");
    }
    let log = AuditLog::in_dir(home.clone()).rotation(Rotation { max_bytes: 1024, keep: 2 });
    for i in 0..40 {
        log.append(&record(&format!("n{i}"), &"x".repeat(200))).expect("append");
    }
    assert_eq!(file_names(&home).expect("names"), ["audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]);
    assert!(
        home.stat("audit.jsonl.3").expect("stat").is_none()
            && home.stat("audit.jsonl.4").expect("stat").is_none()
    );
    let records = all_records(&home);
    let last = records.last().expect("records").1["tool"].clone();
    assert_eq!(last, "n39", "the newest record is in audit.jsonl");
    let numbers: Vec<u32> =
        records.iter().filter_map(|(_, r)| r["tool"].as_str()?.strip_prefix('n')?.parse().ok()).collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "a run of the newest: {numbers:?}");
}

#[test]
fn a_record_larger_than_the_limit_gets_a_file_of_its_own() {
    let dir = Scratch::new("audit-large");
    let home = Home::at(dir.path()).expect("home");
    let log = AuditLog::in_dir(home.clone()).rotation(Rotation { max_bytes: 1024, keep: 3 });
    log.append(&record("small", "")).expect("append");
    log.append(&record("large", &"y".repeat(5000))).expect("append");
    log.append(&record("after", "")).expect("append");
    let tools: Vec<(String, String)> = all_records(&home)
        .into_iter()
        .map(|(n, r)| (n, r["tool"].as_str().unwrap_or_default().to_owned()))
        .collect();
    let pair = |n: &str, t: &str| (n.to_owned(), t.to_owned());
    assert_eq!(
        tools,
        [pair("audit.jsonl.2", "small"), pair("audit.jsonl.1", "large"), pair("audit.jsonl", "after")]
    );
}

#[test]
fn a_log_kept_open_follows_its_name_when_another_server_rotates_removes_or_replaces_it() {
    let dir = Scratch::new("audit-kept-open");
    let home = Home::at(dir.path()).expect("home");
    let rotation = Rotation { max_bytes: 600, keep: 5 };
    let (mine, other) = (
        AuditLog::in_dir(home.clone()).rotation(rotation),
        AuditLog::in_dir(home.clone()).rotation(rotation),
    );
    for _ in 0..3 {
        mine.append(&record("mine-0", "")).expect("append"); // about 135 bytes each
    }
    // The other server's longer line rotates the log under the first one's open file.
    other.append(&record("other-0", &"z".repeat(300))).expect("append");
    mine.append(&record("mine-1", "")).expect("append");
    let tools = |home: &Home| -> Vec<(String, String)> {
        all_records(home)
            .into_iter()
            .map(|(n, r)| (n, r["tool"].as_str().unwrap_or_default().to_owned()))
            .collect()
    };
    let pair = |n: &str, t: &str| (n.to_owned(), t.to_owned());
    assert_eq!(
        tools(&home),
        [
            pair("audit.jsonl.1", "mine-0"),
            pair("audit.jsonl.1", "mine-0"),
            pair("audit.jsonl.1", "mine-0"),
            pair("audit.jsonl", "other-0"),
            pair("audit.jsonl", "mine-1")
        ],
        "the line after the rotation is in the new audit.jsonl, not in the file kept open"
    );

    // Removed: the next line starts a new file.
    std::fs::remove_file(dir.path().join(FILE_NAME)).expect("remove");
    mine.append(&record("mine-2", "")).expect("append");
    assert!(tools(&home).contains(&pair("audit.jsonl", "mine-2")));

    // Replaced by a link, or given a second name: refused, and nothing reaches the target.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::write(&elsewhere, "").expect("target");
    std::fs::remove_file(dir.path().join(FILE_NAME)).expect("remove");
    std::os::unix::fs::symlink(&elsewhere, dir.path().join(FILE_NAME)).expect("link");
    assert!(mine.append(&record("mine-3", "")).is_err(), "a link is refused");
    std::fs::remove_file(dir.path().join(FILE_NAME)).expect("remove link");
    mine.append(&record("mine-4", "")).expect("append");
    std::fs::hard_link(dir.path().join(FILE_NAME), dir.path().join("second-name")).expect("hard link");
    assert!(mine.append(&record("mine-5", "")).is_err(), "a file with two names is refused");
    assert_eq!(std::fs::read(&elsewhere).expect("read"), b"", "nothing was written through the link");
    let text = std::fs::read_to_string(dir.path().join("second-name")).expect("read");
    assert!(text.contains("mine-4") && !text.contains("mine-5"), "{text}");
}

#[test]
fn a_replaced_lock_file_is_taken_up_when_the_log_moves_and_before_a_rotation() {
    let dir = Scratch::new("audit-lock-replaced");
    let home = Home::at(dir.path()).expect("home");
    let rotation = Rotation { max_bytes: 600, keep: 5 };
    let mine = AuditLog::in_dir(home.clone()).rotation(rotation);
    mine.append(&record("mine-0", "")).expect("append");
    // Someone removes the lock file; a server started after that makes a new one, and rotates.
    std::fs::remove_file(dir.path().join(LOCK_NAME)).expect("remove");
    let other = AuditLog::in_dir(home.clone()).rotation(rotation);
    for _ in 0..4 {
        other.append(&record("other", "")).expect("append"); // the fourth rotates
    }
    mine.append(&record("mine-1", "")).expect("append"); // fits: `mine` does not rotate
    let in_new_file = all_records(&home).iter().any(|(n, r)| n == FILE_NAME && r["tool"] == "mine-1");
    assert!(in_new_file, "the line after the rotation is in the new audit.jsonl");

    // `mine` now takes the new lock: a writer holding it exclusive (as a rotation does) holds
    // `mine`'s next line back until it lets go.
    let held = home.lock_file(LOCK_NAME).expect("lock");
    rustix::fs::flock(&held, FlockOperation::LockExclusive).expect("exclusive");
    let clone = mine.clone(); // clones share the files kept open
    let writer = std::thread::spawn(move || clone.append(&record("mine-2", "")));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!writer.is_finished(), "the line waited for the lock of the file named audit.lock");
    rustix::fs::flock(&held, FlockOperation::Unlock).expect("unlock");
    writer.join().expect("thread").expect("append");
    assert!(all_records(&home).iter().any(|(_, r)| r["tool"] == "mine-2"));

    // Replaced again, and this time `mine` is the one to rotate: it looks at the lock's name
    // first, and rotates under the new lock.
    drop(held);
    std::fs::remove_file(dir.path().join(LOCK_NAME)).expect("remove");
    let held = home.lock_file(LOCK_NAME).expect("lock");
    rustix::fs::flock(&held, FlockOperation::LockExclusive).expect("exclusive");
    let writer = std::thread::spawn(move || mine.append(&record("mine-3", &"y".repeat(500))));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!writer.is_finished(), "the rotation waited for the lock of the file named audit.lock");
    rustix::fs::flock(&held, FlockOperation::Unlock).expect("unlock");
    writer.join().expect("thread").expect("append");
    let last = all_records(&home).into_iter().last().expect("a record");
    assert_eq!((last.0.as_str(), last.1["tool"].as_str()), (FILE_NAME, Some("mine-3")));
}

/// Another process's lock (an open file description of its own, held exclusive) is waited for
/// until the record's deadline, no longer: then the record is an error naming the lock, and
/// nothing is written.
#[test]
fn a_record_waits_for_a_held_lock_until_its_deadline() {
    let dir = Scratch::new("audit-deadline");
    let home = Home::at(dir.path()).expect("home");
    let log = AuditLog::in_dir(home.clone());
    log.append(&record("before", "")).expect("append");
    let held = home.lock_file(LOCK_NAME).expect("lock");
    rustix::fs::flock(&held, FlockOperation::LockExclusive).expect("exclusive");
    let busy = log.append_line(&record("now", "").line(), None).expect_err("not without waiting");
    assert_eq!(busy.kind(), io::ErrorKind::WouldBlock, "{busy}");
    let started = Instant::now();
    let late = log.append_line(&record("late", "").line(), Some(started + Duration::from_millis(300)));
    let late = late.expect_err("the lock is never let go");
    assert_eq!(late.kind(), io::ErrorKind::TimedOut, "{late}");
    assert!(late.to_string().contains(LOCK_NAME), "{late}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    drop(held);
    log.append(&record("after", "")).expect("append once let go");
    let tools: Vec<_> = all_records(&home).into_iter().map(|(_, r)| r["tool"].clone()).collect();
    assert_eq!(tools, ["before", "after"]);
}

/// Records written from the runtime wait for a held lock on the blocking pool: the runtime's one
/// thread goes on running its other tasks meanwhile, a record the caller awaits is written once
/// the lock is let go, and one written in the background (best effort) too.
#[test]
fn records_written_aside_keep_the_runtime_running() {
    let dir = Scratch::new("audit-aside");
    let home = Home::at(dir.path()).expect("home");
    let log = AuditLog::in_dir(home.clone());
    let held = home.lock_file(LOCK_NAME).expect("lock");
    rustix::fs::flock(&held, FlockOperation::LockExclusive).expect("exclusive");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    runtime.block_on(async {
        log.append_best_effort(&record("background", ""));
        let awaited = log.clone();
        let writing = tokio::spawn(async move { awaited.append_aside(&record("aside", "")).await });
        // Other tasks of this thread run while the records wait.
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!writing.is_finished(), "the record waits for the lock");
        drop(held);
        writing.await.expect("task").expect("written once let go");
    });
    drop(runtime); // waits for the blocking pool: the background record is written by now
    let mut tools: Vec<_> = all_records(&home).into_iter().map(|(_, r)| r["tool"].clone()).collect();
    tools.sort_by_key(|tool| tool.to_string());
    assert_eq!(tools, ["aside", "background"]);
}

proptest::proptest! {
    /// A record's line is the bytes `serde_json` writes for it, whatever its strings hold.
    #[test]
    fn a_line_is_what_serde_json_writes(
        strings in proptest::collection::vec(proptest::prop_oneof![
            3 => "[a-z_:.-]{0,20}",
            1 => proptest::string::string_regex("[\"\\\\\u{0}-\u{1f}\u{7f}é€😀 a]{0,12}").expect("regex"),
        ], 9),
        principal in proptest::bool::ANY,
        sandbox in proptest::bool::ANY,
        duration in proptest::option::of(proptest::prop_oneof![
            3 => 0.0f64..1e9,
            1 => proptest::num::f64::ANY,
        ]),
    ) {
        let record = AuditRecord {
            time: strings[0].clone(),
            tool: &strings[1],
            tier: &strings[2],
            digest: &strings[3],
            mode: &strings[4],
            rule: &strings[5],
            outcome: &strings[6],
            principal: principal.then_some(strings[7].as_str()),
            sandbox: sandbox.then_some(strings[8].as_str()),
            duration_ms: duration,
        };
        let mut expected = serde_json::to_vec(&record).expect("serde_json");
        expected.push(b'\n');
        let line = record.line();
        proptest::prop_assert_eq!(String::from_utf8_lossy(&line), String::from_utf8_lossy(&expected));
    }
}
