//! The subscriber [`super::init_as`] installs: each event written to stderr when the stderr
//! filter takes it (a line of text, or of JSON), and passed to the client when the client's level
//! takes it (`super::forward`).
//!
//! It keeps no more than what those two need: the spans that are open (their names, fields and
//! parents, for the context a line of text shows: `outer{a=1}:inner: target: message`) and, per
//! thread, the spans entered. No span registry is set up at start (a server that logs a few
//! lines keeps that memory and code out of its pages).
//!
//! Re-entrancy: a field's `Debug` may log itself (`tracing` drops such an event). Fields are
//! formatted with no lock held; the lock over the open spans is held only to copy their text.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current;
use tracing_subscriber::filter::Targets;

use super::{FieldsToJson, forward, json_line, stderr, wanted};

/// The process's subscriber.
pub(super) struct Logger {
    /// What goes to stderr.
    stderr: Targets,
    /// Lines of JSON rather than text (which shows no spans).
    json: bool,
    spans: Mutex<HashMap<u64, OpenSpan>>,
    next_id: AtomicU64,
    /// Where lines go: [`stderr::write`] (tests read them).
    out: fn(&[u8]),
}

/// A span while it is open.
struct OpenSpan {
    meta: &'static Metadata<'static>,
    parent: Option<u64>,
    /// Its fields as a line shows them (`a=1 b="x"`).
    fields: String,
    /// Handles to it ([`Subscriber::clone_span`], [`Subscriber::try_close`]).
    handles: usize,
}

