//! A fleet whose Redis goes away (the fleet: `common/fleet.rs`): Redis killed and
//! started again on the same port; Redis killed mid-run (rate-limited calls refused with
//! `state_unavailable`, the others served) and the fleet recovering once it is back.

use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_tests::services::{Redis, Resp};

use crate::common::fleet;
use fleet::{
    Fleet, PATIENCE, Setup, TOKEN, answer, call, error_of, read_file_limit, read_replica_txt, request, tally,
    text_of, try_post,
};

#[test]
fn redis_killed_then_started_again_on_the_same_port_answers_again() {
    let mut redis = Redis::start();
    let url = redis.url();
    assert!(redis.ping(), "{}", redis.log());
    assert_eq!(redis.command(&["SET", "fleet:probe", "1"]).expect("SET"), Resp::Simple("OK".into()));
    assert_eq!(redis.command(&["GET", "fleet:probe"]).expect("GET"), Resp::Bulk(Some(b"1".to_vec())));

    redis.kill();
    assert!(!redis.ping(), "a killed Redis answers nothing");
    assert!(TcpStream::connect(redis.addr()).is_err(), "a killed Redis's port refuses connections");

    redis.restart();
    assert_eq!(redis.url(), url, "the same address after a restart");
    assert!(redis.ping(), "{}", redis.log());
    // Nothing was persisted: it starts empty.
    assert_eq!(redis.command(&["GET", "fleet:probe"]).expect("GET"), Resp::Bulk(None));
    assert_eq!(redis.command(&["DBSIZE"]).expect("DBSIZE"), Resp::Integer(0));
    // An error is an answer, not a failed connection.
    assert!(matches!(redis.command(&["NO-SUCH-COMMAND"]), Ok(Resp::Error(e)) if e.starts_with("ERR")));
}

/// What [`Traffic`] got so far.
#[derive(Clone, Default)]
struct Seen {
    /// Calls that ran.
    ran: usize,
    /// Calls refused with `-32000`, `reason: "state_unavailable"`.
    unavailable: usize,
    /// Anything else (a failed request, another error).
    other: Vec<String>,
}

/// A client calling `read_file` through the load balancer, one call after another, until
/// stopped.
struct Traffic {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Traffic {
    fn start(addr: SocketAddr) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (record, stopped) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for id in 10_000.. {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let outcome = try_post(addr, &read_replica_txt(id), Some(TOKEN))
                    .map_err(|e| e.to_string())
                    .and_then(|reply| answer(&reply).ok_or_else(|| format!("{reply:?}")));
                let mut seen = record.lock().unwrap_or_else(|p| p.into_inner());
                match outcome {
                    Ok(answer) if text_of(&answer).is_some() => seen.ran += 1,
                    Ok(answer)
                        if error_of(&answer).is_some_and(|(code, data)| {
                            code == -32000 && data["reason"] == "state_unavailable"
                        }) =>
                    {
                        seen.unavailable += 1
                    }
                    Ok(answer) => seen.other.push(answer.to_string()),
                    Err(why) => seen.other.push(why),
                }
                drop(seen);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self { seen, stop, thread }
    }

