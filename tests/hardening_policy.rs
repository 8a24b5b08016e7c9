//! Hardening (issue 10): the policy attack classes, each against the real binary.
