//! The home directory (`$TEAAGENT_HOME`, else `~/.teaagent`) and teaagent's own files in it:
//! each must be the user's own and writable by nobody else.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use teaagent_core::home::{self, Home, HomeError};

use super::{Finding, shown};

/// The files whose loose permissions would let someone else steer teaagent.
const OWN_FILES: [(&str, &str); 5] = [
    ("config.toml", "others could change your policy"),
    ("trust.json", "teaagent ignores it, so every external server counts as not decided"),
    ("file_digests.json", "teaagent ignores it and hashes every executable again"),
    ("workspace_registry.json", "others could forge or drop workspace locks"),
    ("audit.jsonl", "others could forge or erase audit records"),
];

/// Checks the home; its path when it exists and is usable.
pub(super) fn check(findings: &mut Vec<Finding>) -> Option<PathBuf> {
    let path = match home::dir() {
        Ok(path) => path,
        Err(e) => {
            findings.push(
                Finding::error("home", "$TEAAGENT_HOME", e.to_string()).fix("set TEAAGENT_HOME or HOME"),
            );
            return None;
        }
    };
    if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        findings.push(Finding::ok(
            "home",
            shown(&path),
            "does not exist yet: the first `teaagent mcp serve` creates it (mode 700)",
        ));
        return None;
    }
    let home = match Home::at(&path) {
        Ok(home) => home,
        Err(e) => {
            let fix = match e {
                HomeError::NotOwned { .. } => "set TEAAGENT_HOME to a directory of your own",
                HomeError::Link { .. } => "set TEAAGENT_HOME to the directory the link points to",
                _ => "set TEAAGENT_HOME to a directory teaagent may use",
            };
            findings.push(Finding::error("home", shown(&path), e.to_string()).fix(fix));
            return None;
        }
    };
    let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0);
    if mode & 0o022 != 0 {
        findings.push(
            Finding::error(
                "home",
                shown(&path),
                format!("writable by others (mode {mode:o}): they could change teaagent's state"),
            )
            .fix(format!("chmod 700 {}", shown(&path))),
        );
    } else {
        findings.push(Finding::ok("home", shown(&path), format!("yours, mode {mode:o}")));
    }
    for (name, because) in OWN_FILES {
        let file = home.file(name);
        let Ok(meta) = std::fs::symlink_metadata(&file) else { continue };
        if meta.file_type().is_symlink() {
            findings.push(
                Finding::error("home", shown(&file), "a symbolic link: teaagent refuses to use it")
                    .fix(format!("replace it with the file itself, or remove it: rm {}", shown(&file))),
            );
        } else if let Some(loose) = home.loose_permissions(name) {
            let fix = if meta.uid() == rustix::process::geteuid().as_raw() {
                format!("chmod 600 {}", shown(&file))
            } else {
                format!("move it aside (it is not yours): mv {0} {0}.untrusted", shown(&file))
            };
            findings.push(Finding::error("home", shown(&file), format!("{loose}: {because}")).fix(fix));
        }
    }
    Some(path)
}
