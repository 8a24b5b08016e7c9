//! The gateway: the tools of external MCP servers the user allowed, served next to a
//! server's own under the same policy.
//!
//! The `teaagent` command decides *which* servers may start (the trust store: allowed, with a
//! fingerprint that still matches); this module starts them, talks to them
//! (`gateway/child.rs`: an MCP client over stdio), and turns their tools into [`ToolDef`]s named
//! `SERVER__tool` that go through the same pipeline as every other tool: argument validation,
//! permission modes, grants, digests, rate limits, the workspace lock, audit.
//!
//! # What the model sees is what the user allowed
//!
//! When the user allows a server, its tool list — names, descriptions, schemas, annotations,
//! everything but `_meta` — is read once, shown to the user in full, and **pinned** with the
//! decision ([`ToolList`], its SHA-256 over RFC 8785 canonical JSON). Everything the model reads
//! about an external tool comes from that pin, never from the running server: descriptions and
//! schemas cannot be changed behind the user's back. Each time the server starts (and each time
//! it says `notifications/tools/list_changed`) its live list is read again and compared with the
//! pin; when they differ, the server is stopped and its tools are **withheld** (left out of
//! `tools/list`, refused at `tools/call` with `-32000`, `reason: "withheld"`) until the user
//! allows it again, and the client is told the list changed. `teaagent mcp trust inspect`
//! shows the difference ([`ToolList::differences`]).
//!
//! # Policy
//!
//! An external server's annotations are hints from a program teaagent does not control, so the
//! policy never relies on them: an external tool is never read-only, it is open-world, and its
//! tier is `high` unless the user's configuration sets one ([`External::tier`],
//! [`External::tiers`]); it counts as destructive at tier `high` and above. What `tools/list`
//! announces for it is that same conservative reading, not the server's hints. Grants, deny
//! rules, preapproved digests and rate limits name it as `SERVER__tool` like any tool.
//!
//! # Lifecycle
//!
//! Servers run on the gateway's own thread and runtime, started in the background shortly after
//! the gateway starts ([`GatewayOptions::start_after`], or at once for a call to one of their
//! tools): the registry is built from the pins at once, so neither a slow external server nor
//! the work of starting them delays the first answers. Their replies are read there too until
//! calls come; then on the runtime that makes the calls, so that a call in sequence is served on
//! one thread, unless the server writes much that answers no request: then back on the
//! gateway's thread for good, which pays for it (`gateway/child/reader.rs`). A call to a server
//! that is still starting waits for it (at most [`GatewayOptions::startup_timeout`]). A server that exits is restarted with a backoff
//! (from 200 ms, doubling, at most [`GatewayOptions::max_backoff`]; reset once a run lasted a
//! minute); calls in flight then answer `-32000` (`reason: "external_server_exited"`), calls
//! while it is down `-32000` (`reason: "external_server_unavailable"`). Before every start the
//! [`External::still_trusted`] check runs again (the executable may have changed while teaagent
//! ran). [`Gateway::shutdown`] stops every server: stdin closed, then SIGTERM, then SIGKILL to
//! its process group.
//!
//! A call's cancellation (the client's `notifications/cancelled`, a timeout, shutdown) is passed
//! on as `notifications/cancelled`; the external server's progress reports reach the client as
//! the call's progress, paced (`gateway/progress.rs`); an error the external server answers with becomes an `isError` result
//! that quotes it (its codes are its own, and must not be mistaken for teaagent's `-32001`…).

mod call;
mod child;
mod file_digests;
mod handshake;
mod pins;
mod progress;
mod result;
mod roles;
mod supervise;
mod tool_list;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use child::Connection;
pub use child::{DEFAULT_MAX_RESULT_BYTES, Launch};
use handshake::start_one;
pub use pins::{Pins, sha256_of};
pub use roles::{ArgRole, DeclaredRoles};
pub use tool_list::ToolList;
use tool_list::name_of;

use crate::tool::{Behavior, Handler, Tier, ToolDef};
use crate::visible::shown;

/// The separator between a server's name and its tool's: `github__create_issue`.
pub const SEPARATOR: &str = "__";

