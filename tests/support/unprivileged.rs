//! Starting the shipped binary as a user without privileges, for the tests that check what a
//! user gets (root bypasses `/proc` protections and may create cgroups).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use crate::{Bin, Tree};

/// Whether the tests run as root.
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
}

/// The `teaagent` command run as an unprivileged user, and the `TEAAGENT_HOME` it must be given.
/// As root: run as `nobody` (uid and gid 65534) through `setpriv`, with `tree` and `home` opened
/// to it and a home of nobody's own (`home/nobody`, holding `config` as its `config.toml`), since
/// teaagent uses only a home that belongs to its user. Otherwise: this user, with `home` itself.
/// `None` (after [`crate::skip`]) when root has no `setpriv`.
pub fn teaagent(tree: &Tree, home: &Tree, config: Option<&str>) -> Option<(Command, PathBuf)> {
    if !running_as_root() {
        if let Some(config) = config {
            home.write("config.toml", config);
        }
        return Some((Command::new(Bin::Teaagent.path()), home.base()));
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        crate::skip("running as root without setpriv, so no unprivileged server can be started");
        return None;
    }
    for dir in [tree.base(), tree.root(), home.base()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    let own = home.path("nobody");
    std::fs::create_dir(&own).expect("mkdir");
    let mut owned = vec![own.clone()];
    if let Some(config) = config {
        std::fs::write(own.join("config.toml"), config).expect("config");
        owned.push(own.join("config.toml"));
    }
    for path in owned {
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).expect("chown");
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(Bin::Teaagent.path());
    Some((cmd, own))
}
