//! Runtime limits of a server, with their defaults and their ranges.
//!
//! Every builder method keeps its value within a documented range (a value outside is brought
//! to the nearest bound), so no setting can make the server panic (a semaphore of `usize::MAX`
//! permits) or stop working (a page of zero entries, a zero timeout):
//!
//! | setting | range |
//! |---|---|
//! | [`ServerConfig::max_line_bytes`] | 1 byte to 1 GiB |
//! | [`ServerConfig::max_in_flight`] | 1 to 65,536 |
//! | [`ServerConfig::max_queued`] | 0 to 1,048,576 |
//! | [`ServerConfig::default_tool_timeout`] | 1 ms to 1 day |
//! | [`ServerConfig::shutdown_grace`] | 0 to 10 minutes |
//! | [`ServerConfig::tools_page_size`] | 1 to 10,000 |
//! | [`ServerConfig::slow_poll`] | 1 ms to 1 hour |
//! | [`ServerConfig::per_caller`] | see [`CallerLimits`] |
//!
//! Per-tool overrides come from configuration files, whose values the `teaagent` command checks
//! against its own ranges before they get here (exit 2 with the key, the file and the range).

use std::collections::HashMap;
use std::time::Duration;

use crate::session::CallerLimits;
use crate::tool::{RateLimit, ToolDef};

/// How a server behaves under load and at its edges.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Longest accepted line in bytes; longer lines are refused with `-32600` without being
    /// buffered. Default 16 MiB.
    pub max_line_bytes: usize,
    /// Tool calls and resource reads running at once; more wait their turn (FIFO) while cheap
    /// methods (`ping`, lists) are answered at once. Default 64.
    pub max_in_flight: usize,
    /// Calls allowed to wait for a turn beyond `max_in_flight`; past that a call is refused with
    /// `-32000` (`reason: "overloaded"`) instead of growing memory without bound. Default 4096.
    pub max_queued: usize,
    /// Timeout of a tool call when neither the tool nor the configuration sets one. Default 300 s.
    pub default_tool_timeout: Duration,
    /// How long in-flight calls may finish after stdin EOF, SIGINT or SIGTERM. Default 3 s.
    pub shutdown_grace: Duration,
    /// Entries per `tools/list` page. Default 100.
    pub tools_page_size: usize,
    /// `instructions` sent in the `initialize` result.
    pub instructions: Option<String>,
    /// Per-tool overrides of the declared rate limit and timeout (from configuration).
    pub tool_overrides: HashMap<String, ToolOverride>,
    /// A poll of an async tool's future that takes longer than this blocked the server's thread:
    /// the tool is named in a warning and its later calls run on a thread of their own (see
    /// the `server` module docs, "Tools that block"). Default 100 ms.
    pub slow_poll: Duration,
    /// How much of the server one caller may hold at once, where the transport knows callers
    /// (Streamable HTTP): calls in progress, approval questions open, `subscriptions/listen`
    /// streams. Over stdio there is one client and these do not apply.
    pub per_caller: CallerLimits,
}

/// What configuration may change about one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolOverride {
    /// Replaces the tool's declared rate limit.
    pub rate_limit: Option<RateLimit>,
    /// Replaces the tool's timeout.
    pub timeout: Option<Duration>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: 16 * 1024 * 1024,
            max_in_flight: 64,
            max_queued: 4096,
            default_tool_timeout: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(3),
            tools_page_size: 100,
            instructions: None,
            tool_overrides: HashMap::new(),
            slow_poll: Duration::from_millis(100),
            per_caller: CallerLimits::default(),
        }
    }
}

impl ServerConfig {
    /// Sets [`ServerConfig::max_line_bytes`] (1 byte to 1 GiB).
    pub fn max_line_bytes(mut self, n: usize) -> Self {
        self.max_line_bytes = n.clamp(1, 1 << 30);
        self
    }
    /// Sets [`ServerConfig::max_in_flight`] (1 to 65,536).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.clamp(1, 1 << 16);
        self
    }
    /// Sets [`ServerConfig::max_queued`] (0 to 1,048,576).
    pub fn max_queued(mut self, n: usize) -> Self {
        self.max_queued = n.min(1 << 20);
        self
    }
    /// Sets [`ServerConfig::default_tool_timeout`] (1 ms to 1 day).
    pub fn default_tool_timeout(mut self, d: Duration) -> Self {
        self.default_tool_timeout = d.clamp(Duration::from_millis(1), Duration::from_secs(86_400));
        self
    }
    /// Sets [`ServerConfig::shutdown_grace`] (0 to 10 minutes).
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d.min(Duration::from_secs(600));
        self
    }
    /// Sets [`ServerConfig::tools_page_size`] (1 to 10,000).
    pub fn tools_page_size(mut self, n: usize) -> Self {
        self.tools_page_size = n.clamp(1, 10_000);
        self
    }
    /// Sets [`ServerConfig::slow_poll`] (1 ms to 1 hour).
    pub fn slow_poll(mut self, d: Duration) -> Self {
        self.slow_poll = d.clamp(Duration::from_millis(1), Duration::from_secs(3600));
        self
    }
    /// Sets [`ServerConfig::per_caller`] (each limit within its range, see [`CallerLimits`]).
    pub fn per_caller(mut self, limits: CallerLimits) -> Self {
        self.per_caller = limits;
        self
    }
    /// Overrides a tool's rate limit and/or timeout (as given: the caller checks them).
    pub fn tool_override(mut self, tool: impl Into<String>, o: ToolOverride) -> Self {
        self.tool_overrides.insert(tool.into(), o);
        self
    }

    /// The timeout of a call of `tool`: the override, else the tool's own, else the default.
    pub fn timeout_for(&self, tool: &ToolDef) -> Duration {
        let overridden = if self.tool_overrides.is_empty() {
            None
        } else {
            self.tool_overrides.get(tool.name()).and_then(|o| o.timeout)
        };
        overridden.or(tool.timeout()).unwrap_or(self.default_tool_timeout)
    }

    /// Sets [`ServerConfig::instructions`].
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_stays_in_its_range() {
        let high = ServerConfig::default()
            .max_line_bytes(usize::MAX)
            .max_in_flight(usize::MAX)
            .max_queued(usize::MAX)
            .default_tool_timeout(Duration::MAX)
            .shutdown_grace(Duration::MAX)
            .tools_page_size(usize::MAX)
            .slow_poll(Duration::MAX);
        assert_eq!(
            (high.max_line_bytes, high.max_in_flight, high.max_queued, high.tools_page_size),
            (1 << 30, 1 << 16, 1 << 20, 10_000)
        );
        assert_eq!(
            (high.default_tool_timeout, high.shutdown_grace),
            (Duration::from_secs(86_400), Duration::from_secs(600))
        );
        assert_eq!(high.slow_poll, Duration::from_secs(3600));
        let low = ServerConfig::default()
            .max_line_bytes(0)
            .max_in_flight(0)
            .default_tool_timeout(Duration::ZERO)
            .tools_page_size(0)
            .slow_poll(Duration::ZERO);
        assert_eq!((low.max_line_bytes, low.max_in_flight, low.tools_page_size), (1, 1, 1));
        assert_eq!(
            (low.default_tool_timeout, low.slow_poll),
            (Duration::from_millis(1), Duration::from_millis(1))
        );
    }
}
