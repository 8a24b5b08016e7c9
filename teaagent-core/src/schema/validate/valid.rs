//! The verdict: whether an instance is valid, keyword by keyword, stopping at the first failure.

use std::cmp::Ordering;

use regex::Regex;
use serde_json::Value;

use super::budget::Visit;
use super::compiled::{Check, NodeId, Validator};
use super::equality::{all_unique, equal};
use super::lookup::{has_member, member};
use super::numbers::{compare, is_multiple_of, number};

impl Validator {
    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.valid(0, instance)
    }

    pub(super) fn valid(&self, node: NodeId, value: &Value) -> bool {
        let Some(_visit) = Visit::enter() else { return false };
        self.nodes[node].checks.iter().all(|check| self.check_valid(check, value))
    }

    pub(super) fn check_valid(&self, check: &Check, value: &Value) -> bool {
        match check {
            Check::False => false,
            Check::Type(types) => types.accepts(value),
            Check::Enum(options) => options.as_array().is_some_and(|o| o.iter().any(|v| equal(v, value))),
            Check::Const(expected) => equal(expected, value),
            Check::Properties(props) => match value {
                Value::Object(o) => {
                    props.iter().all(|(name, node)| member(o, name).is_none_or(|v| self.valid(*node, v)))
                }
                _ => true,
            },
            Check::PatternProperties(patterns) => match value {
                Value::Object(o) => o.iter().all(|(key, v)| {
                    patterns.iter().all(|(re, node)| !re.is_match(key) || self.valid(*node, v))
                }),
                _ => true,
            },
            Check::Additional { known, patterns, schema } => match value {
                Value::Object(o) => {
                    o.iter().filter(|(key, _)| is_additional(key, known, patterns)).all(|(_, v)| match schema
                    {
                        None => false,
                        Some(node) => self.valid(*node, v),
                    })
                }
                _ => true,
            },
            Check::Unevaluated { owner, schema, .. } => match value {
                Value::Object(o) => {
                    let evaluated = self.evaluated(*owner, value);
                    o.values().zip(evaluated).filter(|(_, seen)| !seen).all(|(v, _)| match schema {
                        None => false,
                        Some(node) => self.valid(*node, v),
                    })
                }
                _ => true,
            },
            Check::PropertyNames(node) => match value {
                Value::Object(o) => o.keys().all(|k| self.valid(*node, &Value::String(k.clone()))),
                _ => true,
            },
            Check::Required(names) => {
                value.as_object().is_none_or(|o| names.iter().all(|n| has_member(o, n)))
            }
            Check::MinProperties(n) => value.as_object().is_none_or(|o| o.len() as u64 >= *n),
            Check::MaxProperties(n) => value.as_object().is_none_or(|o| o.len() as u64 <= *n),
            Check::DependentRequired(deps) => value.as_object().is_none_or(|o| {
                deps.iter().all(|(p, wanted)| !has_member(o, p) || wanted.iter().all(|w| has_member(o, w)))
            }),
            Check::PrefixItems(nodes) => value
                .as_array()
                .is_none_or(|items| items.iter().zip(nodes).all(|(item, node)| self.valid(*node, item))),
            Check::Items { skip, node } => value
                .as_array()
                .is_none_or(|items| items.iter().skip(*skip).all(|item| self.valid(*node, item))),
            Check::MinItems(n) => value.as_array().is_none_or(|a| a.len() as u64 >= *n),
            Check::MaxItems(n) => value.as_array().is_none_or(|a| a.len() as u64 <= *n),
            Check::UniqueItems => value.as_array().is_none_or(|a| all_unique(a)),
            Check::Contains { node, min, max } => value.as_array().is_none_or(|a| {
                let matched = a.iter().filter(|item| self.valid(*node, item)).count() as u64;
                matched >= *min && max.is_none_or(|max| matched <= max)
            }),
            Check::Minimum(limit) => number(value).is_none_or(|n| compare(n, limit) != Ordering::Less),
            Check::Maximum(limit) => number(value).is_none_or(|n| compare(n, limit) != Ordering::Greater),
            Check::ExclusiveMinimum(limit) => {
                number(value).is_none_or(|n| compare(n, limit) == Ordering::Greater)
            }
            Check::ExclusiveMaximum(limit) => {
                number(value).is_none_or(|n| compare(n, limit) == Ordering::Less)
            }
            Check::MultipleOf(m) => number(value).is_none_or(|n| is_multiple_of(n, m)),
            Check::MinLength(n) => value.as_str().is_none_or(|s| s.chars().count() as u64 >= *n),
            Check::MaxLength(n) => value.as_str().is_none_or(|s| s.chars().count() as u64 <= *n),
            Check::Pattern(re) => value.as_str().is_none_or(|s| re.is_match(s)),
            Check::AnyOf(nodes) => nodes.iter().any(|n| self.valid(*n, value)),
            Check::OneOf(nodes) => nodes.iter().filter(|n| self.valid(**n, value)).take(2).count() == 1,
            Check::AllOf(nodes) => nodes.iter().all(|n| self.valid(*n, value)),
            Check::Not(node) => !self.valid(*node, value),
            Check::If { condition, then, otherwise } => {
                let branch = if self.valid(*condition, value) { then } else { otherwise };
                branch.is_none_or(|n| self.valid(n, value))
            }
            Check::Ref(node) => self.valid(*node, value),
        }
    }
}

/// Whether `additionalProperties` applies to `key`: no `properties` or `patternProperties` covers it.
pub(super) fn is_additional(key: &str, known: &[String], patterns: &[Regex]) -> bool {
    !known.iter().any(|k| k == key) && !patterns.iter().any(|re| re.is_match(key))
}
