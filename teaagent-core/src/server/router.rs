//! The method table: each request method maps to a small function whose result is written as the
//! response line.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::call;
use super::main_loop::Shared;
use crate::error::{Error, ParamsProblem};
use crate::jsonrpc::{RawParams, RequestId, error_line, result_line_sized};
use crate::mcp::CallToolResult;
use crate::mcp::logging::SetLevelParams;
use crate::mcp::prompts::ListPromptsResult;
use crate::mcp::resources::{ListResourceTemplatesResult, ReadResourceParams};
use crate::mcp::tools::PaginatedParams;
use crate::task::CatchUnwindExt as _;

/// Answers one request (never `initialize`, which the main loop handles inline). A panic
/// anywhere in here still produces an answer.
pub(crate) async fn dispatch(
    shared: &Arc<Shared>,
    id: &RequestId,
    method: &str,
    params: Option<RawParams>,
    cancel: CancellationToken,
) -> Vec<u8> {
    let route = async move {
        let raw = params;
        let params = raw.as_ref().map(RawParams::get);
        match method {
            "ping" => answer(id, Ok(serde_json::json!({}))),
            "tools/list" => {
                let page = parse_params::<PaginatedParams>(params).and_then(|p| {
                    shared.registry.list_page(p.cursor.as_deref(), shared.config.tools_page_size)
                });
                answer(id, page)
            }
            "tools/call" => {
                let parsed = parse_params(params);
                // The message's text (a large argument, say) is not kept while the tool runs.
                drop(raw);
                match parsed {
                    Ok(p) => {
                        let result = call::call_tool(shared, id, p, cancel).await;
                        // Room for the content up front: a large result is written once.
                        let size = result.as_ref().map_or(0, CallToolResult::wire_size_hint);
                        answer_sized(id, result, size)
                    }
                    Err(e) => answer::<()>(id, Err(e)),
                }
            }
            "prompts/list" => {
                answer(id, parse_params::<PaginatedParams>(params).map(|_| ListPromptsResult::default()))
            }
            "logging/setLevel" => {
                let set = parse_params::<SetLevelParams>(params).map(|p| {
                    crate::logging::set_client_level(p.level);
                    serde_json::json!({})
                });
                answer(id, set)
            }
            "resources/list" | "resources/read" | "resources/templates/list" => match &shared.resources {
                None => answer::<()>(id, Err(Error::MethodNotFound { method: method.to_owned() })),
                Some(provider) => match method {
                    "resources/list" => match parse_params::<PaginatedParams>(params) {
                        Ok(p) => answer(id, provider.list(p.cursor).await),
                        Err(e) => answer::<()>(id, Err(e)),
                    },
                    "resources/read" => match parse_params::<ReadResourceParams>(params) {
                        Ok(p) => {
                            let read = async {
                                let _turn = shared.turn("resources/read").await?;
                                provider.read(p.uri).await
                            };
                            answer(id, read.await)
                        }
                        Err(e) => answer::<()>(id, Err(e)),
                    },
                    _ => answer(
                        id,
                        parse_params::<PaginatedParams>(params).map(|_| ListResourceTemplatesResult {
                            resource_templates: provider.templates(),
                        }),
                    ),
                },
            },
            _ => answer::<()>(id, Err(Error::MethodNotFound { method: method.to_owned() })),
        }
    };
    match AssertUnwindSafe(route).catch_unwind().await {
        Ok(line) => line,
        Err(panic) => {
            let details = crate::logging::panic_message(panic.as_ref());
            error_line(Some(id), &Error::Internal { details }.to_error_object())
        }
    }
}

/// The response line of a result or an error.
fn answer<T: Serialize>(id: &RequestId, result: Result<T, Error>) -> Vec<u8> {
    answer_sized(id, result, 0)
}

/// [`answer`] with room reserved for a result of about `size` bytes.
fn answer_sized<T: Serialize>(id: &RequestId, result: Result<T, Error>, size: usize) -> Vec<u8> {
    match result {
        Ok(value) => result_line_sized(id, &value, size),
        Err(error) => error_line(Some(id), &error.to_error_object()),
    }
}

/// Parses a method's params (absent params parse as `{}`); a mismatch is `-32602`.
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<&str>) -> Result<T, Error> {
    let text = params.unwrap_or("{}");
    serde_json::from_str(text)
        .map_err(|e| Error::InvalidParams { reason: ParamsProblem::Malformed, details: e.to_string() })
}