/// One external server the gateway may start.
#[derive(Clone)]
pub struct External {
    /// How to start it.
    pub launch: Launch,
    /// Its tool list as the user allowed it.
    pub pinned: ToolList,
    /// The tier of its tools (default `high`).
    pub tier: Tier,
    /// Tiers of single tools (by the server's own tool name), over [`External::tier`].
    pub tiers: BTreeMap<String, Tier>,
    /// What its tools' arguments are (`[mcp_servers.NAME.roles]`), over what their schemas
    /// suggest (`gateway/roles.rs`): deny rules and grants on paths and commands bind them.
    pub roles: DeclaredRoles,
    /// Run before every start: `Err(why)` when the server may no longer start (its executable
    /// or configuration changed since it was allowed). Its tools are then withheld.
    pub still_trusted: Option<Arc<dyn Fn() -> Result<(), String> + Send + Sync>>,
}

impl std::fmt::Debug for External {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("External")
            .field("launch", &self.launch)
            .field("pinned", &self.pinned.sha256())
            .field("tier", &self.tier)
            .field("tiers", &self.tiers)
            .finish_non_exhaustive()
    }
}

/// Timing of the gateway.
#[derive(Debug, Clone, Copy)]
pub struct GatewayOptions {
    /// How long a server has to answer `initialize` and list its tools (and how long a call
    /// waits for a server that is starting). Default 30 s.
    pub startup_timeout: Duration,
    /// How long a server has to exit after its stdin is closed, and again after SIGTERM.
    /// Default 2 s.
    pub shutdown_grace: Duration,
    /// The longest wait between restarts. Default 30 s.
    pub max_backoff: Duration,
    /// How long after [`Gateway::start`] the servers start, unless a call to one of their tools
    /// comes first (which starts its server at once): a client's first answers do not share the
    /// machine with every server's start. Default 100 ms.
    pub start_after: Duration,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
            max_backoff: Duration::from_secs(30),
            start_after: Duration::from_millis(100),
        }
    }
}

/// The external servers of a server, running (see the module docs).
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.inner.links.iter().map(|l| l.external.launch.name.as_str()).collect();
        f.debug_struct("Gateway").field("servers", &names).finish_non_exhaustive()
    }
}

struct Inner {
    links: Vec<Link>,
    /// `SERVER__tool` → (link, the server's own tool name).
    by_tool: HashMap<String, (usize, String)>,
    /// Bumped whenever the set of offered tools may have changed.
    changed: watch::Sender<u64>,
    stop: CancellationToken,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    options: GatewayOptions,
}

struct Link {
    external: External,
    state: watch::Sender<LinkState>,
    /// Starts after the first (`/metrics`).
    restarts: std::sync::atomic::AtomicU64,
    /// A call is waiting for the server's first start ([`GatewayOptions::start_after`]).
    wanted: tokio::sync::Notify,
}

#[derive(Clone)]
enum LinkState {
    Starting,
    Up(Arc<Connection>),
    Down(String),
    Withheld(String),
}

/// What [`Gateway::start`] gives back.
#[derive(Debug)]
pub struct Started {
    /// The gateway.
    pub gateway: Gateway,
    /// The tools to add to the registry.
    pub tools: Vec<ToolDef>,
    /// Tools left out, and why (for stderr; raw text: escape it).
    pub problems: Vec<String>,
}

impl Gateway {
    /// A gateway with no servers (what a server without external servers has).
    pub fn none() -> Self {
        let (changed, _) = watch::channel(0);
        Gateway {
            inner: Arc::new(Inner {
                links: Vec::new(),
                by_tool: HashMap::new(),
                changed,
                stop: CancellationToken::new(),
                thread: Mutex::new(None),
                options: GatewayOptions::default(),
            }),
        }
    }

