//! `prompts/list`, `prompts/get` and `completion/complete`: the wire types of prompts
//! ([`crate::prompt`] is how a server offers them).

use serde::{Deserialize, Serialize};

use super::{Content, JsonObject};

/// One entry of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The name `prompts/get` asks for.
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes (all strings).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    pub required: bool,
}

/// `prompts/list` result.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts, in the order the server added them.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `prompts/get` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// Which prompt.
    pub name: String,
    /// Its arguments (strings by the spec; other JSON values are refused).
    #[serde(default)]
    pub arguments: Option<JsonObject>,
    /// Modern era: the answers to the questions of an earlier `input_required` result.
    #[serde(default)]
    pub input_responses: Option<serde_json::Value>,
    /// Modern era: the sealed state of that earlier result, echoed.
    #[serde(default)]
    pub request_state: Option<serde_json::Value>,
}

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image, audio or an embedded resource.
    pub content: Content,
}

impl PromptMessage {
    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        Self { role: Role::User, content: content.into() }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self { role: Role::Assistant, content: content.into() }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text { text }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

/// `prompts/get` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A result of these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self { description: None, messages }
    }

    /// One user message of text.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![PromptMessage::user(text.into())])
    }
}

/// `completion/complete` params.
#[derive(Debug, Clone, Deserialize)]
pub struct CompleteParams {
    /// What is being completed: a prompt's or a resource template's argument.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument and what the user typed so far.
    pub argument: CompletionArgument,
    /// The arguments already filled in.
    #[serde(default)]
    pub context: Option<CompletionContext>,
}

/// `ref` of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// A prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A resource template, by its URI template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What was typed so far.
    pub value: String,
}

/// The arguments already given.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CompletionContext {
    /// By name.
    #[serde(default)]
    pub arguments: std::collections::BTreeMap<String, String>,
}

/// `completion/complete` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
}

/// Suggestions for one argument: at most 100 values (the spec's limit).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, best first.
    pub values: Vec<String>,
    /// How many there are in all, when more than `values` holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values` holds.
    pub has_more: bool,
}

impl Completion {
    /// The spec's limit of values in one answer.
    pub const MAX_VALUES: usize = 100;

    /// Suggestions from `values`, cut at [`Completion::MAX_VALUES`] (then `hasMore` and `total`
    /// say so).
    pub fn of(mut values: Vec<String>) -> Self {
        let total = values.len();
        let has_more = total > Self::MAX_VALUES;
        values.truncate(Self::MAX_VALUES);
        Self { values, total: has_more.then_some(total as u64), has_more }
    }
}
