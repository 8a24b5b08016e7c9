//! Hardening (issue 10): the workspace attack classes, each against the real binary.
