//! The report of arguments that fail a tool's input schema, written for the model that sent them
//!: every problem, each at its innermost JSON pointer, in words that say what to send
//! instead.
//!
//! What the validator finds ([`super::validate`]'s errors) is not yet what a model can act on:
//! an `Option<Enum>` parameter is an `anyOf` of the enum and `null`, and a bad value there is
//! one `anyOf` failure holding every alternative's problems — read as is, "not valid under any
//! of the alternatives", no allowed values, no hint which alternative was meant. So:
//!
//! - **`anyOf` / `oneOf`**: the alternatives whose type (or `enum`/`const`) already rejects the
//!   value are set aside; of the others, the one the value fits best (fewest problems at the
//!   value itself, then fewest in all) is reported, problem by problem, at their own pointers —
//!   `/due/days`, not `/due`. When every alternative rejects the value outright, one problem
//!   lists what would be accepted: `must be one of "low", "medium", "high" or null (got 5)`.
//!   Data-carrying enums get the same care: an alternative whose `const` (a serde tag,
//!   `#[serde(tag = "kind")]`) the value does not match fits worst; when no alternative's tag
//!   matches, the tag is the one problem (`/shape/kind: must be one of "circle" or "square"`);
//!   and when serde's default form names no variant (`{"triangle": {}}`), the one problem names
//!   the properties to choose from.
//! - **`enum` / `const`**: the allowed values, always.
//! - **`required` / `additionalProperties`**: the pointer names the property itself; an unknown
//!   property's message lists the known ones.
//! - **`type`**: what was expected and what came (`must be an integer (got a string: "soon")`).
//! - A value is never echoed whole: strings are cut to [`PREVIEW_CHARS`] characters and escaped
//!   ([`crate::visible::escape`]); arrays and objects are named, not shown.
//! - Problems are sorted by pointer (segment by segment, array indices as numbers), duplicates
//!   dropped; where an `enum` or `const` problem already says what is allowed, a `type` problem at
//!   the same pointer is dropped.

mod kinds;
mod phrasing;
mod preview;
#[cfg(test)]
mod tests;

use serde_json::Value;

use super::pointer::compare_pointers;
use super::validate::Validator;
use crate::error::ArgumentError;
use kinds::report;

pub use preview::{PREVIEW_CHARS, bounded, preview, preview_text};

/// Every problem of `instance` against the compiled `validator`, as the report described in the
/// module docs.
///
/// At most [`MAX_REPORTED`] problems are reported, the last entry saying how many more there
/// were: a report is never much larger than the arguments it is about (100,000 unknown
/// properties, each message listing the known ones, would otherwise be a report 40 times the
/// size of the request, built in memory and sent back).
pub(crate) fn argument_errors(validator: &Validator, instance: &Value) -> Vec<ArgumentError> {
    let found = validator.errors(instance);
    let mut out = Vec::new();
    for e in found.iter().take(MAX_WORDED) {
        report(e, &mut out);
    }
    let mut problems = tidy(out);
    let unreported = found.len().saturating_sub(MAX_WORDED);
    if problems.len() > MAX_REPORTED || unreported > 0 {
        let more = problems.len().saturating_sub(MAX_REPORTED) + unreported;
        problems.truncate(MAX_REPORTED);
        problems.push(ArgumentError::new(
            "",
            format!("and {more} more problems not listed here; fix these first"),
        ));
    }
    problems
}

/// Most problems in one report (then one entry saying how many more).
pub(crate) const MAX_REPORTED: usize = 100;
/// Most validation errors put into words for one report (the rest are only counted).
const MAX_WORDED: usize = 1000;

/// Sorts problems by pointer, drops duplicates, and drops a `type` problem where an `enum` or
/// `const` one at the same pointer already says what is allowed. The result is deterministic.
fn tidy(mut errors: Vec<Problem>) -> Vec<ArgumentError> {
    errors.sort_by(|a, b| compare_pointers(&a.error.pointer, &b.error.pointer));
    errors.dedup_by(|a, b| a.error == b.error);
    let valued: std::collections::HashSet<String> =
        errors.iter().filter(|t| t.what == What::Values).map(|t| t.error.pointer.clone()).collect();
    errors
        .into_iter()
        .filter(|t| !(t.what == What::Type && valued.contains(&t.error.pointer)))
        .map(|t| t.error)
        .collect()
}

/// A problem with what kind of check found it (for [`tidy`]).
#[derive(Debug)]
struct Problem {
    error: ArgumentError,
    what: What,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// A `type` mismatch.
    Type,
    /// An `enum` or `const` mismatch (the message lists the allowed values).
    Values,
    /// Anything else.
    Other,
}

fn push(out: &mut Vec<Problem>, pointer: String, message: String, what: What) {
    out.push(Problem { error: ArgumentError { pointer, message }, what });
}
