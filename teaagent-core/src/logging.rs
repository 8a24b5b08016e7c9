//! Logs: always to stderr (stdout carries protocol messages only), and to the client as
//! `notifications/message` once it asks for them: with `logging/setLevel` in the legacy era (for
//! the whole session), with `_meta["io.modelcontextprotocol/logLevel"]` in the modern era (for
//! that request only, while it runs, before its response).
//!
//! [`init`] installs a `tracing` subscriber of its own (`logging/subscriber.rs`: no registry of
//! spans, the spans open kept for the context a line shows) with two filters: stderr honours
//! `RUST_LOG` (or the level given), the client the level it set (nothing until it sets one). A panic anywhere is logged through the same path, so a
//! panicking tool leaves a trace on stderr and, when asked for, at the client.
//!
//! Forwarding is per process: the server that is serving receives the process's events.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::mcp::LoggingLevel;
use crate::mcp::logging::LoggingMessageParams;
use crate::session::Peer;

pub mod stderr;
mod subscriber;

const OFF: u8 = u8::MAX;

/// The lowest level the client asked for, as `LoggingLevel as u8`, or [`OFF`].
static CLIENT_LEVEL: AtomicU8 = AtomicU8::new(OFF);
static SINK: Mutex<Option<Peer>> = Mutex::new(None);

/// Installs the process's subscriber: stderr with `RUST_LOG` (else `default_directive`, e.g.
/// `"info"`), plus forwarding to the client. Also routes panic messages through `tracing`.
/// Calling it twice keeps the first subscriber.
///
/// Directives are `level` or `target=level` lists (`info,teaagent_core=debug`); a malformed
/// `RUST_LOG` falls back to `default_directive` with a warning. (Span and field filters are not
/// supported: they would pull a regex engine into every server for little use.) Lines are plain
/// text, also on a terminal: an MCP server's stderr mostly ends up in a client's log file, and
/// colours would cost every server one more crate (`nu-ansi-term`).
pub fn init(default_directive: &str) {
    init_as(default_directive, LogFormat::Text);
}

/// How lines on stderr are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// One line of text an event (`TIME LEVEL target: message fields`).
    #[default]
    Text,
    /// One JSON object a line, for log shippers: `time` (RFC 3339, UTC), `level`, `target`,
    /// `message`, and `fields` (every other field of the event).
    Json,
}

static JSON_LINES: AtomicBool = AtomicBool::new(false);

/// Whether [`init_as`] installed [`LogFormat::Json`]: then every line on stderr must be a JSON
/// object, and what a program says there besides its logs goes through `tracing` too.
pub fn json_lines() -> bool {
    JSON_LINES.load(Ordering::Relaxed)
}

/// [`init`], with the lines on stderr in `format`.
pub fn init_as(default_directive: &str, format: LogFormat) {
    let from_env = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty());
    let parsed = from_env.as_deref().map(str::parse::<Targets>);
    let filter = match &parsed {
        Some(Ok(targets)) => targets.clone(),
        _ => default_directive.parse().unwrap_or_else(|_| Targets::new().with_default(tracing::Level::INFO)),
    };
    let logger = subscriber::Logger::new(filter, format == LogFormat::Json);
    if tracing::subscriber::set_global_default(logger).is_err() {
        tracing::debug!("a tracing subscriber was already installed; keeping it");
        return;
    }
    JSON_LINES.store(format == LogFormat::Json, Ordering::Relaxed);
    if let Some(Err(e)) = parsed {
        tracing::warn!("ignoring RUST_LOG={:?}: {e}", from_env.unwrap_or_default());
    }
    std::panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        let location = info.location().map(ToString::to_string).unwrap_or_default();
        tracing::error!(target: "teaagent::panic", %location, "panic: {message}");
    }));
}

/// The layer that forwards events to the client, for applications that build their own
/// subscriber (add it with `.with(teaagent_core::logging::layer())`).
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    ClientLayer.with_filter(ClientFilter)
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}

