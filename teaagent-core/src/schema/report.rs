//! The report of arguments that fail a tool's input schema, written for the model that sent them
//! (SPEC §4): every problem, each at its innermost JSON pointer, in words that say what to send
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

use std::cmp::Ordering;

use serde_json::Value;

use super::validate::{ErrorKind as Kind, JsonType, ValidationError, Validator, escape_segment as segment};

use crate::error::ArgumentError;
use crate::visible;

/// Longest piece of a string value quoted back in a message, in characters.
pub const PREVIEW_CHARS: usize = 48;
/// Most allowed values (or known properties) listed in one message.
const MAX_LISTED: usize = 24;

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

fn report(e: &ValidationError<'_>, out: &mut Vec<Problem>) {
    let at = e.pointer.as_str();
    match &e.kind {
        Kind::Required(name) => {
            push(
                out,
                format!("{at}/{}", segment(name)),
                format!("missing required property `{}`", visible::escape(name)),
                What::Other,
            );
        }
        Kind::DependentRequired { property, missing } => {
            push(
                out,
                format!("{at}/{}", segment(missing)),
                format!(
                    "missing property `{}` (required when `{}` is given)",
                    visible::escape(missing),
                    visible::escape(property)
                ),
                What::Other,
            );
        }
        Kind::PropertyName(name) => {
            // At the property itself, as an unknown property is.
            push(
                out,
                format!("{at}/{}", segment(name)),
                format!("the property name `{}` is not allowed", preview_text(name)),
                What::Other,
            );
        }
        Kind::AdditionalProperties { unexpected, known } => {
            let known: Vec<String> = known.iter().map(|k| format!("`{}`", preview_text(k))).collect();
            for key in unexpected {
                let mut message = format!("unknown property `{}`", preview_text(key));
                if !known.is_empty() {
                    message.push_str(&format!("; the properties are {}", listed(&known)));
                }
                push(out, format!("{at}/{}", segment(key)), message, What::Other);
            }
        }
        Kind::AnyOf(context) | Kind::OneOfNone(context) => {
            alternatives(e, context, out);
        }
        Kind::Type(types) => {
            let expected: Vec<String> = types.iter().map(article).collect();
            push(
                out,
                at.to_owned(),
                format!("must be {} (got {})", or_list(&expected), typed(e.instance)),
                What::Type,
            );
        }
        Kind::Enum(options) => {
            push(out, at.to_owned(), must_be_one_of(&enum_values(options), e.instance), What::Values);
        }
        Kind::Const(expected) => {
            let message = format!("must be {} (got {})", preview(expected), preview(e.instance));
            push(out, at.to_owned(), message, What::Values);
        }
        other => push(out, at.to_owned(), describe(other, e.instance), What::Other),
    }
}

/// An `enum`'s values, as quoted back.
fn enum_values(options: &Value) -> Vec<String> {
    match options {
        Value::Array(items) => items.iter().map(preview).collect(),
        other => vec![preview(other)],
    }
}

