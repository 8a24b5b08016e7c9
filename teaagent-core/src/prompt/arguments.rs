//! A prompt's arguments as its handler and completers read them (`prompt.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

/// The arguments of one `prompts/get` (or the filled-in ones of a `completion/complete`), checked
/// against what the prompt declares before its handler runs: a required argument is always
/// there, an optional one is [`PromptArguments::get`]'s `None` when the client left it out.
///
/// Reading an argument the prompt does not declare (a misspelled name) is a bug of the handler:
/// it panics with a message that names the argument and the ones the prompt has, and the client
/// gets `-32603` saying so. `args["name"]` reads an argument that must be there (a required one,
/// or an optional one the handler checked); for an optional one left out it panics the same way,
/// naming it.
///
/// ```
/// use teaagent_core::prompt::{PromptDef, Prompts};
/// use teaagent_core::mcp::prompts::GetPromptResult;
///
/// let def = PromptDef::new("review")
///     .argument("file", "The file to review", true)
///     .argument("focus", "What to look at first", false)
///     .handler(|_ctx, args| async move {
///         let focus = args.get("focus").unwrap_or("bugs");
///         Ok(GetPromptResult::text(format!("Review {} for {focus}.", &args["file"])))
///     });
/// # let _ = Prompts::new().prompt(def);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptArguments {
    prompt: Arc<str>,
    declared: Arc<[String]>,
    values: BTreeMap<String, String>,
}

impl PromptArguments {
    /// No values yet, for prompt `prompt` with the arguments `declared`.
    pub(crate) fn new(prompt: &str, declared: Arc<[String]>) -> Self {
        Self { prompt: prompt.into(), declared, values: BTreeMap::new() }
    }

    /// Sets an argument the prompt declares (the server checked it).
    pub(crate) fn insert(&mut self, name: String, value: String) {
        self.values.insert(name, value);
    }

    /// The value of the argument `name`; `None` when the client left it out (an optional one).
    ///
    /// # Panics
    ///
    /// When the prompt declares no argument `name` (see the type's docs).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.declared(name);
        self.values.get(name).map(String::as_str)
    }

    /// Whether the client gave the argument `name`.
    ///
    /// # Panics
    ///
    /// When the prompt declares no argument `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every argument given, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many arguments were given.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none was given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn declared(&self, name: &str) {
        if !self.declared.iter().any(|d| d == name) {
            panic!(
                "prompt `{}` has no argument `{name}` (its arguments: {})",
                self.prompt,
                names(&self.declared)
            );
        }
    }
}

impl std::ops::Index<&str> for PromptArguments {
    type Output = String;

    fn index(&self, name: &str) -> &String {
        self.declared(name);
        match self.values.get(name) {
            Some(value) => value,
            None => panic!(
                "the optional argument `{name}` of prompt `{}` was not given: read it with `args.get(\"{name}\")`",
                self.prompt
            ),
        }
    }
}

/// `` `a`, `b` `` (or `none`).
pub(crate) fn names(list: &[String]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    list.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
