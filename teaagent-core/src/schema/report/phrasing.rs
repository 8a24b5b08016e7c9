//! Counted nouns and lists, as messages say them: `1 item`, `a, b or c`, at most
//! [`MAX_LISTED`] entries.

/// Most allowed values (or known properties) listed in one message.
const MAX_LISTED: usize = 24;

/// `1 character`, `2 characters`.
pub(super) fn units(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `a, b, c`, at most [`MAX_LISTED`] of them.
pub(super) fn listed(items: &[String]) -> String {
    capped(items).join(", ")
}

/// `items`, at most [`MAX_LISTED`] of them, the last saying how many more there were.
pub(super) fn capped(items: &[String]) -> Vec<String> {
    if items.len() <= MAX_LISTED {
        return items.to_vec();
    }
    let mut shown = items[..MAX_LISTED].to_vec();
    shown.push(format!("{} more", items.len() - MAX_LISTED));
    shown
}

/// Drops repeats, keeping the first of each.
pub(super) fn dedup_keep_order(items: &mut Vec<String>) {
    let mut seen = Vec::new();
    items.retain(|item| {
        if seen.contains(item) {
            false
        } else {
            seen.push(item.clone());
            true
        }
    });
}
