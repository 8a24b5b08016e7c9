//! `teaagent doctor`: every finding of [`crate::doctor`], as a list a person reads or as JSON
//! for scripts. Exit code 1 when any finding is an error, else 0.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::cli::DoctorArgs;
use crate::doctor::{self, Finding, Status, Subject};

/// `teaagent doctor`.
pub(crate) fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let subject = Subject {
        root: args.root.unwrap_or_else(|| ".".into()),
        config: args.config,
        token_file: args.http_token_file,
    };
    let findings = doctor::examine(&subject);
    let errors = findings.iter().filter(|f| f.status == Status::Error).count();
    let warnings = findings.iter().filter(|f| f.status == Status::Warning).count();
    if args.json {
        let report = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "ok": errors == 0,
            "errors": errors,
            "warnings": warnings,
            "findings": findings,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let colour =
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        for finding in &findings {
            print_finding(finding, colour);
        }
        println!();
        println!("{}", summary(errors, warnings));
    }
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `status  check       subject: message`, and the fix indented under it.
fn print_finding(finding: &Finding, colour: bool) {
    let (word, code) = match finding.status {
        Status::Ok => ("ok", "32"),
        Status::Warning => ("warn", "33"),
        Status::Error => ("error", "31"),
    };
    let status = if colour { format!("\x1b[{code}m{word:<5}\x1b[0m") } else { format!("{word:<5}") };
    println!("{status}  {:<10}  {}: {}", finding.check, finding.subject, finding.message);
    if let Some(fix) = &finding.fix {
        println!("{:<5}  {:<10}  fix: {fix}", "", "");
    }
}

fn summary(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no problems found".to_owned(),
        (0, w) => format!("{}: teaagent works, but see the fixes above", plural(w, "warning")),
        (e, w) => format!("{}, {}: see the fixes above", plural(e, "error"), plural(w, "warning")),
    }
}
