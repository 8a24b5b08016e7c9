//! What the command says on stderr besides its logs: warnings, and the error it stops on. A
//! plain line (`teaagent: …`), or with `--log-format json` a log event like every other line, so
//! that a log shipper reads stderr as JSON lines throughout.

/// Says `text` (already escaped) as a warning: `teaagent: {text}` or a `WARN` event. A leading
/// `warning: ` is the plain line's way to say the level; the event has a level of its own.
pub(crate) fn warning(text: &str) {
    if teaagent_core::logging::json_lines() {
        let message = text.strip_prefix("warning: ").unwrap_or(text);
        tracing::warn!(target: "teaagent", "{message}");
    } else {
        teaagent_core::logging::stderr::write(format!("teaagent: {text}\n").as_bytes());
    }
}

/// Says `text` (already escaped) as the error the command stops on.
pub(crate) fn error(text: &str) {
    if teaagent_core::logging::json_lines() {
        tracing::error!(target: "teaagent", "{text}");
    } else {
        teaagent_core::logging::stderr::write(format!("teaagent: {text}\n").as_bytes());
    }
}
