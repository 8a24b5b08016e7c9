//! Each kind of problem in words, at the pointer a model can act on.

use serde_json::Value;

use super::alternatives::alternatives;
use super::phrasing::{capped, listed, or_list, units};
use super::preview::{count, length, preview, preview_text, typed};
use super::{Problem, What, push};
use crate::schema::pointer::escape_segment as segment;
use crate::schema::validate::{ErrorKind as Kind, ValidationError};
use crate::visible;

/// `e` in words, into `out` (an `anyOf`/`oneOf` through [`alternatives`]).
pub(super) fn report(e: &ValidationError<'_>, out: &mut Vec<Problem>) {
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
