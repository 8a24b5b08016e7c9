//! The method table: each request method maps to a small function whose result is written as the
//! response line.

mod legacy_tasks;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::call::{self, CallOutcome};
use super::params::{parse_large_params, parse_params};
use super::prompts::PromptOutcome;
use super::shared::Shared;
use crate::error::{Error, InvalidRequest};
use crate::jsonrpc::response::result_line_written;
use crate::jsonrpc::{RawParams, RequestId, error_line, result_line_sized};
use crate::mcp::CallToolResult;
use crate::mcp::logging::SetLevelParams;
use crate::mcp::modern::{
    CacheScope, InputRequiredResult, ListenParams, META_SERVER_INFO, META_SUBSCRIPTION_ID, SubscriptionFilter,
};
use crate::mcp::prompts::{CompleteParams, GetPromptParams, ListPromptsResult};
use crate::mcp::resources::{ListResourceTemplatesResult, ReadResourceParams, ReadResourceResult};
use crate::mcp::skills::{DirectoryReadParams, GetSkillParams};
use crate::mcp::tasks::{TASKS_EXTENSION, TaskIdParams, UpdateTaskParams};
use crate::mcp::tools::{CallRequest, PaginatedParams};
use crate::session::Caller;
use crate::session::fairness::MAX_LISTENERS;
use crate::session::peer::SessionInfo;
use crate::task::CatchUnwindExt as _;

