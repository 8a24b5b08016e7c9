//! The clients whose configuration names teaagent (`teaagent mcp install`'s table,
//! [`crate::clients`]): each entry's binary exists and can run, and the root it names is a
//! directory. A client's file that does not parse is an error: the client cannot read it
//! either.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use teaagent_core::visible::escape;

use super::{Finding, shown};
use crate::clients::{self, Client, Entry, Env};

pub(super) fn check(root: &Path, findings: &mut Vec<Finding>) {
    let env = Env::from_process();
    let mut named = 0;
    for client in clients::all() {
        let project = std::fs::canonicalize(root).ok().and_then(|root| client.project_location(&root));
        for location in client.user_location(&env).into_iter().chain(project) {
            if std::fs::symlink_metadata(&location.file).is_err() {
                continue;
            }
            let file = shown(&location.file);
            match client.teaagent_entries(&location.file) {
                Err(e) => findings.push(
                    Finding::error("client", format!("{} ({file})", client.name), escape(&e.to_string()))
                        .fix(format!("correct the file: {} cannot read it either", client.name)),
                ),
                Ok(entries) => {
                    for entry in entries {
                        named += 1;
                        findings.push(check_entry(client, &file, location.project, &entry));
                    }
                }
            }
        }
    }
    if named == 0 {
        findings.push(Finding::ok(
            "client",
            "clients",
            "no client's configuration names teaagent (`teaagent mcp install CLIENT` connects one)",
        ));
    }
}

/// One entry: its command and its root.
fn check_entry(client: &Client, file: &str, project: bool, entry: &Entry) -> Finding {
    let subject = format!("{} ({file}): {}", client.name, escape(&entry.name));
    let again = format!(
        "teaagent mcp install {}{} --name {} --root DIR (writes this binary's path)",
        client.id,
        if project { " --project" } else { "" },
        escape(&entry.name)
    );
    let command = Path::new(&entry.command);
    let runnable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if entry.command.contains('/') {
        runnable(command)
    } else {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| runnable(&dir.join(command))))
    };
    if !found {
        return Finding::error(
            "client",
            subject,
            format!("starts `{}`, which is not an executable file here", escape(&entry.command)),
        )
        .fix(again);
    }
    match entry.root() {
        None => Finding::warning(
            "client",
            subject,
            "names no --root: the server serves whatever directory the client starts it in",
        )
        .fix(again),
        Some(dir) if !Path::new(dir).is_absolute() => Finding::warning(
            "client",
            subject,
            format!("its --root `{}` is relative: it depends on where the client starts it", escape(dir)),
        )
        .fix(again),
        Some(dir) if !Path::new(dir).is_dir() => {
            Finding::error("client", subject, format!("its --root `{}` is not a directory", escape(dir)))
                .fix(again)
        }
        Some(dir) => {
            Finding::ok("client", subject, format!("starts {} on {}", escape(&entry.command), escape(dir)))
        }
    }
}
