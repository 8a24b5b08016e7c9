//! The ways to serve a [`Server`]: stdio (and `run_stdio`, everything a `main` needs), any byte
//! streams, Streamable HTTP, and one call without a client.

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

#[cfg(feature = "http")]
use super::http;
use super::{Peer, Server, Serving, call, main_loop, shared, transport};
use crate::config::ConfigError;
use crate::error::Error;

impl Server {
    /// Serves stdin/stdout until stdin ends or SIGINT/SIGTERM arrives, then drains in-flight
    /// calls for [`ServerConfig::shutdown_grace`] and returns.
    ///
    /// Unless [`Server::policy`] fixed it, the policy comes from the environment and the
    /// configuration files (module docs); one that cannot be used is an error of kind
    /// [`io::ErrorKind::InvalidInput`] wrapping the [`ConfigError`], before anything is read.
    /// So is a tool that takes state the server was not given ([`MissingState`]).
    ///
    /// Nothing runs until the [`Serving`] is awaited.
    ///
    /// Log lines wait in memory while the client leaves stderr full ([`crate::logging::stderr`]);
    /// a `main` that exits right after this returns gives them a moment with
    /// [`crate::logging::stderr::flush`] ([`Server::run_stdio`] does). A blocking tool's thread
    /// still running after the grace period is left behind: end your runtime with
    /// [`end_runtime`](super::end_runtime) rather than dropping it, which would wait for it
    /// ([`Server::run_stdio`] does).
    ///
    /// [`ServerConfig::shutdown_grace`]: super::ServerConfig::shutdown_grace
    /// [`MissingState`]: crate::tool::state::MissingState
    pub fn serve_stdio(mut self) -> Serving {
        Serving::new(async move {
            self.prepare(true)?;
            self.start_blocking_pool();
            let shutdown = CancellationToken::new();
            let signals = tokio::spawn(on_signal(shutdown.clone()));
            let result = match transport::stdio() {
                Ok((input, output, _restore)) => main_loop::run(self, input, output, shutdown).await,
                Err(e) => Err(e),
            };
            signals.abort();
            result
        })
    }

