//! JSON pointers (RFC 6901): one segment escaped, and pointers in document order.

use std::cmp::Ordering;

/// `path/key`: `key` appended to a pointer as one segment, escaped (RFC 6901: `~` as `~0`, `/`
/// as `~1`).
pub(crate) fn join_segment(path: &str, key: &str) -> String {
    let mut out = String::with_capacity(path.len() + 1 + key.len());
    out.push_str(path);
    push_segment(&mut out, key);
    out
}

/// Appends `/key` to `pointer`, `key` escaped as one segment.
pub(crate) fn push_segment(pointer: &mut String, key: &str) {
    pointer.push('/');
    let mut rest = key;
    while let Some(at) = rest.find(['~', '/']) {
        pointer.push_str(&rest[..at]);
        pointer.push_str(if rest.as_bytes()[at] == b'~' { "~0" } else { "~1" });
        rest = &rest[at + 1..];
    }
    pointer.push_str(rest);
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

    #[test]
    fn a_segment_escapes_tilde_then_slash() {
        assert_eq!(join_segment("", "plain"), "/plain");
        assert_eq!(join_segment("/properties", "a/b~c"), "/properties/a~1b~0c");
        assert_eq!(join_segment("/p", "~/~1"), "/p/~0~1~01");
        assert_eq!(join_segment("/p", ""), "/p/");
        assert_eq!(join_segment("/p", "é/ü"), "/p/é~1ü");
    }
}
