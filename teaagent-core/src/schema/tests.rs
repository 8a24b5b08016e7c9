//! The schema generators' unit tests: the shape clients get.

use super::*;

#[derive(JsonSchema)]
#[allow(dead_code)]
enum Mode {
    /// Fast.
    Fast,
    /// Careful.
    Careful,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Node {
    name: String,
    children: Vec<Node>,
}

#[test]
fn properties_in_order_with_bounds_and_enums() {
    let mut s = ObjectSchema::new();
    s.property::<String>("zeta", Some("First."), true);
    s.property::<u32>("alpha", None, false);
    s.property::<Mode>("mode", Some("How."), true);
    let v = s.finish();
    let keys: Vec<&String> = v["properties"].as_object().expect("properties").keys().collect();
    assert_eq!(keys, ["zeta", "alpha", "mode"]);
    assert_eq!(v["properties"]["alpha"], json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64}));
    assert_eq!(v["properties"]["mode"]["enum"], json!(["Fast", "Careful"]));
    assert_eq!(v["properties"]["mode"]["type"], "string");
    assert_eq!(v["properties"]["mode"]["description"], "How.\n\n- `Fast`: Fast.\n- `Careful`: Careful.");
    assert_eq!(v["required"], json!(["zeta", "mode"]));
    assert_eq!(v["additionalProperties"], json!(false));
    assert!(!has_refs(&v));
}

#[test]
fn recursive_types_keep_their_definitions() {
    let mut s = ObjectSchema::new();
    s.property::<Node>("tree", None, true);
    let v = s.finish();
    assert!(has_refs(&v));
    assert!(v["$defs"]["Node"].is_object(), "{v}");
}

#[derive(JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[allow(dead_code)]
enum Shape {
    Circle { r: u32 },
    Square { side: u32 },
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Flattened {
    name: String,
    #[serde(flatten)]
    shape: Shape,
}

#[test]
fn a_flattened_enum_keeps_its_fields_and_unknown_ones_are_refused() {
    let schema = args_schema::<Flattened>();
    assert_eq!(schema["unevaluatedProperties"], json!(false), "{schema}");
    assert!(schema.get("additionalProperties").is_none(), "{schema}");
    let v = Validator::compile(&schema).expect("compiles");
    assert!(v.is_valid(&json!({"name": "n", "kind": "circle", "r": 1})));
    let bad = json!({"name": "n", "kind": "circle", "r": 1, "side": 2});
    let errors: Vec<(String, String)> =
        argument_errors(&v, &bad).into_iter().map(|e| (e.pointer, e.message)).collect();
    assert_eq!(
        errors,
        [("/side".to_owned(), "unknown property `side`; the properties are `name`".to_owned())]
    );
    // A plain struct still gets `additionalProperties: false`.
    assert_eq!(args_schema::<Node>()["additionalProperties"], json!(false));
}

#[test]
fn empty_objects_still_have_properties() {
    assert_eq!(
        ObjectSchema::new().finish(),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

/// An integer from 1 to 10, with the schema `crate::Bounded<1, 10>` has (written here: `Bounded`
/// is a tool parameter type, a floor above the schemas these tests check).
pub(super) struct OneToTen;

impl schemars::JsonSchema for OneToTen {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OneToTen".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": 10})
    }
}
