//! A real MCP client for the end-to-end tests: the official Rust SDK (`rmcp`) talking to a
//! server binary over its child-process transport.

#![allow(deprecated)] // rmcp marks the logging types deprecated (SEP-2577); MCP still has them.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientCacheConfig, ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use tokio::sync::mpsc;

/// How long any client operation may take before the test fails.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// Something the server sent that was not a response.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// `notifications/progress`.
    Progress(ProgressNotificationParam),
    /// `notifications/message`.
    Log(LoggingMessageNotificationParam),
}

/// A client that records the notifications it receives.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub(crate) config: ClientConfig,
    pub(crate) events: mpsc::UnboundedSender<Event>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        let _ = self.events.send(Event::Progress(params));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Log(params));
    }
}

/// A connected client.
pub(crate) type Client = RunningService<RoleClient, Recorder>;

/// A protocol version by its string (also unknown ones).
pub(crate) fn version(text: &str) -> ProtocolVersion {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).expect("any string is a version")
}

/// How a client starts.
#[derive(Debug, Clone)]
pub(crate) enum Handshake {
    /// `initialize` with this version (the legacy era).
    Legacy(ProtocolVersion),
    /// `server/discover`, then `_meta` on every request (protocol `2026-07-28`).
    Modern,
}

impl Handshake {
    /// The two eras, each with its newest version: the end-to-end suite runs in both.
    pub(crate) fn both() -> [Handshake; 2] {
        [Handshake::Legacy(ProtocolVersion::V_2025_11_25), Handshake::Modern]
    }
}

/// Spawns `bin` with `args` and `env`, and initializes with `protocol`.
pub(crate) async fn connect(
    bin: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    protocol: ProtocolVersion,
) -> (Client, mpsc::UnboundedReceiver<Event>) {
    connect_as(bin, args, env, Handshake::Legacy(protocol)).await
}

/// Spawns `bin` with `args` and `env`, and starts the way `handshake` says. In the modern era the
/// client's response cache is off, so every request reaches the server.
pub(crate) async fn connect_as(
    bin: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    handshake: Handshake,
) -> (Client, mpsc::UnboundedReceiver<Event>) {
    let cmd = tokio::process::Command::new(bin).configure(|c| {
        c.args(args).envs(env.iter().copied());
    });
    let (transport, _) =
        TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn the server");
    let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("teaagent-e2e", "0.1"));
    let (tx, rx) = mpsc::unbounded_channel();
    let client = match handshake {
        Handshake::Legacy(protocol) => {
            let config = config.with_protocol_version(protocol);
            tokio::time::timeout(WAIT, Recorder { config, events: tx }.serve(transport)).await
        }
        Handshake::Modern => {
            let mode =
                ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            tokio::time::timeout(WAIT, Recorder { config, events: tx }.serve_with_lifecycle(transport, mode))
                .await
        }
    }
    .expect("initialize in time")
    .expect("initialize succeeds");
    client.set_response_cache_config(ClientCacheConfig::disabled()).await;
    (client, rx)
}

/// Runs a client future with the test timeout.
pub(crate) async fn timely<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(WAIT, f).await.expect("the server answered in time")
}
