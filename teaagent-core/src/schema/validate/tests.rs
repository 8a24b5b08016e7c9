//! The validator's unit tests: verdicts keyword by keyword, what compiling refuses, the work
//! budget, and the problems' pointers.

use serde_json::{Value, json};

use super::*;

/// `schema` accepts every value of `good` and refuses every value of `bad`.
fn verdicts(schema: Value, good: &[Value], bad: &[Value]) {
    let v = Validator::compile(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
    for g in good {
        assert!(v.is_valid(g), "{schema} should accept {g}: {:?}", v.errors(g));
        assert!(v.errors(g).is_empty(), "{schema} {g}");
    }
    for b in bad {
        assert!(!v.is_valid(b), "{schema} should refuse {b}");
        assert!(!v.errors(b).is_empty(), "{schema} {b}: no error listed");
    }
}

fn refused(schema: Value) -> String {
    Validator::compile(&schema).expect_err("refused")
}

#[test]
fn types_with_integers_by_value() {
    verdicts(
        json!({"type": "integer"}),
        &[json!(1), json!(1.0), json!(-0.0), json!(u64::MAX)],
        &[json!(1.5), json!("1"), json!(null)],
    );
    verdicts(json!({"type": ["string", "null"]}), &[json!("a"), json!(null)], &[json!(1), json!([])]);
    verdicts(json!({"type": "number"}), &[json!(1), json!(0.5)], &[json!(true)]);
    verdicts(json!({"type": "object"}), &[json!({})], &[json!([])]);
    verdicts(json!({"type": "array"}), &[json!([])], &[json!({})]);
    verdicts(json!({"type": "boolean"}), &[json!(false)], &[json!(0)]);
    verdicts(json!({"type": "null"}), &[json!(null)], &[json!(false)]);
    assert!(refused(json!({"type": "text"})).contains("text"));
}

/// An internally tagged recursive enum (`Neg{e}`, `Not{e}`, `Lit{v}`) as schemars shapes it:
/// a bad leaf deep down makes a check without a budget try both recursive alternatives at
/// every level (2^depth). Under [`within`], it is refused as too complex instead, and a
/// shallow value is still judged normally.
#[test]
fn exponential_alternatives_are_cut_off_by_the_budget() {
    let variant = |op: &str, field: Value, name: &str| {
        json!({"type": "object", "properties": {"op": {"const": op}, name: field},
               "required": ["op", name], "additionalProperties": false})
    };
    let schema = json!({
        "$defs": {"E": {"oneOf": [
            variant("Neg", json!({"$ref": "#/$defs/E"}), "e"),
            variant("Not", json!({"$ref": "#/$defs/E"}), "e"),
            variant("Lit", json!({"type": "integer"}), "v"),
        ]}},
        "$ref": "#/$defs/E"
    });
    let v = Validator::compile(&schema).expect("compiles");
    let nest = |depth: usize, leaf: Value| {
        (0..depth).fold(json!({"op": "Lit", "v": leaf}), |inner, _| json!({"op": "Neg", "e": inner}))
    };
    let shallow = nest(3, json!("x"));
    assert_eq!(within(&shallow, || v.is_valid(&shallow)), Ok(false));
    assert!(within(&shallow, || v.errors(&shallow)).is_ok_and(|e| !e.is_empty()));
    let fine = nest(40, json!(1));
    assert_eq!(within(&fine, || v.is_valid(&fine)), Ok(true), "a valid value is cheap at any depth");
    // 2^60 alternatives without the budget: this test would never end.
    let hostile = nest(60, json!("x"));
    assert_eq!(within(&hostile, || v.errors(&hostile).len()), Err(TooComplex));
    assert!(!within(&hostile, || v.is_valid(&hostile)).unwrap_or(false));
    // The budget ends with the check: the next one starts afresh.
    assert_eq!(within(&shallow, || v.is_valid(&shallow)), Ok(false));
}

/// Depth is bounded too (a value as deep as serde_json allows, 128 levels, through an
/// `Option<Box<Self>>`-shaped schema): refused, not a stack overflow.
#[test]
fn deep_values_are_refused_not_a_stack_overflow() {
    let schema = json!({"properties": {"a": {"anyOf": [{"type": "null"}, {"$ref": "#"}]}},
                        "additionalProperties": false});
    let v = Validator::compile(&schema).expect("compiles");
    let deep = (0..126).fold(json!(1), |inner, _| json!({"a": inner}));
    assert_eq!(within(&deep, || v.errors(&deep).len()), Err(TooComplex));
    let shallow = (0..10).fold(json!(null), |inner, _| json!({"a": inner}));
    assert_eq!(within(&shallow, || v.is_valid(&shallow)), Ok(true));
}

#[test]
fn long_arrays_are_checked_for_repeats_by_key_with_the_same_equality() {
    // Past 16 items the check hashes a key per item; the equality must stay JSON's with
    // numbers by value and members in any order.
    let distinct: Vec<Value> = (0..40).map(|i| json!(i)).collect();
    let with = |extra: Value| {
        let mut items = distinct.clone();
        items.push(extra);
        Value::Array(items)
    };
    let objects: Vec<Value> = (0..20).map(|i| json!({"a": i, "b": [i, "x"]})).collect();
    let mut reordered = objects.clone();
    reordered.push(serde_json::from_str(r#"{"b": [7.0, "x"], "a": 7}"#).expect("json"));
    verdicts(
        json!({"uniqueItems": true}),
        &[Value::Array(distinct.clone()), with(json!(40.5)), with(json!("1")), Value::Array(objects)],
        &[with(json!(1.0)), with(json!(39)), Value::Array(reordered)],
    );
    // 200,000 distinct numbers: linear, not 2 * 10^10 comparisons.
    let many: Vec<Value> = (0..200_000u64).map(|i| json!(i)).collect();
    assert!(
        Validator::compile(&json!({"uniqueItems": true})).expect("compiles").is_valid(&Value::Array(many))
    );
}

#[test]
fn enum_const_and_unique_items_compare_numbers_by_value() {
    verdicts(
        json!({"enum": [1, "a", [2], {"k": 3}]}),
        &[json!(1.0), json!("a"), json!([2.0]), json!({"k": 3.0})],
        &[json!(2), json!("b"), json!([2, 2])],
    );
    verdicts(
        json!({"const": {"a": [1, null]}}),
        &[json!({"a": [1.0, null]})],
        &[json!({"a": [1]}), json!({})],
    );
    verdicts(
        json!({"uniqueItems": true}),
        &[json!([1, 2]), json!([{"a": 1}, {"a": 2}]), json!("x")],
        &[json!([1, 1.0]), json!([{"a": 1}, {"a": 1}])],
    );
    verdicts(json!({"uniqueItems": false}), &[json!([1, 1])], &[]);
}

#[test]
fn objects() {
    let schema = json!({
        "properties": {"a": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": {"type": "boolean"},
        "required": ["a"],
        "minProperties": 1,
        "maxProperties": 3,
        "dependentRequired": {"b": ["c"]},
        "propertyNames": {"maxLength": 3},
    });
    verdicts(
        schema,
        &[
            json!({"a": 1}),
            json!({"a": 1, "x-1": "s", "zz": true}),
            json!({"a": 1, "b": true, "c": false}),
            json!("not an object"),
        ],
        &[
            json!({}),
            json!({"a": "1"}),
            json!({"a": 1, "x-1": 1}),
            json!({"a": 1, "zz": 1}),
            json!({"a": 1, "b": true}),
            json!({"a": 1, "long": true}),
            json!({"a": 1, "b": true, "c": true, "d": true}),
        ],
    );
    verdicts(
        json!({"additionalProperties": false, "properties": {"a": {}}}),
        &[json!({"a": 1})],
        &[json!({"b": 1})],
    );
}

#[test]
fn arrays() {
    verdicts(
        json!({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false}),
        &[json!([1, "a"]), json!([1]), json!([])],
        &[json!([1, "a", 2]), json!(["a"])],
    );
    verdicts(
        json!({"items": {"type": "integer"}, "minItems": 1, "maxItems": 2}),
        &[json!([1]), json!([1, 2])],
        &[json!([]), json!([1, 2, 3]), json!([1.5])],
    );
    verdicts(
        json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
        &[json!(["a", "b", 1]), json!(["a", "b", "c"])],
        &[json!(["a", 1]), json!(["a", "b", "c", "d"]), json!([])],
    );
    verdicts(json!({"contains": {"const": 1}}), &[json!([0, 1])], &[json!([0])]);
}

#[test]
fn numbers_are_compared_exactly() {
    let max = u64::MAX;
    verdicts(json!({"maximum": max - 1}), &[json!(max - 1)], &[json!(max)]);
    // 2^53 + 1 is not an f64: an integer bound must not round it to 2^53.
    verdicts(
        json!({"exclusiveMaximum": 9007199254740993u64}),
        &[json!(9007199254740992u64)],
        &[json!(9007199254740993u64)],
    );
    verdicts(
        json!({"minimum": -1.5, "maximum": 2.5}),
        &[json!(-1), json!(2), json!(2.5)],
        &[json!(-2), json!(3), json!(2.50001)],
    );
    verdicts(json!({"exclusiveMinimum": 0}), &[json!(1), json!(0.1)], &[json!(0), json!(-0.0)]);
    verdicts(json!({"minimum": 0, "maximum": 255}), &[json!(0), json!(255.0)], &[json!(-1), json!(256)]);
    verdicts(
        json!({"multipleOf": 3}),
        &[json!(9), json!(-3), json!(6.0), json!(i64::MIN + 2)],
        &[json!(10), json!(4.5)],
    );
    verdicts(json!({"multipleOf": 0.5}), &[json!(1.5), json!(2)], &[json!(1.25)]);
    // Decimals as written: 0.3 / 0.1 is 2.9999999999999996 in floating point.
    verdicts(
        json!({"multipleOf": 0.1}),
        &[json!(0.3), json!(7), json!(1e-1), json!(-2.5)],
        &[json!(0.35), json!(1e-2)],
    );
    verdicts(json!({"multipleOf": 0.01}), &[json!(19.99), json!(1e300)], &[json!(0.001)]);
    assert!(refused(json!({"multipleOf": 0})).contains("multipleOf"));
}

#[test]
fn strings_count_scalar_values_and_patterns_search() {
    verdicts(
        json!({"minLength": 2, "maxLength": 3}),
        &[json!("éé"), json!("🍵🍵🍵")],
        &[json!("é"), json!("abcd")],
    );
    verdicts(json!({"pattern": "b+"}), &[json!("abbc"), json!(1)], &[json!("ac")]);
    verdicts(json!({"pattern": "^[a-z]+$"}), &[json!("abc")], &[json!("abc1")]);
    let e = refused(json!({"properties": {"p": {"pattern": "(?=a)"}}}));
    assert!(e.contains("#/properties/p/pattern") && e.contains("look-around"), "{e}");
    assert!(refused(json!({"pattern": "(a)\\1"})).contains("pattern"));
    assert!(refused(json!({"pattern": "\\w{1000}{1000}"})).contains("pattern"));
}

#[test]
fn combinators() {
    verdicts(json!({"anyOf": [{"type": "string"}, {"minimum": 3}]}), &[json!("a"), json!(3)], &[json!(2)]);
    verdicts(
        json!({"oneOf": [{"type": "integer"}, {"minimum": 3}]}),
        &[json!(1), json!(3.5)],
        &[json!(4), json!(0.5)],
    );
    verdicts(json!({"allOf": [{"minimum": 1}, {"maximum": 2}]}), &[json!(1)], &[json!(0), json!(3)]);
    verdicts(json!({"not": {"type": "string"}}), &[json!(1)], &[json!("a")]);
    verdicts(
        json!({"if": {"minimum": 10}, "then": {"multipleOf": 10}, "else": {"maximum": 5}}),
        &[json!(20), json!(5)],
        &[json!(15), json!(7)],
    );
    verdicts(json!({"then": {"type": "string"}}), &[json!(1)], &[]);
    verdicts(json!(true), &[json!(1)], &[]);
    verdicts(json!(false), &[], &[json!(1)]);
    assert!(refused(json!({"anyOf": []})).contains("anyOf"));
}

#[test]
fn references_are_local_and_recursion_follows_the_instance() {
    let tree = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["children"],
        }},
    });
    verdicts(tree, &[json!({"children": [{"children": []}]})], &[json!({"children": [{}]})]);
    verdicts(
        json!({"properties": {"next": {"$ref": "#"}}, "type": "object"}),
        &[json!({"next": {"next": {}}})],
        &[json!({"next": {"next": 1}})],
    );
    assert!(refused(json!({"$ref": "#/$defs/Missing"})).contains("no such schema"));
    assert!(refused(json!({"$ref": "other.json"})).contains("local"));
    // A cycle that never descends into the value would never end: refused.
    assert!(refused(json!({"anyOf": [{"$ref": "#"}]})).contains("never end"));
    assert!(
        refused(json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"not": {"$ref": "#/$defs/a"}}}}))
            .contains("never end")
    );
    // An unused definition is compiled too.
    assert!(refused(json!({"$defs": {"a": {"bogus": 1}}})).contains("bogus"));
}

