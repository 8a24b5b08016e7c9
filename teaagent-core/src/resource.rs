//! What a server's resources are, for any source of them: [`ResourceProvider`]. The workspace's
//! files are one (`workspace::resources`, feature `builtin-tools`); a server sets its own with
//! `Server::resources`.

use crate::BoxFuture;
use crate::error::Error;
use crate::mcp::resources::{ListResourcesResult, ReadResourceResult, ResourceTemplate};

/// Serves resources (`resources/list`, `resources/read`, `resources/templates/list`). When a
/// server has none, it does not declare the `resources` capability and those methods are unknown.
pub trait ResourceProvider: Send + Sync + 'static {
    /// One page of resources.
    fn list(&self, cursor: Option<String>) -> BoxFuture<'static, Result<ListResourcesResult, Error>>;
    /// The contents of one resource.
    fn read(&self, uri: String) -> BoxFuture<'static, Result<ReadResourceResult, Error>>;
    /// The URI templates offered.
    fn templates(&self) -> Vec<ResourceTemplate>;

    /// Whether clients may subscribe to resources (`resources/subscribe` in the legacy era,
    /// resource subscriptions of `subscriptions/listen` in the modern one). Only for resources
    /// that do not change while the server runs: subscriptions are acknowledged and no update is
    /// ever sent (default `false`: the capability is not declared and `resources/subscribe` is
    /// unknown).
    fn subscribable(&self) -> bool {
        false
    }

    /// Whether [`ResourceProvider::complete`] offers anything (the server then declares the
    /// `completions` capability). Default `false`.
    fn completes(&self) -> bool {
        false
    }

    /// Suggestions for `argument` of the template `template`, given what was typed so far
    /// (`completion/complete` with `ref/resource`). Default: none.
    fn complete(&self, template: &str, argument: &str, value: &str) -> Vec<String> {
        let _ = (template, argument, value);
        Vec::new()
    }
}