/// Answers one request (never `initialize`, which the main loop handles inline). A panic
/// anywhere in here still produces an answer. `client` is what the client said of itself
/// ([`Shared::caller`]: its protocol version and capabilities), `caller` who asks, as the
/// transport knows it; in the modern era every result carries the modern era's members and the
/// rate limit is `-32004`.
pub(crate) async fn dispatch(
    shared: &Arc<Shared>,
    id: &RequestId,
    method: &str,
    params: Option<RawParams>,
    cancel: CancellationToken,
    client: Option<Arc<SessionInfo>>,
    caller: &Caller,
) -> Vec<u8> {
    let modern = client.as_ref().is_some_and(|c| c.version.is_modern());
    let answers = &Answers { shared, id, modern };
    let route = async move {
        // A call holds a share of its caller's calls until it is answered (`fairness`); one
        // over the share is refused before anything else (nothing looked at, nothing spent).
        let _share = match method {
            "tools/call" | "resources/read" | "prompts/get" => match shared.call_share(caller) {
                Ok(share) => share,
                Err(refused) => {
                    // Counted for calls (`/metrics`); no tool is named yet, so no tool's series.
                    if method == "tools/call" {
                        shared.metrics.refused(super::refusal::RefusalRule::CallShare);
                    }
                    return answers.error(refused);
                }
            },
            _ => None,
        };
        let raw = params;
        let params = raw.as_ref().map(RawParams::get);
        match method {
            // (The methods 2026-07-28 removed never get here in that era: `Shared::caller`.)
            "ping" => answers.ok(Ok(serde_json::json!({})), Cache::None),
            "server/discover" => answers.ok(Ok(shared.discover()), Cache::Public),
            "subscriptions/listen" if modern => match parse_params::<ListenParams>(params) {
                // Boxed: a rare, long-lived request should not grow every request's future.
                Ok(p) => match Box::pin(listen(shared, id, p, &cancel, caller)).await {
                    // The final result: empty but for the subscription's id in `_meta`.
                    Ok(meta) if modern => answers.modern(
                        |out| {
                            out.extend_from_slice(b"{}");
                            Ok(())
                        },
                        "complete",
                        Cache::None,
                        meta,
                        0,
                    ),
                    Ok(meta) => answers.ok(Ok(serde_json::json!({ "_meta": meta })), Cache::None),
                    Err(e) => answers.error(e),
                },
                Err(e) => answers.error(e),
            },
            "tools/list" => {
                let size = shared.config.tools_page_size;
                match shared.availability.as_ref().filter(|a| a.may_change()) {
                    None => {
                        let page = parse_params::<PaginatedParams>(params)
                            .and_then(|p| shared.registry.list_page(p.cursor.as_deref(), size));
                        answers.ok(page, Cache::Public)
                    }
                    // Tools that come and go: only what is offered now, and not for caching.
                    Some(a) => {
                        let shown = |t: &crate::tool::ToolDef| {
                            !a.is_external(t.name())
                                || (a.withheld(t.name()).is_none() && !shared.policy.always_refuses(t))
                        };
                        let page = parse_params::<PaginatedParams>(params)
                            .and_then(|p| shared.registry.list_page_where(p.cursor.as_deref(), size, shown));
                        answers.ok(page, Cache::Private)
                    }
                }
            }
            "tools/call" => {
                // Boxed: the params are handed down through every step of the call, and each
                // hand-over of an unboxed one copied its bytes.
                let parsed = parse_large_params::<Box<CallRequest>>(params);
                // The message's text (a large argument, say) is not kept while the tool runs.
                drop(raw);
                match parsed {
                    Ok(p) if !modern && p.meta.as_ref().is_some_and(|m| m.protocol_version.is_some()) => {
                        answers.error(Error::InvalidRequest { reason: InvalidRequest::LegacyEra })
                    }
                    // Boxed: the call's future is most of a request's, and every request's task
                    // is moved when it is spawned (unboxed, pipelined calls lost a fifth).
                    Ok(p) => {
                        match Box::pin(call::call_tool(shared, id, p, cancel, client.as_deref(), caller))
                            .await
                        {
                            Ok(CallOutcome::Complete(result)) => answers.call_result(result),
                            Ok(CallOutcome::InputRequired(question)) => answers.input_required(&question),
                            Ok(CallOutcome::Task(task)) if !modern => answers.ok(
                                Ok(serde_json::json!({ "task": crate::mcp::tasks::LegacyTask::from(task) })),
                                Cache::None,
                            ),
                            Ok(CallOutcome::Task(task)) => answers.modern(
                                |out| serde_json::to_writer(out, &task),
                                "task",
                                Cache::None,
                                serde_json::Map::new(),
                                0,
                            ),
                            Err(e) => answers.error(e),
                        }
                    }
                    Err(e) => answers.error(e),
                }
            }
            // Tasks of protocol 2025-11-25 (`router/legacy_tasks.rs`).
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"
                if !modern && shared.serves_tasks() =>
            {
                match Box::pin(legacy_tasks::answer(shared, method, params, caller, &cancel)).await {
                    Ok(legacy_tasks::LegacyAnswer::Result(value)) => answers.ok(Ok(value), Cache::None),
                    Ok(legacy_tasks::LegacyAnswer::Error(error)) => {
                        format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}\n", id.raw())
                            .into_bytes()
                    }
                    Err(e) => answers.error(e),
                }
            }
            // Tasks (`server/tasks.rs`), modern era, when a tool may run as one: a request whose
            // client did not declare the extension is refused before its task is looked up.
            "tasks/get" | "tasks/update" | "tasks/cancel" if modern && shared.serves_tasks() => {
                let declared =
                    client.as_ref().is_some_and(|c| c.capabilities.supports_extension(TASKS_EXTENSION));
                if !declared {
                    return answers.error(Error::MissingCapability {
                        capability: TASKS_EXTENSION,
                        details: format!("`{method}` is for clients that declare the tasks extension"),
                    });
                }
                answers.ok(Box::pin(tasks(shared, method, params, caller)).await, Cache::None)
            }
            // Undeclared capabilities are not served: a method is answered exactly when the
            // capability that offers it is declared (`capabilities` in `main_loop`), else `-32601`.
            "prompts/list" | "prompts/get" if !shared.announcement.prompts => {
                answers.error(Error::MethodNotFound { method: method.to_owned() })
            }
            "completion/complete" if !shared.announcement.completions => {
                answers.error(Error::MethodNotFound { method: method.to_owned() })
            }
            "prompts/list" => answers.ok(
                parse_params::<PaginatedParams>(params).map(|_| ListPromptsResult {
                    prompts: shared.prompts.defs.iter().map(|d| d.prompt().clone()).collect(),
                    next_cursor: None,
                }),
                Cache::Public,
            ),
            "prompts/get" => match parse_params::<GetPromptParams>(params) {
                Ok(p) => match Box::pin(super::prompts::get_prompt(
                    shared,
                    id,
                    p,
                    cancel,
                    client.as_deref(),
                    caller,
                ))
                .await
                {
                    Ok(PromptOutcome::Complete(result)) => answers.ok(Ok(result), Cache::None),
                    Ok(PromptOutcome::InputRequired(question)) => answers.input_required(&question),
                    Err(e) => answers.error(e),
                },
                Err(e) => answers.error(e),
            },
            "completion/complete" => answers.ok(
                parse_params::<CompleteParams>(params).and_then(|p| super::prompts::complete(shared, p)),
                Cache::None,
            ),
            // Legacy era only (`Shared::caller` refuses them in the modern one): resources that
            // never change, so a subscription is acknowledged and nothing is ever sent.
            "resources/subscribe" | "resources/unsubscribe"
                if shared.resources.as_ref().is_some_and(|r| r.subscribable()) =>
            {
                answers.ok(
                    parse_params::<ReadResourceParams>(params).map(|_| serde_json::json!({})),
                    Cache::None,
                )
            }
            "logging/setLevel" => {
                let set = parse_params::<SetLevelParams>(params).map(|p| {
                    crate::logging::set_client_level(p.level);
                    serde_json::json!({})
                });
                answers.ok(set, Cache::None)
            }
            // Skills (`super::skills`): their methods in the modern era only, when there are any.
            "skills/list" | "skills/get" | "resources/directory/read"
                if !modern || !shared.announcement.skills =>
            {
                answers.error(Error::MethodNotFound { method: method.to_owned() })
            }
            "skills/list" => match parse_params::<PaginatedParams>(params) {
                Ok(p) => answers.ok(super::skills::list(shared, p.cursor).await, Cache::Private),
                Err(e) => answers.error(e),
            },
            "skills/get" => match parse_params::<GetSkillParams>(params) {
                Ok(p) => answers.ok(super::skills::get(shared, p).await, Cache::Private),
                Err(e) => answers.error(e),
            },
            "resources/directory/read" => match parse_params::<DirectoryReadParams>(params) {
                Ok(p) => answers.ok(super::skills::directory(shared, p).await, Cache::Private),
                Err(e) => answers.error(e),
            },
            "resources/list" | "resources/read" | "resources/templates/list"
                if shared.resources.is_none() && !shared.announcement.skills =>
            {
                answers.error(Error::MethodNotFound { method: method.to_owned() })
            }
            "resources/list" => match parse_params::<PaginatedParams>(params) {
                Ok(p) => answers.ok(super::skills::list_resources(shared, p.cursor).await, Cache::Private),
                Err(e) => answers.error(e),
            },
            "resources/read" => match parse_params::<ReadResourceParams>(params) {
                Ok(p) => {
                    let read = async {
                        let _turn = shared.turn("resources/read").await?;
                        match &shared.resources {
                            _ if super::skills::reads(shared, &p.uri) => {
                                super::skills::read_resource(shared, p.uri).await
                            }
                            Some(provider) => provider.read(p.uri).await,
                            None => Err(Error::Resource {
                                uri: p.uri,
                                reason: crate::error::ResourceRefusal::NotFound,
                            }),
                        }
                    };
                    answers.read_result(read.await)
                }
                Err(e) => answers.error(e),
            },
            "resources/templates/list" => answers.ok(
                parse_params::<PaginatedParams>(params).map(|_| ListResourceTemplatesResult {
                    resource_templates: shared.resources.as_ref().map(|r| r.templates()).unwrap_or_default(),
                }),
                Cache::Public,
            ),
            _ => answers.error(Error::MethodNotFound { method: method.to_owned() }),
        }
    };
    match AssertUnwindSafe(route).catch_unwind().await {
        Ok(line) => line,
        Err(panic) => {
            let details = crate::logging::panic_message(panic.as_ref());
            answers.error(Error::Internal { details })
        }
    }
}

