//! [`Exposition`]: the Prometheus text exposition format (version 0.0.4), written by hand: a
//! family's `# HELP` and `# TYPE` lines, then its samples, `name{label="value",…} number`, one a
//! line. Label values are escaped (`\\`, `\"`, `\n`), and so is help text (`\\`, `\n`).

use std::fmt::Write as _;

use super::{Histogram, LATENCY_BUCKETS};

/// A family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (its name ends in `_total`).
    Counter,
    /// Goes up and down.
    Gauge,
    /// Buckets, a sum and a count.
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// The text of a scrape, written family by family.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// The `Content-Type` to answer with.
    pub const CONTENT_TYPE: &'static str = "text/plain; version=0.0.4; charset=utf-8";

    /// Nothing written yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the family `name`: its help and type lines. Its samples follow.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) -> &mut Self {
        let _ = write!(self.out, "# HELP {name} ");
        for c in help.chars() {
            match c {
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                c => self.out.push(c),
            }
        }
        let _ = writeln!(self.out, "\n# TYPE {name} {}", kind.as_str());
        self
    }

    /// One sample of the current family.
    pub fn sample(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        value: impl std::fmt::Display,
    ) -> &mut Self {
        self.out.push_str(name);
        self.labels(labels, None);
        let _ = writeln!(self.out, " {value}");
        self
    }

    /// A histogram's samples (`_bucket` for each bound and `+Inf`, `_sum`, `_count`) under the
    /// family `name`.
    pub fn histogram(&mut self, name: &str, labels: &[(&str, &str)], histogram: &Histogram) -> &mut Self {
        let cumulative = histogram.cumulative();
        for (i, count) in cumulative.iter().enumerate() {
            let le = match LATENCY_BUCKETS.get(i) {
                Some(bound) => bound.to_string(),
                None => "+Inf".to_owned(),
            };
            let _ = write!(self.out, "{name}_bucket");
            self.labels(labels, Some(&le));
            let _ = writeln!(self.out, " {count}");
        }
        let _ = write!(self.out, "{name}_sum");
        self.labels(labels, None);
        let _ = writeln!(self.out, " {}", histogram.sum_seconds());
        let _ = write!(self.out, "{name}_count");
        self.labels(labels, None);
        let _ = writeln!(self.out, " {}", histogram.count());
        self
    }

    /// The text.
    pub fn finish(self) -> String {
        self.out
    }

    fn labels(&mut self, labels: &[(&str, &str)], le: Option<&str>) {
        if labels.is_empty() && le.is_none() {
            return;
        }
        self.out.push('{');
        let all = labels.iter().copied().chain(le.map(|le| ("le", le)));
        for (i, (name, value)) in all.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str(name);
            self.out.push_str("=\"");
            escape_into(&mut self.out, value);
            self.out.push('"');
        }
        self.out.push('}');
    }
}

/// `value` as a label value: backslash, double quote and line feed escaped.
fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Counter;

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut text = Exposition::new();
        let c = Counter::default();
        c.inc();
        text.family("teaagent_x_total", Kind::Counter, "a \\ help\nline").sample(
            "teaagent_x_total",
            &[("server", "a\"b\\c\nd")],
            c.get(),
        );
        assert_eq!(
            text.finish(),
            "# HELP teaagent_x_total a \\\\ help\\nline\n# TYPE teaagent_x_total counter\n\
             teaagent_x_total{server=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }

    #[test]
    fn a_histogram_has_every_bucket_then_sum_and_count() {
        let h = Histogram::default();
        h.observe(std::time::Duration::from_millis(2));
        let mut text = Exposition::new();
        text.family("t_seconds", Kind::Histogram, "h").histogram("t_seconds", &[("tool", "echo")], &h);
        let text = text.finish();
        assert!(text.contains("t_seconds_bucket{tool=\"echo\",le=\"0.001\"} 0\n"), "{text}");
        assert!(text.contains("t_seconds_bucket{tool=\"echo\",le=\"0.0025\"} 1\n"), "{text}");
        assert!(text.contains("t_seconds_bucket{tool=\"echo\",le=\"+Inf\"} 1\n"), "{text}");
        assert!(text.contains("t_seconds_sum{tool=\"echo\"} 0.002\n"), "{text}");
        assert!(text.contains("t_seconds_count{tool=\"echo\"} 1\n"), "{text}");
    }
}
