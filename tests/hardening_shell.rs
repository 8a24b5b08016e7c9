//! Hardening (issue 10): the shell attack classes, each against the real binary.
