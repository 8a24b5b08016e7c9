//! The change `--dry-run` shows: one hunk of a unified diff around the lines that differ (an
//! edit changes one entry, so the lines before and after it are common), every line escaped
//! ([`teaagent_core::visible::escape`]).

use teaagent_core::visible;

/// Lines of context around the change.
const CONTEXT: usize = 3;

/// `old` → `new` as a unified diff of `label` (`old` is `None` for a file not yet created).
pub(super) fn unified(label: &str, old: Option<&str>, new: &str) -> String {
    let before: Vec<&str> = old.unwrap_or_default().lines().collect();
    let after: Vec<&str> = new.lines().collect();
    let prefix = before.iter().zip(&after).take_while(|(a, b)| a == b).count();
    let room = before.len().min(after.len()) - prefix;
    let suffix = before.iter().rev().zip(after.iter().rev()).take(room).take_while(|(a, b)| a == b).count();
    let start = prefix.saturating_sub(CONTEXT);
    let old_end = (before.len() - suffix + CONTEXT).min(before.len());
    let new_end = (after.len() - suffix + CONTEXT).min(after.len());
    let mut out = String::new();
    out.push_str(&format!("--- {}\n", if old.is_some() { label.to_owned() } else { "/dev/null".to_owned() }));
    out.push_str(&format!("+++ {label}\n"));
    let range = |from: usize, to: usize| {
        let count = to - from;
        format!("{},{count}", if count == 0 { from } else { from + 1 })
    };
    out.push_str(&format!("@@ -{} +{} @@\n", range(start, old_end), range(start, new_end)));
    for line in &before[start..prefix] {
        out.push_str(&format!(" {}\n", visible::escape(line)));
    }
    for line in &before[prefix..before.len() - suffix] {
        out.push_str(&format!("-{}\n", visible::escape(line)));
    }
    for line in &after[prefix..after.len() - suffix] {
        out.push_str(&format!("+{}\n", visible::escape(line)));
    }
    for line in &after[after.len() - suffix..new_end] {
        out.push_str(&format!(" {}\n", visible::escape(line)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nX\nf\ng\nh\n";
        assert_eq!(
            unified("f", Some(old), new),
            "--- f\n+++ f\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n"
        );
        assert_eq!(unified("f", None, "x\n"), "--- /dev/null\n+++ f\n@@ -0,0 +1,1 @@\n+x\n");
        assert_eq!(unified("f", Some("a\nb\n"), "a\nb\nc\n"), "--- f\n+++ f\n@@ -1,2 +1,3 @@\n a\n b\n+c\n");
        assert!(unified("f", Some("a\u{1b}[2J\n"), "b\n").contains("-a\\e[2J"));
    }
}
