//! Prompts: message templates a client offers its user (`prompts/list`, `prompts/get`), with
//! completion of their arguments (`completion/complete`).
//!
//! A server offers prompts with [`Server::prompts`](crate::Server::prompts). Each [`PromptDef`]
//! names its arguments (all strings, as MCP has them) and has a handler that turns them into
//! messages. The handler gets a [`ToolContext`]: it can report progress, see cancellation and
//! **ask the client for input** ([`ToolContext::ask`]) in either protocol era, exactly as a tool
//! does (`prompts/get` answers `input_required` in the modern era).
//!
//! ```
//! use teaagent_core::prompt::{PromptDef, Prompts};
//! use teaagent_core::mcp::prompts::GetPromptResult;
//! use teaagent_core::{Registry, Server};
//!
//! let prompts = Prompts::new().prompt(
//!     PromptDef::new("review")
//!         .description("Review a change for bugs")
//!         .argument("focus", "What to look at first", true)
//!         .complete("focus", |typed, _filled| {
//!             ["security", "speed", "style"].into_iter().filter(|v| v.starts_with(typed)).map(String::from).collect()
//!         })
//!         .handler(|_ctx, args| async move {
//!             Ok(GetPromptResult::text(format!("Review this change, {} first.", args["focus"])))
//!         }),
//! );
//! let server = Server::new(Registry::builder().build().unwrap()).prompts(prompts);
//! # let _ = server;
//! ```
//!
//! Decisions:
//! - An unknown prompt, a missing required argument, an argument that is not a string and an
//!   argument the prompt does not take are `-32602` (`reason: "invalid_prompt_arguments"` or
//!   `"unknown_prompt"`), before the handler runs. The handler reads them from
//!   [`PromptArguments`]: an optional one left out is `None`; a name the prompt does not
//!   declare is a bug the answer names.
//! - A completer completes one argument ([`PromptDef::complete`]); one for an argument the
//!   prompt does not declare keeps the server from starting, naming both.
//! - A handler's error is `-32603` with its message: a prompt has no `isError` result.
//! - `prompts/list` is one page: prompts are few and fixed for the life of the server.
//! - A prompt without a handler stops the server before it serves (an `InvalidInput` error),
//!   rather than being listed and failing when asked for.
//! - Completion answers at most 100 values (`hasMore` says when there were more); a prompt
//!   without a completer, or an argument it does not know, gets no values (not an error).

mod arguments;

use std::future::Future;
use std::sync::Arc;

pub use arguments::PromptArguments;

use crate::ToolContext;
use crate::mcp::prompts::{GetPromptResult, Prompt, PromptArgument};
use crate::task::BoxFuture;
use crate::tool::ToolError;

type Handler = Arc<
    dyn Fn(ToolContext, PromptArguments) -> BoxFuture<'static, Result<GetPromptResult, ToolError>>
        + Send
        + Sync,
>;
type Completer = Arc<dyn Fn(&str, &PromptArguments) -> Vec<String> + Send + Sync>;

/// One prompt: its name, description, arguments, handler and (optionally) completer.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) handler: Option<Handler>,
    /// Completers, by the argument each completes.
    pub(crate) completers: Vec<(String, Completer)>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef").field("prompt", &self.prompt).finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt named `name` (what `prompts/get` asks for).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            prompt: Prompt { name: name.into(), title: None, description: None, arguments: Vec::new() },
            handler: None,
            completers: Vec::new(),
        }
    }

    /// What it is for (clients show it).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// An argument: its name, what it means, and whether it must be given.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.prompt.arguments.push(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required,
        });
        self
    }

    /// What `prompts/get` answers: the handler gets the call's context and the arguments
    /// (required ones always present).
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ToolContext, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |ctx, args| Box::pin(handler(ctx, args))));
        self
    }

    /// Suggestions for the argument `argument`: given what was typed so far and the arguments
    /// already filled in, the values to offer (best first). A completer for an argument the
    /// prompt does not declare keeps the server from starting, naming both (a later one for the
    /// same argument replaces it).
    pub fn complete<F>(mut self, argument: impl Into<String>, completer: F) -> Self
    where
        F: Fn(&str, &PromptArguments) -> Vec<String> + Send + Sync + 'static,
    {
        let argument = argument.into();
        self.completers.retain(|(a, _)| *a != argument);
        self.completers.push((argument, Arc::new(completer)));
        self
    }

    /// The names of its arguments, in order.
    pub(crate) fn argument_names(&self) -> Arc<[String]> {
        self.prompt.arguments.iter().map(|a| a.name.clone()).collect()
    }

    /// What keeps it from being served: no handler, or a completer for an argument it does not
    /// declare.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.handler.is_none() {
            return Some(format!("prompt `{}` has no handler (PromptDef::handler)", self.prompt.name));
        }
        let names = self.argument_names();
        self.completers.iter().find(|(a, _)| !names.contains(a)).map(|(argument, _)| {
            format!(
                "prompt `{}` has a completer for `{argument}`, which is not one of its arguments ({})",
                self.prompt.name,
                arguments::names(&names)
            )
        })
    }

    /// The suggestions for `argument` (none when it has no completer).
    pub(crate) fn completions(&self, argument: &str, typed: &str, filled: &PromptArguments) -> Vec<String> {
        match self.completers.iter().find(|(a, _)| a == argument) {
            Some((_, complete)) => complete(typed, filled),
            None => Vec::new(),
        }
    }

    /// The `prompts/list` entry.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }
}

/// The prompts a server offers, in order.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    pub(crate) defs: Vec<PromptDef>,
}

impl Prompts {
    /// No prompts yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a prompt (a later one of the same name replaces it).
    pub fn prompt(mut self, def: PromptDef) -> Self {
        self.defs.retain(|d| d.prompt.name != def.prompt.name);
        self.defs.push(def);
        self
    }

    /// The prompt named `name`.
    pub fn get(&self, name: &str) -> Option<&PromptDef> {
        self.defs.iter().find(|d| d.prompt.name == name)
    }

    /// Whether any prompt completes its arguments (the server then declares `completions`).
    pub fn completes(&self) -> bool {
        self.defs.iter().any(|d| !d.completers.is_empty())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }
}
