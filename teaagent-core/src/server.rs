//! The stdio server: a registry served as MCP over newline-delimited JSON-RPC.
//!
//! The shape follows async-lsp's main loop: [`main_loop`] reads frames and hands each message to
//! small dispatch functions; [`router`] is the table of methods; [`call`] is the `tools/call`
//! pipeline with its order of checks; [`transport`] and [`framing`] turn bytes into lines and back.
//!
//! ```no_run
//! use teaagent_core::{Registry, Server};
//!
//! fn main() -> std::process::ExitCode {
//!     let registry = Registry::builder().registered().build().expect("valid tools");
//!     Server::new(registry).run_stdio()
//! }
//! ```

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::BoxFuture;
use crate::error::Error;
use crate::mcp::Implementation;
use crate::mcp::resources::{ListResourcesResult, ReadResourceResult, ResourceTemplate};
use crate::policy::Policy;
use crate::registry::Registry;
use crate::workspace::Workspace;
use crate::workspace::lock::{LockRegistry, WorkspaceLock};

mod call;
mod config;
pub mod framing;
mod main_loop;
mod peer;
mod reply;
mod router;
mod transport;

pub use config::{ServerConfig, ToolOverride};
pub use peer::{Peer, PeerError, SessionInfo};

/// Serves resources (`resources/list`, `resources/read`, `resources/templates/list`). When a
/// server has none, it does not declare the `resources` capability and those methods are unknown.
pub trait ResourceProvider: Send + Sync + 'static {
    /// One page of resources.
    fn list(&self, cursor: Option<String>) -> BoxFuture<'static, Result<ListResourcesResult, Error>>;
    /// The contents of one resource.
    fn read(&self, uri: String) -> BoxFuture<'static, Result<ReadResourceResult, Error>>;
    /// The URI templates offered.
    fn templates(&self) -> Vec<ResourceTemplate>;
}

/// An MCP server: a registry, limits, and optionally a workspace, its lock and resources.
pub struct Server {
    registry: Registry,
    config: ServerConfig,
    resources: Option<Arc<dyn ResourceProvider>>,
    workspace: Option<Workspace>,
    lock: Option<Arc<WorkspaceLock>>,
    policy: Policy,
    info: Implementation,
}