thread_local! {
    /// The spans this thread is in, innermost last.
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl Logger {
    pub(super) fn new(stderr: Targets, json: bool) -> Self {
        Logger {
            stderr,
            json,
            spans: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            out: stderr::write,
        }
    }

    fn to_stderr(&self, meta: &Metadata<'_>) -> bool {
        self.stderr.would_enable(meta.target(), meta.level())
    }

    fn spans(&self) -> std::sync::MutexGuard<'_, HashMap<u64, OpenSpan>> {
        self.spans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The innermost span this thread is in.
    fn current(&self) -> Option<u64> {
        ENTERED.with(|entered| entered.borrow().last().copied())
    }

    /// `inner{a=1}:inner2: `: the spans from the root to `innermost`, as a line shows them.
    fn context(&self, innermost: Option<u64>) -> String {
        let spans = self.spans();
        let mut chain = Vec::new();
        let mut at = innermost;
        while let Some(id) = at {
            let Some(span) = spans.get(&id) else { break };
            chain.push(span);
            at = span.parent;
            if chain.len() > 64 {
                break; // a cycle cannot happen, a very deep nesting is cut
            }
        }
        let mut out = String::new();
        for span in chain.iter().rev() {
            out.push_str(span.meta.name());
            if !span.fields.is_empty() {
                let _ = write!(out, "{{{}}}", span.fields);
            }
            out.push(':');
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out
    }

    /// One event as a line of text: `TIME LEVEL spans: target: message fields`.
    fn text_line(&self, event: &Event<'_>) -> String {
        let meta = event.metadata();
        let innermost = if event.is_contextual() { self.current() } else { event.parent().map(Id::into_u64) };
        let mut fields = TextFields::default();
        event.record(&mut fields);
        let mut line = String::with_capacity(64 + fields.0.len());
        let _ = write!(
            line,
            "{} {:>5} {}{}: {}",
            humantime::format_rfc3339_micros(std::time::SystemTime::now()),
            meta.level().as_str(),
            self.context(innermost),
            meta.target(),
            fields.0
        );
        line.push('\n');
        line
    }
}

impl Subscriber for Logger {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.to_stderr(meta) && (!meta.is_span() || !self.json) {
            Interest::always()
        } else if meta.is_span() {
            // Only lines of text show spans; the client gets events only.
            Interest::never()
        } else {
            // The client's level changes at run time: asked each time.
            Interest::sometimes()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        if meta.is_span() {
            return !self.json && self.to_stderr(meta);
        }
        self.to_stderr(meta) || wanted(meta.level())
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        // The client may ask for any level at any time.
        None
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = TextFields::default();
        attrs.record(&mut fields);
        let parent = if attrs.is_contextual() { self.current() } else { attrs.parent().map(Id::into_u64) };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let span = OpenSpan { meta: attrs.metadata(), parent, fields: fields.0, handles: 1 };
        self.spans().insert(id, span);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = TextFields::default();
        values.record(&mut fields);
        if let Some(open) = self.spans().get_mut(&span.into_u64())
            && !fields.0.is_empty()
        {
            if !open.fields.is_empty() {
                open.fields.push(' ');
            }
            open.fields.push_str(&fields.0);
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        if self.to_stderr(meta) {
            if self.json {
                let mut fields = FieldsToJson(serde_json::Map::new());
                event.record(&mut fields);
                let message = fields.0.remove("message").unwrap_or(serde_json::Value::String(String::new()));
                (self.out)(json_line(meta.level().as_str(), meta.target(), message, fields.0).as_bytes());
            } else {
                (self.out)(self.text_line(event).as_bytes());
            }
        }
        if wanted(meta.level()) {
            forward(event);
        }
    }

    fn enter(&self, span: &Id) {
        ENTERED.with(|entered| entered.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        ENTERED.with(|entered| {
            let mut entered = entered.borrow_mut();
            if let Some(at) = entered.iter().rposition(|&id| id == span.into_u64()) {
                entered.remove(at);
            }
        });
    }

    fn clone_span(&self, span: &Id) -> Id {
        if let Some(open) = self.spans().get_mut(&span.into_u64()) {
            open.handles += 1;
        }
        span.clone()
    }

    fn try_close(&self, span: Id) -> bool {
        let mut spans = self.spans();
        let id = span.into_u64();
        let Some(open) = spans.get_mut(&id) else { return false };
        open.handles = open.handles.saturating_sub(1);
        if open.handles > 0 {
            return false;
        }
        spans.remove(&id);
        true
    }

    fn current_span(&self) -> Current {
        match self.current().and_then(|id| self.spans().get(&id).map(|s| (id, s.meta))) {
            Some((id, meta)) => Current::new(Id::from_u64(id), meta),
            None => Current::none(),
        }
    }
}

/// Fields as a line of text shows them: the message as it is, every other field `name=value`
/// (`Debug`: strings quoted), separated by spaces; in all of them, whatever is not plainly
/// visible (a control character, a line break, a bidi override: a `%` field's `Display` and the
/// message are written as they are) escaped (`visible::invisible_escaped`), so a line stays one
/// line and shows what it holds.
#[derive(Default)]
struct TextFields(String);

impl TextFields {
    fn separate(&mut self) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
    }

    /// Appends `text`, escaped.
    fn push_visible(&mut self, text: &str) {
        self.0.push_str(&crate::visible::invisible_escaped(text));
    }
}

impl Visit for TextFields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let name = field.name();
        if name.starts_with("log.") {
            return;
        }
        self.separate();
        if name != "message" {
            self.0.push_str(name.strip_prefix("r#").unwrap_or(name));
            self.0.push('=');
        }
        let mut written = String::new();
        let _ = write!(written, "{value:?}");
        self.push_visible(&written);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.separate();
            self.push_visible(value);
        } else {
            self.record_debug(field, &value);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn keep(line: &[u8]) {
        LINES.lock().unwrap_or_else(|p| p.into_inner()).push(String::from_utf8_lossy(line).into_owned());
    }

    /// The lines `f` logs through a [`Logger`] with `filter`, and the spans still open after.
    fn lines(filter: &str, json: bool, f: impl FnOnce()) -> (Vec<String>, usize) {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        LINES.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let logger = std::sync::Arc::new(Logger {
            out: keep,
            ..Logger::new(filter.parse().expect("directives"), json)
        });
        tracing::subscriber::with_default(logger.clone(), f);
        let open = logger.spans().len();
        (std::mem::take(&mut *LINES.lock().unwrap_or_else(|p| p.into_inner())), open)
    }

    /// A line without its time: `LEVEL rest`.
    fn untimed(line: &str) -> &str {
        let (time, rest) = line.split_once(' ').expect("a time first");
        assert!(time.len() == 27 && time.ends_with('Z') && time.as_bytes()[10] == b'T', "{line}");
        rest
    }

    #[test]
    fn a_line_is_time_level_target_message_and_fields() {
        let (lines, _) = lines("info", false, || {
            tracing::info!(target: "t", n = 1, s = "x", "hello {}", 5);
            tracing::warn!(target: "u::v", r#type = ?Some(2), "careful");
            tracing::debug!(target: "t", "not shown");
        });
        let untimed: Vec<&str> = lines.iter().map(|l| untimed(l)).collect();
        assert_eq!(untimed, [" INFO t: hello 5 n=1 s=\"x\"\n", " WARN u::v: careful type=Some(2)\n"]);
    }

    /// A `%` field (its `Display`, not quoted) and the message are escaped too; a backslash
    /// stays as it is.
    #[test]
    fn display_fields_and_messages_carry_no_control_characters_either() {
        let hostile = "a\u{1b}[2J\r\nb\u{202e}\\c";
        let (lines, _) = lines("info", false, || {
            tracing::info!(target: "t", v = %hostile, "m {hostile}");
        });
        assert_eq!(lines.len(), 1);
        let line = lines[0].trim_end_matches('\n');
        assert!(!line.chars().any(|c| c.is_control() || c == '\u{202e}'), "{line:?}");
        let shown = r"a\e[2J\r\nb\u{202e}\c";
        assert!(line.ends_with(&format!("t: m {shown} v={shown}")), "{line}");
    }

    #[test]
    fn field_values_shown_to_a_person_carry_no_control_characters() {
        let hostile = "a\u{1b}[2J\r\nb\u{202e}";
        let (lines, _) = lines("info", false, || {
            let span = tracing::info_span!("s", name = hostile);
            span.in_scope(|| tracing::info!(target: "t", v = hostile, "m"));
        });
        assert_eq!(lines.len(), 1);
        let line = lines[0].trim_end_matches('\n');
        assert!(!line.chars().any(|c| c.is_control() || c == '\u{202e}'), "{line:?}");
        assert!(
            line.ends_with(r#"s{name="a\u{1b}[2J\r\nb\u{202e}"}: t: m v="a\u{1b}[2J\r\nb\u{202e}""#),
            "{line}"
        );
    }

    #[test]
    fn directives_choose_by_target_and_level() {
        let (lines, _) = lines("warn,chatty=debug", false, || {
            tracing::info!(target: "quiet", "no");
            tracing::debug!(target: "chatty::inner", "yes");
            tracing::trace!(target: "chatty", "no");
            tracing::error!(target: "quiet", "yes");
        });
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.contains("yes")), "{lines:?}");
    }

    #[test]
    fn events_show_the_spans_they_are_in_from_the_root() {
        let (lines, open) = lines("info", false, || {
            let outer = tracing::info_span!("outer", id = 7, later = tracing::field::Empty);
            let _in_outer = outer.enter();
            outer.record("later", "set");
            let inner = tracing::info_span!("inner");
            inner.in_scope(|| {
                tracing::info!(target: "t", "deep");
                assert_eq!(tracing::Span::current().metadata().map(|m| m.name()), Some("inner"));
            });
            tracing::info!(target: "t", "shallow");
            let explicit = tracing::info_span!(parent: None, "alone");
            tracing::info!(target: "t", parent: &explicit, "by parent");
            drop(_in_outer);
            tracing::info!(target: "t", "outside");
        });
        let untimed: Vec<&str> = lines.iter().map(|l| untimed(l)).collect();
        assert_eq!(
            untimed,
            [
                " INFO outer{id=7 later=\"set\"}:inner: t: deep\n",
                " INFO outer{id=7 later=\"set\"}: t: shallow\n",
                " INFO alone: t: by parent\n",
                " INFO t: outside\n",
            ]
        );
        assert_eq!(open, 0, "every span is forgotten once closed");
    }

    #[test]
    fn a_field_that_logs_while_it_is_written_does_not_hang() {
        struct Loud;
        impl std::fmt::Debug for Loud {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                tracing::info!(target: "t", "from inside");
                f.write_str("loud")
            }
        }
        let (lines, _) = lines("info", false, || {
            let span = tracing::info_span!("s", v = ?Loud);
            span.in_scope(|| tracing::info!(target: "t", v = ?Loud, "outer"));
        });
        // (`tracing` itself drops the events raised inside a subscriber's own work.)
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].ends_with(" INFO s{v=loud}: t: outer v=loud\n"), "{lines:?}");
    }

    #[test]
    fn json_lines_are_objects_and_show_no_spans() {
        let (lines, _) = lines("info", true, || {
            let span = tracing::info_span!("s", id = 1);
            span.in_scope(|| tracing::info!(target: "t", n = 2, "hi"));
        });
        assert_eq!(lines.len(), 1);
        let line: serde_json::Value = serde_json::from_str(&lines[0]).expect("JSON");
        assert_eq!(
            (&line["level"], &line["target"], &line["message"]),
            (&"INFO".into(), &"t".into(), &"hi".into())
        );
        assert_eq!(line["fields"], serde_json::json!({"n": 2}));
        assert!(line["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    }
}
