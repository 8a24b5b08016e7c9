//! insta settings shared by every snapshot test: snapshots live in the top-level `snapshots/`
//! directory (an absolute path built from `CARGO_MANIFEST_DIR`), maps are sorted, and nothing
//! says where on disk the test ran.

use std::path::PathBuf;

/// The top-level `snapshots/` directory.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../snapshots")
}

/// Runs `f` with the project's insta settings.
pub fn with_settings<R>(f: impl FnOnce() -> R) -> R {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_sort_maps(true);
    settings.set_omit_expression(true);
    settings.bind(f)
}
