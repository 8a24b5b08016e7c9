//! Snapshots of what a client sees: every row of the error table as its JSON-RPC error object,
//! and the `initialize` result. A change here is a change of the wire contract.

use std::time::Duration;

use serde_json::json;
use teaagent_core::error::{
    ArgumentError, Error, Failure, InvalidRequest, ParamHeaderProblem, ParamsProblem, PathRefusal,
    ResourceRefusal,
};
use teaagent_tests::{Bin, RawServer, snap};

#[test]
fn the_error_table() {
    let rows = vec![
        Error::Parse { details: "expected value at line 1 column 1".into() },
        Error::InvalidRequest { reason: InvalidRequest::NotAMessage },
        Error::InvalidRequest { reason: InvalidRequest::LineTooLong },
        Error::InvalidRequest { reason: InvalidRequest::BatchNotSupported },
        Error::MethodNotFound { method: "tools/nope".into() },
        Error::UnknownTool { tool: "nope".into() },
        Error::InvalidParams {
            reason: ParamsProblem::InvalidCursor,
            details: "cursor \"x\" was not issued by this server; start again without a cursor".into(),
        },
        Error::InvalidArguments {
            tool: "read_file".into(),
            errors: vec![
                ArgumentError::new("/offset", "must be at least 1 (got -1)"),
                ArgumentError::new("/path", "missing required property `path`"),
            ],
        },
        Error::PathRefused {
            tool: "read_file".into(),
            argument: "path".into(),
            path: "../etc/passwd".into(),
            reason: PathRefusal::OutsideWorkspace,
        },
        Error::Resource { uri: "teaagent://workspace/missing.txt".into(), reason: ResourceRefusal::NotFound },
        Error::ApprovalDenied {
            tool: "delete_path".into(),
            rule: "mode workspace-write: destructive tools need an approval".into(),
            details: "allow it with --grant 'delete_path:path=tmp/**'".into(),
        },
        Error::RateLimited {
            tool: "shell_exec".into(),
            max_calls: 10,
            window: Duration::from_secs(60),
            retry_after: Duration::from_millis(4200),
        },
        Error::WorkspaceLocked {
            tool: "write_file".into(),
            owner_pid: 4242,
            acquired_at: "2026-06-02T10:00:00Z".into(),
        },
        Error::ToolFailed {
            tool: "slow".into(),
            reason: Failure::Timeout,
            details: "no result after 300s; the call was cancelled".into(),
        },
        Error::ToolFailed {
            tool: "boom".into(),
            reason: Failure::Panic,
            details: "index out of bounds".into(),
        },
        Error::Internal { details: "the result could not be serialized".into() },
        Error::HeaderMismatch { details: "the Mcp-Name header is missing".into() },
        Error::ParamHeaderMismatch {
            tool: "forecast".into(),
            argument: "region".into(),
            header: "Mcp-Param-Region".into(),
            problem: ParamHeaderProblem::Differs,
        },
        Error::ParamHeaderMismatch {
            tool: "forecast".into(),
            argument: "region".into(),
            header: "Mcp-Param-Region".into(),
            problem: ParamHeaderProblem::InvalidBase64,
        },
    ];
    let objects: Vec<_> = rows.iter().map(Error::to_error_object).collect();
    snap::with_settings(|| insta::assert_json_snapshot!("error_table", objects));
}

#[test]
fn the_initialize_result_of_the_example() {
    let mut server = RawServer::spawn(Bin::Echo.path(), &[]);
    let result = server.initialize("2025-06-18");
    server.finish();
    snap::with_settings(
        || insta::assert_json_snapshot!("initialize_result", result, {".serverInfo.version" => "[version]"}),
    );
    assert_eq!(result["serverInfo"]["version"], json!(env!("CARGO_PKG_VERSION")));
}
