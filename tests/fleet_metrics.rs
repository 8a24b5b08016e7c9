//! A real Prometheus scraping the fleet (the fleet: `common/fleet.rs`) through the load balancer
//! of `deploy/nginx/`, with the fleet's bearer token as `deploy/prometheus/prometheus.yml`
//! gives it: its query API comes to hold the replicas' own counts of calls and of round trips
//! to the shared Redis.

use std::time::{Duration, Instant};

use serde_json::Value;
use teaagent_tests::prometheus::Prometheus;

use crate::common::fleet;
use fleet::{Fleet, Setup, TOKEN, call, read_file_limit, read_replica_txt, text_of};

/// The value of an instant query's first series, if it has one.
fn value(answer: &Value) -> Option<&str> {
    answer["data"]["result"][0]["value"][1].as_str()
}

#[test]
fn prometheus_scrapes_a_replica_through_the_load_balancer() {
    // A rate limit: each admitted call is one round trip to Redis.
    let fleet = Fleet::start_with(Setup { config: read_file_limit(100), ..Setup::default() });
    // Two calls on every replica, straight to it: whichever replica a scrape through the load
    // balancer reaches reports the same numbers.
    for replica in &fleet.replicas {
        for id in 0..2 {
            let answer = call(replica.addr, &read_replica_txt(id), &|| fleet.logs());
            assert_eq!(text_of(&answer).as_deref(), Some(replica.name.as_str()), "{answer}");
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).expect("token file");
    let prometheus = Prometheus::start(&format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
         scrape_configs:\n  - job_name: teaagent\n    metrics_path: /metrics\n    \
         authorization:\n      type: Bearer\n      credentials_file: {}\n    \
         static_configs:\n      - targets: [\"{}\"]\n",
        token.display(),
        fleet.nginx.addr()
    ));
    let wanted = [
        (r#"up{job="teaagent"}"#, "1"),
        (r#"teaagent_calls_total{job="teaagent",tool="read_file",outcome="ok"}"#, "2"),
        (r#"teaagent_shared_state_duration_seconds_count{job="teaagent",operation="rate_limit"}"#, "2"),
        (r#"teaagent_shared_state_errors_total{job="teaagent",operation="rate_limit"}"#, "0"),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    for (query, expected) in wanted {
        loop {
            let answer = prometheus.query(query);
            if answer.as_ref().ok().and_then(value) == Some(expected) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "Prometheus has no `{query}` = {expected} after 30 s; its last answer: {answer:?}\n\
                 its targets: {}\nits log:\n{}\n{}",
                prometheus.targets(),
                prometheus.log(),
                fleet.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
