//! What a tool function may return, and how it becomes a `tools/call` result.
//!
//! | return type | result |
//! |---|---|
//! | `String`, `&'static str` | one text content |
//! | [`Json<T>`] (`T: Serialize + JsonSchema`) | `structuredContent`, the same JSON as text, and an `outputSchema` in `tools/list`; a `T` that is not an object is wrapped as `{"result": …}` |
//! | [`CallToolResult`], [`Content`], `Vec<Content>` | as given (images, resource links, several contents) |
//! | `()` | no content |
//! | `Result<T, E>` with `T` one of the above and `E: Display` | `Ok` as above; `Err` a result with `isError: true` and the error's message as text |

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::mcp::{CallToolResult, Content};

/// Structured output: `T` goes out as `structuredContent` (and as JSON text), and `T`'s schema is
/// the tool's `outputSchema`.
///
/// MCP requires `structuredContent` to be a JSON object. When `T`'s schema is not an object
/// schema (`Vec<U>`, a number, a string, an `Option`, an enum, `serde_json::Value`, ...), the value
/// is wrapped as `{"result": <value>}` and the `outputSchema` says so: an object with the single
/// required property `result` (`T`'s schema) and `"x-teaagent-wrapped": true`, so a client can
/// unwrap it (the convention FastMCP uses). The text content stays the bare value's JSON. The
/// choice follows `T`'s schema, not each value, so every result of a tool has the same shape.
/// This is accepted rather than refused at compile time because the macro sees only the type's
/// name (a type alias or a wrapper struct would slip through), while the schema is certain.
///
/// ```
/// use teaagent_core::{Json, tool};
///
/// /// The words of a text, in order.
/// #[tool(read_only)]
/// fn words(text: String) -> Json<Vec<String>> {
///     // `structuredContent`: {"result": ["a", "b"]}
///     Json(text.split_whitespace().map(str::to_owned).collect())
/// }
/// # fn main() {}
/// ```
///
/// ```
/// use teaagent_core::{Json, tool};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Count {
///     lines: u64,
/// }
///
/// /// Count the lines of a text.
/// #[tool(read_only)]
/// fn count_lines(text: String) -> Json<Count> {
///     Json(Count { lines: text.lines().count() as u64 })
/// }
/// # fn main() {}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

/// An error a tool returns: its message reaches the client as a result with `isError: true`.
/// Any `E: Display` works as a tool's error type; this one is there for convenience and converts
/// from I/O errors and strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message (written for the agent: what went wrong, what to do).
    pub fn new(message: impl fmt::Display) -> Self {
        Self { message: message.to_string() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self::new(e)
    }
}

impl From<crate::workspace::PathError> for ToolError {
    fn from(e: crate::workspace::PathError) -> Self {
        Self::new(e)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// A type a tool function can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool",
    label = "not a tool return type",
    note = "return `String`, `&'static str`, `Json<T>`, `CallToolResult`, `Content`, `Vec<Content>` or `()`, or a `Result<_, E>` of one of those with `E: Display`"
)]
pub trait IntoToolOutput {
    /// The `outputSchema`, for structured output.
    fn output_schema() -> Option<Value> {
        None
    }

    /// The result (or a framework error, e.g. structured output that cannot be serialized).
    fn into_tool_result(self) -> Result<CallToolResult, Error>;
}

impl IntoToolOutput for String {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for () {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::contents(Vec::new()))
    }
}

impl IntoToolOutput for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(self)
    }
}

impl IntoToolOutput for Content {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::contents(vec![self]))
    }
}

impl IntoToolOutput for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        Ok(CallToolResult::contents(self))
    }
}

/// The key a non-object structured output is wrapped under.
const WRAP_KEY: &str = "result";
/// The `outputSchema` keyword that marks a wrapped output.
const WRAPPED_MARK: &str = "x-teaagent-wrapped";

/// Whether a schema describes only JSON objects (`"type": "object"`).
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("object"))
}

/// `{"type": "object", "properties": {"result": schema}, ...}`, with the definitions kept at the
/// root so that `#/$defs/...` references still resolve.
fn wrapped_schema(mut inner: Value) -> Value {
    let defs = inner.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut outer = serde_json::json!({
        "type": "object",
        "properties": { WRAP_KEY: inner },
        "required": [WRAP_KEY],
        WRAPPED_MARK: true,
    });
    if let (Some(defs), Some(o)) = (defs, outer.as_object_mut()) {
        o.insert("$defs".into(), defs);
    }
    outer
}

/// Whether `Json<T>` wraps its value: decided once per type from `T`'s schema (generating it
/// costs more than a call should), remembered by type name (lifetimes play no part in it).
fn wraps<T: JsonSchema>() -> bool {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static DECIDED: OnceLock<Mutex<HashMap<&'static str, bool>>> = OnceLock::new();
    let key = std::any::type_name::<T>();
    let decided = DECIDED.get_or_init(Mutex::default);
    if let Some(&wrap) = decided.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(key) {
        return wrap;
    }
    let wrap = !is_object_schema(&crate::schema::output_schema::<T>());
    decided.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, wrap);
    wrap
}

impl<T: Serialize + JsonSchema> IntoToolOutput for Json<T> {
    fn output_schema() -> Option<Value> {
        let schema = crate::schema::output_schema::<T>();
        Some(if is_object_schema(&schema) { schema } else { wrapped_schema(schema) })
    }

    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        match serde_json::to_value(&self.0) {
            Ok(value) if wraps::<T>() => {
                let mut result = CallToolResult::structured(value);
                result.structured_content =
                    result.structured_content.take().map(|value| serde_json::json!({ WRAP_KEY: value }));
                Ok(result)
            }
            Ok(value) => Ok(CallToolResult::structured(value)),
            Err(e) => {
                Err(Error::Internal { details: format!("structured output could not be serialized: {e}") })
            }
        }
    }
}

impl<T: IntoToolOutput, E: fmt::Display> IntoToolOutput for Result<T, E> {
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(e) => Ok(CallToolResult::error(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A recursive type keeps a definition: it must move to the wrapped schema's root, where
    /// `#/$defs/...` points.
    #[derive(Serialize, JsonSchema)]
    struct Node {
        children: Vec<Node>,
    }

    #[test]
    fn wrapped_schemas_keep_their_definitions_at_the_root() {
        let schema = <Json<Vec<Node>> as IntoToolOutput>::output_schema().expect("a schema");
        assert_eq!(schema[WRAPPED_MARK], true, "{schema}");
        assert!(schema["properties"][WRAP_KEY].get("$defs").is_none(), "{schema}");
        let text = schema.to_string();
        let reference = text.split("\"$ref\":\"#/$defs/").nth(1).expect("a reference");
        let name = &reference[..reference.find('"').expect("end of the name")];
        assert!(schema["$defs"][name].is_object(), "{schema}");
    }

    #[test]
    fn objects_are_not_wrapped_and_other_values_are() {
        assert!(
            <Json<std::collections::HashMap<String, u8>> as IntoToolOutput>::output_schema()
                .is_some_and(|s| s.get(WRAPPED_MARK).is_none())
        );
        let result = Json(Some(3)).into_tool_result().expect("serializable");
        assert_eq!(result.structured_content, Some(json!({"result": 3})));
        let result = Json(serde_json::Value::from("x")).into_tool_result().expect("serializable");
        assert_eq!(result.structured_content, Some(json!({"result": "x"})));
    }
}
