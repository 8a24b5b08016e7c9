//! What a tool function may return, and how it becomes a `tools/call` result.
//!
//! | return type | result |
//! |---|---|
//! | `String`, `&'static str` | one text content |
//! | [`Json<T>`] (`T: Serialize + JsonSchema`) | `structuredContent`, the same JSON as text, and an `outputSchema` in `tools/list` |
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
/// the tool's `outputSchema`. `T` must serialize to a JSON object.
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

impl<T: Serialize + JsonSchema> IntoToolOutput for Json<T> {
    fn output_schema() -> Option<Value> {
        Some(crate::schema::output_schema::<T>())
    }

    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        match serde_json::to_value(&self.0) {
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
