//! Our validator ([`super::validate`]) against `jsonschema` (a dev-dependency only): for schemas
//! generated the way tools get them (schemars through [`ObjectSchema`] and [`args_schema`], from
//! many kinds of Rust types) and many instances — arbitrary JSON, and mutations of valid
//! instances (serde's own serialisations) — both must give the same verdict.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::validate::Validator;
use super::{ObjectSchema, args_schema};
use crate::schema::tests::OneToTen;

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Low,
    High,
}

/// Documented variants: a `oneOf` of `const`s, collapsed to an `enum`.
#[derive(Serialize, JsonSchema)]
#[allow(dead_code)]
enum Documented {
    /// The first.
    A,
    /// The second.
    B,
}

#[derive(Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[allow(dead_code)]
enum Internal {
    Circle { r: u32 },
    Square { side: f64 },
    Empty,
}

#[derive(Serialize, JsonSchema)]
enum External {
    Unit,
    Tuple(u8, String),
    Struct { a: Option<i64> },
    New(bool),
}

#[derive(Serialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
#[allow(dead_code)]
enum Adjacent {
    A(u16),
    B { x: String },
    C,
}

#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Untagged {
    Num(i32),
    Text(String),
    Pair(u8, u8),
}

#[derive(Serialize, JsonSchema)]
struct Inner {
    name: String,
    #[serde(default)]
    tags: Vec<String>,
    score: Option<f32>,
}

#[derive(Serialize, JsonSchema)]
struct Node {
    label: String,
    children: Vec<Node>,
}

#[derive(Serialize, JsonSchema)]
struct Ranges {
    #[schemars(range(min = 1, max = 5))]
    level: u8,
    #[schemars(length(min = 2, max = 4))]
    code: String,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: String,
    #[schemars(length(min = 1, max = 3))]
    list: Vec<u8>,
    #[schemars(range(min = -1.5, max = 2.5))]
    ratio: f64,
}

#[derive(Serialize, JsonSchema)]
struct Args {
    unit: Unit,
    documented: Option<Documented>,
    internal: Internal,
    external: Vec<External>,
    adjacent: Option<Adjacent>,
    untagged: Untagged,
    inner: Inner,
    map: HashMap<String, u8>,
    tuple: (u8, String),
    ranges: Ranges,
    tree: Node,
    set: BTreeSet<i8>,
    int: i64,
    float: f64,
    ch: char,
    wide: u64,
    small: i16,
}

fn sample() -> Vec<Value> {
    let first = Args {
        unit: Unit::Low,
        documented: Some(Documented::B),
        internal: Internal::Circle { r: 3 },
        external: vec![
            External::Unit,
            External::Tuple(1, "x".into()),
            External::Struct { a: None },
            External::New(true),
        ],
        adjacent: Some(Adjacent::A(7)),
        untagged: Untagged::Pair(1, 2),
        inner: Inner { name: "n".into(), tags: vec!["a".into()], score: Some(0.5) },
        map: HashMap::from([("k".into(), 1)]),
        tuple: (0, "t".into()),
        ranges: Ranges { level: 3, code: "abc".into(), slug: "ok".into(), list: vec![1], ratio: 0.0 },
        tree: Node {
            label: "root".into(),
            children: vec![Node { label: "leaf".into(), children: Vec::new() }],
        },
        set: BTreeSet::from([1, 2]),
        int: -5,
        float: 1.5,
        ch: 'c',
        wide: u64::MAX,
        small: -300,
    };
    let second = Args {
        unit: Unit::High,
        documented: None,
        internal: Internal::Empty,
        external: Vec::new(),
        adjacent: Some(Adjacent::B { x: "y".into() }),
        untagged: Untagged::Text("s".into()),
        inner: Inner { name: String::new(), tags: Vec::new(), score: None },
        map: HashMap::new(),
        tuple: (255, String::new()),
        ranges: Ranges { level: 5, code: "zz".into(), slug: "a".into(), list: vec![1, 2, 3], ratio: 2.5 },
        tree: Node { label: String::new(), children: Vec::new() },
        set: BTreeSet::new(),
        int: i64::MIN,
        float: -0.0,
        ch: 'é',
        wide: 0,
        small: i16::MAX,
    };
    [first, second].iter().map(|a| serde_json::to_value(a).expect("serialises")).collect()
}