/// An `anyOf`/`oneOf` that no alternative accepted (see the module docs).
fn alternatives(e: &ValidationError<'_>, context: &[Vec<ValidationError<'_>>], out: &mut Vec<Problem>) {
    let at = e.pointer.as_str();
    let here = |b: &ValidationError<'_>| b.pointer == at;
    let candidates: Vec<&Vec<ValidationError<'_>>> =
        context.iter().filter(|branch| !branch.is_empty() && rejection(branch, at).is_none()).collect();
    // How badly an alternative fits: a `const` it does not match (a serde tag: `"kind":
    // "circle"`) first, then problems at the value itself, then problems in all.
    let misfit = |branch: &[ValidationError<'_>]| {
        let tags = branch.iter().filter(|b| matches!(b.kind, Kind::Const(_))).count();
        (tags, branch.iter().filter(|b| here(b)).count(), branch.len())
    };
    if let Some(tag) = common_tag(&candidates) {
        // No alternative's tag matches: the tag is the problem, and the rest is noise.
        let (pointer, got) = tag;
        let mut values = Vec::new();
        for branch in &candidates {
            for b in branch.iter().filter(|b| b.pointer == pointer) {
                if let Kind::Const(expected) = &b.kind {
                    values.push(preview(expected));
                }
            }
        }
        dedup_keep_order(&mut values);
        push(out, pointer.to_owned(), must_be_one_of(&values, &got), What::Values);
        return;
    }
    let best = candidates.iter().min_by_key(|branch| misfit(branch));
    if let Some(best) = best {
        let tied: Vec<&&Vec<ValidationError<'_>>> =
            candidates.iter().filter(|branch| misfit(branch) == misfit(best)).collect();
        if let Some(message) = untagged_choice(&tied, e.instance, at) {
            push(out, at.to_owned(), message, What::Other);
            return;
        }
        for b in best.iter() {
            report(b, out);
        }
        return;
    }
    // Every alternative rejects the value itself: say what any of them would take.
    let mut accepts = Accepts::default();
    for branch in context {
        if let Some(a) = rejection(branch, at) {
            accepts.values.extend(a.values);
            accepts.types.extend(a.types);
        }
    }
    dedup_keep_order(&mut accepts.values);
    dedup_keep_order(&mut accepts.types);
    let Accepts { values, mut types } = accepts;
    let message = if types.is_empty() && !values.is_empty() {
        must_be_one_of(&values, e.instance)
    } else {
        types.extend(values);
        format!("must be {} (got {})", or_list(&types), typed(e.instance))
    };
    push(out, at.to_owned(), message, What::Values);
}

