//! The external MCP servers of the user's configuration (README, "Other MCP servers behind teaagent") as the command uses them:
//! which may start (the trust store's verdict: allowed, unchanged, with a pinned tool list),
//! the gateway that runs them for `mcp serve` and `run`, and their tools as `mcp tools` lists
//! them. The gateway itself is [`teaagent_core::gateway`].

use std::collections::HashMap;

use anyhow::Context;
use teaagent_core::gateway::{ArgRole, DeclaredRoles, External, Gateway, GatewayOptions, ToolList};
use teaagent_core::{Registry, ToolDef, visible};

use crate::cli::CallFlags;
use crate::config::{McpServer, ReadUserFile};
use crate::setup::registry;
use crate::{config, one_line, trust};

/// What `mcp tools` shows of the external servers.
pub(crate) struct Listing {
    /// The tools of servers that may start, from their pins.
    pub(crate) tools: Vec<ToolDef>,
    /// Servers that may not start: `[name, why]`.
    pub(crate) refused: Vec<[String; 2]>,
    /// Each server that may start, with its state (its live tools compared with the pin).
    states: HashMap<String, String>,
    /// Which server each tool is of (nothing runs).
    gateway: Gateway,
}

impl Listing {
    /// The server of external tool `tool` and its state.
    pub(crate) fn server_of(&self, tool: &str) -> Option<(&str, &str)> {
        let server = self.gateway.server_of(tool)?;
        Some((server, self.states.get(server)?.as_str()))
    }
}

