//! The work budget of one check (see "Bounded work" in the [module docs](super)): node visits
//! counted per thread, and a check refused as too complex once they run out.

use std::cell::Cell;

use serde_json::Value;

/// Most node visits nested in one another during a check (see "Bounded work").
pub const MAX_DEPTH: u32 = 128;
/// Node visits every check may make, whatever the instance.
const BASE_STEPS: u64 = 100_000;
/// Node visits allowed per JSON value of the instance.
const STEPS_PER_VALUE: u64 = 64;

/// What the check running on this thread may still do.
#[derive(Clone, Copy)]
struct Work {
    steps_left: u64,
    depth: u32,
    exhausted: bool,
}

impl Work {
    /// Outside [`within`]: no budget (a check is still bounded by the instance's own depth).
    const UNBOUNDED: Work = Work { steps_left: u64::MAX, depth: 0, exhausted: false };
}

thread_local! {
    static WORK: Cell<Work> = const { Cell::new(Work::UNBOUNDED) };
}

/// One node visit, counted against the budget while it lasts.
pub(super) struct Visit;

impl Visit {
    /// `None` when the budget is spent (from then on every visit of this check fails at once).
    pub(super) fn enter() -> Option<Visit> {
        WORK.with(|work| {
            let mut w = work.get();
            if w.exhausted || w.steps_left == 0 || w.depth >= MAX_DEPTH {
                w.exhausted = true;
                work.set(w);
                return None;
            }
            w.steps_left -= 1;
            w.depth += 1;
            work.set(w);
            Some(Visit)
        })
    }
}

impl Drop for Visit {
    fn drop(&mut self) {
        WORK.with(|work| {
            let mut w = work.get();
            w.depth = w.depth.saturating_sub(1);
            work.set(w);
        });
    }
}

/// A check that went past its budget (see "Bounded work"): the arguments are refused as too
/// complex, never accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooComplex;

/// Runs `check` (calls of [`Validator::is_valid`](super::Validator::is_valid) /
/// [`Validator::errors`](super::Validator::errors) on `instance`) under a work budget sized for
/// `instance`; `Err` when it was spent, whatever `check` returned.
pub fn within<T>(instance: &Value, check: impl FnOnce() -> T) -> Result<T, TooComplex> {
    /// Puts back the budget of an enclosing check, also if `check` panics.
    struct Restore(Work);
    impl Drop for Restore {
        fn drop(&mut self) {
            WORK.with(|work| work.set(self.0));
        }
    }
    let steps = BASE_STEPS.saturating_add(STEPS_PER_VALUE.saturating_mul(count_values(instance)));
    let restore =
        Restore(WORK.with(|work| work.replace(Work { steps_left: steps, depth: 0, exhausted: false })));
    let out = check();
    let spent = WORK.with(|work| work.get().exhausted);
    drop(restore);
    if spent { Err(TooComplex) } else { Ok(out) }
}

/// The number of JSON values in `value`, itself included (without recursion).
fn count_values(value: &Value) -> u64 {
    // Most arguments are one object of plain values: counted without a stack.
    let plain = |v: &Value| !matches!(v, Value::Array(_) | Value::Object(_));
    match value {
        Value::Object(members) if members.values().all(plain) => return 1 + members.len() as u64,
        Value::Array(items) if items.iter().all(plain) => return 1 + items.len() as u64,
        v if plain(v) => return 1,
        _ => {}
    }
    let mut count = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::count_values;
    use serde_json::json;

    #[test]
    fn every_value_is_counted_once_flat_or_nested() {
        assert_eq!(count_values(&json!(7)), 1);
        assert_eq!(count_values(&json!({})), 1);
        assert_eq!(count_values(&json!({"a": 1, "b": "x", "c": null})), 4);
        assert_eq!(count_values(&json!([1, 2, 3])), 4);
        assert_eq!(count_values(&json!({"a": [1, {"b": 2}], "c": 3})), 6);
        assert_eq!(count_values(&json!([[[]]])), 3);
    }
}
