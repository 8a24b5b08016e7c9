//! Containment: every process a `shell_exec` call or an external MCP server (the gateway's)
//! starts is found and killed when its scope ends — the call's shell exits, its timeout passes,
//! it is cancelled (its future is dropped), the external server is stopped or restarted, or the
//! server stops — however it detached (`setsid`, a double fork, `nohup`, a daemon that ignores
//! SIGTERM and SIGHUP).
//!
//! A [`Scope`] is one such set of processes: one per `shell_exec` call, one per run of an
//! external server. On Linux, one of two mechanisms, chosen per scope:
//!
//! - **cgroup v2** (preferred): when the server's own cgroup (`0::` in `/proc/self/cgroup`, found
//!   under the `cgroup2` mount of `/proc/self/mountinfo`) lets it create a child cgroup, each
//!   scope gets one, `teaagent-<kind>.<server pid>.<n>` (kind `shell` or `server`). The scope's
//!   first process enters it before its program runs — a shell writes `0` to its
//!   `cgroup.procs` and then `exec`s the command ([`Scope::shell_command`]); an external server
//!   is moved between `fork` and `exec` ([`Scope::contain`]). One that cannot enter never runs
//!   (fail closed), so everything it starts is born inside. At the end the cgroup is killed as a
//!   whole (`cgroup.kill`, or on kernels before 5.14 frozen and every member SIGKILLed), and
//!   removed once empty. A process cannot leave its cgroup without write access to another
//!   cgroup's `cgroup.procs`.
//! - **subreaper** (fallback): the server marks itself `PR_SET_CHILD_SUBREAPER`, so orphans (a
//!   `setsid`ed or double-forked daemon) become its children instead of init's. A scope's
//!   processes are the server's descendants that carry the scope's token in their environment
//!   ([`TOKEN_VAR`], set on the first process and inherited), or that are in the first process's
//!   group, or that hold the write end of its stdout or stderr pipe, or that descend from the
//!   first process or from another of the scope's processes. At the end they are all stopped
//!   (SIGSTOP, repeated until no member runs, so none can fork), then SIGKILLed, and those that
//!   became the server's children are reaped by pid (never `waitpid(-1)`, which would steal the
//!   statuses of children the runtime waits for). Concurrent scopes have distinct tokens, groups
//!   and first processes, so one never kills another's processes, and other children of the
//!   server are not touched.
//!
//! A server that is PID 1 (in a container) adopts orphans whatever the path: on the cgroup path
//! it reaps the killed ones that still name the scope's cgroup, so no zombie is left.
//!
//! The clean-up is synchronous (a few milliseconds of `/proc` and cgroup files), in
//! [`Scope::close`] and in `Drop`: it has finished before a call's answer is sent, and a
//! cancelled call or a stopping server (whose runtime drops the call) cannot leave it half done
//! on another thread.
//!
//! [`MODE_VAR`] (`TEAAGENT_SHELL_CONTAINMENT`, read once) forces a mechanism: `cgroup` (a scope
//! fails when it cannot get its cgroup), `subreaper` (never try cgroups); unset or `auto` tries
//! the cgroup and falls back to the subreaper. The tests use it to exercise both paths.
//!
//! What remains (also in the README): a process that moves itself into another cgroup (it needs
//! write access there) or is started by another service (`systemd-run`, `at`, `ssh localhost`)
//! escapes; on the fallback path, a process that clears its environment, leaves the process
//! group, closes the output pipes and whose parent exits before the scope ends is not
//! recognised; if the server itself is SIGKILLed nothing runs the clean-up (an external server
//! itself still gets the kernel's parent-death signal). Other Unix systems kill the first
//! process's group only.

#[cfg(not(target_os = "linux"))]
mod elsewhere;
#[cfg(target_os = "linux")]
mod linux;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(not(target_os = "linux"))]
use elsewhere as mechanism;
#[cfg(target_os = "linux")]
use linux as mechanism;

/// The environment variable that carries a scope's token (subreaper path).
pub(crate) const TOKEN_VAR: &str = crate::env::ENV_CONTAINED;
/// The environment variable that forces a mechanism (`auto`, `cgroup`, `subreaper`).
pub(crate) const MODE_VAR: &str = crate::env::ENV_SHELL_CONTAINMENT;

