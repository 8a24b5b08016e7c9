//! The checks and derivations of [`super::RegistryBuilder::build`] that concern one definition
//! alone (everything but names shared by two definitions): the rules of `check.rs`, its
//! validators compiled, its header arguments, its `tools/list` entry.
//!
//! [`prepare_alone`] runs them before any registry is built, for a definition that must be left
//! out on its own when it fails them (an external server's pinned tool); the registry built
//! with it later takes what was derived rather than deriving it again.

use crate::schema::Validator;
use crate::schema::headers::header_params;
use crate::tool::ToolDef;
use crate::tool::prepared::Prepared;

use super::check::check;

/// Checks `def` alone and derives what a registry keeps of it; every problem found otherwise.
pub(super) fn prepare(def: &ToolDef) -> Result<Prepared, Vec<String>> {
    let mut problems = Vec::new();
    check(def, &mut problems);
    // Compiled now, not at the first call: a schema the validator cannot check (an unknown
    // keyword, a pattern the regex engine refuses) stops the server at its start.
    let input = Validator::compile(def.checked_input_schema())
        .map_err(|e| {
            problems.push(format!(
                "tool `{}` ({}): the input schema cannot be validated: {e}",
                def.name(),
                def.origin()
            ))
        })
        .ok();
    let output = def
        .checked_output_schema()
        .map(Validator::compile)
        .transpose()
        .map_err(|e| {
            problems.push(format!(
                "tool `{}` ({}): the output schema cannot be validated: {e}",
                def.name(),
                def.origin()
            ))
        })
        .ok();
    // An external server's tool with a broken annotation is still served (clients leave it
    // out); nothing of it is mirrored.
    let headers = match header_params(def.input_schema()) {
        Ok(found) => Some(found),
        Err(_) if def.foreign().is_some() => Some(Vec::new()),
        Err(broken) => {
            problems
                .extend(broken.into_iter().map(|p| format!("tool `{}` ({}): {p}", def.name(), def.origin())));
            None
        }
    };
    let entry = serde_json::value::to_raw_value(&def.tool_entry())
        .map_err(|e| problems.push(format!("tool `{}`: cannot serialise: {e}", def.name())))
        .ok();
    match (input, output, headers, entry) {
        (Some(input), Some(output), Some(headers), Some(entry)) if problems.is_empty() => {
            Ok(Prepared { input, output, headers, entry })
        }
        _ => Err(problems),
    }
}

/// [`prepare`], kept in `def` for the registry it is built into: the problems that would stop
/// that registry because of `def` alone, found now.
#[cfg(feature = "gateway")]
pub(crate) fn prepare_alone(def: &mut ToolDef) -> Result<(), Vec<String>> {
    let prepared = prepare(def)?;
    def.prepared.put(prepared);
    Ok(())
}

#[cfg(all(test, feature = "gateway"))]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::CallToolResult;
    use crate::registry::Registry;
    use crate::tool::Handler;

    fn with_input(schema: serde_json::Value) -> ToolDef {
        ToolDef::builder("t")
            .description("d")
            .origin("m::t")
            .input_schema(schema)
            .output_schema(
                json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            )
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
            .build()
    }

    #[test]
    fn a_definition_prepared_alone_is_served_as_if_prepared_by_the_build() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1},
            "region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["n"]});
        let mut prepared = with_input(schema.clone());
        prepare_alone(&mut prepared).expect("a valid definition");
        assert_eq!(format!("{:?}", prepared.prepared), "prepared");
        let copy = prepared.clone();
        assert_eq!(format!("{:?}", copy.prepared), "not prepared", "a clone is prepared again");
        let served = Registry::builder().tool(prepared).build().expect("valid");
        let built = Registry::builder().tool(copy).build().expect("valid");
        assert_eq!(served.listing(), built.listing());
        assert_eq!(served.inner.fingerprint, built.inner.fingerprint);
        for registry in [&served, &built] {
            let mut good = json!({"n": 2}).as_object().cloned().expect("object");
            assert_eq!(registry.check_arguments("t", &mut good), Ok(()));
            let mut bad = json!({"n": 0}).as_object().cloned().expect("object");
            let errors = registry.check_arguments("t", &mut bad).expect_err("below the minimum");
            assert_eq!(errors[0].pointer, "/n");
            let mut result = CallToolResult::structured(json!({"n": "x"}));
            assert!(registry.check_output("t", &mut result), "the output schema is checked");
            assert_eq!(registry.header_params("t").len(), 1);
        }
    }

    #[test]
    fn a_definition_prepared_alone_finds_what_the_build_would_refuse() {
        let broken = [
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?!x)"}}}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimun": 1}}}),
            json!({"type": "string"}),
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
        ];
        for schema in broken {
            let mut def = with_input(schema.clone());
            let alone = prepare_alone(&mut def).expect_err("refused alone");
            assert_eq!(format!("{:?}", def.prepared), "not prepared");
            let built = Registry::builder().tool(with_input(schema)).build().expect_err("refused");
            assert_eq!(alone, built.problems);
            assert!(!alone.is_empty());
        }
    }
}