/// `tasks/get` (the task as it is now), `tasks/update` (answers to its questions) and
/// `tasks/cancel`, each for the caller's own task; the last two are acknowledged with an empty
/// result, whatever the task's state (cancelling a task that is over changes nothing).
///
/// A task another replica of a fleet runs is answered by `tasks/get` from the snapshot it
/// published (`TaskRecord::publish`); it is updated and cancelled only where it runs.
async fn tasks(
    shared: &Shared,
    method: &str,
    params: Option<&str>,
    caller: &Caller,
) -> Result<serde_json::Value, Error> {
    if method == "tasks/update" {
        let p = parse_params::<UpdateTaskParams>(params)?;
        let responses = crate::tool::inputs::responses(p.input_responses)?;
        shared.tasks.get(&p.task_id, caller)?.board.answer(responses);
        return Ok(serde_json::json!({}));
    }
    let p = parse_params::<TaskIdParams>(params)?;
    let task = match shared.tasks.get(&p.task_id, caller) {
        Ok(task) => task,
        Err(unknown) if method == "tasks/get" && shared.store.is_shared() => {
            let published = shared.store.published_task(&p.task_id).await.ok().flatten();
            let snapshot = published.and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
            return match snapshot {
                Some(mut s) if s["owner"].as_str() == caller.principal.as_deref() => Ok(s["task"].take()),
                _ => Err(unknown),
            };
        }
        Err(unknown) => return Err(unknown),
    };
    if method == "tasks/cancel" {
        task.cancel();
        task.publish(shared.store.as_ref());
        return Ok(serde_json::json!({}));
    }
    serde_json::to_value(task.detailed()).map_err(|e| Error::Internal { details: e.to_string() })
}

