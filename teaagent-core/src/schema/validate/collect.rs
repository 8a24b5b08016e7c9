//! The problems: every way an instance fails, each at its instance pointer (what the report of
//! failed arguments is written from).

use serde_json::Value;

use super::budget::Visit;
use super::compiled::{Check, NodeId, Validator};
use super::error::{ErrorKind, ValidationError};
use super::valid::is_additional;
use crate::schema::pointer::push_segment;

impl Validator {
    /// Every problem of `instance`, each at its instance pointer, in the schema's keyword order
    /// (`anyOf`/`oneOf` failures carry each alternative's problems).
    pub fn errors<'a>(&'a self, instance: &'a Value) -> Vec<ValidationError<'a>> {
        let mut out = Vec::new();
        let mut pointer = String::new();
        self.collect(0, instance, &mut pointer, &mut out);
        out
    }

    fn collect<'a>(
        &'a self,
        node: NodeId,
        value: &'a Value,
        pointer: &mut String,
        out: &mut Vec<ValidationError<'a>>,
    ) {
        let Some(_visit) = Visit::enter() else { return };
        for check in &self.nodes[node].checks {
            self.collect_check(check, value, pointer, out);
        }
    }

    /// `check`'s problems with `value` (at `pointer`) into `out`.
    fn collect_check<'a>(
        &'a self,
        check: &'a Check,
        value: &'a Value,
        pointer: &mut String,
        out: &mut Vec<ValidationError<'a>>,
    ) {
        let fail = |kind: ErrorKind<'a>, pointer: &str, out: &mut Vec<ValidationError<'a>>| {
            out.push(ValidationError { pointer: pointer.to_owned(), instance: value, kind });
        };
        match check {
            // Compound checks descend (and push at nested pointers) below.
            Check::Properties(_)
            | Check::PatternProperties(_)
            | Check::Additional { .. }
            | Check::Unevaluated { .. }
            | Check::PrefixItems(_)
            | Check::Items { .. }
            | Check::Required(_)
            | Check::DependentRequired(_)
            | Check::PropertyNames(_)
            | Check::AnyOf(_)
            | Check::OneOf(_)
            | Check::AllOf(_)
            | Check::If { .. }
            | Check::Ref(_) => {}
            _ if self.check_valid(check, value) => return,
            Check::False => return fail(ErrorKind::FalseSchema, pointer, out),
            Check::Type(types) => return fail(ErrorKind::Type(*types), pointer, out),
            Check::Enum(options) => return fail(ErrorKind::Enum(options), pointer, out),
            Check::Const(expected) => return fail(ErrorKind::Const(expected), pointer, out),
            Check::MinProperties(n) => return fail(ErrorKind::MinProperties(*n), pointer, out),
            Check::MaxProperties(n) => return fail(ErrorKind::MaxProperties(*n), pointer, out),
            Check::MinItems(n) => return fail(ErrorKind::MinItems(*n), pointer, out),
            Check::MaxItems(n) => return fail(ErrorKind::MaxItems(*n), pointer, out),
            Check::UniqueItems => return fail(ErrorKind::UniqueItems, pointer, out),
            Check::Contains { node, min, max } => {
                let matched =
                    value.as_array().map_or(0, |a| a.iter().filter(|i| self.valid(*node, i)).count());
                let kind = ErrorKind::Contains { matched: matched as u64, min: *min, max: *max };
                return fail(kind, pointer, out);
            }
            Check::Minimum(limit) => return fail(ErrorKind::Minimum(limit), pointer, out),
            Check::Maximum(limit) => return fail(ErrorKind::Maximum(limit), pointer, out),
            Check::ExclusiveMinimum(limit) => return fail(ErrorKind::ExclusiveMinimum(limit), pointer, out),
            Check::ExclusiveMaximum(limit) => return fail(ErrorKind::ExclusiveMaximum(limit), pointer, out),
            Check::MultipleOf(m) => return fail(ErrorKind::MultipleOf(m), pointer, out),
            Check::MinLength(n) => return fail(ErrorKind::MinLength(*n), pointer, out),
            Check::MaxLength(n) => return fail(ErrorKind::MaxLength(*n), pointer, out),
            Check::Pattern(re) => return fail(ErrorKind::Pattern(re.as_str()), pointer, out),
            Check::Not(_) => return fail(ErrorKind::Not, pointer, out),
        }
        match (check, value) {
            (Check::Properties(props), Value::Object(o)) => {
                for (name, node) in props {
                    if let Some(v) = o.get(name) {
                        self.descend(*node, v, name, pointer, out);
                    }
                }
            }
            (Check::PatternProperties(patterns), Value::Object(o)) => {
                for (key, v) in o {
                    for (re, node) in patterns {
                        if re.is_match(key) {
                            self.descend(*node, v, key, pointer, out);
                        }
                    }
                }
            }
            (Check::Additional { known, patterns, schema }, Value::Object(o)) => {
                let extra = o.iter().filter(|(key, _)| is_additional(key, known, patterns));
                self.collect_extra(extra, *schema, known, value, pointer, out);
            }
            (Check::Unevaluated { owner, known, schema }, Value::Object(o)) => {
                let evaluated = self.evaluated(*owner, value);
                let extra = o.iter().zip(evaluated).filter(|(_, seen)| !seen).map(|(kv, _)| kv);
                self.collect_extra(extra, *schema, known, value, pointer, out);
            }
            (Check::PropertyNames(node), Value::Object(o)) => {
                for key in o.keys() {
                    if !self.valid(*node, &Value::String(key.clone())) {
                        fail(ErrorKind::PropertyName(key), pointer, out);
                    }
                }
            }
            (Check::Required(names), Value::Object(o)) => {
                for name in names.iter().filter(|n| !o.contains_key(*n)) {
                    fail(ErrorKind::Required(name), pointer, out);
                }
            }
            (Check::DependentRequired(deps), Value::Object(o)) => {
                for (property, wanted) in deps.iter().filter(|(p, _)| o.contains_key(p)) {
                    for missing in wanted.iter().filter(|w| !o.contains_key(*w)) {
                        fail(ErrorKind::DependentRequired { property, missing }, pointer, out);
                    }
                }
            }
            (Check::PrefixItems(nodes), Value::Array(items)) => {
                for (i, (item, node)) in items.iter().zip(nodes).enumerate() {
                    self.descend(*node, item, &i.to_string(), pointer, out);
                }
            }
            (Check::Items { skip, node }, Value::Array(items)) => {
                for (i, item) in items.iter().enumerate().skip(*skip) {
                    self.descend(*node, item, &i.to_string(), pointer, out);
                }
            }
            (Check::AnyOf(nodes), _) if !nodes.iter().any(|n| self.valid(*n, value)) => {
                let context = self.alternatives(nodes, value, pointer);
                fail(ErrorKind::AnyOf(context), pointer, out);
            }
            (Check::OneOf(nodes), _) => match nodes.iter().filter(|n| self.valid(**n, value)).take(2).count()
            {
                1 => {}
                0 => {
                    let context = self.alternatives(nodes, value, pointer);
                    fail(ErrorKind::OneOfNone(context), pointer, out);
                }
                _ => fail(ErrorKind::OneOfMany, pointer, out),
            },
            (Check::AllOf(nodes), _) => {
                for node in nodes {
                    self.collect(*node, value, pointer, out);
                }
            }
            (Check::If { condition, then, otherwise }, _) => {
                let branch = if self.valid(*condition, value) { then } else { otherwise };
                if let Some(node) = branch {
                    self.collect(*node, value, pointer, out);
                }
            }
            (Check::Ref(node), _) => self.collect(*node, value, pointer, out),
            _ => {}
        }
    }

    /// Each alternative's problems with `value`.
    fn alternatives<'a>(
        &'a self,
        nodes: &[NodeId],
        value: &'a Value,
        pointer: &mut String,
    ) -> Vec<Vec<ValidationError<'a>>> {
        nodes
            .iter()
            .map(|node| {
                let mut branch = Vec::new();
                self.collect(*node, value, pointer, &mut branch);
                branch
            })
            .collect()
    }

    /// The problems of an object's properties that no `properties`/`patternProperties` (or,
    /// for `unevaluatedProperties`, no applied subschema) took: refused together when there is
    /// no schema for them, else each checked against it.
    fn collect_extra<'a>(
        &'a self,
        extra: impl Iterator<Item = (&'a String, &'a Value)>,
        schema: Option<NodeId>,
        known: &'a [String],
        object: &'a Value,
        pointer: &mut String,
        out: &mut Vec<ValidationError<'a>>,
    ) {
        match schema {
            None => {
                let unexpected: Vec<&str> = extra.map(|(k, _)| k.as_str()).collect();
                if !unexpected.is_empty() {
                    out.push(ValidationError {
                        pointer: pointer.clone(),
                        instance: object,
                        kind: ErrorKind::AdditionalProperties { unexpected, known },
                    });
                }
            }
            Some(node) => {
                for (key, v) in extra {
                    self.descend(node, v, key, pointer, out);
                }
            }
        }
    }

    /// `node`'s problems with `value`, the child `segment` of the value at `pointer`.
    fn descend<'a>(
        &'a self,
        node: NodeId,
        value: &'a Value,
        segment: &str,
        pointer: &mut String,
        out: &mut Vec<ValidationError<'a>>,
    ) {
        let len = pointer.len();
        push_segment(pointer, segment);
        self.collect(node, value, pointer, out);
        pointer.truncate(len);
    }
}