    /// Starts `servers` in the background (on a thread of the gateway's own) and returns at once
    /// with their tools, built from their pins. A tool whose name is invalid, clashes with
    /// `reserved` (the server's own tools) or with another external tool, or whose pinned schema
    /// cannot be checked is left out, with the reason in [`Started::problems`].
    pub fn start(
        servers: Vec<External>,
        reserved: &dyn Fn(&str) -> bool,
        options: GatewayOptions,
    ) -> std::io::Result<Started> {
        let started = Self::build(servers, reserved, options);
        let inner = &started.gateway.inner;
        if !inner.links.is_empty() {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let running = inner.clone();
            let thread = std::thread::Builder::new().name("teaagent-gateway".into()).spawn(move || {
                runtime.block_on(supervise::run(running));
                // A trust check still on the blocking pool (hashing an executable, waiting for
                // the home's file lock) does not hold the stop: it ends with the process.
                crate::task::end_runtime(runtime);
            })?;
            *inner.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(thread);
        }
        Ok(started)
    }

    /// The tools [`Gateway::start`] would offer, without starting anything (for listings such
    /// as `teaagent mcp tools`): calling them answers `-32000` (`external_server_unavailable`).
    pub fn definitions(servers: Vec<External>, reserved: &dyn Fn(&str) -> bool) -> Started {
        let options = GatewayOptions { startup_timeout: Duration::ZERO, ..GatewayOptions::default() };
        Self::build(servers, reserved, options)
    }

    fn build(servers: Vec<External>, reserved: &dyn Fn(&str) -> bool, options: GatewayOptions) -> Started {
        let mut problems = Vec::new();
        // Names first: every clash is refused on every side.
        // (name, server, the tool's place in the server's pinned list)
        let mut wanted: Vec<(String, usize, usize)> = Vec::new();
        for (i, server) in servers.iter().enumerate() {
            for (at, tool) in server.pinned.tools().iter().enumerate() {
                wanted.push((format!("{}{SEPARATOR}{}", server.launch.name, name_of(tool)), i, at));
            }
        }
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (name, _, _) in &wanted {
            *count.entry(name.as_str()).or_default() += 1;
        }
        let clashing: std::collections::HashSet<String> =
            count.into_iter().filter(|(_, n)| *n > 1).map(|(name, _)| name.to_owned()).collect();
        let mut kept = Vec::new();
        for (name, i, at) in wanted {
            if clashing.contains(&name) {
                problems.push(format!("left out external tool `{name}`: two external tools have that name"));
            } else if reserved(&name) {
                problems.push(format!("left out external tool `{name}`: the server has a tool of that name"));
            } else if !crate::registry::is_valid_tool_name(&name) {
                problems.push(format!(
                    "left out external tool `{name}`: the name must match `^[A-Za-z0-9_-]{{1,64}}$` (rename the server in [mcp_servers] to make it shorter)"
                ));
            } else {
                kept.push((name, i, at));
            }
        }
        let by_tool: HashMap<String, (usize, String)> = kept
            .iter()
            .map(|(name, i, at)| (name.clone(), (*i, name_of(&servers[*i].pinned.tools()[*at]).to_owned())))
            .collect();
        let (changed, _) = watch::channel(0);
        let links = servers
            .into_iter()
            .map(|external| Link {
                external,
                state: watch::channel(LinkState::Starting).0,
                restarts: Default::default(),
                wanted: tokio::sync::Notify::new(),
            })
            .collect();
        let inner = Arc::new(Inner {
            links,
            by_tool,
            changed,
            stop: CancellationToken::new(),
            thread: Mutex::new(None),
            options,
        });
        let mut tools = Vec::new();
        for (name, i, at) in kept {
            match tool_def(&inner, &name, i, &inner.links[i].external.pinned.tools()[at]) {
                Ok(def) => tools.push(def),
                Err(why) => problems.push(format!("left out external tool `{name}`: {why}")),
            }
        }
        Started { gateway: Gateway { inner }, tools, problems }
    }

    /// Whether `tool` is an external tool of this gateway.
    pub fn owns(&self, tool: &str) -> bool {
        self.inner.by_tool.contains_key(tool)
    }

    /// The name of the server that offers `tool`.
    pub fn server_of(&self, tool: &str) -> Option<&str> {
        let (i, _) = self.inner.by_tool.get(tool)?;
        Some(&self.inner.links[*i].external.launch.name)
    }