impl Server {
    /// A server for `registry` with the default [`ServerConfig`], announcing itself as
    /// `{"name": "teaagent", "version": <this crate's version>}`.
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            config: ServerConfig::default(),
            resources: None,
            workspace: None,
            lock: None,
            policy: Policy::default(),
            info: Implementation {
                name: "teaagent".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                title: None,
            },
        }
    }

    /// Replaces the limits.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Serves resources from `provider`.
    pub fn resources(mut self, provider: impl ResourceProvider) -> Self {
        self.resources = Some(Arc::new(provider));
        self
    }

    /// Confines tools to `workspace`: every `#[path]` argument is resolved beneath its root
    /// before the tool runs (a refusal answers `-32602`), and tools reach it through
    /// [`ToolContext::workspace`](crate::ToolContext::workspace).
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Holds the workspace lock in `registry` while serving: acquired at start, released at
    /// shutdown; while another live server holds it, tools that are not read-only answer
    /// `-32003` (and each such call tries again to acquire it). Set the [`Server::workspace`]
    /// first: the lock then knows the workspace by the directory it holds open (device and
    /// inode), so a renamed root or another spelling of it is still the same workspace.
    pub fn lock(mut self, registry: LockRegistry, root: impl Into<std::path::PathBuf>) -> Self {
        let root = root.into();
        // The workspace's own handle names the directory served, even if `root` was renamed.
        let lock = match &self.workspace {
            Some(ws) if ws.root() == root => WorkspaceLock::of_workspace(registry, ws),
            _ => WorkspaceLock::new(registry, root),
        };
        self.lock = Some(Arc::new(lock));
        self
    }

    /// Sets the permission policy (default: `workspace-write`, no approvals, no audit log).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Announces another name and version in `serverInfo` (for servers built on teaagent).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Tells the policy which arguments are commands ([`Policy::know_tools`]) and installs its
    /// path deny rules as the workspace's hidden paths
    /// ([`Policy::hidden_paths`], [`Workspace::set_hidden`]) before anything is served: walks,
    /// searches, listings and resources then leave out what the rules deny, for every tool and
    /// for `resources/*`, not only the calls that name a denied path. Done here, at start, because
    /// only the server knows both the policy and the workspace (and builder calls come in any
    /// order); every clone of the workspace (tools, resources) shares the filter. A workspace
    /// that already has a filter (installed by its owner) keeps it, with a warning.
    fn hide_denied_paths(&self) {
        self.policy.know_tools(&self.registry);
        let (Some(workspace), Some(hidden)) = (&self.workspace, self.policy.hidden_paths(&self.registry))
        else {
            return;
        };
        if !workspace.set_hidden(hidden) {
            tracing::warn!("the workspace already hides paths; the deny rules' paths are not added to it");
        }
    }

    /// Warns on stderr when the registry is empty: the server would start and answer
    /// `tools/list` with nothing, which is nearly always a forgotten
    /// [`RegistryBuilder::registered`](crate::RegistryBuilder::registered) (or `.tool(...)`)
    /// rather than an intent. A warning, not a refusal: a server may offer only resources.
    fn warn_if_no_tools(&self) {
        if self.registry.is_empty() {
            tracing::warn!(
                "this server offers no tools: `#[tool]` functions are listed only by \
                 `Registry::builder().registered()`, hand-built ones by `.tool(...)` or `.tools(...)`"
            );
        }
    }

    /// Serves stdin/stdout until stdin ends or SIGINT/SIGTERM arrives, then drains in-flight
    /// calls for [`ServerConfig::shutdown_grace`] and returns.
    pub async fn serve_stdio(self) -> io::Result<()> {
        self.warn_if_no_tools();
        self.hide_denied_paths();
        let (input, output, _restore) = transport::stdio()?;
        let shutdown = CancellationToken::new();
        let signals = tokio::spawn(on_signal(shutdown.clone()));
        let result = main_loop::run(self, input, output, shutdown).await;
        signals.abort();
        result
    }

    /// Serves any byte streams (in-process tests, other transports) until `reader` ends or
    /// `shutdown` is cancelled.
    pub async fn serve<R, W>(self, reader: R, writer: W, shutdown: CancellationToken) -> io::Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.warn_if_no_tools();
        self.hide_denied_paths();
        let input = transport::Input::Async(Box::new(reader));
        let output = transport::Output::Async(Box::new(writer));
        main_loop::run(self, input, output, shutdown).await
    }

    /// Makes one call through the whole pipeline — validation, confinement, policy, rate limit,
    /// workspace lock, audit — without a client (what `teaagent run` does). In `prompt` mode the
    /// question goes to the terminal. The workspace lock, if taken, is released afterwards.
    pub async fn call_once(
        self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<crate::CallToolResult, Error> {
        self.hide_denied_paths();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Notifications (progress, logs) have no client to go to.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let shared = Arc::new(main_loop::Shared::new(self, Peer::new(tx)));
        let params = crate::mcp::tools::CallToolParams {
            name: name.to_owned(),
            arguments: Some(arguments),
            meta: None,
        };
        let id = crate::jsonrpc::RequestId::server(0);
        let result = call::call_tool(&shared, &id, params, CancellationToken::new()).await;
        if let Some(lock) = shared.lock.clone() {
            let _ = tokio::task::spawn_blocking(move || lock.release()).await;
        }
        drain.abort();
        result
    }

    /// Everything a `main` needs: logs to stderr ([`crate::logging::init`] at `info`), a runtime,
    /// [`Server::serve_stdio`]. Exit code 0 after a clean shutdown.
    ///
    /// The runtime is single-threaded on purpose: a request is read, run and answered on one
    /// thread with no cross-thread wake-ups, which is what keeps a call's latency near that of a
    /// bare read-parse-write loop. Blocking tools ([`crate::Handler::blocking`]) run on the
    /// blocking pool, so they never stall it; an async tool must not block (as in any runtime).
    ///
    /// Called from inside a runtime (an `async fn main` under `#[tokio::main]`, a
    /// `spawn_blocking` closure, a thread that entered one), it still works: tokio refuses to
    /// start a runtime on a thread that is running one ("Cannot start a runtime from within a
    /// runtime"), so the server gets a thread and a runtime of its own, and the calling thread
    /// waits for it. A line on stderr names [`Server::serve_stdio`]`.await`, the form that serves on
    /// the caller's runtime; it is a warning on a current-thread runtime, whose other tasks (and
    /// anything the tools' state needs from them) stand still while the caller waits. Serving on
    /// the caller's runtime from here is not possible in general: `block_in_place` panics on a
    /// current-thread runtime.
    pub fn run_stdio(self) -> ExitCode {
        crate::logging::init("info");
        let Ok(caller) = tokio::runtime::Handle::try_current() else {
            return self.run_on_own_runtime();
        };
        if matches!(caller.runtime_flavor(), tokio::runtime::RuntimeFlavor::CurrentThread) {
            tracing::warn!(
                "`run_stdio()` was called inside a current-thread tokio runtime: serving on a \
                 runtime of its own while that one waits; in an `async fn main`, \
                 `server.serve_stdio().await` serves on yours"
            );
        } else {
            tracing::info!(
                "`run_stdio()` was called inside a tokio runtime: serving on a runtime of its own; \
                 in an `async fn main`, `server.serve_stdio().await` serves on yours"
            );
        }
        let thread = std::thread::Builder::new()
            .name("teaagent-server".into())
            .spawn(move || self.run_on_own_runtime());
        match thread.map(std::thread::JoinHandle::join) {
            Ok(Ok(code)) => code,
            Ok(Err(_)) => {
                tracing::error!("the server thread panicked");
                ExitCode::FAILURE
            }
            Err(e) => {
                tracing::error!(
                    error = %e,
                    "cannot start the server's thread; call `server.serve_stdio().await` instead"
                );
                ExitCode::FAILURE
            }
        }
    }

    /// [`Server::run_stdio`] on this thread, which must not be in a runtime.
    fn run_on_own_runtime(self) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "cannot start the async runtime");
                return ExitCode::FAILURE;
            }
        };
        let result = runtime.block_on(self.serve_stdio());
        // Blocking tool threads that outlived the grace period must not hold the exit.
        runtime.shutdown_timeout(std::time::Duration::from_millis(100));
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "the server stopped with an error");
                ExitCode::FAILURE
            }
        }
    }
}

/// Cancels `shutdown` on SIGINT or SIGTERM.
async fn on_signal(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        tracing::warn!("cannot listen for SIGINT/SIGTERM; only stdin EOF stops the server");
        return;
    };
    let which = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    tracing::info!("{which} received; finishing in-flight calls");
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    /// `serve` over in-memory streams: the same main loop as stdio.
    #[tokio::test]
    async fn serves_any_byte_streams() {
        let registry = Registry::builder().build().expect("empty registry");
        let (client, server_end) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_end);
        let serving =
            tokio::spawn(Server::new(registry).serve(server_read, server_write, CancellationToken::new()));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = BufReader::new(client_read).lines();
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .expect("write");
        let first: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.expect("read").expect("a line")).expect("json");
        assert_eq!(first["result"]["protocolVersion"], "2025-06-18");
        let second = lines.next_line().await.expect("read").expect("a line");
        assert_eq!(second, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        client_write.shutdown().await.expect("close");
        drop(client_write);
        serving.await.expect("joined").expect("served until EOF");
    }
}
