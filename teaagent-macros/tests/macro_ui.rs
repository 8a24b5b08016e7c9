//! The `#[tool]` attribute's diagnostics: one file per mistake in `tests/ui/fail/`, named after it,
//! with the exact compiler output it must produce beside it (`.stderr`); and `tests/ui/pass/`, which
//! must compile and run. The `.stderr` files were written with the toolchain pinned in
//! `rust-toolchain.toml`; regenerate them with `TRYBUILD=overwrite` after reviewing a change.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
