//! Approvals across a fleet (the fleet: `common/fleet.rs`): an approval asked on one
//! replica, answered on a second and its replay refused on a third; a rotation of the state key.

use std::net::SocketAddr;
use std::sync::Barrier;

use serde_json::{Value, json};
use teaagent_tests::Tree;
use teaagent_tests::services::Redis;

use crate::common::fleet;
use fleet::{Fleet, Replica, Setup, asking, call, error_of, logs_of};

/// `create_file` of `path`, as a call from a client that can ask its user.
fn create(id: i64, path: &str, content: &str) -> Value {
    asking(id, "tools/call", json!({"name": "create_file", "arguments": {"path": path, "content": content}}))
}

/// `call` again, with `state` and the user's "allow once".
fn retry(call: &Value, state: &Value) -> Value {
    let mut retry = call.clone();
    retry["params"]["requestState"] = state.clone();
    retry["params"]["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"decision": "once"}}});
    retry
}

/// Asks the replica at `addr` for `call`: its question's `requestState`.
fn ask(addr: SocketAddr, call: &Value, logs: &dyn Fn() -> String) -> Value {
    let asked = self::call(addr, call, logs);
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{addr} asks first: {asked}\n{}", logs());
    assert_eq!(result["inputRequests"]["approval"]["method"], "elicitation/create", "{asked}");
    assert!(result["requestState"].is_string(), "{asked}");
    result["requestState"].clone()
}

/// Asserts that `answer` ran its call.
fn ran(answer: &Value, logs: &dyn Fn() -> String) {
    let result = &answer["result"];
    assert!(
        result["resultType"] == "complete" && result["isError"] == json!(false),
        "the call ran: {answer}\n{}",
        logs()
    );
}

/// Asserts that `answer` refuses its state, saying `why`.
fn refused_state(answer: &Value, why: &str, logs: &dyn Fn() -> String) {
    let refusal = error_of(answer);
    assert!(
        refusal.as_ref().is_some_and(|(code, data)| *code == -32602
            && data["reason"] == "invalid_request_state"
            && data["details"].as_str().is_some_and(|d| d.contains(why))),
        "refused as -32602 invalid_request_state, {why:?}: {answer}\n{}",
        logs()
    );
}

#[test]
fn an_approval_asked_on_one_replica_is_answered_on_another_and_its_replay_refused_on_a_third() {
    // One workspace for the three (a state binds the files its call is about).
    let workspace = Tree::new();
    let fleet =
        Fleet::start_with(Setup { mode: Some("prompt"), root: Some(workspace.root()), ..Setup::default() });
    let logs = || fleet.logs();
    // Each step to the replica it is meant for, not through the load balancer.
    let (a, b, c) = (fleet.replicas[0].addr, fleet.replicas[1].addr, fleet.replicas[2].addr);
    let target = workspace.path("ws/approved.txt");

    let call = create(1, "approved.txt", "asked on one, approved on another");
    let state = ask(a, &call, &logs);
    assert!(!target.exists(), "nothing is written before the answer");

    // The user's answer reaches another replica: accepted, the file is written.
    let answered = retry(&call, &state);
    ran(&self::call(b, &answered, &logs), &logs);
    assert_eq!(std::fs::read_to_string(&target).expect("written"), "asked on one, approved on another");

    // The same retry replayed on the third: refused, nothing is written again.
    std::fs::remove_file(&target).expect("remove");
    refused_state(&self::call(c, &answered, &logs), "used already", &logs);
    // ...and on the one that asked, and on the one that ran it.
    refused_state(&self::call(a, &answered, &logs), "used already", &logs);
    refused_state(&self::call(b, &answered, &logs), "used already", &logs);
    assert!(!target.exists(), "a replay wrote the file again");

    // Two replicas handed the same fresh state at once: one runs it, the other refuses it.
    let call = create(2, "raced.txt", "once");
    let state = ask(c, &call, &logs);
    let answered = retry(&call, &state);
    let start = Barrier::new(2);
    let (first, second) = std::thread::scope(|s| {
        let on = |addr| {
            let (start, answered, logs) = (&start, &answered, &logs);
            s.spawn(move || {
                start.wait();
                self::call(addr, answered, logs)
            })
        };
        let (first, second) = (on(a), on(b));
        (first.join().expect("a"), second.join().expect("b"))
    });
    let ran_count = [&first, &second].iter().filter(|a| a["result"]["isError"] == json!(false)).count();
    assert_eq!(ran_count, 1, "one of two concurrent uses runs:\n{first}\n{second}\n{}", logs());
    let refused = if first.get("error").is_some() { &first } else { &second };
    // The other is refused for its state: it is in use (or used), or, when the one that ran has
    // already written the file, the state's path targets are no longer what they were when it was
    // issued (a state's binding is checked before its nonce is looked up). Either way, it never runs.
    let in_use = error_of(refused)
        .is_some_and(|(_, data)| data["details"].as_str().is_some_and(|d| d.contains("used already")));
    refused_state(refused, if in_use { "used already" } else { "other path targets" }, &logs);
    assert_eq!(std::fs::read_to_string(workspace.path("ws/raced.txt")).expect("written"), "once");
}

/// The key before a rotation, and the one after ([`STATE_KEY`] is neither).
const OLD_KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";

const NEW_KEY: &str = "2222222222222222222222222222222222222222222222222222222222222222";

#[test]
fn a_rotated_state_key_is_accepted_as_the_previous_key_and_refused_without_it() {
    let redis = Redis::start();
    let workspace = Tree::new();
    let base = Setup {
        redis_url: Some(redis.url()),
        mode: Some("prompt"),
        root: Some(workspace.root()),
        ..Setup::default()
    };
    // A fleet in the middle of a rotation: a replica not yet restarted (the old key), one
    // restarted with the new key and the old one as the previous key, one after the grace
    // period (the new key only).
    let old = Replica::start("old", &Setup { state_key: Some(OLD_KEY), ..base.clone() });
    let rotating = Replica::start(
        "rotating",
        &Setup { state_key: Some(NEW_KEY), previous_key: Some(OLD_KEY), ..base.clone() },
    );
    let new = Replica::start("new", &Setup { state_key: Some(NEW_KEY), ..base });
    let all = [&old, &rotating, &new];
    let logs = || format!("Redis's log:\n{}\n{}", redis.log(), logs_of(all));

    // A state sealed with the old key: refused where only the new key is known (and nothing is
    // reserved by that refusal)...
    let call = create(1, "rotated.txt", "sealed with the old key");
    let state = ask(old.addr, &call, &logs);
    let answered = retry(&call, &state);
    refused_state(&self::call(new.addr, &answered, &logs), "not issued by this server", &logs);
    assert!(!workspace.path("ws/rotated.txt").exists());
    // ...accepted, once, where the old key is the previous one.
    ran(&self::call(rotating.addr, &answered, &logs), &logs);
    assert_eq!(
        std::fs::read_to_string(workspace.path("ws/rotated.txt")).expect("written"),
        "sealed with the old key"
    );
    // Its replay (on the file as it was when asked: the state binds the path's target).
    std::fs::remove_file(workspace.path("ws/rotated.txt")).expect("remove");
    refused_state(&self::call(old.addr, &answered, &logs), "used already", &logs);
    refused_state(&self::call(rotating.addr, &answered, &logs), "used already", &logs);
    assert!(!workspace.path("ws/rotated.txt").exists(), "a replay wrote the file again");

    // The rotating replica seals with the new key: the replicas on it accept its states, the
    // old one cannot.
    let call = create(2, "after.txt", "sealed with the new key");
    let state = ask(rotating.addr, &call, &logs);
    let answered = retry(&call, &state);
    refused_state(&self::call(old.addr, &answered, &logs), "not issued by this server", &logs);
    ran(&self::call(new.addr, &answered, &logs), &logs);
    assert_eq!(
        std::fs::read_to_string(workspace.path("ws/after.txt")).expect("written"),
        "sealed with the new key"
    );
}
