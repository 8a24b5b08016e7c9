//! A rule's tool pattern (`read_file`, `read_*`, `ext__*`, `{read,write}_file`), matched against a
//! tool's name or a scope (`resources/read`).
//!
//! Most patterns are a plain name or a name with `*` wildcards; those are matched directly. Any
//! other glob syntax (`?`, classes, alternatives, escapes) goes through `globset`, whose rules
//! every pattern follows: `*` matches any run of characters, `/` included. Compiling a glob is a
//! regular expression built at start (a few hundred microseconds for each `--grant`, before the
//! first answer); the direct match needs nothing built.

use globset::{Glob, GlobMatcher};

/// A tool pattern, checked as a glob when it was made.
#[derive(Debug, Clone)]
pub(crate) struct ToolGlob {
    text: String,
    /// `None`: only literal characters and `*`, matched by [`wildcard_match`].
    compiled: Option<GlobMatcher>,
}

impl ToolGlob {
    /// The pattern `text`, or why it is not a glob.
    pub(crate) fn new(text: &str) -> Result<Self, globset::Error> {
        let glob = Glob::new(text)?;
        let simple = !text.contains("**") && !text.contains(['?', '[', ']', '{', '}', '\\']);
        Ok(Self { text: text.to_owned(), compiled: (!simple).then(|| glob.compile_matcher()) })
    }

    /// Whether `name` matches the whole pattern.
    pub(crate) fn is_match(&self, name: &str) -> bool {
        match &self.compiled {
            Some(glob) => glob.is_match(name),
            None => wildcard_match(self.text.as_bytes(), name.as_bytes()),
        }
    }

    /// The pattern as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of bytes (none included) and every
/// other byte itself. The last `*` seen is the only one ever moved on, so the work is at most
/// the product of the two lengths.
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where the last `*` was, and the text position it has taken up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((at, taken)) = star {
            p = at + 1;
            t = taken + 1;
            star = Some((at, taken + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_wildcards() {
        let m = |pattern: &str, name: &str| ToolGlob::new(pattern).expect("glob").is_match(name);
        assert!(m("read_file", "read_file"));
        assert!(!m("read_file", "read_files"));
        assert!(!m("read_file", "xread_file"));
        assert!(m("read_*", "read_file") && m("read_*", "read_") && !m("read_*", "rea"));
        assert!(m("*", "resources/read") && m("*", ""));
        assert!(m("ext__*__x", "ext__a__b__x") && !m("ext__*__x", "ext__x"));
        assert!(m("{read,write}_file", "write_file") && !m("{read,write}_file", "move_file"));
        assert!(m("?ead_file", "read_file"));
        assert!(ToolGlob::new("[").is_err());
    }

    proptest! {
        /// Every pattern the direct match takes means what `globset` says it means.
        #[test]
        fn the_direct_match_agrees_with_globset(pattern in "[ab_/*]{0,8}", name in "[ab_/]{0,10}") {
            prop_assume!(!pattern.contains("**"));
            let globset = Glob::new(&pattern).expect("glob").compile_matcher();
            let ours = ToolGlob::new(&pattern).expect("glob");
            prop_assert!(ours.compiled.is_none());
            prop_assert_eq!(ours.is_match(&name), globset.is_match(&name), "{} against {}", pattern, name);
        }
    }
}
