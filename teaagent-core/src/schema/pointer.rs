//! JSON pointers (RFC 6901): one segment escaped, and pointers in document order.

use std::cmp::Ordering;

/// One JSON-pointer segment (RFC 6901).
pub(crate) fn escape_segment(key: &str) -> String {
    if key.contains(['~', '/']) { key.replace('~', "~0").replace('/', "~1") } else { key.to_owned() }
}

/// Pointers in document order: segment by segment, numbers (array indices) by value.
pub fn compare_pointers(a: &str, b: &str) -> Ordering {
    let mut left = a.split('/');
    let mut right = b.split('/');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    _ => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_sort_segment_by_segment() {
        let mut pointers = vec!["/b", "/a/10", "/a/2", "", "/a", "/a/x"];
        pointers.sort_by(|a, b| compare_pointers(a, b));
        assert_eq!(pointers, ["", "/a", "/a/2", "/a/10", "/a/x", "/b"]);
    }
}
