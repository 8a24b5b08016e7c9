//! A fleet behind its load balancer (the fleet: `common/fleet.rs`): every request
//! through the load balancer answered, by every replica in turn; a replica lost without a request
//! failing; what the load balancer passes on (tokens, `/healthz`, `/readyz`, the protected
//! resource metadata) and what it refuses; the official client through it. And one caller's share
//! of each replica (README, "Security model and its limits"): through nginx, a caller cannot take
//! every `subscriptions/listen` stream of the fleet, another caller still opens its own. A task
//! started on one replica is fetched, finished, from another (README, "Long-running tools as
//! tasks").

use std::io::{BufRead, BufReader};
use std::net::TcpStream;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

use crate::common::client;
use crate::common::fleet;
use crate::common::http as raw;
use fleet::{Fleet, OTHER_TOKEN, PATIENCE, Setup, TOKEN, answer, post, request, request_from, tally};
use raw::exchange;

#[test]
fn every_request_through_the_load_balancer_is_answered_and_every_replica_takes_some() {
    let fleet = Fleet::start();
    // `tools/list`, as any client starts: answered whichever replica takes it.
    for id in 1..=3 {
        let reply = post(fleet.nginx.addr(), &request(id, "tools/list", json!({})), Some(TOKEN));
        let tools = serde_json::from_str::<Value>(&reply.body)
            .ok()
            .and_then(|a| a["result"]["tools"].as_array().map(Vec::len));
        assert!(reply.status == 200 && tools.is_some_and(|n| n > 0), "{reply:?}\n{}", fleet.logs());
    }
    let counts = tally((0..30).map(|id| fleet.which(id)));
    assert_eq!(counts.values().sum::<usize>(), 30);
    for replica in &fleet.replicas {
        assert!(
            counts.contains_key(&replica.name),
            "round robin gave replica {} nothing: {counts:?}\n{}",
            replica.name,
            fleet.logs()
        );
    }
    assert_eq!(counts.len(), 3, "only the fleet's replicas answer: {counts:?}");
}

#[test]
fn a_replica_lost_is_routed_around_without_a_request_failing() {
    let mut fleet = Fleet::start();
    let before = tally((0..6).map(|id| fleet.which(id)));
    assert_eq!(before.len(), 3, "{before:?}");
    let lost = fleet.replicas[2].name.clone();
    fleet.replicas[2].kill();
    // Its port refuses the connection, so nothing was sent to it: nginx passes each request on
    // to the next replica. (A POST already sent is never retried: no `non_idempotent`.)
    let after = tally((100..130).map(|id| fleet.which(id)));
    assert_eq!(after.values().sum::<usize>(), 30);
    assert!(!after.contains_key(&lost), "a killed replica answered: {after:?}");
    assert_eq!(after.len(), 2, "the two left share the requests: {after:?}\n{}", fleet.logs());
}

#[test]
fn the_load_balancer_passes_on_tokens_health_and_metadata_and_nothing_else() {
    let fleet = Fleet::start();
    let addr = fleet.nginx.addr();
    // Without the token: the replica's 401 and its challenge, passed on unchanged.
    let refused = post(addr, &request(1, "tools/list", json!({})), None);
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(refused.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")), "{refused:?}");
    let wrong = post(addr, &request(2, "tools/list", json!({})), Some("not-the-fleet-token-0123456789"));
    assert_eq!(wrong.status, 401, "{wrong:?}");

    // Health: each answered by a replica, without a token.
    let health = exchange(addr, "GET", "/healthz", &[], b"");
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"), "{health:?}");
    let ready = exchange(addr, "GET", "/readyz", &[], b"");
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"), "{ready:?}");

    // The protected resource metadata (RFC 9728) reaches a replica, whatever it answers: not
    // nginx's own page. Anything else is nginx's 404, never passed on.
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let metadata = exchange(addr, "GET", path, &[], b"");
        assert!(!metadata.body.contains("nginx"), "{path} was not passed to a replica: {metadata:?}");
    }
    for path in ["/", "/elsewhere", "/mcp/more", "/healthz/x"] {
        let other = exchange(addr, "GET", path, &[], b"");
        assert_eq!(other.status, 404, "{path}: {other:?}");
        assert!(other.body.contains("nginx"), "{path} is answered by nginx itself: {other:?}");
    }
    // A body up to teaagent's own limit goes through (nginx allows a little more, so teaagent's
    // JSON answer is what a client sees).
    let big =
        request(3, "tools/call", json!({"name": "read_file", "arguments": {"path": "x".repeat(3 << 20)}}));
    let reply = post(addr, &big, Some(TOKEN));
    assert_eq!(reply.status, 200, "{}", &reply.body[..reply.body.len().min(300)]);
    assert!(
        serde_json::from_str::<Value>(&reply.body)
            .is_ok_and(|a| a.get("result").is_some() || a.get("error").is_some()),
        "{reply:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_works_through_the_load_balancer() {
    let fleet = Fleet::start();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(fleet.nginx.url()).auth_header(TOKEN.to_owned()),
    );
    let recorder = client::Recorder {
        config: rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            rmcp::model::Implementation::new("teaagent-fleet-e2e", "0.1"),
        ),
        events: tokio::sync::mpsc::unbounded_channel().0,
    };
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = client::timely(recorder.serve_with_lifecycle(transport, mode)).await.expect("discover");
    client.set_response_cache_config(ClientCacheConfig::disabled()).await;
    let tools = client::timely(client.list_all_tools()).await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "read_file"), "{tools:?}");
    // The server the client discovered is the fleet: its calls land on every replica.
    let mut answers = Vec::new();
    for _ in 0..9 {
        let call = CallToolRequestParams::new("read_file")
            .with_arguments(json!({"path": "replica.txt"}).as_object().cloned().expect("object"));
        let result = client::timely(client.call_tool(call)).await.expect("read_file");
        let value = serde_json::to_value(&result).expect("json");
        answers.push(value["content"][0]["text"].as_str().expect("text").to_owned());
    }
    let counts = tally(answers);
    assert_eq!(counts.len(), 3, "{counts:?}\n{}", fleet.logs());
    client.cancel().await.expect("close");
}

