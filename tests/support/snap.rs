//! insta settings shared by every snapshot test: snapshots live in the top-level `snapshots/`
//! directory (an absolute path built from `CARGO_MANIFEST_DIR`), and nothing says where on disk
//! the test ran.

use std::path::PathBuf;

/// The top-level `snapshots/` directory.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../snapshots")
}

/// Runs `f` with the project's insta settings (maps sorted).
pub fn with_settings<R>(f: impl FnOnce() -> R) -> R {
    settings(true).bind(f)
}

/// Runs `f` with the project's settings but maps in their own order: for schemas, whose property
/// order (the declaration order) is part of what clients see.
pub fn with_settings_in_order<R>(f: impl FnOnce() -> R) -> R {
    settings(false).bind(f)
}

fn settings(sort_maps: bool) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_sort_maps(sort_maps);
    settings.set_omit_expression(true);
    settings
}