#[test]
fn annotations_are_ignored_and_unknown_keywords_refused() {
    let annotated = json!({
        "title": "t", "description": "d", "default": 1, "examples": [1], "deprecated": true,
        "readOnly": true, "writeOnly": false, "$comment": "c", "$schema": "s", "$id": "i",
        "$anchor": "a", "format": "email", "contentMediaType": "text/plain",
        "contentEncoding": "base64", "x-teaagent": {"any": "thing"},
    });
    verdicts(annotated, &[json!("not an email"), json!(1)], &[]);
    let e = refused(json!({"properties": {"a": {"type": "string", "maxLenght": 3}}}));
    assert!(e.contains("`maxLenght`") && e.contains("#/properties/a"), "{e}");
    for keyword in ["unevaluatedItems", "dependentSchemas", "$dynamicRef", "additionalItems"] {
        assert!(refused(json!({ keyword: {} })).contains(keyword), "{keyword}");
    }
    assert!(refused(json!({"items": [{}]})).contains("#/items"));
}

#[test]
fn a_deep_schema_is_refused_not_a_stack_overflow() {
    let mut schema = json!({});
    for _ in 0..1000 {
        schema = json!({ "not": schema });
    }
    assert!(refused(schema).contains("deeper than"));
    let mut fine = json!({});
    for _ in 0..MAX_SCHEMA_DEPTH - 1 {
        fine = json!({ "items": fine });
    }
    assert!(Validator::compile(&fine).is_ok());
}

