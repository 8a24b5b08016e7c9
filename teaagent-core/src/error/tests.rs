//! The error messages and `data` clients see.

use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn the_wire_words_an_unserializable_result_as_an_internal_error() {
    let internal = Error::Internal { details: "the result could not be serialized".into() };
    assert_eq!(crate::jsonrpc::response::internal_serialization_error(), internal.to_error_object());
}

#[test]
fn rate_limit_message_is_the_specs() {
    let e = Error::RateLimited {
        tool: "shell_exec".into(),
        max_calls: 10,
        window: Duration::from_secs(60),
        retry_after: Duration::from_millis(1500),
    };
    let o = e.to_error_object();
    assert_eq!(o.code, -32002);
    assert_eq!(o.message, "Rate limit exceeded for tool 'shell_exec': 10 calls per 60s");
    assert_eq!(o.data, Some(json!({"tool": "shell_exec", "reason": "rate_limited", "retryAfterSeconds": 2})));
}

#[test]
fn invalid_arguments_list_every_problem_in_the_message() {
    let at = |pointer: &str, message: &str| ArgumentError::new(pointer, message);
    let one =
        Error::InvalidArguments { tool: "plan".into(), errors: vec![at("/due/days", "must be an integer")] };
    assert_eq!(one.to_string(), "Invalid arguments for tool 'plan': /due/days: must be an integer");
    let two = Error::InvalidArguments {
        tool: "plan".into(),
        errors: vec![at("", "`arguments` must be an object"), at("/a\u{202e}", "bad")],
    };
    assert_eq!(
        two.to_string(),
        "Invalid arguments for tool 'plan' (2 problems):\n- `arguments` must be an object\n- /a\\u{202e}: bad"
    );
    let many = Error::InvalidArguments {
        tool: "plan".into(),
        errors: (0..60).map(|i| at(&format!("/p{i}"), "unknown property")).collect(),
    };
    let text = many.to_string();
    assert!(text.starts_with("Invalid arguments for tool 'plan' (60 problems):\n- /p0: unknown property\n"));
    assert!(
        text.contains("\n- /p49: unknown property\n- and 10 more (data.errors lists them all)"),
        "{text}"
    );
    assert_eq!(many.data()["errors"].as_array().map(Vec::len), Some(60));
    // Only argument errors have a result form.
    assert!(many.to_tool_result().is_some_and(|r| r.is_error));
    let path = Error::PathRefused {
        tool: "read_file".into(),
        argument: "path".into(),
        path: "/etc".into(),
        reason: PathRefusal::OutsideWorkspace,
    };
    assert_eq!(path.to_tool_result(), None);
}

#[test]
fn every_reason_has_a_snake_case_wire_name() {
    for r in [InvalidRequest::NotAMessage, InvalidRequest::LineTooLong] {
        assert!(r.as_str().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    }
    assert_eq!(Failure::Timeout.as_str(), "timeout");
}
