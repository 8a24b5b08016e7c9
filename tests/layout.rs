//! Every test file runs. The files of this directory are modules of one test binary
//! (`end_to_end.rs`), and the compiler ignores a file that no `mod` names: a new test file left
//! out of that list, or a set-up left out of `common/mod.rs`, would pass by never running.

use std::collections::BTreeSet;
use std::path::Path;

/// The `.rs` files directly in `dir`, by module name, without `skip`.
fn files(dir: &Path, skip: &[&str]) -> BTreeSet<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    entries
        .map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|name| !skip.contains(&name.as_str()))
        .collect()
}

/// The modules `file` declares (`mod name;` and `pub(crate) mod name;` lines).
fn declared(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    text.lines()
        .filter_map(|line| line.trim_start_matches("pub(crate) ").strip_prefix("mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

fn assert_same(dir: &str, files: BTreeSet<String>, list: &str, declared: BTreeSet<String>) {
    let missing: Vec<_> = files.difference(&declared).collect();
    let gone: Vec<_> = declared.difference(&files).collect();
    assert!(missing.is_empty(), "files of {dir} that {list} does not name, so they never run: {missing:?}");
    assert!(gone.is_empty(), "modules {list} names without a file in {dir}: {gone:?}");
}

#[test]
fn every_test_file_and_set_up_is_a_module_of_the_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = declared(&tests.join("end_to_end.rs"));
    assert!(roots.remove("common"), "end_to_end.rs declares `mod common;`");
    assert_same("tests/", files(tests, &["end_to_end"]), "end_to_end.rs", roots);
    let common = tests.join("common");
    assert_same("tests/common/", files(&common, &["mod"]), "common/mod.rs", declared(&common.join("mod.rs")));
}
