//! The configuration as `teaagent mcp serve` would read it for the root: the user's file, the
//! workspace's file, the `TEAAGENT_*` variables, the policy they make, and rules that name no
//! tool.

use teaagent_core::config::{Choices, Settings, Sources, USER_FILE, WORKSPACE_FILE};
use teaagent_core::gateway::SEPARATOR;
use teaagent_core::visible::escape;
use teaagent_core::{Registry, Workspace};

use super::{Finding, Subject, shown};

/// Checks the configuration; the settings when they load.
pub(super) fn check(subject: &Subject, findings: &mut Vec<Finding>) -> Option<Settings> {
    let registry = match crate::setup::registry() {
        Ok(registry) => registry,
        Err(e) => {
            findings.push(Finding::error("config", "built-in tools", escape(&format!("{e:#}"))));
            return None;
        }
    };
    let workspace = match Workspace::open(&subject.root) {
        Ok(workspace) => Some(workspace),
        Err(e) => {
            findings.push(
                Finding::error(
                    "config",
                    shown(&subject.root),
                    escape(&format!("the root cannot be served: {e}")),
                )
                .fix("pass --root with the directory the server is meant to serve"),
            );
            None
        }
    };
    let sources = Sources {
        user_file: subject.config.as_deref(),
        user_read: None,
        create_home: false,
        workspace: workspace.as_ref(),
        server_file: None,
        environment: true,
        flags: Choices::default(),
        strict_tool_names: true,
    };
    let settings = match Settings::load(&sources, &registry) {
        Ok(settings) => settings,
        Err(e) => {
            findings.push(
                Finding::error("config", "configuration", escape(&e.to_string()))
                    .fix("edit the file it names (`teaagent mcp serve` refuses to start until then)"),
            );
            return None;
        }
    };
    let user_file = &settings.user_file;
    findings.push(if user_file.is_file() {
        Finding::ok("config", shown(user_file), "parses, every value in range")
    } else {
        Finding::ok("config", shown(user_file), format!("no {USER_FILE} there: the defaults apply"))
    });
    if let Some(workspace) = &workspace {
        let file = workspace.root().join(WORKSPACE_FILE);
        if file.is_file() {
            findings.push(Finding::ok("config", shown(&file), "parses, every value in range"));
        }
    }
    for warning in &settings.warnings {
        findings
            .push(Finding::warning("config", "configuration", escape(warning)).fix("edit the file it names"));
    }
    rules(&settings, &registry, findings);
    Some(settings)
}

/// The policy the settings make, and its rules that name no tool.
fn rules(settings: &Settings, registry: &Registry, findings: &mut Vec<Finding>) {
    let policy = match settings.policy() {
        Ok(policy) => policy,
        Err(e) => {
            findings.push(
                Finding::error("config", "policy", escape(&e.to_string())).fix("edit the rule it names"),
            );
            return;
        }
    };
    for rule in policy.rules_naming_no_tool(registry) {
        // A rule naming an external server's tool is checked when that server runs.
        if rule.rule.contains(SEPARATOR) {
            continue;
        }
        findings.push(
            Finding::error("config", "policy", rule.to_string())
                .fix("correct the tool's name (`teaagent mcp tools` lists them); `teaagent mcp serve` refuses to start until then"),
        );
    }
}
