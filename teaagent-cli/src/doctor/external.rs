//! The external MCP servers declared in the user's file: the executable is there, the trust
//! decision is made, and the fingerprint and the pinned tool list still match it.

use std::path::Path;

use teaagent_core::config::Settings;
use teaagent_core::visible::{escape, shown};

use super::Finding;
use crate::trust;

pub(super) fn check(settings: &Settings, root: &Path, findings: &mut Vec<Finding>) {
    if settings.servers.is_empty() {
        return;
    }
    let records = match trust::records() {
        Ok(records) => records,
        Err(e) => {
            findings.push(
                Finding::error("external", "trust store", escape(&format!("{e:#}")))
                    .fix("move the trust store aside and decide again (`teaagent mcp trust allow NAME`)"),
            );
            return;
        }
    };
    for (name, server) in &settings.servers {
        let subject = shown(name);
        let now = trust::fingerprint_in(server, root);
        if now.executable().is_none() {
            findings.push(
                Finding::error(
                    "external",
                    subject,
                    format!("its command `{}` is not found (as a path, or on PATH)", shown(&server.command)),
                )
                .fix(format!("install it, or correct `[mcp_servers.{}] command`", shown(name))),
            );
            continue;
        }
        let record = records.get(name);
        let finding = match (record, trust::verdict(record, &now)) {
            (_, trust::Verdict::Start(pinned)) => Finding::ok(
                "external",
                subject,
                format!("allowed; its executable, arguments and {} pinned tools match", pinned.tools().len()),
            ),
            (None, _) => Finding::warning("external", subject, "not decided: teaagent does not start it")
                .fix(format!("teaagent mcp trust allow {}", shown(name))),
            (Some(record), _) if record.is_denied() => {
                Finding::ok("external", subject, "denied: teaagent never starts it")
            }
            (Some(_), trust::Verdict::Refuse(why)) => Finding::error(
                "external",
                subject,
                format!("not started: {}", escape(&why)),
            )
            .fix(format!(
                "teaagent mcp trust inspect {0}, then teaagent mcp trust allow {0} if the change is yours",
                shown(name)
            )),
        };
        findings.push(finding);
    }
}
