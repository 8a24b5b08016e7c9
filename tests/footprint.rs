//! What a tool author's server compiles: teaagent-core's normal dependency
//! tree without features, as `cargo tree` resolves it from the lock file (offline, no build).
//!
//! - Without `builtin-tools` none of the built-in tools' crates is in the tree (ripgrep's
//!   engine, `ignore`, `mime_guess`, `base64`), and the tree stays within the budget: a
//!   server crate on top of teaagent-core has at most [`BUDGET`] distinct crates, itself included.
//! - With `builtin-tools` they are there (so the first check cannot pass by reading nothing).
//!
//! The measured side-by-side with rmcp (crates, build time, binary size) is
//! `cargo bench -p teaagent-core --bench footprint`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Distinct crates (name and version) in a one-tool server's normal dependency tree, the
/// server's own crate included (the README promises "the echo example's normal dependency tree ≤ 100").
const BUDGET: usize = 100;

/// Crates only the built-in tools and workspace resources need.
/// (`base64` is not among them: skills' files that are not text are read as base64 blobs by any
/// server, `teaagent_core::skill`.)
const BUILTIN_ONLY: [&str; 5] = ["ignore", "grep-searcher", "grep-regex", "grep-matcher", "mime_guess"];

/// `name version` of every crate in teaagent-core's normal dependency tree.
fn tree(features: &[&str]) -> BTreeSet<String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args([
        "tree",
        "--offline",
        "--locked",
        "-p",
        "teaagent-core",
        "-e",
        "normal",
        "--prefix",
        "none",
    ]);
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    let out = cmd.output().expect("run cargo tree");
    assert!(out.status.success(), "cargo tree failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let crates: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    assert!(
        crates.iter().any(|c| c.starts_with("teaagent-core ")),
        "unexpected cargo tree output: {crates:?}"
    );
    crates
}

fn names(crates: &BTreeSet<String>) -> BTreeSet<&str> {
    crates.iter().filter_map(|c| c.split(' ').next()).collect()
}

#[test]
fn without_builtin_tools_no_builtin_crate_is_compiled() {
    let lean = tree(&[]);
    let leaked: Vec<&str> = BUILTIN_ONLY.into_iter().filter(|c| names(&lean).contains(c)).collect();
    assert!(leaked.is_empty(), "teaagent-core without features pulls {leaked:?}:\n{lean:#?}");

    let full = tree(&["builtin-tools"]);
    for krate in ["ignore", "grep-searcher", "grep-regex", "mime_guess"] {
        assert!(names(&full).contains(krate), "builtin-tools no longer pulls {krate}: update BUILTIN_ONLY");
    }
    assert!(full.len() > lean.len());
}

#[test]
fn a_server_on_teaagent_core_stays_within_the_crate_budget() {
    let lean = tree(&[]);
    // teaagent-core's tree plus the server's own crate.
    assert!(
        lean.len() < BUDGET,
        "a server on teaagent-core now compiles {} crates, over the budget of {BUDGET}: \
         find what pulled the new ones (`cargo tree -p teaagent-core -e normal -i NAME`):\n{lean:#?}",
        lean.len() + 1
    );
}