/// The pointer (and value) of a `const` that every alternative fails at the same place — a serde
/// tag (`#[serde(tag = "kind")]`) that names no variant — if there is one.
fn common_tag(candidates: &[&Vec<ValidationError<'_>>]) -> Option<(String, Value)> {
    let (first, rest) = candidates.split_first()?;
    first.iter().find_map(|b| {
        if !matches!(b.kind, Kind::Const(_)) {
            return None;
        }
        let pointer = b.pointer.as_str();
        let everywhere = rest
            .iter()
            .all(|branch| branch.iter().any(|c| matches!(c.kind, Kind::Const(_)) && c.pointer == pointer));
        everywhere.then(|| (pointer.to_owned(), b.instance.clone()))
    })
}

/// Alternatives that fit equally badly, each only for wanting its own single property (serde's
/// default enum form, `{"circle": {...}}`): one problem naming the properties to choose from.
fn untagged_choice(tied: &[&&Vec<ValidationError<'_>>], value: &Value, at: &str) -> Option<String> {
    if tied.len() < 2 {
        return None;
    }
    let mut names = Vec::new();
    for branch in tied {
        let mut required = branch.iter().filter_map(|b| match &b.kind {
            Kind::Required(property) if b.pointer == at => Some(*property),
            _ => None,
        });
        let (Some(name), None) = (required.next(), required.next()) else { return None };
        let only_here = branch.iter().all(|b| {
            b.pointer == at && matches!(b.kind, Kind::Required(_) | Kind::AdditionalProperties { .. })
        });
        if !only_here {
            return None;
        }
        names.push(format!("`{}`", preview_text(name)));
    }
    dedup_keep_order(&mut names);
    let given: Vec<String> = match value {
        Value::Object(o) => o.keys().map(|k| format!("`{}`", preview_text(k))).collect(),
        _ => Vec::new(),
    };
    let got = if given.is_empty() {
        "an empty object".to_owned()
    } else {
        format!("an object with {}", listed(&given))
    };
    Some(format!("must have exactly one of the properties {} (got {got})", or_list(&capped(&names))))
}

/// What an alternative would take instead of the value at `at`.
#[derive(Default)]
struct Accepts {
    /// Values (`enum`, `const`, and `null` as a type), as quoted back.
    values: Vec<String>,
    /// Types, with their article (`an integer`).
    types: Vec<String>,
}

/// `Some` when an alternative rejects the value at `at` itself (its `type`, `enum` or `const`,
/// or a nested `anyOf`/`oneOf` all of whose alternatives do), with what it would take; `None`
/// when the value has the alternative's shape and the problems are inside it.
fn rejection(branch: &[ValidationError<'_>], at: &str) -> Option<Accepts> {
    let here = || branch.iter().filter(|b| b.pointer == at);
    let listed = here().find_map(|b| match &b.kind {
        Kind::Enum(options) => Some(enum_values(options)),
        Kind::Const(expected) => Some(vec![preview(expected)]),
        _ => None,
    });
    if let Some(values) = listed {
        return Some(Accepts { values, types: Vec::new() });
    }
    let mut accepts = Accepts::default();
    let mut rejected = false;
    for b in here() {
        match &b.kind {
            Kind::Type(types) => {
                rejected = true;
                for t in types.iter() {
                    // `null` is one value: listed with the values when there are any.
                    if t == JsonType::Null {
                        accepts.values.push("null".to_owned());
                    } else {
                        accepts.types.push(article(t));
                    }
                }
            }
            Kind::AnyOf(context) | Kind::OneOfNone(context) => {
                let nested: Option<Vec<Accepts>> = context.iter().map(|c| rejection(c, at)).collect();
                if let Some(nested) = nested {
                    rejected = true;
                    for a in nested {
                        accepts.values.extend(a.values);
                        accepts.types.extend(a.types);
                    }
                }
            }
            _ => {}
        }
    }
    rejected.then_some(accepts)
}

fn must_be_one_of(values: &[String], got: &Value) -> String {
    match values {
        [one] => format!("must be {one} (got {})", preview(got)),
        many => format!("must be one of {} (got {})", or_list(&capped(many)), preview(got)),
    }
}

/// The words for every other kind of problem.
fn describe(kind: &Kind<'_>, value: &Value) -> String {
    match kind {
        Kind::Minimum(limit) => format!("must be at least {limit} (got {})", preview(value)),
        Kind::Maximum(limit) => format!("must be at most {limit} (got {})", preview(value)),
        Kind::ExclusiveMinimum(limit) => format!("must be greater than {limit} (got {})", preview(value)),
        Kind::ExclusiveMaximum(limit) => format!("must be less than {limit} (got {})", preview(value)),
        Kind::MultipleOf(multiple_of) => {
            format!("must be a multiple of {multiple_of} (got {})", preview(value))
        }
        Kind::MinLength(limit) => {
            format!(
                "must be at least {} long (got {})",
                units(*limit, "character", "characters"),
                length(value)
            )
        }
        Kind::MaxLength(limit) => {
            format!(
                "must be at most {} long (got {})",
                units(*limit, "character", "characters"),
                length(value)
            )
        }
        Kind::MinItems(limit) => {
            format!("must have at least {} (got {})", units(*limit, "item", "items"), count(value))
        }
        Kind::MaxItems(limit) => {
            format!("must have at most {} (got {})", units(*limit, "item", "items"), count(value))
        }
        Kind::MinProperties(limit) => {
            format!("must have at least {} (got {})", units(*limit, "property", "properties"), count(value))
        }
        Kind::MaxProperties(limit) => {
            format!("must have at most {} (got {})", units(*limit, "property", "properties"), count(value))
        }
        Kind::UniqueItems => "must not contain the same item twice".to_owned(),
        Kind::Pattern(pattern) => {
            format!("must match the pattern `{}` (got {})", preview_text(pattern), preview(value))
        }
        Kind::Contains { matched, min, max } => match max {
            Some(max) if matched > max => {
                format!(
                    "must have at most {} of the required kind (got {matched})",
                    units(*max, "item", "items")
                )
            }
            _ => format!(
                "must have at least {} of the required kind (got {matched})",
                units(*min, "item", "items")
            ),
        },
        Kind::FalseSchema => "is not allowed here".to_owned(),
        Kind::Not => format!("is not allowed here (got {})", preview(value)),
        Kind::OneOfMany => format!(
            "fits more than one of the allowed forms; it must fit exactly one (got {})",
            preview(value)
        ),
        // Handled by `report` itself.
        Kind::Required(_)
        | Kind::PropertyName(_)
        | Kind::DependentRequired { .. }
        | Kind::AdditionalProperties { .. }
        | Kind::Type(_)
        | Kind::Enum(_)
        | Kind::Const(_)
        | Kind::AnyOf(_)
        | Kind::OneOfNone(_) => format!("is not valid (got {})", preview(value)),
    }
}

/// A JSON value quoted back, bounded: strings cut and escaped, arrays and objects named only.
pub fn preview(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{}\"", preview_text(s)),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(_) => "an object".to_owned(),
        other => other.to_string(),
    }
}

/// A value with its type: `a string: "soon"`, `a number: 5`, `an object`.
fn typed(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean: {b}"),
        Value::Number(n) if n.is_f64() => format!("a number: {n}"),
        Value::Number(n) => format!("an integer: {n}"),
        Value::String(_) => format!("a string: {}", preview(value)),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Text quoted back: escaped ([`visible::escape`]) and cut to [`PREVIEW_CHARS`] characters,
/// saying how many more there were.
pub fn preview_text(text: &str) -> String {
    bounded(text, PREVIEW_CHARS)
}

/// `text` escaped ([`visible::escape`]) and cut to `max` characters, saying how many more there
/// were.
pub fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return visible::escape(text);
    }
    let head: String = text.chars().take(max).collect();
    format!("{}…⟪{} more characters⟫", visible::escape(&head), total - max)
}

