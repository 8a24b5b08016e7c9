//! Each kind of problem in words, at the pointer a model can act on; an `anyOf`/`oneOf` that no
//! alternative accepted is told as the alternative the value was meant for, or as one problem
//! saying what any alternative would take (the two recurse into each other, so they share a file).

use serde_json::Value;

use super::phrasing::{capped, dedup_keep_order, listed, or_list, units};
use super::preview::{count, length, preview, preview_text, typed};
use super::{Problem, What, push};
use crate::schema::pointer::join_segment;
use crate::schema::validate::{ErrorKind as Kind, JsonType, ValidationError};
use crate::visible;

/// `e` in words, into `out` (an `anyOf`/`oneOf` through [`alternatives`]).
pub(super) fn report(e: &ValidationError<'_>, out: &mut Vec<Problem>) {
    let at = e.pointer.as_str();
    match &e.kind {
        Kind::Required(name) => {
            push(
                out,
                join_segment(at, name),
                format!("missing required property `{}`", visible::escape(name)),
                What::Other,
            );
        }
        Kind::DependentRequired { property, missing } => {
            push(
                out,
                join_segment(at, missing),
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
                join_segment(at, name),
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
                push(out, join_segment(at, key), message, What::Other);
            }
        }
        Kind::AnyOf(context) | Kind::OneOfNone(context) => {
            alternatives(e, context, out);
        }
        Kind::Type(types) => {
            let expected: Vec<String> = types.iter().map(|t| t.article().to_owned()).collect();
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
pub(super) fn enum_values(options: &Value) -> Vec<String> {
    match options {
        Value::Array(items) => items.iter().map(preview).collect(),
        other => vec![preview(other)],
    }
}

pub(super) fn must_be_one_of(values: &[String], got: &Value) -> String {
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
                        accepts.types.push(t.article().to_owned());
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