/// The schemas: the whole `#[args]` struct, the same properties through `ObjectSchema` (with a
/// an integer from 1 to 10 and optional ones), and each property alone.
fn schemas() -> Vec<(Value, Vec<Value>)> {
    let samples = sample();
    let mut out = vec![(args_schema::<Args>(), samples.clone())];
    let mut s = ObjectSchema::new();
    s.property::<Unit>("unit", Some("How."), true);
    s.property::<Option<Documented>>("documented", None, false);
    s.property::<Internal>("internal", None, true);
    s.property::<Vec<External>>("external", None, true);
    s.property::<Option<Adjacent>>("adjacent", None, false);
    s.property::<Untagged>("untagged", None, true);
    s.property::<Inner>("inner", None, true);
    s.property::<HashMap<String, u8>>("map", None, true);
    s.property::<(u8, String)>("tuple", None, true);
    s.property::<Ranges>("ranges", None, true);
    s.property::<Node>("tree", None, true);
    s.property::<BTreeSet<i8>>("set", None, true);
    s.property::<i64>("int", None, true);
    s.property::<f64>("float", None, true);
    s.property::<char>("ch", None, true);
    s.property::<u64>("wide", None, true);
    s.property::<i16>("small", None, true);
    s.property::<Option<OneToTen>>("bounded", None, false);
    s.property::<Option<Vec<Inner>>>("inners", None, false);
    let with_extra: Vec<Value> = samples
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v["bounded"] = json!(10);
            v
        })
        .collect();
    out.push((s.finish(), with_extra));
    // Each property alone, as `{"v": ...}`.
    for (name, _) in samples[0].as_object().expect("an object") {
        let whole = args_schema::<Args>();
        let mut s = serde_json::Map::new();
        s.insert("type".into(), json!("object"));
        s.insert("properties".into(), json!({ "v": whole["properties"][name] }));
        s.insert("required".into(), json!(["v"]));
        if let Some(defs) = whole.get("$defs") {
            s.insert("$defs".into(), defs.clone());
        }
        let valid = samples.iter().map(|sample| json!({ "v": sample[name] })).collect();
        out.push((Value::Object(s), valid));
    }
    // serde's `flatten` of an enum: a `oneOf` next to the struct's `properties`, closed with
    // `unevaluatedProperties: false`.
    out.push((
        args_schema::<Flat>(),
        vec![
            serde_json::to_value(Flat { name: "n".into(), shape: Internal::Circle { r: 1 } }).expect("json"),
            serde_json::to_value(Flat { name: String::new(), shape: Internal::Empty }).expect("json"),
        ],
    ));
    out.push((
        args_schema::<FlatStrict>(),
        vec![
            serde_json::to_value(FlatStrict { name: "n".into(), ext: External::New(true) }).expect("json"),
            serde_json::to_value(FlatStrict { name: "n".into(), ext: External::Struct { a: Some(1) } })
                .expect("json"),
        ],
    ));
    out.extend(hand_written());
    out
}

