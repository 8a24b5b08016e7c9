//! What a server does once, before the first message is read: where its policy comes from (the
//! code, or the environment and the configuration files), the startup lines, the deny rules'
//! hidden paths.

use std::io;

use super::Server;
use crate::config::{ConfigError, Settings, Sources};
use crate::policy::Advice;

/// Where a server's policy comes from (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PolicyFrom {
    /// Nothing said: the environment over stdio, [`Policy::default`] elsewhere.
    ///
    /// [`Policy::default`]: crate::policy::Policy::default
    Unset,
    /// [`Server::policy`].
    Code,
    /// [`Server::policy_from_environment`].
    Environment,
}

impl Server {
    /// Tells the policy which arguments are commands ([`Policy::know_tools`]) and installs its
    /// path deny rules as the workspace's hidden paths
    /// ([`Policy::hidden_paths`], [`Workspace::set_hidden`]) before anything is served: walks,
    /// searches, listings and resources then leave out what the rules deny, for every tool and
    /// for `resources/*`, not only the calls that name a denied path. Done here, at start, because
    /// only the server knows both the policy and the workspace (and builder calls come in any
    /// order); every clone of the workspace (tools, resources) shares the filter. A workspace
    /// that already has a filter (installed by its owner) keeps it, with a warning.
    ///
    /// [`Policy::know_tools`]: crate::policy::Policy::know_tools
    /// [`Policy::hidden_paths`]: crate::policy::Policy::hidden_paths
    /// [`Workspace::set_hidden`]: crate::workspace::Workspace::set_hidden
    pub(super) fn hide_denied_paths(&self) {
        self.policy.know_tools(self.registry.get());
        let (Some(workspace), Some(hidden)) =
            (&self.workspace, self.policy.hidden_paths(self.registry.get()))
        else {
            return;
        };
        if !workspace.set_hidden(hidden) {
            tracing::warn!("the workspace already hides paths; the deny rules' paths are not added to it");
        }
        // A path rule holds for the file: one with several names may be a denied file.
        if let Some(scopes) = self.policy.link_scopes() {
            workspace.set_hides_links(scopes);
        }
    }

    /// Warns on stderr when the registry is empty: the server would start and answer
    /// `tools/list` with nothing, which is nearly always a forgotten
    /// [`RegistryBuilder::registered`](crate::RegistryBuilder::registered) (or `.tool(...)`)
    /// rather than an intent. A warning, not a refusal: a server may offer only resources.
    fn warn_if_no_tools(&self) {
        if self.registry.get().is_empty() {
            tracing::warn!(
                "this server offers no tools: `#[tool]` functions are listed only by \
                 `Registry::builder().registered()`, hand-built ones by `.tool(...)` or `.tools(...)`"
            );
        }
    }

    /// Starts the runtime's first blocking thread now, beside the rest of the start, when a tool
    /// runs on the blocking pool ([`Handler::blocking`]: every built-in tool of `teaagent mcp
    /// serve` does). Otherwise the first call of such a tool waits while that thread is made (its
    /// stack, its allocator arena): measured with strace timestamps, the `read_file` answer that
    /// follows `tools/list` came 0.55 ms after it, and 0.45 ms with the thread made at start. The
    /// thread waits for work as the pool's threads do, and ends after the pool's idle time. Called
    /// by each serve method in its runtime, after [`Server::prepare`].
    ///
    /// [`Handler::blocking`]: crate::tool::Handler::blocking
    pub(super) fn start_blocking_pool(&self) {
        let blocking = self.registry.get().iter().any(|t| t.handler().is_some_and(|h| h.is_blocking()));
        if let (true, Ok(runtime)) = (blocking, tokio::runtime::Handle::try_current()) {
            drop(runtime.spawn_blocking(|| {}));
        }
    }

    /// Resolves where the policy comes from (module docs): with `stdio`, an unset policy is
    /// taken from the environment. A configuration that cannot be used is an
    /// [`io::ErrorKind::InvalidInput`] error whose inner error is the [`ConfigError`].
    pub(super) fn resolve_policy(&mut self, stdio: bool) -> io::Result<()> {
        let from_environment = match self.policy_from {
            PolicyFrom::Environment => true,
            PolicyFrom::Unset => stdio,
            PolicyFrom::Code => false,
        };
        if !from_environment {
            return Ok(());
        }
        // A server with a name of its own also reads its own file (grants written there are
        // this server's, not every server's on the machine).
        let own = crate::config::server_file(&self.info.name);
        let sources = Sources {
            workspace: self.workspace.as_ref(),
            server_file: own.as_deref(),
            ..Sources::environment()
        };
        let settings = Settings::load(&sources, self.registry.get()).map_err(config_error)?;
        for warning in &settings.warnings {
            tracing::warn!("{}", crate::visible::escape(warning));
        }
        let rules = settings.policy().map_err(config_error)?;
        let shared = own.is_none();
        let file = own.unwrap_or_else(|| settings.user_file.clone());
        self.policy = rules.advice(Advice::Environment { file: Some(file), shared });
        self.config = settings.server_config(std::mem::take(&mut self.config));
        self.policy_from = PolicyFrom::Code;
        Ok(())
    }

    /// Everything done before the first message is read: the policy's source, the startup lines
    /// (no tools; which tools will need an approval, see [`Policy::approvals_needed`]), the deny
    /// rules' hidden paths.
    ///
    /// [`Policy::approvals_needed`]: crate::policy::Policy::approvals_needed
    pub(super) fn prepare(&mut self, stdio: bool) -> io::Result<()> {
        if self.prepared {
            return Ok(());
        }
        self.prepared = true;
        if let Err(e) = self.registry.check() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e.clone()));
        }
        self.check_state().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if let Some(why) = self.prompts.defs.iter().find_map(|d| d.problem()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        self.warn_if_no_tools();
        self.resolve_policy(stdio)?;
        for rule in self.policy.rules_naming_no_tool(self.registry.get()) {
            tracing::warn!(
                "{rule}: it applies to nothing (grants and deny rules name tools by their exact names or a glob)"
            );
        }
        if let Some(line) = self.policy.approvals_needed(self.registry.get()) {
            tracing::info!("{line}");
        }
        self.hide_denied_paths();
        Ok(())
    }
}

/// A configuration error as the `io::Error` the serve methods return.
fn config_error(e: ConfigError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}