/// How long a modern client may keep a result (`ttlMs`/`cacheScope`, on lists, reads and
/// discovery).
#[derive(Clone, Copy)]
enum Cache {
    /// Not a cacheable result.
    None,
    /// The same for every client for the life of the server (the tool list, the templates,
    /// discovery): an hour, shared caches allowed.
    Public,
    /// Workspace contents, which change under the server: stale at once, for this client only.
    Private,
}

/// `ttlMs` of [`Cache::Public`] results: the lists are fixed for the life of the server, but a
/// restarted server (a new version) may serve others, so an hour rather than forever.
const PUBLIC_TTL_MS: u64 = 3_600_000;

/// Writes the answers of one request, in its era's form.
struct Answers<'a> {
    shared: &'a Shared,
    id: &'a RequestId,
    modern: bool,
}

impl Answers<'_> {
    fn ok<T: Serialize>(&self, result: Result<T, Error>, cache: Cache) -> Vec<u8> {
        self.sized(result, 0, cache)
    }

    /// A result (with room reserved for about `size` bytes) or an error.
    fn sized<T: Serialize>(&self, result: Result<T, Error>, size: usize, cache: Cache) -> Vec<u8> {
        match result {
            Err(error) => self.error(error),
            Ok(value) if !self.modern => result_line_sized(self.id, &value, size),
            Ok(value) => self.modern(
                |out| serde_json::to_writer(out, &value),
                "complete",
                cache,
                serde_json::Map::new(),
                size,
            ),
        }
    }

    /// A tool's result: its own `_meta`, if any, goes into the modern result's.
    fn call_result(&self, mut result: CallToolResult) -> Vec<u8> {
        // Room for the content up front: a large result is written once.
        let size = result.wire_size_hint();
        if !self.modern {
            return result_line_written(self.id, size, |out| result.write_json(out));
        }
        let meta = result.meta.take().unwrap_or_default();
        self.modern(|out| result.write_json(out), "complete", Cache::None, meta, size)
    }

    /// A `resources/read` result (workspace contents: [`Cache::Private`]), written with room for
    /// its contents up front and their text escaped a block at a time.
    fn read_result(&self, result: Result<ReadResourceResult, Error>) -> Vec<u8> {
        let read = match result {
            Ok(read) => read,
            Err(error) => return self.error(error),
        };
        let size = read.wire_size_hint();
        let write = |out: &mut Vec<u8>| {
            read.write_json(out);
            Ok(())
        };
        if !self.modern {
            return result_line_written(self.id, size, write);
        }
        self.modern(write, "complete", Cache::Private, serde_json::Map::new(), size)
    }

    fn input_required(&self, question: &InputRequiredResult) -> Vec<u8> {
        self.modern(
            |out| serde_json::to_writer(out, question),
            "input_required",
            Cache::None,
            serde_json::Map::new(),
            0,
        )
    }

    /// A modern-era result: the method's own members, written straight from the result by
    /// `write` (a pre-serialised listing included), then `resultType`, the cache hints when the result has
    /// them, and `_meta` with the server's name and version added to `meta` (the `_meta` the
    /// result carried, taken out of it so the key is written once).
    fn modern(
        &self,
        write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
        result_type: &'static str,
        cache: Cache,
        mut meta: serde_json::Map<String, serde_json::Value>,
        size: usize,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + size);
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(self.id.raw().as_bytes());
        out.extend_from_slice(b",\"result\":");
        let start = out.len();
        let written = write(&mut out);
        // The result is a JSON object: its members, then ours, before its closing brace.
        while out.last().is_some_and(u8::is_ascii_whitespace) {
            out.pop();
        }
        if written.is_err() || out.len() <= start || out.pop() != Some(b'}') {
            return self.error(Error::Internal { details: "a result that is not a JSON object".into() });
        }
        while out.last().is_some_and(u8::is_ascii_whitespace) {
            out.pop();
        }
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(b"\"resultType\":\"");
        out.extend_from_slice(result_type.as_bytes());
        out.push(b'"');
        let hints = match cache {
            Cache::None => None,
            Cache::Public => Some((PUBLIC_TTL_MS, CacheScope::Public)),
            Cache::Private => Some((0, CacheScope::Private)),
        };
        if let Some((ttl, scope)) = hints {
            out.extend_from_slice(
                format!(",\"ttlMs\":{ttl},\"cacheScope\":\"{}\"", scope.as_str()).as_bytes(),
            );
        }
        out.extend_from_slice(b",\"_meta\":");
        if meta.is_empty() {
            out.extend_from_slice(self.shared.server_info_meta().as_bytes());
        } else {
            meta.insert(META_SERVER_INFO.to_owned(), self.shared.server_info_value().clone());
            if serde_json::to_writer(&mut out, &meta).is_err() {
                return self.error(Error::Internal { details: "result `_meta` cannot be written".into() });
            }
        }
        out.extend_from_slice(b"}}\n");
        out
    }

    fn error(&self, error: Error) -> Vec<u8> {
        error_line(Some(self.id), &error.to_error_object_for(self.modern))
    }
}

