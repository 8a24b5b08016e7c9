//! Hardening (issue 10): the state attack classes, each against the real binary.
