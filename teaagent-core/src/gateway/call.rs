//! One call of an external tool (`gateway.rs`): waits for a server that is starting, passes on
//! progress and cancellation, and turns the reply into a result.

use std::sync::Arc;

use serde_json::Value;

use super::child::{self, Connection, Reply};
use super::progress::{Pace, ProgressQueue};
use super::{Inner, LinkState, result};
use crate::error::{Error, Failure};
use crate::mcp::{CallToolResult, JsonObject};
use crate::tool::ToolContext;

/// Sends `notifications/cancelled` for a call whose future is dropped before its reply.
struct Pending<'a> {
    conn: &'a Connection,
    id: u64,
    answered: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.conn.cancel(self.id, "cancelled by teaagent's client");
        }
    }
}

/// The state of `link` once it is no longer starting (its first start asked for now), or down
/// when that takes longer than the start-up timeout.
async fn settled(link: &super::Link, inner: &Inner) -> LinkState {
    let mut state = link.state.subscribe();
    if matches!(*state.borrow(), LinkState::Starting) {
        link.wanted.notify_one(); // its first start need not wait for `start_after`
    }
    let settled = state.wait_for(|s| !matches!(s, LinkState::Starting));
    match tokio::time::timeout(inner.options.startup_timeout, settled).await {
        Ok(Ok(state)) => state.clone(),
        _ => LinkState::Down(format!(
            "it did not start within {} s",
            inner.options.startup_timeout.as_secs_f64()
        )),
    }
}

/// One call of an external tool (module docs).
pub(super) async fn call(
    inner: &Inner,
    index: usize,
    own: &str,
    ctx: ToolContext,
    args: JsonObject,
) -> Result<CallToolResult, Error> {
    let link = &inner.links[index];
    let server = &link.external.launch.name;
    let failed =
        |reason: Failure, details: String| Error::ToolFailed { tool: ctx.tool().to_owned(), reason, details };
    // A server that is up is used at once; only one still starting is waited for.
    let up = match &*link.state.borrow() {
        LinkState::Up(conn) => Some(conn.clone()),
        _ => None,
    };
    let now = match up {
        Some(conn) => LinkState::Up(conn),
        None => settled(link, inner).await,
    };
    let conn = match now {
        LinkState::Up(conn) => conn,
        LinkState::Withheld(why) => {
            return Err(failed(Failure::Withheld, format!("external server `{server}`: {why}")));
        }
        LinkState::Down(why) => {
            return Err(failed(Failure::ExternalUnavailable, format!("external server `{server}`: {why}")));
        }
        LinkState::Starting => {
            return Err(failed(
                Failure::ExternalUnavailable,
                format!("external server `{server}` is still starting"),
            ));
        }
    };
    // The server's progress, passed on a few at a time and paced (`gateway/progress.rs`).
    let progress = ctx.wants_progress().then(|| Arc::new(ProgressQueue::default()));
    let mut pace = Pace::default();
    let (id, reply) = conn.send_call(own, &args, progress.clone());
    let mut pending = Pending { conn: &conn, id, answered: false };
    let mut reply = std::pin::pin!(conn.wait(id, reply));
    let reply = loop {
        tokio::select! {
            reply = &mut reply => break reply,
            update = async {
                match &progress {
                    Some(queue) => queue.next(&mut pace).await,
                    None => std::future::pending().await,
                }
            } => ctx.progress(update.progress, update.total, update.message.as_deref()),
        }
    };
    pending.answered = true;
    // Progress the server sent before its reply is already queued (its lines are read in
    // order): passed on now, so it reaches the client before the result, never after or never.
    for update in progress.iter().flat_map(|queue| queue.rest(&mut pace)) {
        ctx.progress(update.progress, update.total, update.message.as_deref());
    }
    let unreadable = |why: String| {
        Ok(CallToolResult::error(format!("the external server `{server}` answered, but {why}")))
    };
    match reply {
        Reply::Result(result) => {
            match result::external_result(&result, server, link.external.launch.max_result_bytes) {
                Ok(result) => Ok(result),
                Err(e) => unreadable(child::unreadable_reply(&e)),
            }
        }
        Reply::Error(e) => {
            let code = e.get("code").map(Value::to_string).unwrap_or_else(|| "?".into());
            let message = e.get("message").and_then(Value::as_str).unwrap_or("(no message)");
            Ok(CallToolResult::error(format!(
                "the external server `{server}` answered error {code}: {message}"
            )))
        }
        Reply::Closed => Err(failed(
            Failure::ExternalExited,
            format!("external server `{server}` exited during the call; it is being restarted"),
        )),
        Reply::Unreadable(why) => unreadable(why),
    }
}
