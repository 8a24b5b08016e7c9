//! The Linux mechanisms (the `containment` module docs): which one a scope gets, cgroup v2 or
//! else the subreaper, as `TEAAGENT_SHELL_CONTAINMENT` forces or allows.

mod cgroup;
mod procfs;
mod subreaper;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use self::cgroup::create_cgroup;
use self::subreaper::enable_subreaper;
use super::MODE_VAR;

pub(super) use cgroup::{close_cgroup, enter_on_exec};
pub(super) use procfs::start_time;
pub(super) use subreaper::sweep;

/// How long the clean-up waits for killed processes to be gone before it gives up (and
/// logs). SIGKILL takes effect within milliseconds; this only bounds a stuck kernel.
const GIVE_UP: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Auto,
    Cgroup,
    Subreaper,
}

fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var(MODE_VAR).as_deref() {
        Err(_) | Ok("" | "auto") => Mode::Auto,
        Ok("cgroup") => Mode::Cgroup,
        Ok("subreaper") => Mode::Subreaper,
        Ok(other) => {
            tracing::warn!(value = other, "{MODE_VAR} is not auto, cgroup or subreaper; using auto");
            Mode::Auto
        }
    })
}

/// The call's cgroup, or `None` after turning the subreaper on.
pub(super) fn prepare(prefix: &str, token: &str) -> Result<Option<PathBuf>, String> {
    let mode = mode();
    if mode != Mode::Subreaper {
        match create_cgroup(prefix, token) {
            Ok(dir) => return Ok(Some(dir)),
            Err(e) if mode == Mode::Cgroup => {
                return Err(format!(
                    "cgroup containment is not available ({e}); unset {MODE_VAR} to fall back to the subreaper"
                ));
            }
            Err(e) => {
                static ONCE: OnceLock<()> = OnceLock::new();
                ONCE.get_or_init(|| {
                    tracing::info!(reason = %e, "no cgroup of its own for each command or external server; containing them as a subreaper");
                });
            }
        }
    }
    enable_subreaper()?;
    Ok(None)
}
