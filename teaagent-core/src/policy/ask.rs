//! Session approvals in `prompt` mode: asking the user, through the client when it can show a
//! form (`elicitation/create`), else on the server's controlling terminal (`/dev/tty` — never
//! stdin, which belongs to the protocol), else not at all (deny).
//!
//! Only a well-formed approving answer approves: `accept` with `decision` = `once` or `session`.
//! `decline`, `cancel`, `deny`, anything malformed, an error from the client and a timeout all
//! deny. Questions to one party are asked one at a time (`questions`).

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::ProtocolVersion;
use crate::mcp::elicitation::{ElicitAction, ElicitParams, ElicitResult};
use crate::session::Peer;

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// This call only.
    Once,
    /// This call and the session's matching calls.
    Session,
    /// No, with why (for the denial's rule).
    Deny(String),
}

/// Whether a question goes to the client (its form), not to the terminal.
pub(crate) fn asks_client(peer: Option<&Peer>) -> bool {
    peer.and_then(Peer::session).is_some_and(|s| s.capabilities.supports_elicitation())
}

/// Asks the user whether to allow a call described by `question`.
pub(crate) async fn ask(peer: Option<&Peer>, question: &str, timeout: Duration) -> Answer {
    if let Some(peer) = peer.filter(|p| asks_client(Some(p)))
        && let Some(session) = peer.session()
    {
        return elicit(peer, session.version, question, timeout).await;
    }
    let question = question.to_owned();
    match tokio::task::spawn_blocking(move || ask_terminal(&question, timeout)).await {
        Ok(answer) => answer,
        Err(e) => Answer::Deny(format!("asking on the terminal failed: {e}")),
    }
}

async fn elicit(peer: &Peer, version: ProtocolVersion, question: &str, timeout: Duration) -> Answer {
    match peer.request("elicitation/create", &approval_request(version, question), timeout).await {
        Ok(answer) => interpret(answer),
        Err(e) => Answer::Deny(format!("no approval: {e}")),
    }
}

/// The form that asks the user about a call: one required `decision` (`once`, `session`,
/// `deny`), titled enum values from `2025-11-25` on, `enumNames` before.
pub(crate) fn approval_request(version: ProtocolVersion, question: &str) -> ElicitParams {
    let decision = if version >= ProtocolVersion::V2025_11_25 {
        json!({
            "type": "string",
            "title": "Decision",
            "oneOf": [
                {"const": "once", "title": "Allow once"},
                {"const": "session", "title": "Allow for this session"},
                {"const": "deny", "title": "Deny"}
            ]
        })
    } else {
        json!({
            "type": "string",
            "title": "Decision",
            "enum": ["once", "session", "deny"],
            "enumNames": ["Allow once", "Allow for this session", "Deny"]
        })
    };
    let schema = json!({"type": "object", "properties": {"decision": decision}, "required": ["decision"]});
    ElicitParams {
        message: question.to_owned(),
        requested_schema: schema.as_object().cloned().unwrap_or_default(),
    }
}

/// What the client's answer to [`approval_request`] says: only `accept` with a `decision` of
/// `once` or `session` approves.
pub(crate) fn interpret(answer: Value) -> Answer {
    match serde_json::from_value::<ElicitResult>(answer) {
        Ok(ElicitResult { action: ElicitAction::Accept, content: Some(content) }) => {
            match content.get("decision").and_then(Value::as_str) {
                Some("once") => Answer::Once,
                Some("session") => Answer::Session,
                Some("deny") => Answer::Deny("denied by the user".into()),
                _ => Answer::Deny("the client's answer did not approve (malformed `decision`)".into()),
            }
        }
        Ok(ElicitResult { action: ElicitAction::Accept, content: None }) => {
            Answer::Deny("the client's answer did not approve (no `decision`)".into())
        }
        Ok(ElicitResult { action: ElicitAction::Decline, .. }) => Answer::Deny("declined by the user".into()),
        Ok(ElicitResult { action: ElicitAction::Cancel, .. }) => Answer::Deny("dismissed by the user".into()),
        Err(_) => Answer::Deny("the client's answer was malformed".into()),
    }
}

/// Whether this process has a controlling terminal to ask on.
pub(crate) fn terminal_available() -> bool {
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok()
}

/// Asks on `/dev/tty`; no terminal, a timeout or any answer but yes/session is a denial.
fn ask_terminal(question: &str, timeout: Duration) -> Answer {
    let Ok(mut tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else {
        return Answer::Deny(
            "nobody to ask: the client does not support elicitation and the server has no terminal".into(),
        );
    };
    let prompt = format!("\n[teaagent] {question}\n[teaagent] allow? [y]es once / [s]ession / [N]o: ");
    if tty.write_all(prompt.as_bytes()).and_then(|()| tty.flush()).is_err() {
        return Answer::Deny("the terminal cannot be written".into());
    }
    let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    let mut fds = [rustix::event::PollFd::new(&tty, rustix::event::PollFlags::IN)];
    let ready = rustix::event::poll(
        &mut fds,
        Some(&rustix::event::Timespec {
            tv_sec: i64::from(millis / 1000),
            tv_nsec: i64::from(millis % 1000) * 1_000_000,
        }),
    );
    if !matches!(ready, Ok(n) if n > 0) {
        let _ = tty.write_all(b"\n[teaagent] no answer in time: denied\n");
        return Answer::Deny(format!("no answer on the terminal within {}s", timeout.as_secs()));
    }
    let mut line = String::new();
    if BufReader::new(&tty).read_line(&mut line).is_err() {
        return Answer::Deny("the terminal cannot be read".into());
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "once" => Answer::Once,
        "s" | "session" => Answer::Session,
        _ => Answer::Deny("denied on the terminal".into()),
    }
}