/// Moves the shell into the cgroup whose `cgroup.procs` is `$1`, then runs `$2` as `sh -c` would.
const ENTER: &str = concat!(
    "{ echo 0 >\"$1\"; } 2>/dev/null || { ",
    "echo 'teaagent: the command could not be moved into its cgroup, so it was not run' >&2; exit 125; }; ",
    "exec /bin/sh -c \"$2\"",
);

static NEXT: AtomicU64 = AtomicU64::new(0);

/// What a scope contains (it names the scope's cgroup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The processes of one `shell_exec` call.
    Shell,
    /// The processes of one run of an external MCP server.
    Server,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Shell => "teaagent-shell.",
            Kind::Server => "teaagent-server.",
        }
    }
}

/// The processes of one scope: created before its first process starts, closed (everything
/// killed) when it ends, at the latest when dropped.
pub(crate) struct Scope {
    token: String,
    /// The scope's cgroup directory (cgroup path), or `None` (subreaper path, or not Linux).
    cgroup: Option<PathBuf>,
    /// The first process: pid and start time (to never mistake a reused pid for it).
    first: Option<(i32, u64)>,
    /// The inodes of the first process's stdout and stderr pipes.
    pipes: Vec<u64>,
    closed: bool,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("token", &self.token)
            .field("cgroup", &self.cgroup)
            .finish_non_exhaustive()
    }
}

impl Scope {
    /// A new scope; on Linux this creates its cgroup or turns the subreaper on.
    pub(crate) fn new(kind: Kind) -> Result<Scope, String> {
        let token = format!("{}.{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let cgroup = mechanism::prepare(kind.prefix(), &token)?;
        Ok(Scope { token, cgroup, first: None, pipes: Vec::new(), closed: false })
    }

    /// The `cgroup.procs` file a shell writes to enter its cgroup (cgroup path only): the
    /// command sandbox must let it.
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    pub(crate) fn cgroup_procs(&self) -> Option<PathBuf> {
        self.cgroup.as_ref().map(|dir| dir.join("cgroup.procs"))
    }

    /// The command that runs `command` under `sh -c` inside this scope (the shell enters the
    /// cgroup itself, then `exec`s the command). Its environment is the caller's to set, after
    /// which [`Scope::mark`] must be applied.
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    pub(crate) fn shell_command(&self, command: &str) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new("/bin/sh");
        match &self.cgroup {
            Some(dir) => cmd.arg("-c").arg(ENTER).arg("/bin/sh").arg(dir.join("cgroup.procs")).arg(command),
            None => cmd.arg("-c").arg(command),
        };
        cmd
    }

    /// Marks the first process as the scope's: a process group of its own, and (subreaper path)
    /// the token in its environment. Apply after its environment is set (`env_clear` would drop
    /// the token).
    pub(crate) fn mark(&self, cmd: &mut tokio::process::Command) {
        if self.cgroup.is_none() {
            cmd.env(TOKEN_VAR, &self.token);
        }
        cmd.process_group(0);
    }

    /// [`Scope::mark`], and (cgroup path) the process moves itself into the scope's cgroup
    /// between `fork` and `exec`: one that cannot never runs its program. Register it before a
    /// sandbox's own set-up (which may leave the user namespace that may write there).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn contain(&self, cmd: &mut tokio::process::Command) -> Result<(), String> {
        self.mark(cmd);
        if let Some(procs) = self.cgroup_procs() {
            mechanism::enter_on_exec(cmd, &procs)?;
        }
        Ok(())
    }

    /// Records the first process (`Child::id` right after spawning, before it is waited for)
    /// and the read ends of its output pipes (a process holding their write ends is the
    /// scope's).
    #[allow(clippy::unnecessary_cast)] // `st_ino`'s width differs between platforms.
    pub(crate) fn started(
        mut self,
        pid: Option<u32>,
        pipes: &[Option<std::os::fd::BorrowedFd<'_>>],
    ) -> Scope {
        self.first =
            pid.and_then(|p| i32::try_from(p).ok()).map(|p| (p, mechanism::start_time(p).unwrap_or(0)));
        self.pipes = pipes
            .iter()
            .flatten()
            .filter_map(|fd| rustix::fs::fstat(fd).ok())
            .map(|st| st.st_ino as u64)
            .collect();
        self
    }

    /// Kills every process of the scope (once; blocking for the few milliseconds the kernel
    /// takes).
    pub(crate) fn close(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        match &self.cgroup {
            Some(dir) => mechanism::close_cgroup(dir, self.first.map(|s| s.0)),
            None => mechanism::sweep(&self.token, self.first, &self.pipes),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.close();
    }
}