/// `subscriptions/listen`: acknowledges the notifications this server will send, then keeps the
/// stream open until the client cancels it (`notifications/cancelled`: no response, as for any
/// cancelled request) or the input ends (then the stream's final result).
///
/// Only a server with tools that come and go ([`crate::server::ToolAvailability`]: the gateway's)
/// sends `notifications/tools/list_changed`; it is acknowledged when asked for, and sent on this
/// stream (with the subscription's id in `_meta`) whenever the set may have changed. Nothing else
/// ever changes while the server runs, and it has no resource subscriptions, so nothing else is
/// acknowledged: nothing is promised that would never come, and nothing the client did not ask
/// for is ever sent.
async fn listen(
    shared: &Shared,
    id: &RequestId,
    params: ListenParams,
    cancel: &CancellationToken,
    caller: &Caller,
) -> Result<serde_json::Map<String, serde_json::Value>, Error> {
    /// Counts an open stream until it ends, however it ends (an abort included).
    struct Open<'a>(&'a std::sync::atomic::AtomicUsize);
    impl Drop for Open<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
    // The caller's share first: one caller at its own limit is told so, whatever the others hold.
    let _mine = shared
        .listeners_per_caller
        .take_for(caller.counted_as.as_ref(), shared.config.per_caller.subscriptions)?;
    if shared.listeners.fetch_add(1, std::sync::atomic::Ordering::AcqRel) >= MAX_LISTENERS {
        shared.listeners.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        return Err(Error::InvalidRequest { reason: InvalidRequest::TooManyListeners });
    }
    let _open = Open(&shared.listeners);
    // The id exactly as the client wrote it (its JSON type included).
    let id: serde_json::Value =
        serde_json::from_str(id.raw()).map_err(|e| Error::Internal { details: e.to_string() })?;
    let mut subscription = serde_json::Map::new();
    subscription.insert(META_SUBSCRIPTION_ID.to_owned(), id);
    let mut changes =
        shared.availability.as_ref().filter(|_| params.notifications.tools_list_changed).map(|a| a.changes());
    // Subscriptions to resources that never change ([`crate::ResourceProvider::subscribable`]):
    // acknowledged, and nothing is ever sent for them.
    let resource_subscriptions = match &shared.resources {
        Some(r) if r.subscribable() => params.notifications.resource_subscriptions,
        _ => Vec::new(),
    };
    let acknowledged = SubscriptionFilter {
        tools_list_changed: changes.is_some(),
        resource_subscriptions,
        ..SubscriptionFilter::default()
    };
    let peer = &caller.peer;
    peer.notify(
        "notifications/subscriptions/acknowledged",
        &serde_json::json!({ "_meta": subscription, "notifications": acknowledged }),
    );
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            () = shared.input_closed.cancelled() => break,
            Ok(()) = async {
                match changes.as_mut() {
                    Some(rx) => rx.changed().await,
                    None => std::future::pending().await,
                }
            } => peer.notify(
                "notifications/tools/list_changed",
                &serde_json::json!({ "_meta": subscription }),
            ),
        }
    }
    Ok(subscription)
}