    /// Serves any byte streams (in-process tests, other transports) until `reader` ends or
    /// `shutdown` is cancelled. Refuses to start like [`Server::serve_stdio`]. Nothing runs until
    /// the [`Serving`] is awaited.
    pub fn serve<R, W>(mut self, reader: R, writer: W, shutdown: CancellationToken) -> Serving
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Serving::new(async move {
            self.prepare(false)?;
            self.start_blocking_pool();
            let input = transport::Input::Async(Box::new(reader));
            let output = transport::Output::Async(Box::new(writer));
            main_loop::run(self, input, output, shutdown).await
        })
    }

    /// Serves Streamable HTTP (both eras: protocol `2026-07-28`, and sessions of the legacy one)
    /// on `listener`, at `/mcp`, until `shutdown`
    /// is cancelled; answers in progress then get the grace period
    /// ([`ServerConfig::shutdown_grace`]). See [`http`] for the endpoint and its checks. Refuses
    /// to start like [`Server::serve_stdio`], and also when `listener` is not on a loopback
    /// address and `options` has no authentication (tokens, or OAuth with the feature `oauth`):
    /// a server reachable from the network is never open to anyone; and when `options` has both
    /// tokens and OAuth (one authentication at a time, see [`http`]).
    ///
    /// ```no_run
    /// use teaagent_core::{Registry, Server};
    /// use teaagent_core::server::http::HttpOptions;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let registry = Registry::builder().registered().build().expect("valid tools");
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8787").await?;
    /// let stop = tokio_util::sync::CancellationToken::new();
    /// Server::new(registry).serve_http(listener, HttpOptions::default(), stop).await
    /// # }
    /// ```
    ///
    /// Nothing runs until the [`Serving`] is awaited.
    ///
    /// Calls still running after the grace period are cut off, but the thread of a blocking
    /// tool (or of a call waiting in a system call) cannot be interrupted and may still run:
    /// end your runtime with [`end_runtime`](super::end_runtime) rather than dropping it, which
    /// would wait for that thread ([`Server::run_stdio`] does so for stdio).
    ///
    /// [`ServerConfig::shutdown_grace`]: super::ServerConfig::shutdown_grace
    #[cfg(feature = "http")]
    pub fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: http::HttpOptions,
        shutdown: CancellationToken,
    ) -> Serving {
        Serving::new(self.serve_http_until(listener, options, shutdown))
    }

    /// [`Server::serve_http`]'s work.
    #[cfg(feature = "http")]
    async fn serve_http_until(
        mut self,
        listener: tokio::net::TcpListener,
        options: http::HttpOptions,
        shutdown: CancellationToken,
    ) -> io::Result<()> {
        let local = listener.local_addr()?;
        if !http::is_loopback(&local) && !options.authenticates() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "refusing to serve HTTP on {local} without authentication: give bearer tokens (HttpOptions::tokens; `--http-token-file` or TEAAGENT_HTTP_TOKENS for the teaagent command) or OAuth (HttpOptions::oauth; `--oauth-issuer` and `--oauth-resource`), or bind a loopback address"
                ),
            ));
        }
        #[cfg(feature = "oauth")]
        let oauth = match &options.oauth {
            Some(_) if !options.tokens.is_empty() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "bearer tokens and OAuth are both configured: an OAuth resource server accepts only its authorization server's tokens; choose one (for the teaagent command: `--http-token-file`/TEAAGENT_HTTP_TOKENS, or the `--oauth-*` flags)",
                ));
            }
            Some(config) => Some(Arc::new(http::oauth::OAuth::start(config)?)),
            None => None,
        };
        // `/metrics` on an address of its own: bound before anything else starts.
        let metrics_apart = match options.metrics_listen {
            Some(addr) => Some(http::bind_metrics(addr).await?),
            None => None,
        };
        self.prepare(false)?;
        self.start_blocking_pool();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // The process's own peer has no client over HTTP: each request answers on its own.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let shared = Arc::new(shared::Shared::new(self, Peer::new(tx)));
        // Calls that wait register their deadlines without waking the runtime (`server/timer.rs`).
        let _armed = super::timer::keep_armed();
        if let Some(lock) = &shared.lock {
            main_loop::settle_lock(lock);
        }
        let endpoint = Arc::new(http::Endpoint {
            shared: shared.clone(),
            options,
            local,
            draining: shutdown.clone(),
            stopping: CancellationToken::new(),
            sessions: Default::default(),
            requests: crate::session::fairness::Shares::new(crate::error::CallerShare::Requests),
            callers: Default::default(),
            #[cfg(feature = "oauth")]
            oauth,
        });
        let metrics = match metrics_apart {
            Some(apart) => {
                let at = apart.local_addr()?;
                if !at.ip().is_loopback() {
                    tracing::warn!(address = %at, "/metrics is served without authentication on an address that is not loopback: keep it private (a network only the scraper reaches)");
                }
                tracing::info!(address = %at, "serving metrics at http://{at}/metrics");
                Some(tokio::spawn(http::serve_metrics(endpoint.clone(), apart, shutdown.clone())))
            }
            None => None,
        };
        let served = http::serve(endpoint, listener, shutdown).await;
        if let Some(metrics) = metrics {
            metrics.abort();
        }
        // Calls cancelled at the end of the grace period wind down before the lock goes.
        shared.tracker.close();
        let _ = tokio::time::timeout(shared.config.shutdown_grace, shared.tracker.wait()).await;
        shared.release_lock().await;
        drain.abort();
        served
    }

    /// Makes one call through the whole pipeline — validation, confinement, policy, rate limit,
    /// workspace lock, audit — without a client (what `teaagent run` does). In `prompt` mode the
    /// question goes to the terminal. The workspace lock, if taken, is released afterwards.
    ///
    /// The policy is the one given to [`Server::policy`] (default: `workspace-write`), or the
    /// environment's after [`Server::policy_from_environment`]; a configuration that cannot be
    /// used is an [`Error::Internal`].
    /// A tool that takes state the server was not given (any tool of the registry, as when
    /// serving) is an [`Error::Internal`] carrying the [`MissingState`] message, and nothing runs.
    ///
    /// [`MissingState`]: crate::tool::state::MissingState
    pub async fn call_once(
        mut self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<crate::CallToolResult, Error> {
        self.check_state().map_err(|e| Error::Internal { details: e.to_string() })?;
        self.resolve_policy(false).map_err(|e| Error::Internal { details: e.to_string() })?;
        self.hide_denied_paths();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Notifications (progress, logs) have no client to go to.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let shared = Arc::new(shared::Shared::new(self, Peer::new(tx)));
        let params = Box::new(crate::mcp::tools::CallRequest {
            name: name.to_owned(),
            arguments: Some(arguments),
            meta: None,
            input_responses: None,
            request_state: None,
            task: None,
        });
        let id = crate::jsonrpc::RequestId::server(0);
        // No client: the legacy pipeline, whose questions go to the terminal; never a round trip.
        let caller = crate::session::Caller::process(&shared.peer);
        let result =
            match call::call_tool(&shared, &id, params, CancellationToken::new(), None, &caller).await {
                Ok(call::CallOutcome::Complete(result)) => Ok(result),
                Ok(call::CallOutcome::InputRequired(_)) => {
                    Err(Error::Internal { details: "a call without a client cannot ask through one".into() })
                }
                // Without a client, nothing runs as a task (no client declared tasks).
                Ok(call::CallOutcome::Task(_)) => {
                    Err(Error::Internal { details: "a call without a client cannot become a task".into() })
                }
                Err(e) => Err(e),
            };
        shared.release_lock().await;
        drain.abort();
        result
    }

    /// Everything a `main` needs: logs to stderr ([`crate::logging::init`] at `info`), a runtime,
    /// [`Server::serve_stdio`]. Exit code 0 after a clean shutdown; 2 when the configuration
    /// (a file or a `TEAAGENT_*` variable, see [`crate::config`]) cannot be used, with the
    /// variable or the file and key on stderr; 1 on any other error.
    ///
    /// The runtime is single-threaded on purpose: a request is read, run and answered on one
    /// thread with no cross-thread wake-ups, which is what keeps a call's latency near that of a
    /// bare read-parse-write loop. Blocking tools ([`crate::Handler::blocking`]) run on the
    /// blocking pool, so they never stall it; an async tool must not block (as in any runtime),
    /// and one that does is named and isolated after its first stall (see "Tools that block"
    /// in the module docs).
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
    ///
    /// A server missing state its tools take ([`Server::state`]) logs [`MissingState`] and
    /// returns exit code 1 without serving.
    ///
    /// [`MissingState`]: crate::tool::state::MissingState
    pub fn run_stdio(self) -> ExitCode {
        let code = self.run_stdio_here();
        // Lines that waited for a full stderr are written before the program exits (a moment
        // at most: a client that never reads them does not hold the exit).
        crate::logging::stderr::flush(crate::logging::stderr::AT_EXIT);
        code
    }

    fn run_stdio_here(mut self) -> ExitCode {
        crate::logging::init("info");
        if let Err(e) = self.registry.check() {
            tracing::error!("the program's tools are invalid: {e}");
            return ExitCode::FAILURE;
        }
        if let Err(missing) = self.check_state() {
            tracing::error!("{missing}");
            return ExitCode::FAILURE;
        }
        let Ok(caller) = tokio::runtime::Handle::try_current() else {
            if let Err(e) = self.prepare(true) {
                return exit_code(Err(e));
            }
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
        crate::task::end_runtime(runtime);
        exit_code(result)
    }
}

/// The exit code of a serve: 0, 2 for a configuration that cannot be used, 1 otherwise (each
/// failure logged).
fn exit_code(result: io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.get_ref().is_some_and(|inner| inner.is::<ConfigError>()) => {
            tracing::error!("cannot start: {}", crate::visible::escape(&e.to_string()));
            let usage = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<ConfigError>())
                .is_some_and(ConfigError::is_usage);
            if usage { ExitCode::from(2) } else { ExitCode::FAILURE }
        }
        Err(e) => {
            tracing::error!(error = %e, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}

/// A token cancelled when the process gets SIGINT or SIGTERM: the `shutdown` to give
/// `Server::serve_http` (or [`Server::serve`]) for a clean stop, with the calls in progress
/// finished within the grace period ([`ServerConfig::shutdown_grace`]). Call it inside a tokio
/// runtime: it spawns the task that listens. ([`Server::serve_stdio`] and [`Server::run_stdio`]
/// listen by themselves.)
///
/// [`ServerConfig::shutdown_grace`]: super::ServerConfig::shutdown_grace
pub fn stop_on_signals() -> CancellationToken {
    let stop = CancellationToken::new();
    tokio::spawn(on_signal(stop.clone()));
    stop
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