#[test]
fn through_the_load_balancer_one_caller_cannot_take_every_listen_stream() {
    let fleet = Fleet::start();
    // A `subscriptions/listen` stream through nginx, open: its first message.
    let listen = |id: i64, token: &str| {
        let message = request(id, "subscriptions/listen", json!({"notifications": {}}));
        let body = message.to_string();
        let mut stream = TcpStream::connect(fleet.nginx.addr()).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            fleet.nginx.addr(),
            body.len()
        );
        std::io::Write::write_all(&mut stream, head.as_bytes()).expect("send");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let first = loop {
            line.clear();
            assert!(reader.read_line(&mut line).expect("read") > 0, "ended\n{}", fleet.logs());
            let text = line.trim_end();
            if let Some(json) = text.strip_prefix("data: ").or(text.starts_with('{').then_some(text)) {
                break serde_json::from_str::<Value>(json).expect("JSON");
            }
        };
        (first, reader)
    };
    // The fleet's caller opens streams until one replica refuses (each replica has 16).
    let mut open = Vec::new();
    let refused = loop {
        assert!(open.len() < 48, "one caller took every stream of the fleet");
        let (first, stream) = listen(open.len() as i64, TOKEN);
        if first["method"] != "notifications/subscriptions/acknowledged" {
            break first;
        }
        open.push(stream);
    };
    assert_eq!(refused["error"]["data"]["reason"], "caller_limit", "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], "subscriptions", "{refused}");
    assert!((4..=12).contains(&open.len()), "{} streams before the first refusal", open.len());
    // Another caller still opens one, wherever it lands, and the load balancer's probe answers.
    for id in 0..3 {
        let (first, _stream) = listen(id, OTHER_TOKEN);
        assert_eq!(first["method"], "notifications/subscriptions/acknowledged", "{first}");
    }
    let health = exchange(fleet.nginx.addr(), "GET", "/healthz", &[], b"");
    assert_eq!(health.status, 200, "{health:?}");
}

/// A task runs on the replica that created it; every other replica answers `tasks/get` from the
/// snapshot it published in Redis (when created, and when over), for its principal only.
#[test]
fn a_task_started_on_one_replica_is_fetched_finished_from_another() {
    let fleet = Fleet::start_with(Setup { mode: Some("danger-full-access"), ..Setup::default() });
    let (a, b) = (fleet.replicas[0].addr, fleet.replicas[1].addr);
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let call = json!({"name": "shell_exec", "arguments": {"command": "sleep 1; echo fleet-task"}});
    let created = answer(&post(a, &request_from(1, "tools/call", call, tasks.clone()), Some(TOKEN)))
        .unwrap_or_else(|| panic!("no answer\n{}", fleet.logs()));
    assert_eq!(created["result"]["resultType"], "task", "{created}\n{}", fleet.logs());
    let id = created["result"]["taskId"].as_str().expect("taskId").to_owned();
    let get = |addr, token, n| {
        answer(&post(addr, &request_from(n, "tasks/get", json!({"taskId": id}), tasks.clone()), Some(token)))
            .expect("an answer")
    };
    // Seen from B at once (published when created), then finished.
    let start = std::time::Instant::now();
    let done = loop {
        let got = get(b, TOKEN, 2);
        let status = got["result"]["status"].as_str().unwrap_or_default().to_owned();
        assert!(status == "working" || status == "completed", "{got}\n{}", fleet.logs());
        if status == "completed" {
            break got;
        }
        assert!(start.elapsed() < PATIENCE, "not finished: {got}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let text = done["result"]["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("fleet-task"), "{done}");
    // The same answer where it ran; another principal is told it does not exist, on both.
    assert_eq!(get(a, TOKEN, 3)["result"]["result"], done["result"]["result"]);
    for addr in [a, b] {
        assert_eq!(get(addr, OTHER_TOKEN, 4)["error"]["code"], -32602);
    }
}
