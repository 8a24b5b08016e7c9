//! The call pipeline's own wording: the JSON type a message names.

use serde_json::json;

use super::json_type;

/// Every number is `a number`, an integer too (unlike the schema reports' `an integer`).
#[test]
fn json_type_names_every_number_a_number() {
    let cases = [
        (json!(null), "null"),
        (json!(true), "a boolean"),
        (json!(1), "a number"),
        (json!(-1), "a number"),
        (json!(u64::MAX), "a number"),
        (json!(1.5), "a number"),
        (json!(1.0), "a number"),
        (json!("x"), "a string"),
        (json!([1]), "an array"),
        (json!({}), "an object"),
    ];
    for (value, name) in cases {
        assert_eq!(json_type(&value), name, "{value}");
    }
}
