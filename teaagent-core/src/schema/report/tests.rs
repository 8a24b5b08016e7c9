//! The report's unit tests: the words for each kind of problem, the alternative chosen for an
//! `anyOf`/`oneOf`, and the bounds on what is quoted back.

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
    s.property::<Option<crate::schema::tests::OneToTen>>("repeat", None, false);
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