    /// Why `tool` is withheld now, if it is (see the module docs).
    pub fn withheld(&self, tool: &str) -> Option<String> {
        let (i, _) = self.inner.by_tool.get(tool)?;
        match &*self.inner.links[*i].state.borrow() {
            LinkState::Withheld(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// Changes whenever the set of offered tools may have changed (a server's tools withheld,
    /// or a server said its list changed and it still matches the pin).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    /// Whether the gateway has servers.
    pub fn is_empty(&self) -> bool {
        self.inner.links.is_empty()
    }

    /// Stops every server (stdin closed, SIGTERM, SIGKILL to its process group; see
    /// [`GatewayOptions::shutdown_grace`]) and waits for the gateway's thread. Idempotent.
    pub fn shutdown(&self) {
        self.inner.stop.cancel();
        let thread = self.inner.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl crate::server::ToolAvailability for Gateway {
    fn may_change(&self) -> bool {
        !self.is_empty()
    }

    fn is_external(&self, tool: &str) -> bool {
        self.owns(tool)
    }

    fn withheld(&self, tool: &str) -> Option<String> {
        Gateway::withheld(self, tool)
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.subscribe()
    }

    fn pending(&self) -> Option<String> {
        let starting: Vec<&str> = self
            .inner
            .links
            .iter()
            .filter(|l| matches!(*l.state.borrow(), LinkState::Starting))
            .map(|l| l.external.launch.name.as_str())
            .collect();
        (!starting.is_empty()).then(|| format!("external servers starting: {}", shown(&starting.join(", "))))
    }

    fn external_servers(&self) -> Vec<crate::server::ExternalStatus> {
        self.inner
            .links
            .iter()
            .map(|l| crate::server::ExternalStatus {
                name: l.external.launch.name.clone(),
                up: matches!(*l.state.borrow(), LinkState::Up(_)),
                restarts: l.restarts.load(std::sync::atomic::Ordering::Relaxed),
            })
            .collect()
    }
}

/// Reads an external server's tool list once (for `teaagent mcp trust allow`, `inspect`, `mcp
/// tools`): starts it, initializes, lists, stops it. Runs on the current runtime.
pub async fn probe(launch: &Launch, options: GatewayOptions) -> Result<ToolList, String> {
    let (conn, list) = start_one(launch, options.startup_timeout).await?;
    conn.shutdown(options.shutdown_grace).await;
    Ok(list)
}

/// The definition of one pinned tool (module docs, "Policy").
fn tool_def(inner: &Arc<Inner>, name: &str, index: usize, tool: &Value) -> Result<ToolDef, String> {
    let server = &inner.links[index].external;
    let own = name_of(tool).to_owned();
    let tier = server.tiers.get(&own).copied().unwrap_or(server.tier);
    let mut schema = tool.get("inputSchema").cloned().unwrap_or_else(|| json!({"type": "object"}));
    let Some(object) = schema.as_object_mut() else {
        return Err("its input schema is not an object".into());
    };
    // Checked by the rules of the dialect it is written in (draft-07, draft-04, OpenAPI's
    // `nullable`: `schema::dialect`); shown as the server wrote it, without `$schema` (clients
    // read the keywords, and some refuse the key).
    object.entry("properties").or_insert_with(|| json!({}));
    let checked_input = crate::schema::dialect::to_2020_12(&schema);
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    let description = match tool.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => d.to_owned(),
        _ => {
            format!("Tool `{own}` of the external server `{}` (it gave no description).", server.launch.name)
        }
    };
    let behavior = Behavior {
        read_only: false,
        destructive: tier >= Tier::High,
        idempotent: false,
        stateful: false,
        open_world: true,
    };
    let mut builder = ToolDef::builder(name.to_owned())
        .description(description)
        .input_schema(schema)
        .behavior(behavior)
        .tier(tier)
        .origin(format!("external server `{}`", server.launch.name));
    if let Some(title) = tool.get("title").and_then(Value::as_str) {
        builder = builder.title(title.to_owned());
    }
    let mut checked_output = None;
    if let Some(output) = tool.get("outputSchema").filter(|o| o.is_object()) {
        checked_output = Some(crate::schema::dialect::to_2020_12(output));
        let mut output = output.clone();
        if let Some(o) = output.as_object_mut() {
            o.remove("$schema");
        }
        builder = builder.output_schema(output);
    }
    builder = builder.checked_as(checked_input, checked_output);
    // The roles of its arguments: what deny rules and grants on paths and commands look at.
    let (roles, foreign) =
        roles::classify(&own, tool.get("inputSchema").unwrap_or(&Value::Null), &server.roles);
    for (arg, role) in roles {
        builder = builder.param_role(arg, role);
    }
    builder = builder.foreign(foreign);
    let running = inner.clone();
    let mut def = builder
        .handler(Handler::new(move |ctx, args| {
            let running = running.clone();
            let own = own.clone();
            async move { call::call(&running, index, &own, ctx, args).await }
        }))
        .build();
    // Checked alone now (a bad pinned schema leaves this tool out, not the whole server); what
    // the check derives is kept for the registry.
    crate::registry::prepare_alone(&mut def).map_err(|problems| problems.join("; "))?;
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn external(name: &str, tools: &[&str]) -> External {
        external_of(
            name,
            tools
                .iter()
                .map(|t| json!({"name": t, "description": "d", "inputSchema": {"type": "object"}}))
                .collect(),
        )
    }

    fn external_of(name: &str, tools: Vec<Value>) -> External {
        External {
            launch: Launch {
                name: name.into(),
                program: "/bin/false".into(),
                args: vec![],
                cwd: None,
                pins: Pins::default(),
                env: vec![],
                sandbox: None,
                max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            },
            pinned: ToolList::new(tools),
            tier: Tier::High,
            tiers: BTreeMap::new(),
            roles: DeclaredRoles::new(),
            still_trusted: None,
        }
    }

    #[test]
    fn clashing_or_invalid_names_are_left_out_on_every_side() {
        let started = Gateway::definitions(
            vec![
                external("a", &["b__c", "ok", "read_file"]),
                external("a__b", &["c"]),
                external("bad name", &["x"]),
                external(&"long".repeat(20), &["x"]),
            ],
            &|name| name == "a__read_file",
        );
        let names: Vec<&str> = started.tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["a__ok"], "{:?}", started.problems);
        let problems = started.problems.join("\n");
        assert_eq!(problems.matches("`a__b__c`: two external tools have that name").count(), 2, "{problems}");
        assert!(problems.contains("`a__read_file`: the server has a tool of that name"), "{problems}");
        assert!(problems.contains("`bad name__x`: the name must match"), "{problems}");
        assert!(problems.contains("rename the server"), "{problems}");
        assert_eq!(started.gateway.server_of("a__ok"), Some("a"));
        // The policy's view: never read-only, open-world, tier high and so destructive.
        let def = &started.tools[0];
        assert!(!def.behavior().read_only && def.behavior().open_world && def.behavior().destructive);
        assert_eq!(def.tier(), Tier::High);
        assert_eq!(
            def.input_schema()["properties"],
            json!({}),
            "an object schema without properties gets them"
        );
    }

    #[test]
    fn a_pinned_tool_the_validator_cannot_check_is_left_out_alone() {
        let tools = vec![
            json!({"name": "odd", "description": "d", "inputSchema": {"type": "object", "properties": {
                "s": {"type": "string", "pattern": "^(?!x)"}}}}),
            json!({"name": "fine", "description": "d", "inputSchema": {"type": "object", "properties": {
                "n": {"type": "integer", "minimum": 1}}, "required": ["n"]}}),
        ];
        let started = Gateway::definitions(vec![external_of("ext", tools)], &|_| false);
        let names: Vec<&str> = started.tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["ext__fine"]);
        let problems = started.problems.join("\n");
        assert!(
            problems.contains("left out external tool `ext__odd`") && problems.contains("look-around"),
            "{problems}"
        );
        // What is kept builds, with what its check derived: its arguments are checked.
        let registry = crate::Registry::builder().tools(started.tools).build().expect("the kept tools build");
        let mut below = json!({"n": 0}).as_object().cloned().expect("object");
        assert_eq!(
            registry.check_arguments("ext__fine", &mut below).expect_err("below the minimum")[0].pointer,
            "/n"
        );
    }
}
