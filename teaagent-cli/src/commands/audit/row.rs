//! One audit record as `teaagent audit` reads it (the fields it shows or filters on; the others
//! are left as they are), the filters, and the table row a person reads: every value from the
//! log escaped and bounded, since whoever could call a tool chose the tool's name and the text
//! of many rules.

use std::time::SystemTime;

use serde::Deserialize;
use teaagent_core::visible;

/// The fields of a record the viewer uses (`teaagent_core::policy::audit`, "Records").
#[derive(Debug, Deserialize)]
pub(super) struct Record {
    time: String,
    tool: String,
    outcome: String,
    rule: String,
    #[serde(default)]
    principal: Option<String>,
    #[serde(default)]
    duration_ms: Option<f64>,
}

/// A record parsed, with its time.
#[derive(Debug)]
pub(super) struct Parsed {
    record: Record,
    at: SystemTime,
}

/// Why a line is not a record (the viewer reports it with its file and line, and goes on).
pub(super) fn parse(line: &[u8]) -> Result<Parsed, String> {
    let record: Record = serde_json::from_slice(line).map_err(|e| format!("not an audit record: {e}"))?;
    let at = humantime::parse_rfc3339_weak(&record.time)
        .map_err(|e| format!("`time` is not an RFC 3339 time ({e})"))?;
    Ok(Parsed { record, at })
}

/// Which records are shown (`--since`, `--tool`, `--decision`).
#[derive(Debug, Default)]
pub(super) struct Filter {
    pub(super) since: Option<SystemTime>,
    pub(super) tool: Option<String>,
    pub(super) decision: Option<String>,
}

impl Filter {
    pub(super) fn keeps(&self, p: &Parsed) -> bool {
        self.since.is_none_or(|since| p.at >= since)
            && self.tool.as_deref().is_none_or(|tool| p.record.tool == tool)
            && self.decision.as_deref().is_none_or(|d| p.record.outcome == d)
    }
}

/// The table's columns. The rule is last: it is the longest, and needs no padding.
pub(super) const HEADER: [&str; 6] = ["TIME", "CALLER", "TOOL", "DECISION", "DURATION", "RULE"];

/// How a record without a principal shows its caller: the transport named none (stdio,
/// `teaagent run`, HTTP without tokens or OAuth).
pub(super) const NO_PRINCIPAL: &str = "-";

/// The cells of a record's row, escaped, each bounded.
pub(super) fn cells(p: &Parsed) -> [String; 6] {
    let r = &p.record;
    [
        humantime::format_rfc3339_millis(p.at).to_string(),
        r.principal.as_deref().map_or_else(|| NO_PRINCIPAL.to_owned(), |p| visible::bounded(p, 40)),
        visible::bounded(&r.tool, 48),
        visible::bounded(&r.outcome, 24),
        r.duration_ms.map_or_else(|| "-".to_owned(), duration),
        visible::bounded(&r.rule, 200),
    ]
}

/// A duration in milliseconds as a person reads it: `0.412ms`, `12.5ms`, `1.52s`, `3m04s`.
pub(super) fn duration(ms: f64) -> String {
    if !ms.is_finite() || ms < 0.0 {
        return "?".to_owned();
    }
    match ms {
        ms if ms < 1.0 => format!("{ms:.3}ms"),
        ms if ms < 1000.0 => format!("{ms:.1}ms"),
        ms if ms < 60_000.0 => format!("{:.2}s", ms / 1000.0),
        ms => {
            let secs = (ms / 1000.0) as u64;
            format!("{}m{:02}s", secs / 60, secs % 60)
        }
    }
}

/// The colour of an outcome on a terminal (ANSI SGR): green ran or may run, red refused or
/// failed, yellow held back by a limit or the lock, cyan waiting for an answer.
pub(super) fn colour(outcome: &str) -> Option<&'static str> {
    match outcome {
        "allowed" | "completed" => Some("32"),
        "denied" | "refused" | "failed" => Some("31"),
        "rate_limited" | "locked" => Some("33"),
        "input_required" => Some("36"),
        _ => None,
    }
}