/// The external servers of the user's configuration that may start (allowed, unchanged, with
/// a pinned tool list; `wanted` picks among them), ready for the gateway. Each one that may not
/// start is said on stderr, with why; none of those is ever started.
fn externals(
    flags: &CallFlags,
    user: &ReadUserFile,
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<Vec<External>> {
    let Some(file) = &user.contents else { return Ok(Vec::new()) };
    if file.mcp_servers.is_empty() {
        return Ok(Vec::new());
    }
    let records = trust::records()?;
    // Servers run in the workspace root: a relative path means the same to them as to the
    // policy, and the files their arguments name are pinned from there.
    let base = flags
        .root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .and_then(|root| std::fs::canonicalize(root).ok())
        .context("cannot resolve the workspace root")?;
    let mut out = Vec::new();
    for (name, server) in &file.mcp_servers {
        if !wanted(name) {
            continue;
        }
        let now = trust::fingerprint_in(server, &base);
        let pinned = match trust::verdict(records.get(name), &now) {
            trust::Verdict::Start(pinned) => pinned,
            trust::Verdict::Refuse(why) => {
                crate::say::warning(&format!(
                    "not starting external server `{}`: {}",
                    visible::shown(name),
                    visible::escape(&why)
                ));
                continue;
            }
        };
        let mut external = match external(name, server, &now, pinned) {
            Ok(external) => external,
            Err(e) => {
                crate::say::warning(&format!(
                    "not starting external server `{}`: {}",
                    visible::shown(name),
                    one_line(&e)
                ));
                continue;
            }
        };
        // Before every (re)start: the store as it is then (a `deny` since takes effect), and the
        // server as configured at start (its executable hashed again), with the same pin.
        let checked = server.clone();
        let pin = external.pinned.sha256().to_owned();
        let server_name = name.clone();
        let checked_base = base.clone();
        let still_trusted = move || {
            let records = trust::records().map_err(|e| format!("cannot read the trust store: {e:#}"))?;
            match trust::verdict(records.get(&server_name), &trust::fingerprint_in(&checked, &checked_base)) {
                trust::Verdict::Start(now) if now.sha256() == pin => Ok(()),
                trust::Verdict::Start(_) => Err("it was allowed again with other tools since teaagent started: restart teaagent to serve them".into()),
                trust::Verdict::Refuse(why) => Err(why),
            }
        };
        external.still_trusted = Some(std::sync::Arc::new(still_trusted));
        external.launch.cwd = Some(base.clone());
        out.push(external);
    }
    Ok(out)
}

/// A server that may start, as the gateway takes it: how to launch the executable its
/// fingerprint resolved, its pinned tools, their tiers from the configuration.
fn external(
    name: &str,
    server: &McpServer,
    now: &trust::Fingerprint,
    pinned: ToolList,
) -> anyhow::Result<External> {
    let launch = trust::launch(name, server, now)?;
    let tiers = pinned
        .tools()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .map(|t| (t.to_owned(), server.tier_of(t)))
        .collect();
    let mut roles = DeclaredRoles::new();
    for (tool, args) in &server.roles {
        for (arg, role) in args {
            // Checked when the configuration was read.
            if let Some(role) = ArgRole::parse(role) {
                roles.entry(tool.clone()).or_default().insert(arg.clone(), role);
            }
        }
    }
    Ok(External { launch, pinned, tier: server.tier(), tiers, roles, still_trusted: None })
}

/// Says on stderr which external tools the deny rules refuse because they cannot be checked on
/// them (`Policy::cannot_check`), and how to declare what their arguments are.
pub(crate) fn announce_unchecked(registry: &Registry, gateway: &Gateway, policy: &teaagent_core::Policy) {
    for tool in registry.iter().filter(|t| gateway.owns(t.name())) {
        let (Some(why), Some(server)) = (policy.cannot_check(tool), gateway.server_of(tool.name())) else {
            continue;
        };
        let own = tool.name().strip_prefix(&format!("{server}__")).unwrap_or(tool.name());
        crate::say::warning(&format!(
            "warning: refused external tool `{}`: {}; say what its arguments are in [mcp_servers.{}.roles] (e.g. `{} = {{ query = \"text\" }}`; \"path\", \"command\" or \"text\"), and it is checked against the rule",
            visible::escape(tool.name()),
            visible::escape(&why),
            visible::escape(server),
            visible::escape(own)
        ));
    }
}

/// The shipped tools and the gateway's (started in the background): `wanted` picks the external
/// servers by name.
pub(crate) fn registry_with_gateway(
    flags: &CallFlags,
    user: &ReadUserFile,
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<(Registry, Gateway)> {
    let servers = externals(flags, user, wanted)?;
    if servers.is_empty() {
        return Ok((registry()?, Gateway::none()));
    }
    // The built-in tools are built once, with the external ones: only their names are needed
    // before (an external tool may not take one).
    let builtin = teaagent_core::builtin_tools::builtin();
    let started = Gateway::start(
        servers,
        &|name| builtin.iter().any(|tool| tool.name() == name),
        GatewayOptions::default(),
    )
    .context("cannot start the gateway")?;
    for problem in &started.problems {
        crate::say::warning(&format!("warning: {}", visible::escape(problem)));
    }
    let registry =
        Registry::builder().tools(builtin).tools(started.tools).build().context("the tools are invalid")?;
    Ok((registry, started.gateway))
}

/// Each declared external server's tools as they would be offered, with their state: a server
/// that may start is started once to compare its live tools with the pinned ones.
pub(crate) fn listing() -> anyhow::Result<Listing> {
    let user = config::UserFile::locate(None)?;
    let servers = user.read()?.map(|c| c.mcp_servers).unwrap_or_default();
    if servers.is_empty() {
        return Ok(Listing {
            tools: Vec::new(),
            refused: Vec::new(),
            states: HashMap::new(),
            gateway: Gateway::none(),
        });
    }
    let records = trust::records()?;
    let mut externals = Vec::new();
    let mut refused = Vec::new();
    let mut states = HashMap::new();
    for (name, server) in servers {
        let now = trust::fingerprint(&server);
        match trust::verdict(records.get(&name), &now) {
            trust::Verdict::Refuse(why) => refused.push([name, format!("not started: {why}")]),
            trust::Verdict::Start(pinned) => match external(&name, &server, &now, pinned) {
                Err(e) => refused.push([name, format!("not started: {}", one_line(&e))]),
                Ok(external) => {
                    let state = match trust::probe(&external.launch) {
                        Ok(live) if live.sha256() == external.pinned.sha256() => {
                            "pinned; the server offers the same tools".to_owned()
                        }
                        Ok(_) => {
                            "WITHHELD: its tools changed since it was allowed (see `teaagent mcp trust inspect`)"
                                .to_owned()
                        }
                        Err(e) => format!("pinned; the server could not be read now: {}", one_line(&e)),
                    };
                    states.insert(name, state);
                    externals.push(external);
                }
            },
        }
    }
    let builtin = registry()?;
    let started = Gateway::definitions(externals, &|name| builtin.get(name).is_some());
    for problem in &started.problems {
        crate::say::warning(&format!("warning: {}", visible::escape(problem)));
    }
    Ok(Listing { tools: started.tools, refused, states, gateway: started.gateway })
}