    fn seen(&self) -> Seen {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits until what was seen satisfies `enough` (panics after [`PATIENCE`]).
    fn wait_for(&self, enough: impl Fn(&Seen) -> bool, what: &str, fleet: &Fleet) {
        let deadline = Instant::now() + PATIENCE;
        while !enough(&self.seen()) {
            let seen = self.seen();
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} for {what}: {} ran, {} unavailable, other: {:?}\n{}",
                seen.ran,
                seen.unavailable,
                seen.other,
                fleet.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(self) -> Seen {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().expect("the client thread");
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[test]
fn with_redis_killed_rate_limited_calls_fail_closed_and_the_fleet_recovers_when_it_returns() {
    let mut fleet = Fleet::start_with(Setup {
        config: read_file_limit(100_000),
        // Refused connections fail at once; the timeout only bounds a Redis that hangs. Long
        // enough that a loaded machine does not turn a slow answer into a refusal.
        state_timeout_ms: Some(10_000),
        ..Setup::default()
    });
    // Up: rate-limited calls run, on every replica.
    let before = tally((0..6).map(|id| fleet.which(id)));
    assert_eq!(before.len(), 3, "{before:?}");

    // A client keeps calling through the load balancer all along, so Redis dies and returns
    // under calls in flight.
    let traffic = Traffic::start(fleet.nginx.addr());
    traffic.wait_for(|seen| seen.ran >= 3, "calls to run before Redis is killed", &fleet);
    fleet.redis.kill();
    // Through the load balancer (every replica in turn) and on each replica directly:
    // refused, never admitted unchecked.
    let nginx = fleet.nginx.addr();
    let targets: Vec<SocketAddr> =
        [nginx; 6].into_iter().chain(fleet.replicas.iter().map(|r| r.addr)).collect();
    for (id, addr) in (100..).zip(targets.iter().copied()) {
        let refused = call(addr, &read_replica_txt(id), &|| fleet.logs());
        let (code, data) = error_of(&refused).unwrap_or_else(|| panic!("refused: {refused}"));
        assert_eq!(
            (code, data["reason"].clone(), data["tool"].clone()),
            (-32000, json!("state_unavailable"), json!("read_file")),
            "via {addr}: {refused}\n{}",
            fleet.logs()
        );
    }
    // A tool without a rate limit needs no shared state: served as before.
    for id in 200..206 {
        let info =
            request(id, "tools/call", json!({"name": "file_info", "arguments": {"path": "replica.txt"}}));
        let served = call(nginx, &info, &|| fleet.logs());
        assert_eq!(served["result"]["isError"], json!(false), "{served}\n{}", fleet.logs());
    }
    // Each refusal is logged by the replica that made it.
    for replica in &fleet.replicas {
        let stderr = replica.stderr_once(|e| e.contains("the shared state cannot be reached"));
        assert!(
            stderr.contains("the shared state cannot be reached"),
            "replica {} logs the refusals:\n{stderr}",
            replica.name,
        );
    }

    // Redis back (empty: nothing was persisted): every replica reconnects by itself and admits
    // again. Until it has, a call may still be refused — only ever as `state_unavailable`.
    traffic.wait_for(|seen| seen.unavailable >= 1, "the client's calls to be refused", &fleet);
    fleet.redis.restart();
    for (n, replica) in fleet.replicas.iter().enumerate() {
        let deadline = Instant::now() + PATIENCE;
        let mut id = 1000 * (n as i64 + 1);
        loop {
            id += 1;
            let answer = call(replica.addr, &read_replica_txt(id), &|| fleet.logs());
            if text_of(&answer).as_deref() == Some(replica.name.as_str()) {
                break;
            }
            let refusal = error_of(&answer).map(|(code, data)| (code, data["reason"].clone()));
            assert_eq!(refusal, Some((-32000, json!("state_unavailable"))), "{answer}\n{}", fleet.logs());
            assert!(
                Instant::now() < deadline,
                "replica {} still refuses {PATIENCE:?} after Redis returned: {answer}\n{}",
                replica.name,
                fleet.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let after = tally((300..309).map(|id| fleet.which(id)));
    assert_eq!(after.len(), 3, "{after:?}");
    // The client that called throughout: each call ran or was refused as unavailable, and its
    // calls run again.
    let ran_before = traffic.seen().ran;
    traffic.wait_for(|seen| seen.ran > ran_before, "the client's calls to run again", &fleet);
    let seen = traffic.stop();
    assert!(
        seen.other.is_empty(),
        "neither ran nor refused as unavailable: {:?}\n{}",
        seen.other,
        fleet.logs()
    );
    // The admissions are in the Redis that came back.
    let window = fleet.redis.command(&["ZCARD", "teaagent:rate:read_file"]).expect("ZCARD");
    assert!(matches!(window, Resp::Integer(n) if n >= 9), "{window:?}");
}
