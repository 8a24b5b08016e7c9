//! Any JSON value, for the property tests of what reads and writes JSON here.

use proptest::prelude::*;
use serde_json::Value;

/// Nested arrays and objects of every kind of leaf: strings of any characters and strings full of
/// quotes, backslashes and control characters; member names of both kinds.
pub(crate) fn any_json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[\"\\\\\u{0}-\u{1f}a-z\u{e9}\u{1f600}]{0,40}".prop_map(Value::String),
    ];
    let name = prop_oneof!["[a-c\"\\\\\u{e9}]{0,3}", "(?s).{0,12}"];
    leaf.prop_recursive(6, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((name.clone(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}
