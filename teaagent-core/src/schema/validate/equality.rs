//! JSON equality with numbers equal by value (`1 == 1.0`), for `enum`, `const` and
//! `uniqueItems`.

use std::cmp::Ordering;

use serde_json::Value;

use super::numbers::{compare, exact};

/// JSON equality with numbers equal by value (`1 == 1.0`).
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// `uniqueItems`. Comparing every pair is quadratic: an array of 100,000 distinct items (a
/// `HashSet<u64>` parameter, well inside the line limit) would hold the server's thread for
/// seconds. Past a few items, each one gets a [`canonical`] key instead — equal exactly when
/// [`equal`] says so — and a hash set finds the first repeat in linear time.
pub(super) fn all_unique(items: &[Value]) -> bool {
    const PAIRWISE_UP_TO: usize = 16;
    if items.len() <= PAIRWISE_UP_TO {
        return pairwise_unique(items);
    }
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    let mut key = String::new();
    items.iter().all(|item| {
        key.clear();
        canonical(item, &mut key);
        seen.insert(key.clone())
    })
}

#[cfg(test)]
pub(crate) fn all_unique_for_tests(items: &[Value]) -> bool {
    all_unique(items)
}

#[cfg(test)]
pub(crate) fn pairwise_unique_for_tests(items: &[Value]) -> bool {
    pairwise_unique(items)
}

fn pairwise_unique(items: &[Value]) -> bool {
    items.iter().enumerate().all(|(i, a)| items[i + 1..].iter().all(|b| !equal(a, b)))
}

/// A key of `value` that two values share exactly when [`equal`] holds for them: numbers by
/// value (an integer, also one written `1.0`, as its exact digits; any other number by its
/// bits: two such numbers are equal only when they are the same `f64`), object members sorted
/// by key, and every string and container prefixed with its length, so no two different values
/// can run together into the same text.
fn canonical(value: &Value, out: &mut String) {
    use std::fmt::Write as _;
    match value {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            let _ = match exact(n) {
                Some(i) => write!(out, "i{i};"),
                None => write!(out, "x{:x};", n.as_f64().unwrap_or(0.0).to_bits()),
            };
        }
        Value::String(text) => {
            let _ = write!(out, "s{}:", text.len());
            out.push_str(text);
        }
        Value::Array(items) => {
            let _ = write!(out, "a{}[", items.len());
            items.iter().for_each(|item| canonical(item, out));
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let _ = write!(out, "o{}{{", sorted.len());
            for (key, member) in sorted {
                let _ = write!(out, "{}:", key.len());
                out.push_str(key);
                canonical(member, out);
            }
            out.push('}');
        }
    }
}
