//! Property test of confinement on a real tree full of links: whatever relative path, absolute
//! path or resource URI is thrown at it, a resolution that succeeds names something inside the
//! root (checked by asking the kernel where the resolved entry really is).

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use teaagent_core::Workspace;
use teaagent_core::workspace::{Target, uri};
use teaagent_tests::Tree;

fn tree() -> Tree {
    let tree = Tree::new();
    tree.write("ws/src/deep/b.txt", "b\n");
    tree.symlink("ws/leak", tree.path("outside/secret.txt"));
    tree.symlink("ws/linkdir", tree.path("outside"));
    tree.symlink("ws/src/up", "..");
    tree.symlink("ws/src/out", "../../outside");
    tree.symlink("ws/inside", "src/deep");
    tree.symlink("ws/abs-inside", tree.path("ws/src"));
    tree.symlink("ws/evil", tree.path("ws-evil"));
    tree.symlink("ws/loop1", "loop2");
    tree.symlink("ws/loop2", "loop1");
    tree
}

const PARTS: &[&str] = &[
    "src",
    "deep",
    "b.txt",
    "a.txt",
    "..",
    ".",
    "",
    "leak",
    "linkdir",
    "up",
    "out",
    "inside",
    "abs-inside",
    "evil",
    "loop1",
    "ws",
    "outside",
    "secret.txt",
    "new",
    "~",
    "\u{2024}\u{2024}",
];

/// Where `relative` under `root` really is: the canonical path of its longest existing prefix.
fn really(root: &Path, relative: &Path) -> PathBuf {
    let mut probe = root.join(relative);
    loop {
        if let Ok(canonical) = probe.canonicalize() {
            return canonical;
        }
        if !probe.pop() {
            return PathBuf::from("/");
        }
    }
}

fn check(workspace: &Workspace, root: &Path, input: &Path) -> Result<(), TestCaseError> {
    for resolved in
        [workspace.resolve(input), workspace.resolve_for_create(input), workspace.resolve_no_follow(input)]
            .into_iter()
            .flatten()
    {
        // A link not followed is itself the entry: where it sits is what must be inside.
        let entry = if resolved.target() == Target::Symlink {
            resolved.relative().parent().unwrap_or(Path::new(""))
        } else {
            resolved.relative()
        };
        let where_ = really(root, entry);
        prop_assert!(
            where_.starts_with(root),
            "{input:?} resolved to {:?}, really {where_:?}",
            resolved.relative()
        );
        if let Target::File { .. } = resolved.target() {
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut resolved.open_read().map_err(|e| TestCaseError::fail(e.to_string()))?,
                &mut text,
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(!text.contains("secret") && !text.contains("evil"), "{input:?} read {text:?}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn paths_never_resolve_outside(parts in proptest::collection::vec(proptest::sample::select(PARTS), 1..8), absolute in 0..3u8) {
        let tree = tree();
        let root = tree.root();
        let workspace = Workspace::open(&root).expect("workspace");
        let joined = parts.join("/");
        let input = match absolute {
            0 => PathBuf::from(joined),
            1 => root.join(joined),
            _ => tree.base().join(joined),
        };
        check(&workspace, &root, &input)?;
    }

    #[test]
    fn uris_never_resolve_outside(parts in proptest::collection::vec(proptest::sample::select(&["src", "deep", "b.txt", "%2e%2e", "%2E", "%2f", "..", ".", "", "leak", "up", "out", "inside", "%00", "?", "#", "a%20b", "evil", "%"][..]), 1..6)) {
        let tree = tree();
        let root = tree.root();
        let workspace = Workspace::open(&root).expect("workspace");
        let text = format!("{}{}", uri::PREFIX, parts.join("/"));
        if let Ok(relative) = uri::parse(&text) {
            prop_assert!(relative.is_relative());
            check(&workspace, &root, &relative)?;
        }
    }
}