/// `1 character`, `2 characters`.
fn units(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn length(value: &Value) -> String {
    match value {
        Value::String(s) => units(s.chars().count() as u64, "character", "characters"),
        other => typed(other),
    }
}

fn count(value: &Value) -> String {
    match value {
        Value::Array(items) => items.len().to_string(),
        Value::Object(o) => o.len().to_string(),
        other => typed(other),
    }
}

fn article(t: JsonType) -> String {
    match t {
        JsonType::Array => "an array",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Null => "null",
        JsonType::Number => "a number",
        JsonType::Object => "an object",
        JsonType::String => "a string",
    }
    .to_owned()
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `a, b, c`, at most [`MAX_LISTED`] of them.
fn listed(items: &[String]) -> String {
    capped(items).join(", ")
}

fn capped(items: &[String]) -> Vec<String> {
    if items.len() <= MAX_LISTED {
        return items.to_vec();
    }
    let mut shown = items[..MAX_LISTED].to_vec();
    shown.push(format!("{} more", items.len() - MAX_LISTED));
    shown
}

fn dedup_keep_order(items: &mut Vec<String>) {
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
    use schemars::JsonSchema;
    use serde_json::json;

    use super::*;
    use crate::schema::ObjectSchema;

    /// 100,000 unknown properties (each message would list the known ones): the report stays
    /// small, its last entry counting the rest.
    #[test]
    fn a_report_is_never_much_larger_than_the_request() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                            "additionalProperties": false});
        let validator = Validator::compile(&schema).expect("compiles");
        let instance: serde_json::Map<String, Value> =
            (0..100_000).map(|i| (format!("k{i}"), json!(i))).collect();
        let instance = Value::Object(instance);
        let report = argument_errors(&validator, &instance);
        assert_eq!(report.len(), MAX_REPORTED + 1);
        let last = report.last().expect("a last entry");
        assert_eq!(
            last.message,
            format!("and {} more problems not listed here; fix these first", 100_000 - MAX_REPORTED)
        );
        let size: usize = report.iter().map(|e| e.message.len() + e.pointer.len()).sum();
        assert!(size < 100_000, "{size} bytes of report for 100,000 properties");
        // A few problems are all listed, with no such entry.
        let few = argument_errors(&validator, &json!({"a": "x", "b": 1}));
        assert_eq!(few.len(), 2, "{few:?}");
    }

    /// How urgent.
    #[derive(JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Priority {
        Low,
        Medium,
        High,
    }

    /// A time of day (documented variants: a `oneOf` of `const`s, collapsed to an `enum`, and
    /// an `anyOf` with `null` when optional).
    #[derive(JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Slot {
        /// Before noon.
        Morning,
        /// After six.
        Evening,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Due {
        days: u32,
        at: Option<Slot>,
    }

    /// A data-carrying enum: a `oneOf` of objects.
    #[derive(JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: u32 },
        Square { side: u32 },
    }

    /// An internally tagged enum: a `oneOf` of objects with a `const` tag.
    #[derive(JsonSchema)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    #[allow(dead_code)]
    enum ByKind {
        Circle { radius: u32 },
        Square { side: u32 },
    }

    fn check_one<T: JsonSchema>(args: Value) -> Vec<(String, String)> {
        let mut s = ObjectSchema::new();
        s.property::<T>("shape", None, true);
        let schema = s.finish();
        let validator = Validator::compile(&schema).expect("compiles");
        argument_errors(&validator, &args).into_iter().map(|e| (e.pointer, e.message)).collect()
    }

    #[test]
    fn a_tag_that_names_no_variant_is_the_one_problem() {
        assert_eq!(
            check_one::<ByKind>(json!({"shape": {"kind": "triangle", "sides": 3}})),
            pairs(&[("/shape/kind", r#"must be one of "circle" or "square" (got "triangle")"#)])
        );
        // A tag that names one: that variant's problems.
        assert_eq!(
            check_one::<ByKind>(json!({"shape": {"kind": "square", "side": "x"}})),
            pairs(&[("/shape/side", r#"must be an integer (got a string: "x")"#)])
        );
        assert_eq!(
            check_one::<ByKind>(json!({"shape": {"kind": "circle"}})),
            pairs(&[("/shape/radius", "missing required property `radius`")])
        );
        // serde's default form names the variant by its only property.
        assert_eq!(
            check_one::<Shape>(json!({"shape": {"triangle": {}}})),
            pairs(&[(
                "/shape",
                "must have exactly one of the properties `circle` or `square` (got an object with `triangle`)"
            )])
        );
        assert_eq!(
            check_one::<Shape>(json!({"shape": {"square": {"side": -1}}})),
            pairs(&[("/shape/square/side", "must be at least 0 (got -1)")])
        );
    }

    fn check(args: Value) -> Vec<(String, String)> {
        let mut s = ObjectSchema::new();
        s.property::<String>("title", None, true);
        s.property::<Option<Priority>>("priority", None, false);
        s.property::<Due>("due", None, true);
        s.property::<Option<Slot>>("slot", None, false);
        s.property::<Option<crate::Bounded<1, 10>>>("repeat", None, false);
        s.property::<Option<Vec<String>>>("tags", None, false);
        s.property::<Option<Shape>>("shape", None, false);
        let schema = s.finish();
        let validator = Validator::compile(&schema).expect("compiles");
        argument_errors(&validator, &args).into_iter().map(|e| (e.pointer, e.message)).collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected.iter().map(|(p, m)| ((*p).to_owned(), (*m).to_owned())).collect()
    }

    #[test]
    fn every_problem_at_its_innermost_pointer_with_the_allowed_values() {
        let got = check(json!({
            "priority": "urgent",
            "due": {"days": "soon", "at": "noon"},
            "slot": 5,
            "repeat": 11,
            "tags": ["a", 2],
            "bogus": true,
        }));
        assert_eq!(
            got,
            pairs(&[
                (
                    "/bogus",
                    "unknown property `bogus`; the properties are `title`, `priority`, `due`, `slot`, `repeat`, `tags`, `shape`"
                ),
                ("/due/at", r#"must be one of "morning", "evening" or null (got "noon")"#),
                ("/due/days", r#"must be an integer (got a string: "soon")"#),
                ("/priority", r#"must be one of "low", "medium", "high" or null (got "urgent")"#),
                ("/repeat", "must be at most 10 (got 11)"),
                ("/slot", r#"must be one of "morning", "evening" or null (got 5)"#),
                ("/tags/1", "must be a string (got an integer: 2)"),
                ("/title", "missing required property `title`"),
            ])
        );
        for (_, message) in &got {
            assert!(!message.contains("anyOf") && !message.contains("any of the schemas"), "{message}");
        }
    }

    #[test]
    fn an_alternative_is_chosen_by_the_shape_of_the_value() {
        // An object for an optional data-carrying enum: the variant it names, its own problem.
        let got = check(json!({"title": "t", "due": {"days": 1}, "shape": {"circle": {"radius": "big"}}}));
        assert_eq!(got, pairs(&[("/shape/circle/radius", r#"must be an integer (got a string: "big")"#)]));
        // A value no alternative takes: what each would.
        let got = check(json!({"title": "t", "due": {"days": 1}, "shape": "round"}));
        assert_eq!(got, pairs(&[("/shape", r#"must be an object or null (got a string: "round")"#)]));
        // A nested object missing its required property, and one of the wrong type.
        assert_eq!(
            check(json!({"title": "t", "due": {}})),
            pairs(&[("/due/days", "missing required property `days`")])
        );
        assert_eq!(
            check(json!({"title": "t", "due": [1, 2]})),
            pairs(&[("/due", "must be an object (got an array of 2 items)")])
        );
    }

    #[test]
    fn values_are_never_echoed_whole_nor_unescaped() {
        let long = format!("{}\u{1b}[2J", "x".repeat(10_000));
        let got = check(json!({"title": "t", "due": {"days": long}, "priority": "\u{202e}evil"}));
        assert_eq!(got[0].0, "/due/days");
        assert!(got[0].1.len() < 200, "{}", got[0].1);
        assert!(got[0].1.contains("more characters"), "{}", got[0].1);
        assert!(got[1].1.contains(r"\u{202e}evil") && !got[1].1.contains('\u{202e}'), "{}", got[1].1);
    }

    fn messages(schema: Value, args: Value) -> Vec<(String, String)> {
        let validator = Validator::compile(&schema).expect("compiles");
        argument_errors(&validator, &args).into_iter().map(|e| (e.pointer, e.message)).collect()
    }

    #[test]
    fn the_rarer_keywords_have_words_of_their_own() {
        let schema = json!({"type": "object", "properties": {
            "not": {"not": {"const": "x"}},
            "one": {"oneOf": [{"type": "integer"}, {"minimum": 0}]},
            "has": {"contains": {"type": "string"}, "maxContains": 1},
            "names": {"propertyNames": {"pattern": "^[a-z]+$"}},
            "dep": {"dependentRequired": {"from": ["to"]}},
            "mul": {"multipleOf": 0.5},
            "len": {"minLength": 3, "pattern": "^[a-z]*$"},
        }});
        let got = messages(
            schema,
            json!({
                "not": "x",
                "one": 3,
                "has": ["a", "b"],
                "names": {"Bad\u{1b}": 1},
                "dep": {"from": 1},
                "mul": 0.3,
                "len": "A",
            }),
        );
        assert_eq!(
            got,
            pairs(&[
                ("/dep/to", "missing property `to` (required when `from` is given)"),
                ("/has", "must have at most 1 item of the required kind (got 2)"),
                ("/len", "must be at least 3 characters long (got 1 character)"),
                ("/len", r#"must match the pattern `^[a-z]*$` (got "A")"#),
                ("/mul", "must be a multiple of 0.5 (got 0.3)"),
                ("/names/Bad\u{1b}", r"the property name `Bad\e` is not allowed"),
                ("/not", r#"is not allowed here (got "x")"#),
                ("/one", "fits more than one of the allowed forms; it must fit exactly one (got 3)"),
            ])
        );
    }

    #[test]
    fn pointers_sort_segment_by_segment() {
        let mut pointers = vec!["/b", "/a/10", "/a/2", "", "/a", "/a/x"];
        pointers.sort_by(|a, b| compare_pointers(a, b));
        assert_eq!(pointers, ["", "/a", "/a/2", "/a/10", "/a/x", "/b"]);
    }
}
