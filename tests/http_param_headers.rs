//! Arguments mirrored into `Mcp-Param-*` headers (`#[header("Region")]`, `x-mcp-header`) and an
//! input schema kept as written, against the conformance fixture binary over real HTTP/1.1:
//! what a protocol 2026-07-28 call must send, each way it is refused (`400`, `-32020`), that the
//! legacy era and tools without annotations are unaffected, and the two tools' listings
//! (snapshots).

use serde_json::{Value, json};
use teaagent_tests::snap;

use crate::common::http as raw;
use raw::{Http, Reply, in_session, modern_headers, open_session, request};

/// A modern `tools/call` of `echo_region` with `arguments`, and these headers besides the ones
/// every modern request carries.
fn call(server: &Http, arguments: Value, extra: &[(&str, &str)]) -> Reply {
    let message = request(1, "tools/call", json!({"name": "echo_region", "arguments": arguments}));
    let headers = modern_headers(&message);
    let mut refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    refs.extend_from_slice(extra);
    server.exchange("POST", "/mcp", &refs, message.to_string().as_bytes())
}

/// The text of an accepted call.
fn accepted(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.json();
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The `data` of a refused call: `400`, `-32020`.
fn refused(reply: &Reply) -> Value {
    assert_eq!(reply.status, 400, "{reply:?}");
    let answer = reply.json();
    assert_eq!(answer["error"]["code"], -32020, "{answer}");
    answer["error"]["data"].clone()
}

/// A refused call: its arguments, its headers, and the argument and problem the answer names.
type Refusal = (Value, Vec<(&'static str, String)>, &'static str, &'static str);

#[test]
fn a_mirrored_argument_needs_its_header_saying_the_same() {
    let server = Http::conformance();
    let region = json!({"region": "eu-west"});
    assert_eq!(
        accepted(&call(&server, region.clone(), &[("Mcp-Param-Region", "eu-west")])),
        "Region: eu-west"
    );
    // The name in any case, the value with spaces and tabs around it.
    assert_eq!(
        accepted(&call(&server, region.clone(), &[("mcp-param-REGION", " \teu-west  ")])),
        "Region: eu-west"
    );
    // `=?base64?…?=` is decoded: how a client sends text a header cannot carry.
    let zurich =
        call(&server, json!({"region": "Zürich"}), &[("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")]);
    assert_eq!(accepted(&zurich), "Region: Zürich");
    // Anything else is literal, even what looks like Base64.
    let literal = call(&server, json!({"region": "=?base64?WsO8"}), &[("Mcp-Param-Region", "=?base64?WsO8")]);
    assert_eq!(accepted(&literal), "Region: =?base64?WsO8");
    // An integer in decimal, a boolean as `true`/`false`; absent or `null`, no header.
    let all = json!({"region": "eu", "days": 3, "metric": true});
    let headers = [("Mcp-Param-Region", "eu"), ("Mcp-Param-Days", "3"), ("Mcp-Param-Metric", "true")];
    assert_eq!(accepted(&call(&server, all, &headers)), "Region: eu, days: 3, metric: true");
    let nulls = json!({"region": "eu", "days": null});
    assert_eq!(accepted(&call(&server, nulls, &[("Mcp-Param-Region", "eu")])), "Region: eu");

    // Refused: missing, different, badly encoded, repeated, too long; the value never echoed.
    let cases: [Refusal; 8] = [
        (region.clone(), vec![], "region", "missing"),
        (region.clone(), vec![("Mcp-Param-Region", "hostile-value-7f3a".into())], "region", "differs"),
        (region.clone(), vec![("Mcp-Param-Region", "EU-WEST".into())], "region", "differs"),
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8?=".into())],
            "region",
            "invalid_base64",
        ),
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=".into())],
            "region",
            "invalid_base64",
        ),
        (
            region.clone(),
            vec![("Mcp-Param-Region", "eu-west".into()), ("Mcp-Param-Region", "eu-west".into())],
            "region",
            "repeated",
        ),
        (region.clone(), vec![("Mcp-Param-Region", "e".repeat(9000))], "region", "too_long"),
        (
            json!({"region": "eu", "days": 3}),
            vec![("Mcp-Param-Region", "eu".into()), ("Mcp-Param-Days", "03".into())],
            "days",
            "differs",
        ),
    ];
    for (arguments, headers, argument, problem) in cases {
        let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let reply = call(&server, arguments, &refs);
        let data = refused(&reply);
        assert_eq!(data["reason"], "param_header_mismatch", "{data}");
        assert_eq!(
            (data["argument"].as_str(), data["problem"].as_str()),
            (Some(argument), Some(problem)),
            "{data}"
        );
        assert_eq!(data["tool"], "echo_region");
        let header = if argument == "days" { "Mcp-Param-Days" } else { "Mcp-Param-Region" };
        assert_eq!(data["header"], header);
        assert!(!reply.body.contains("hostile-value") && !reply.body.contains("eeeeeeee"), "{}", reply.body);
    }
    assert!(!server.stderr().contains("hostile-value"), "{}", server.stderr());
}

#[test]
fn the_legacy_era_and_tools_without_annotations_are_unaffected() {
    let server = Http::conformance();
    // A session of protocol 2025-11-25 sends no such headers, and needs none.
    let session = open_session(&server, &[], json!({}));
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo_region", "arguments": {"region": "eu-west"}}});
    let reply = in_session(&server, &session, &message, &[]);
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer =
        if reply.body.trim_start().starts_with('{') { reply.json() } else { reply.events().remove(0) };
    assert_eq!(answer["result"]["content"][0]["text"], "Region: eu-west", "{answer}");
    // A modern call of a tool that mirrors nothing.
    let message = request(3, "tools/call", json!({"name": "test_simple_text", "arguments": {}}));
    let reply = server.post(&message);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.json().get("error").is_none(), "{}", reply.body);
}

#[test]
fn a_schema_kept_as_written_is_listed_verbatim_and_checks_calls() {
    let server = Http::conformance();
    let listed = server.post(&request(1, "tools/list", json!({}))).json();
    let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
    let get = |name: &str| tools.iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null);
    snap::with_settings_in_order(|| {
        insta::assert_json_snapshot!("tool_echo_region", get("echo_region"));
        insta::assert_json_snapshot!("tool_json_schema_2020_12", get("json_schema_2020_12_tool"));
    });
    let contact = |arguments: Value| {
        let message =
            request(2, "tools/call", json!({"name": "json_schema_2020_12_tool", "arguments": arguments}));
        server.post(&message).json()["result"].clone()
    };
    // `if`/`then`: a phone contact needs a phone; `$ref` into `$defs`: the address's fields.
    let ok = contact(
        json!({"name": "Ada", "contactMethod": "phone", "phone": "555", "address": {"city": "Paris"}}),
    );
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(ok["content"][0]["text"], "Ada ( Paris): 555");
    for wrong in [
        json!({"contactMethod": "phone", "email": "a@b.c"}),
        json!({"name": "no way to reach"}),
        json!({"email": "a@b.c", "address": {"city": 7}}),
        json!({"email": "a@b.c", "nickname": "x"}),
    ] {
        let refused = contact(wrong.clone());
        assert_eq!(refused["isError"], true, "{wrong} → {refused}");
        assert_eq!(refused["_meta"]["reason"], "invalid_arguments", "{refused}");
    }
}
