//! `teaagent mcp trust list|allow|deny|inspect`: the trust store (`trust.rs`) as the user works
//! with it.

use std::io::IsTerminal;
use std::process::ExitCode;

use teaagent_core::visible;

use super::print_table;
use crate::cli::Trust;
use crate::{config, pins, trust};

/// `teaagent mcp trust …`.
pub(crate) fn run(command: Trust) -> anyhow::Result<ExitCode> {
    // Warnings (a trust store or configuration others may write) go to stderr.
    teaagent_core::logging::init("warn");
    let user = config::UserFile::locate(None)?;
    let user_file = user.path();
    let servers = user.read()?.map(|c| c.mcp_servers).unwrap_or_default();
    let declared = |name: &str| {
        servers.get(name).cloned().ok_or_else(|| {
            let known: Vec<&String> = servers.keys().collect();
            anyhow::anyhow!(
                "no MCP server named `{name}` is declared in {} (declared: {}); add `[mcp_servers.{name}]` there first",
                user_file.display(),
                if known.is_empty() { "none".to_owned() } else { known.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ") }
            )
        })
    };
    match command {
        Trust::List => {
            let records = trust::records()?;
            let rows: Vec<[String; 3]> = servers
                .iter()
                .map(|(name, server)| {
                    let now = trust::fingerprint(server);
                    [
                        visible::shown(name),
                        trust::status(records.get(name), &now).to_owned(),
                        visible::shown(&server.command),
                    ]
                })
                .collect();
            if rows.is_empty() {
                println!(
                    "no MCP servers are declared in {}",
                    visible::escape(&user_file.display().to_string())
                );
            } else {
                print_table(&["SERVER", "STATUS", "COMMAND"], &rows);
            }
        }
        Trust::Allow { name, yes } => {
            let server = declared(&name)?;
            if let Some(why) = pins::unpinned_package(&server.command, &server.args) {
                anyhow::bail!("not allowing `{}`: {why}", visible::shown(&name));
            }
            // Started once to read what the model will read; nothing is recorded if that fails.
            let now = trust::fingerprint(&server);
            let tools = trust::probe(&trust::launch(&name, &server, &now)?)?;
            println!(
                "`{}` offers {} tool{}; this is what the model will read (as {}__TOOL):\n",
                visible::shown(&name),
                tools.tools().len(),
                if tools.tools().len() == 1 { "" } else { "s" },
                visible::shown(&name)
            );
            print!("{}", tools.describe());
            if !yes
                && std::io::stdin().is_terminal()
                && !confirm(&format!("Allow `{}` with these tools?", visible::shown(&name)))?
            {
                println!("\nnot allowed: nothing was recorded");
                return Ok(ExitCode::SUCCESS);
            }
            trust::decide(&name, now, trust::Decision::Allow, Some(&tools))?;
            println!(
                "\nallowed `{}` as configured now ({}), with these tools pinned (sha256 {}): if they change, teaagent withholds them until you allow it again",
                visible::shown(&name),
                visible::shown(&server.command),
                tools.sha256()
            );
        }
        Trust::Deny { name } => {
            let server = declared(&name)?;
            trust::decide(&name, trust::fingerprint(&server), trust::Decision::Deny, None)?;
            println!("denied `{}`: teaagent will never start it", visible::shown(&name));
        }
        Trust::Inspect { name } => {
            let server = declared(&name)?;
            let records = trust::records()?;
            print!("{}", trust::describe(&name, &server, records.get(&name)));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks a yes/no question on the terminal (stderr, so stdout keeps only the listing); no unless
/// the answer is `y` or `yes`.
fn confirm(question: &str) -> anyhow::Result<bool> {
    use std::io::Write;
    eprint!("\n{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
