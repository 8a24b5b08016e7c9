//! What a tool author's server compiles (issue 11, item 4): teaagent-core's normal dependency
//! tree without features, as `cargo tree` resolves it from the lock file (offline, no build).
//!
//! - Without `builtin-tools` none of the built-in tools' crates is in the tree (ripgrep's
//!   engine, `ignore`, `mime_guess`, `base64`).
//! - With `builtin-tools` they are there (so the first check cannot pass by reading nothing).
//!
//! The measured side-by-side with rmcp (crates, build time, binary size) is
//! `cargo bench -p teaagent-core --bench footprint`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Crates only the built-in tools and workspace resources need.
const BUILTIN_ONLY: [&str; 6] =
    ["ignore", "grep-searcher", "grep-regex", "grep-matcher", "mime_guess", "base64"];

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
    for krate in ["ignore", "grep-searcher", "grep-regex", "mime_guess", "base64"] {
        assert!(names(&full).contains(krate), "builtin-tools no longer pulls {krate}: update BUILTIN_ONLY");
    }
    assert!(full.len() > lean.len());
}
