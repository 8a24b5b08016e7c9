//! A rate limit shared by a fleet (the fleet: `common/fleet.rs`): exactly `max_calls`
//! admitted across the fleet under 500 concurrent calls through nginx, one window in Redis, and
//! every replica taking calls.

use std::collections::BTreeMap;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use teaagent_tests::services::Resp;

use crate::common::fleet;
use fleet::{
    Fleet, PATIENCE, Setup, TOKEN, answer, error_of, read_file_limit, read_replica_txt, tally, text_of,
    try_post,
};

/// What one call of the burst got.
enum Outcome {
    /// It ran: the name of the replica that admitted it.
    Ran(String),
    /// `-32004`, `reason: "rate_limited"`.
    Limited,
    /// Anything else: what it was.
    Other(String),
}

#[test]
fn exactly_max_calls_are_admitted_across_the_fleet_under_500_concurrent_calls() {
    const CALLS: usize = 500;
    const MAX: u32 = 10;
    let fleet = Fleet::start_with(Setup {
        config: read_file_limit(MAX),
        // Every admission is a round trip to Redis from a replica sharing two cores with 500
        // client threads, nginx, Redis and the other replicas: a generous answer timeout, so
        // what is measured is the window, not the machine's load (a timeout would show as
        // `state_unavailable`, never as an extra admission).
        state_timeout_ms: Some(30_000),
        // What is measured is the shared window under one caller's burst: that caller may
        // have every call in progress at once (its share of a replica is bounded by default:
        // `through_the_load_balancer_one_caller_cannot_take_every_listen_stream`).
        args: vec!["--http-caller-connections", "256", "--http-caller-calls", "1024"],
        ..Setup::default()
    });
    let addr = fleet.nginx.addr();
    let start = Barrier::new(CALLS);
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..CALLS)
            .map(|i| {
                let start = &start;
                std::thread::Builder::new()
                    .stack_size(256 << 10)
                    .spawn_scoped(scope, move || {
                        let message = read_replica_txt(i as i64);
                        start.wait();
                        let reply = match try_post(addr, &message, Some(TOKEN)) {
                            Ok(reply) => reply,
                            Err(e) => return Outcome::Other(format!("the connection failed: {e}")),
                        };
                        let Some(answer) = answer(&reply).filter(|_| reply.status == 200) else {
                            return Outcome::Other(format!("{reply:?}"));
                        };
                        if let Some(name) = text_of(&answer) {
                            return Outcome::Ran(name);
                        }
                        match error_of(&answer) {
                            Some((-32004, data))
                                if data["reason"] == "rate_limited" && data["tool"] == "read_file" =>
                            {
                                Outcome::Limited
                            }
                            _ => Outcome::Other(answer.to_string()),
                        }
                    })
                    .expect("a client thread")
            })
            .collect();
        calls.into_iter().map(|call| call.join().expect("a client thread")).collect()
    });

    let ran: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Ran(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    let limited = outcomes.iter().filter(|o| matches!(o, Outcome::Limited)).count();
    let other: Vec<&str> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Other(what) => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        other.is_empty(),
        "{} of {CALLS} calls got neither a result nor the rate limit, e.g. {:?}\n{}",
        other.len(),
        &other[..other.len().min(5)],
        fleet.logs()
    );
    assert_eq!(
        (ran.len(), limited),
        (MAX as usize, CALLS - MAX as usize),
        "exactly max_calls admitted across the fleet, the rest refused (admitted by: {:?})\n{}",
        tally(ran.clone()),
        fleet.logs()
    );
    // One window for the fleet, in Redis: the ten admissions.
    let window = fleet.redis.command(&["ZCARD", "teaagent:rate:read_file"]).expect("ZCARD");
    assert_eq!(window, Resp::Integer(i64::from(MAX)), "{}", fleet.logs());

    // The calls reached every replica: nginx's access log, one line per request once answered
    // (`STATUS UPSTREAM METHOD URI`), every one of them a 200 from one replica.
    let deadline = Instant::now() + PATIENCE;
    let log = loop {
        let log = fleet.nginx.access_log();
        if log.lines().filter(|l| l.ends_with(" POST /mcp")).count() >= CALLS || Instant::now() > deadline {
            break log;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let posts: Vec<&str> = log.lines().filter(|l| l.ends_with(" POST /mcp")).collect();
    assert_eq!(posts.len(), CALLS, "one access-log line per call:\n{log}");
    assert!(posts.iter().all(|l| l.starts_with("200 ")), "every call answered 200:\n{log}");
    let per_replica: BTreeMap<&str, usize> = fleet
        .replicas
        .iter()
        .map(|r| {
            let upstream = format!(" {} POST", r.addr);
            (r.name.as_str(), posts.iter().filter(|l| l.contains(&upstream)).count())
        })
        .collect();
    assert_eq!(
        per_replica.values().sum::<usize>(),
        CALLS,
        "each call went to one replica: {per_replica:?}\n{log}"
    );
    assert!(per_replica.values().all(|&n| n > 0), "every replica took calls: {per_replica:?}");
}
