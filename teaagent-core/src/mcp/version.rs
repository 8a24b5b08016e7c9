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
    /// `2025-11-25`.
    V2025_11_25,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest supported version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// Parses a supported version string exactly.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Negotiation: the client's version when supported, else the newest. Never an error (the
    /// client decides whether it can speak the answer).
    pub fn negotiate(requested: &str) -> Self {
        Self::parse(requested).unwrap_or(Self::LATEST)
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
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::negotiate(v.as_str()), v);
        }
        assert_eq!(ProtocolVersion::negotiate("1999-01-01"), ProtocolVersion::LATEST);
        assert_eq!(ProtocolVersion::negotiate(""), ProtocolVersion::LATEST);
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
        assert_eq!(as_results, ["2025-11-25"]);
        assert!(ProtocolVersion::LATEST.refuses_arguments_as_results());
    }
}