/// Hand-written schemas for the keywords schemars does not generate, each as `{"v": ...}`, with
/// valid values.
fn hand_written() -> Vec<(Value, Vec<Value>)> {
    let cases = [
        (
            json!({
                "patternProperties": {"^a": {"type": "integer"}},
                "propertyNames": {"maxLength": 2},
                "dependentRequired": {"a": ["b"]},
                "minProperties": 1,
                "maxProperties": 3,
                "additionalProperties": {"type": "string"},
            }),
            vec![json!({"a": 1, "b": "x"}), json!({"k": ""})],
        ),
        (
            json!({"type": "array", "contains": {"type": "string"}, "minContains": 1, "maxContains": 2, "uniqueItems": true}),
            vec![json!(["a", 1]), json!([{"k": 1}, "b", "c"])],
        ),
        (
            json!({"if": {"type": "integer"}, "then": {"multipleOf": 3, "exclusiveMinimum": 0}, "else": {"not": {"type": "null"}}}),
            vec![json!(3), json!("x"), json!(0.5)],
        ),
        (
            json!({"allOf": [{"minimum": -1.5}, {"exclusiveMaximum": 11}], "multipleOf": 0.5}),
            vec![json!(-1.5), json!(10.5), json!(2)],
        ),
        (json!({"multipleOf": 0.1, "maximum": 2.5}), vec![json!(0.3), json!(2.5), json!(-7)]),
        (
            json!({
                "properties": {"a": {}},
                "allOf": [{"properties": {"b": {"type": "integer"}}}],
                "anyOf": [{"required": ["c"], "properties": {"c": true}}, {"patternProperties": {"^d": true}}],
                "if": {"properties": {"e": {"const": 1}}, "required": ["e"]},
                "then": {"properties": {"f": true}},
                "unevaluatedProperties": {"type": "string"},
            }),
            vec![
                json!({"a": 1, "b": 2, "c": 3}),
                json!({"d1": 1, "z": "s"}),
                json!({"c": 1, "e": 1, "f": [1]}),
            ],
        ),
        (json!({"enum": [1, "a", [1], {"k": null}]}), vec![json!(1), json!({"k": null})]),
        (json!({"const": [1.0, {"a": 2}]}), vec![json!([1, {"a": 2}])]),
        (
            json!({"type": ["string", "integer"], "minLength": 2, "pattern": "^[a-z]", "maximum": 5}),
            vec![json!("ab"), json!(5), json!(-3)],
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}], "anyOf": [{"type": "number"}, {"type": "null"}]}),
            vec![json!(1), json!(2.5), json!(null)],
        ),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": {"type": "integer"}, "minItems": 1}),
            vec![json!(["a"]), json!(["a", true, 3, 4])],
        ),
    ];
    cases
        .into_iter()
        .map(|(schema, valid)| {
            let wrapped = json!({"type": "object", "properties": {"v": schema}, "required": ["v"]});
            (wrapped, valid.into_iter().map(|v| json!({ "v": v })).collect())
        })
        .collect()
}