/// `--since`: a duration back from now (`1h`, `30m`, `2days`) or a time (RFC 3339, e.g.
/// `2026-12-05T10:00:00Z`).
pub(crate) fn parse_since(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Ok(ago) = humantime::parse_duration(text) {
        return Ok(SystemTime::now().checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH));
    }
    humantime::parse_rfc3339_weak(text).map_err(|_| {
        "expected a duration back from now (`1h`, `30m`, `2days`) or a time (`2026-12-05T10:00:00Z`)".into()
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const LINE: &str = r#"{"time":"2026-12-05T10:39:23.123Z","tool":"write_file","tier":"medium","digest":"sha256:00","mode":"read-only","rule":"tool `write_file` may write","outcome":"denied"}"#;

    #[test]
    fn a_record_becomes_a_row_and_a_hostile_one_is_escaped() {
        let parsed = parse(LINE.as_bytes()).expect("a record");
        let row = cells(&parsed);
        assert_eq!(row[0], "2026-12-05T10:39:23.123Z");
        assert_eq!(row[1], NO_PRINCIPAL);
        assert_eq!(row[2..5], ["write_file", "denied", "-"]);
        let hostile = LINE.replace("write_file\",\"tier", "x\\u001b[2J\\u202ey\",\"tier").replace(
            "\"outcome\":\"denied\"",
            "\"outcome\":\"completed\",\"duration_ms\":12.5,\"principal\":\"token:a\\nb\"",
        );
        let row = cells(&parse(hostile.as_bytes()).expect("a record"));
        assert_eq!(row[1..5], ["token:a\\nb", "x\\e[2J\\u{202e}y", "completed", "12.5ms"]);
        let long = LINE.replace("may write", &"w".repeat(5000));
        assert!(cells(&parse(long.as_bytes()).expect("a record"))[5].contains("more characters"));
    }

    #[test]
    fn what_is_not_a_record_says_why() {
        assert!(parse(b"{\"time\":").expect_err("torn").starts_with("not an audit record"));
        assert!(parse(b"[1]").is_err());
        let bad_time = LINE.replace("2026-12-05T10:39:23.123Z", "yesterday");
        assert!(parse(bad_time.as_bytes()).expect_err("time").contains("RFC 3339"));
    }

    #[test]
    fn filters_combine() {
        let p = parse(LINE.as_bytes()).expect("a record");
        assert!(Filter::default().keeps(&p));
        let at = humantime::parse_rfc3339("2026-12-05T10:39:23Z").expect("time");
        assert!(Filter { since: Some(at), ..Filter::default() }.keeps(&p));
        assert!(!Filter { since: Some(at + Duration::from_secs(1)), ..Filter::default() }.keeps(&p));
        assert!(
            Filter { tool: Some("write_file".into()), decision: Some("denied".into()), ..Filter::default() }
                .keeps(&p)
        );
        assert!(!Filter { decision: Some("allowed".into()), ..Filter::default() }.keeps(&p));
        assert!(!Filter { tool: Some("write".into()), ..Filter::default() }.keeps(&p));
    }

    #[test]
    fn durations_and_since_read_as_a_person_writes_them() {
        assert_eq!(duration(0.412), "0.412ms");
        assert_eq!(duration(12.46), "12.5ms");
        assert_eq!(duration(1520.0), "1.52s");
        assert_eq!(duration(184_000.0), "3m04s");
        assert_eq!(duration(f64::NAN), "?");
        let hour_ago = parse_since("1h").expect("1h");
        let age = SystemTime::now().duration_since(hour_ago).expect("past");
        assert!(age >= Duration::from_secs(3600) && age < Duration::from_secs(3700));
        assert_eq!(
            parse_since("2026-12-05T10:00:00Z"),
            humantime::parse_rfc3339("2026-12-05T10:00:00Z").map_err(|e| e.to_string())
        );
        assert!(parse_since("soon").expect_err("bad").contains("1h"));
    }
}
