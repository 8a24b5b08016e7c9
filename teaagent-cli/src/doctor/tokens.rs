//! The HTTP token file (`--http-token-file`): a regular file, yours, readable by nobody else,
//! every line a usable token. The tokens themselves are never shown.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use teaagent_core::home::{MAX_CONFIG_BYTES, read_path};
use teaagent_core::server::http::BearerToken;
use teaagent_core::visible::escape;

use super::{Finding, shown};

/// The file's name in the home, checked when no other is named.
const IN_HOME: &str = "tokens";

pub(super) fn check(named: Option<&Path>, home: Option<&Path>, findings: &mut Vec<Finding>) {
    let in_home = home.map(|h| h.join(IN_HOME));
    let path = match (named, &in_home) {
        (Some(path), _) => path,
        (None, Some(path)) if std::fs::symlink_metadata(path).is_ok() => path.as_path(),
        _ => return,
    };
    let subject = shown(path);
    let bytes = match read_path(path, MAX_CONFIG_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            findings.push(
                Finding::error("token-file", subject, "does not exist")
                    .fix("create it with one `NAME:TOKEN` a line (e.g. `openssl rand -hex 32`), mode 600"),
            );
            return;
        }
        Err(e) => {
            findings.push(
                Finding::error("token-file", subject, escape(&e.to_string())).fix("make it a regular file"),
            );
            return;
        }
    };
    let count = match std::str::from_utf8(&bytes)
        .map_err(|_| "not UTF-8".to_owned())
        .and_then(BearerToken::parse_lines)
    {
        Ok(tokens) if tokens.is_empty() => {
            findings.push(
                Finding::error(
                    "token-file",
                    subject,
                    "holds no token: the server would take any caller on loopback only",
                )
                .fix("add one `NAME:TOKEN` a line"),
            );
            return;
        }
        Ok(tokens) => tokens.len(),
        Err(why) => {
            findings.push(Finding::error("token-file", subject, escape(&why)).fix("correct that line"));
            return;
        }
    };
    let Ok(meta) = std::fs::metadata(path) else { return };
    let mode = meta.permissions().mode() & 0o7777;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        findings.push(
            Finding::error(
                "token-file",
                subject,
                format!("belongs to uid {}, not to you (uid {me})", meta.uid()),
            )
            .fix("keep your tokens in a file of your own"),
        );
    } else if mode & 0o077 != 0 {
        findings.push(
            Finding::error(
                "token-file",
                subject.clone(),
                format!("readable by others (mode {mode:o}): anyone who reads it can call the server"),
            )
            .fix(format!("chmod 600 {subject}, and replace the tokens if others may have read them")),
        );
    } else {
        findings.push(Finding::ok("token-file", subject, format!("{count} token(s), mode {mode:o}")));
    }
}
