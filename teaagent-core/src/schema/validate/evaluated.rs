//! What `unevaluatedProperties` needs: which properties of an object a schema evaluated, by
//! its own keywords and by the subschemas that accept the object (2020-12's annotation rules).

use serde_json::{Map, Value};

use super::compiled::{Check, NodeId, Validator};

impl Validator {
    /// Which properties of `object` (in its order) `node` evaluates, for its
    /// `unevaluatedProperties`: those its own `properties`, `patternProperties` and
    /// `additionalProperties` cover, and those its subschemas (`allOf`, `anyOf`, `oneOf`,
    /// `if`/`then`/`else`, `$ref`) evaluate when they accept the object (2020-12's annotation
    /// rules). A nested `unevaluatedProperties` that accepts evaluates everything.
    pub(super) fn evaluated(&self, node: NodeId, value: &Value) -> Vec<bool> {
        let Value::Object(object) = value else { return Vec::new() };
        let mut seen = vec![false; object.len()];
        self.mark(node, value, object, &mut seen, true);
        seen
    }

    fn mark(&self, node: NodeId, value: &Value, object: &Map<String, Value>, seen: &mut [bool], owner: bool) {
        let sub = |n: NodeId, seen: &mut [bool]| {
            if self.valid(n, value) {
                self.mark(n, value, object, seen, false);
            }
        };
        for check in &self.nodes[node].checks {
            match check {
                Check::Properties(props) => {
                    for (key, flag) in object.keys().zip(seen.iter_mut()) {
                        *flag |= props.iter().any(|(name, _)| name == key);
                    }
                }
                Check::PatternProperties(patterns) => {
                    for (key, flag) in object.keys().zip(seen.iter_mut()) {
                        *flag |= patterns.iter().any(|(re, _)| re.is_match(key));
                    }
                }
                Check::Additional { .. } => seen.iter_mut().for_each(|flag| *flag = true),
                Check::Unevaluated { .. } if !owner => seen.iter_mut().for_each(|flag| *flag = true),
                Check::AllOf(ns) | Check::AnyOf(ns) | Check::OneOf(ns) => {
                    for n in ns {
                        sub(*n, seen);
                    }
                }
                Check::Ref(n) => sub(*n, seen),
                Check::If { condition, then, otherwise } => {
                    if self.valid(*condition, value) {
                        self.mark(*condition, value, object, seen, false);
                        if let Some(n) = then {
                            sub(*n, seen);
                        }
                    } else if let Some(n) = otherwise {
                        sub(*n, seen);
                    }
                }
                _ => {}
            }
        }
    }
}