#[test]
fn errors_carry_their_pointer_and_kind() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a/b": {"type": "array", "items": {"type": "integer", "maximum": 3}},
            "o": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["r"],
        "additionalProperties": false,
    });
    let v = Validator::compile(&schema).expect("compiles");
    let instance = json!({"a/b": [1, 5, "x"], "o": 1, "extra": 1});
    let errors = v.errors(&instance);
    let summary: Vec<(String, String)> = errors
        .iter()
        .map(|e| {
            let kind = match &e.kind {
                ErrorKind::Maximum(n) => format!("maximum {n}"),
                ErrorKind::Type(t) => {
                    format!("type {:?}", t.iter().map(JsonType::name).collect::<Vec<_>>())
                }
                ErrorKind::AnyOf(context) => format!("anyOf {}", context.len()),
                ErrorKind::Required(p) => format!("required {p}"),
                ErrorKind::AdditionalProperties { unexpected, known } => {
                    format!("additional {unexpected:?} of {known:?}")
                }
                other => format!("{other:?}"),
            };
            (e.pointer.clone(), kind)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("/a~1b/1".to_owned(), "maximum 3".to_owned()),
            ("/a~1b/2".to_owned(), r#"type ["integer"]"#.to_owned()),
            ("/o".to_owned(), "anyOf 2".to_owned()),
            (String::new(), r#"required r"#.to_owned()),
            (String::new(), r#"additional ["extra"] of ["a/b", "o"]"#.to_owned()),
        ]
    );
    let ErrorKind::AnyOf(context) = &errors[2].kind else { panic!("anyOf") };
    assert!(context.iter().all(|branch| branch.len() == 1 && branch[0].pointer == "/o"));
}