/// Keys and strings that the schemas above mean something for.
const WORDS: &[&str] = &[
    "v", "low", "high", "A", "B", "kind", "circle", "square", "empty", "r", "side", "Unit", "Tuple",
    "Struct", "New", "a", "t", "c", "x", "C", "name", "tags", "score", "label", "children", "level", "code",
    "slug", "list", "ratio", "unit", "internal", "tree", "", "ab", "abcde", "Ab", "é", "k",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_owned),
        1 => "[a-zA-Z0-9 é]{0,6}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..12).prop_map(Value::from),
        prop_oneof![
            Just(json!(255)),
            Just(json!(256)),
            Just(json!(-129)),
            Just(json!(32767)),
            Just(json!(32768)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(4294967296u64)),
        ],
        prop_oneof![
            Just(json!(1.0)),
            Just(json!(2.5)),
            Just(json!(2.50001)),
            Just(json!(-1.5)),
            Just(json!(-1.6)),
            Just(json!(0.5)),
            Just(json!(0.3)),
            Just(json!(0.35)),
            Just(json!(10.5)),
            Just(json!(11)),
            Just(json!(-0.0)),
            Just(json!(1e300)),
            Just(json!(18446744073709551616.0)),
        ],
        word().prop_map(Value::from),
    ]
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((word(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Every pointer in `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            for (k, v) in o {
                pointers(v, crate::schema::pointer::join_segment(&at, k), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(Value),
    Remove,
    Insert(String, Value),
    Nudge(f64),
    Append(String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        arbitrary_json().prop_map(Mutation::Replace),
        Just(Mutation::Remove),
        (word(), arbitrary_json()).prop_map(|(k, v)| Mutation::Insert(k, v)),
        prop_oneof![Just(1.0), Just(-1.0), Just(0.5), Just(1e20)].prop_map(Mutation::Nudge),
        word().prop_map(Mutation::Append),
    ]
}

fn mutate(mut value: Value, pick: usize, m: &Mutation) -> Value {
    let mut all = Vec::new();
    pointers(&value, String::new(), &mut all);
    let at = &all[pick % all.len()];
    if let Mutation::Remove = m {
        let (parent, last) = at.rsplit_once('/').unwrap_or(("", ""));
        match value.pointer_mut(parent) {
            Some(Value::Object(o)) => {
                o.shift_remove(&last.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = last.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }
        return value;
    }
    let Some(target) = value.pointer_mut(at) else { return value };
    match m {
        Mutation::Replace(v) => *target = v.clone(),
        Mutation::Insert(k, v) => match target {
            Value::Object(o) => {
                o.insert(k.clone(), v.clone());
            }
            Value::Array(items) => items.push(v.clone()),
            other => *other = v.clone(),
        },
        Mutation::Nudge(by) => {
            if let Some(n) = target.as_i64() {
                *target = json!(n.saturating_add(*by as i64));
            } else if let Some(f) = target.as_f64() {
                *target = json!(f + by);
            } else if let Some(s) = target.as_str() {
                *target = json!(format!("{s}{s}"));
            }
        }
        Mutation::Append(s) => {
            if let Some(t) = target.as_str() {
                *target = json!(format!("{t}{s}"));
            } else {
                *target = json!(s);
            }
        }
        Mutation::Remove => {}
    }
    value
}

struct Pair {
    schema: Value,
    ours: Validator,
    theirs: jsonschema::Validator,
    valid: Vec<Value>,
}

/// Compiled once for all cases.
static PAIRS: LazyLock<Vec<Pair>> = LazyLock::new(|| {
    schemas()
        .into_iter()
        .map(|(schema, valid)| Pair {
            ours: Validator::compile(&schema).unwrap_or_else(|e| panic!("ours compiles {schema}: {e}")),
            theirs: jsonschema::validator_for(&schema).expect("jsonschema compiles"),
            schema,
            valid,
        })
        .collect()
});

fn same_verdict(pair: &Pair, instance: &Value) -> Result<(), TestCaseError> {
    let theirs = pair.theirs.is_valid(instance);
    let ours = pair.ours.is_valid(instance);
    prop_assert_eq!(ours, theirs, "schema {}\ninstance {}", pair.schema, instance);
    // The error list agrees with the verdict.
    prop_assert_eq!(pair.ours.errors(instance).is_empty(), ours, "instance {}", instance);
    Ok(())
}

#[test]
fn serde_s_own_values_are_valid_for_both() {
    for pair in PAIRS.iter() {
        for v in &pair.valid {
            assert!(pair.theirs.is_valid(v), "jsonschema refuses {v} for {}", pair.schema);
            assert!(pair.ours.is_valid(v), "we refuse {v} for {}: {:?}", pair.schema, pair.ours.errors(v));
        }
    }
}

/// The generated cases are not all of one verdict (or the comparison would prove little).
#[test]
fn the_cases_cover_both_verdicts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut valid, mut invalid) = (0, 0);
    for _ in 0..200 {
        let pick = any::<usize>().new_tree(&mut runner).expect("a value").current();
        let m = mutation().new_tree(&mut runner).expect("a value").current();
        for pair in PAIRS.iter() {
            let instance = mutate(pair.valid[pick % pair.valid.len()].clone(), pick, &m);
            if pair.ours.is_valid(&instance) { valid += 1 } else { invalid += 1 }
        }
    }
    assert!(valid > 200 && invalid > 200, "{valid} valid, {invalid} invalid");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// The hashed `uniqueItems` check agrees with comparing every pair, on arrays long enough
    /// to take the hashed path, with repeats made likely (numbers like `1` and `1.0`, objects
    /// whose members come in another order).
    #[test]
    fn unique_items_by_key_agree_with_every_pair(items in proptest::collection::vec(arbitrary_json(), 17..40), repeat in any::<bool>()) {
        let mut items = items;
        if repeat {
            items.push(items[items.len() / 2].clone());
        }
        prop_assert_eq!(
            crate::schema::validate::all_unique_for_tests(&items),
            crate::schema::validate::pairwise_unique_for_tests(&items)
        );
    }

    #[test]
    fn arbitrary_json_gets_the_same_verdict(value in arbitrary_json(), wrap in any::<bool>()) {
        let instance = if wrap { json!({ "v": value }) } else { value };
        for pair in PAIRS.iter() {
            same_verdict(pair, &instance)?;
        }
    }

    #[test]
    fn mutated_valid_instances_get_the_same_verdict(pick in any::<usize>(), m in mutation(), which in any::<usize>()) {
        for pair in PAIRS.iter() {
            let base = pair.valid[which % pair.valid.len()].clone();
            let instance = mutate(base, pick, &m);
            same_verdict(pair, &instance)?;
        }
    }
}

#[derive(Serialize, JsonSchema)]
struct Flat {
    name: String,
    #[serde(flatten)]
    shape: Internal,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlatStrict {
    name: String,
    #[serde(flatten)]
    ext: External,
}