pub(crate) fn attach(peer: &Peer) {
    *SINK.lock().unwrap_or_else(|p| p.into_inner()) = Some(peer.clone());
}

pub(crate) fn detach() {
    CLIENT_LEVEL.store(OFF, Ordering::Relaxed);
    *SINK.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

pub(crate) fn set_client_level(level: LoggingLevel) {
    CLIENT_LEVEL.store(level as u8, Ordering::Relaxed);
}

tokio::task_local! {
    /// The level a modern-era request asked for in its `_meta`, while it runs (`None`: the
    /// session's, set by `logging/setLevel` in the legacy era).
    static REQUEST_LEVEL: Option<u8>;
}

/// Runs a request's handling with its own log level, when it has one: events raised while it
/// runs (by the framework or the tool, on its task or a blocking thread it started through
/// [`in_request_scope`]) reach the client at or above `level`. A modern-era request without one
/// gets no `notifications/message` (protocol `2026-07-28`; the session-wide level is never set
/// in that era).
///
/// Not an `async fn`: that would keep `handling` twice in the request's state (an argument and
/// the scope that owns it), and every request's future is moved when it is spawned.
pub(crate) fn for_request<F: std::future::Future>(
    level: Option<LoggingLevel>,
    handling: F,
) -> impl std::future::Future<Output = F::Output> {
    REQUEST_LEVEL.scope(level.map(|l| l as u8), handling)
}

/// Wraps `f`, a closure about to run on another thread for the current request, so the events it
/// raises there use the request's log level too.
pub(crate) fn in_request_scope<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let level = REQUEST_LEVEL.try_with(|l| *l).ok().flatten();
    let peer = crate::session::peer::REQUEST_PEER.try_with(Peer::clone).ok();
    move || {
        let scoped = move || match level {
            Some(level) => REQUEST_LEVEL.sync_scope(Some(level), f),
            None => f(),
        };
        match peer {
            Some(peer) => crate::session::peer::REQUEST_PEER.sync_scope(peer, scoped),
            None => scoped(),
        }
    }
}

fn wanted(level: &tracing::Level) -> bool {
    let min =
        REQUEST_LEVEL.try_with(|l| *l).ok().flatten().unwrap_or_else(|| CLIENT_LEVEL.load(Ordering::Relaxed));
    min != OFF && LoggingLevel::of_tracing(*level) as u8 >= min
}

struct ClientFilter;

impl<S> Filter<S> for ClientFilter {
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        wanted(meta.level())
    }

    fn callsite_enabled(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        // The level changes at run time, so every callsite is asked each time.
        tracing::subscriber::Interest::sometimes()
    }
}

struct ClientLayer;

impl<S: Subscriber> Layer<S> for ClientLayer {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        forward(event);
    }
}

/// Passes `event` to the client: the request's own peer (an HTTP response) first, else the
/// process's.
fn forward(event: &Event<'_>) {
    let request = crate::session::peer::REQUEST_PEER.try_with(Peer::clone).ok();
    let Some(peer) = request.or_else(|| SINK.lock().unwrap_or_else(|p| p.into_inner()).clone()) else {
        return;
    };
    let mut fields = FieldsToJson(Map::new());
    event.record(&mut fields);
    let meta = event.metadata();
    peer.notify(
        "notifications/message",
        &LoggingMessageParams {
            level: LoggingLevel::of_tracing(*meta.level()),
            logger: meta.target(),
            data: Value::Object(fields.0),
        },
    );
}

/// One event as a line of [`LogFormat::Json`] (with its `\n`).
pub(crate) fn json_line(level: &str, target: &str, message: Value, fields: Map<String, Value>) -> String {
    let mut line = serde_json::json!({
        "time": humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string(),
        "level": level,
        "target": target,
        "message": message,
        "fields": Value::Object(fields),
    })
    .to_string();
    line.push('\n');
    line
}

struct FieldsToJson(Map<String, Value>);

impl Visit for FieldsToJson {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
}
