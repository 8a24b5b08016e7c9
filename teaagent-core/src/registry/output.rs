//! Structured output that breaks its tool's own `outputSchema`: what [`super::Registry::check_output`]
//! sends instead, and how it explains the problem to the tool's author.

use std::fmt;

use serde_json::Value;

use crate::error::ArgumentError;
use crate::mcp::JsonObject;

/// `reason` in the `_meta` of a result replaced by [`super::Registry::check_output`].
pub const OUTPUT_MISMATCH_REASON: &str = "invalid_output";

/// Structured output that breaks its tool's own `outputSchema` ([`super::Registry::check_output`]).
/// Its `Display` form is the message the client gets: the tool, every problem at its JSON
/// pointer, and the likely cause with what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputMismatch {
    /// The tool whose result it was.
    pub tool: String,
    /// Each problem, at its JSON pointer into `structuredContent`.
    pub problems: Vec<ArgumentError>,
}

impl OutputMismatch {
    /// The `_meta` of the error result that replaces the output:
    /// `{"tool", "reason": "invalid_output", "errors": [{"pointer", "message"}], "likelyCause"}`.
    pub fn data(&self) -> JsonObject {
        let errors: Vec<Value> = self
            .problems
            .iter()
            .map(|p| serde_json::json!({"pointer": p.pointer, "message": p.message}))
            .collect();
        let mut data = JsonObject::new();
        data.insert("tool".into(), Value::String(self.tool.clone()));
        data.insert("reason".into(), Value::from(OUTPUT_MISMATCH_REASON));
        data.insert("errors".into(), Value::Array(errors));
        data.insert("likelyCause".into(), Value::from(self.likely_cause()));
        data
    }

    /// The likely cause of the problems, phrased for the tool's author.
    pub fn likely_cause(&self) -> &'static str {
        let any = |needle: &str| self.problems.iter().any(|p| p.message.contains(needle));
        if self.problems.iter().any(|p| p.pointer.is_empty() && p.message.starts_with("missing:")) {
            "the tool returned no structured output; return `Json<T>` (or set \
             `CallToolResult::structured_content`) on success"
        } else if any("missing required property") {
            "a field the schema requires was left out of the serialized value: a \
             `#[serde(skip_serializing_if = ...)]` or `#[serde(skip_serializing)]` field must not be \
             required (`Json<T>` schemas follow that; a hand-written `outputSchema` or a custom \
             `JsonSchema` impl must too)"
        } else if any("(got null)") {
            "a field serialized as `null`: make it an `Option<T>` in the type the schema is \
             generated from, or skip it when empty (`#[serde(skip_serializing_if = \"Option::is_none\")]`)"
        } else if any("unknown property") {
            "the value has a property the schema does not declare: the type that is serialized \
             differs from the one the schema was generated from (a `#[serde(flatten)]` or a \
             custom `Serialize` impl?)"
        } else {
            "the serialized value differs from the schema: a custom `Serialize` impl, a \
             `#[serde(...)]` attribute the schema does not reflect, or a hand-written \
             `outputSchema` that disagrees with the tool's result"
        }
    }
}

impl fmt::Display for OutputMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool `{}` returned structured output that does not match its own outputSchema, so it \
             was not sent:",
            crate::visible::escape(&self.tool)
        )?;
        for p in &self.problems {
            let at = if p.pointer.is_empty() { "(the whole value)" } else { &p.pointer };
            write!(f, "\n  {at}: {}", p.message)?;
        }
        write!(f, "\nLikely cause: {}. This is a bug of the tool, not of the call.", self.likely_cause())
    }
}
