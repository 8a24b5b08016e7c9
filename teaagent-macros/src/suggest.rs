//! "Did you mean": the known word closest to a misspelled one, for the messages of `attr` and
//! `check` (`readonly` → `read_only`, `idempotnet` → `idempotent`, `readOnlyHint` → `read_only`).
//!
//! Words are compared after [`normalize`], then by a prefix of at least four letters (`timeout` →
//! `timeout_secs`), then by edit distance with a swap of two neighbours counted as one edit, at
//! most one edit per three letters of the known word (so `name` takes one, `description` three).

/// The candidate `typo` most likely stands for, if one is close enough.
pub(crate) fn closest<'a>(typo: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let typo = normalize(typo);
    if typo.is_empty() {
        return None;
    }
    let normalized: Vec<(&'a str, String)> = candidates.iter().map(|c| (*c, normalize(c))).collect();
    if let Some((c, _)) = normalized.iter().find(|(_, n)| *n == typo) {
        return Some(c);
    }
    let prefix = |short: &str, long: &str| short.len() >= 4 && long.starts_with(short);
    if let Some((c, _)) = normalized.iter().find(|(_, n)| prefix(&typo, n) || prefix(n, &typo)) {
        return Some(c);
    }
    normalized
        .iter()
        .map(|(c, n)| (*c, distance(&typo, n), n.len()))
        .filter(|&(_, d, len)| d <= (len.max(3) / 3))
        .min_by_key(|&(_, d, _)| d)
        .map(|(c, _, _)| c)
}

/// Lower case, without `_` and `-`, and without the `Hint` of MCP's annotation names
/// (`readOnlyHint`, `openWorldHint`, ...), which the flags set.
fn normalize(word: &str) -> String {
    let word: String = word.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect();
    match word.strip_suffix("hint") {
        Some(stem) if !stem.is_empty() => stem.to_owned(),
        _ => word,
    }
}

/// The number of insertions, deletions, substitutions and swaps of two neighbours that turn `a`
/// into `b` (optimal string alignment distance).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the table: two rows back (for swaps), the previous one, the current one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1).min(current[j - 1] + 1).min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                current[j] = current[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &[
        "name",
        "description",
        "title",
        "tier",
        "read_only",
        "destructive",
        "idempotent",
        "stateful",
        "open_world",
        "rate_limit",
        "timeout_secs",
        "unregistered",
        "crate",
    ];

    #[test]
    fn finds_what_was_meant() {
        for (typo, meant) in [
            ("readonly", "read_only"),
            ("ReadOnly", "read_only"),
            ("read-only", "read_only"),
            ("readOnlyHint", "read_only"),
            ("openWorldHint", "open_world"),
            ("destructiveHint", "destructive"),
            ("idempotnet", "idempotent"),
            ("idempotant", "idempotent"),
            ("destrutive", "destructive"),
            ("statefull", "stateful"),
            ("timeout", "timeout_secs"),
            ("ratelimit", "rate_limit"),
            ("rate_limits", "rate_limit"),
            ("descripton", "description"),
            ("desc", "description"),
            ("krate", "crate"),
            ("unregistred", "unregistered"),
        ] {
            assert_eq!(closest(typo, KEYS), Some(meant), "{typo}");
        }
    }

    #[test]
    fn stays_quiet_when_nothing_is_close() {
        for typo in ["cached", "fast", "x", "hint", "_", "version", "async"] {
            assert_eq!(closest(typo, KEYS), None, "{typo}");
        }
    }

    #[test]
    fn counts_a_swap_as_one_edit() {
        assert_eq!(distance("idempotnet", "idempotent"), 1);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
