//! [`ArgumentError`]: one problem with a tool's arguments, and the invalid-arguments message that
//! lists them.

use serde::Serialize;

/// One schema violation of a tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentError {
    /// A JSON pointer into the arguments (`""` is the whole object), as deep as the problem:
    /// `/due/days`, not `/due`.
    pub pointer: String,
    /// What is wrong there and what would be accepted, e.g. `must be one of "low", "high"
    /// (got "urgent")`.
    pub message: String,
}

impl ArgumentError {
    /// Longest message kept, in characters (a message quoting a value it was given, such as
    /// serde's `invalid type: string "…"`, is cut there).
    pub const MAX_MESSAGE_CHARS: usize = 400;

    /// A problem at `pointer`, with a message from elsewhere (a deserializer, a tool): escaped
    /// ([`crate::visible::escape`]) and cut to [`Self::MAX_MESSAGE_CHARS`], since it may quote
    /// what the client sent.
    ///
    /// ```
    /// use teaagent_core::error::ArgumentError;
    /// let e = ArgumentError::new("/n", format!("invalid value: {}\u{1b}", "9".repeat(1000)));
    /// assert!(e.message.ends_with("more characters⟫"));
    /// assert!(!e.message.contains('\u{1b}'));
    /// ```
    pub fn new(pointer: impl Into<String>, message: impl AsRef<str>) -> Self {
        Self {
            pointer: pointer.into(),
            message: crate::visible::bounded(message.as_ref(), Self::MAX_MESSAGE_CHARS),
        }
    }
}

/// Longest pointer shown in a message, in characters (`data.errors` has it whole).
const MAX_POINTER_CHARS: usize = 200;

/// Most problems listed in a message (`data.errors` has them all).
const MAX_LISTED_PROBLEMS: usize = 50;

/// The rest of an invalid-arguments message: `: /p: what` for one problem, else
/// ` (N problems):` and one `- /p: what` line each.
pub(super) fn report(errors: &[ArgumentError]) -> String {
    let line = |e: &ArgumentError| {
        if e.pointer.is_empty() {
            e.message.clone()
        } else {
            format!("{}: {}", crate::visible::bounded(&e.pointer, MAX_POINTER_CHARS), e.message)
        }
    };
    match errors {
        [] => String::new(),
        [one] => format!(": {}", line(one)),
        many => {
            let mut text = format!(" ({} problems):", many.len());
            for e in many.iter().take(MAX_LISTED_PROBLEMS) {
                text.push_str("\n- ");
                text.push_str(&line(e));
            }
            if many.len() > MAX_LISTED_PROBLEMS {
                text.push_str(&format!(
                    "\n- and {} more (data.errors lists them all)",
                    many.len() - MAX_LISTED_PROBLEMS
                ));
            }
            text
        }
    }
}
