//! A member of a JSON object looked up by name, without hashing the name when the object is
//! small.
//!
//! A `serde_json` map hashes the name it is asked for (SipHash, keyed per map), about a hundred
//! instructions for a short name before the table is probed. A tool's arguments are a handful
//! of members, and validating a call looks each property of the schema up in them: comparing
//! the names one by one is cheaper up to a few members, and gives the same answer (a map holds
//! each name once).

use serde_json::{Map, Value};

/// Up to this many members, names are compared one by one.
const SMALL: usize = 8;

/// The member `name` of `object`.
pub(crate) fn member<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if object.len() <= SMALL {
        object.iter().find_map(|(key, value)| (key == name).then_some(value))
    } else {
        object.get(name)
    }
}

/// Whether `object` has a member `name`.
pub(crate) fn has_member(object: &Map<String, Value>, name: &str) -> bool {
    member(object, name).is_some()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn small_and_large_objects_answer_as_the_map_does() {
        for n in [0, 1, 3, SMALL, SMALL + 1, 40] {
            let object: Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(i))).collect();
            for name in ["k0", "k3", "k8", "k39", "k40", "", "K0"] {
                assert_eq!(member(&object, name), object.get(name), "{n} members, {name:?}");
                assert_eq!(has_member(&object, name), object.contains_key(name));
            }
        }
    }
}
