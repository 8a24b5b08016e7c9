//! Protocol versions and their negotiation.

use std::fmt;

/// A protocol version this server supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first public version.
    V2024_11_05,
    /// `2025-03-26`: annotations, JSON-RPC batches, progress messages.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, titles; batches removed.
    V2025_06_18,
    /// `2025-11-25`, the newest version of the legacy era (with `initialize`).
    V2025_11_25,
    /// `2026-07-28`, the modern era: no `initialize` and no session; every request carries its
    /// version and the client's capabilities in `_meta`, and `server/discover` tells what the
    /// server speaks.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The versions of the legacy era, negotiated by `initialize`, oldest first.
    pub const LEGACY: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The versions of the modern era, named in each request's `_meta` and listed by
    /// `server/discover`, newest first.
    pub const MODERN: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest supported version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest legacy version: what `initialize` answers to a version it does not know
    /// (`2026-07-28` included, which has no `initialize`).
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a supported version string exactly.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// `initialize`'s negotiation: the client's version when it is a legacy one, else the
    /// newest legacy version. Never an error (the client decides whether it can speak the
    /// answer).
    pub fn negotiate(requested: &str) -> Self {
        Self::LEGACY.into_iter().find(|v| v.as_str() == requested).unwrap_or(Self::LATEST_LEGACY)
    }

    /// Whether this is a version of the modern era (`2026-07-28` on).
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Whether arguments that fail the input schema are answered as a tool result with
    /// `isError: true` (SEP-1303, from `2025-11-25` on, and in every later version) rather
    /// than as a `-32602` error (up to `2025-06-18`). Either way the report is the same; see
    /// [`Error::InvalidArguments`](crate::error::Error::InvalidArguments).
    pub fn refuses_arguments_as_results(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// Whether JSON-RPC batches are allowed (only `2025-03-26` has them).
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_supported_else_newest() {
        for v in ProtocolVersion::LEGACY {
            assert_eq!(ProtocolVersion::negotiate(v.as_str()), v);
        }
        assert_eq!(ProtocolVersion::negotiate("1999-01-01"), ProtocolVersion::LATEST_LEGACY);
        assert_eq!(ProtocolVersion::negotiate(""), ProtocolVersion::LATEST_LEGACY);
        // `initialize` never negotiates the modern era, which has no `initialize`.
        assert_eq!(ProtocolVersion::negotiate("2026-07-28"), ProtocolVersion::V2025_11_25);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
    }

    #[test]
    fn argument_refusals_are_results_from_2025_11_25_on() {
        let as_results: Vec<&str> = ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.refuses_arguments_as_results())
            .map(ProtocolVersion::as_str)
            .collect();
        assert_eq!(as_results, ["2025-11-25", "2026-07-28"]);
        assert!(ProtocolVersion::LATEST.refuses_arguments_as_results());
    }
}
