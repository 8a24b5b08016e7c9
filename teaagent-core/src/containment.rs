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

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

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
        let cgroup = linux::prepare(kind.prefix(), &token)?;
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
            linux::enter_on_exec(cmd, &procs)?;
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
        self.first = pid.and_then(|p| i32::try_from(p).ok()).map(|p| (p, linux::start_time(p).unwrap_or(0)));
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
            Some(dir) => linux::close_cgroup(dir, self.first.map(|s| s.0)),
            None => linux::sweep(&self.token, self.first, &self.pipes),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(target_os = "linux")]
mod linux {
    //! The Linux mechanisms (see the parent module).

    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    use rustix::process::{Pid, Signal, WaitOptions};

    use super::{Kind, MODE_VAR, TOKEN_VAR};

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

    // ----- cgroup v2 -------------------------------------------------------------------------

    /// The server's own cgroup v2 directory, found once.
    fn own_cgroup() -> Result<&'static Path, String> {
        static BASE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
        BASE.get_or_init(|| {
            let base = find_own_cgroup()?;
            remove_stale(&base);
            Ok(base)
        })
        .as_deref()
        .map_err(Clone::clone)
    }

    fn find_own_cgroup() -> Result<PathBuf, String> {
        let cgroups =
            std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let candidates = candidates(&cgroups, &mounts);
        if candidates.is_empty() && !cgroups.lines().any(|l| l.starts_with("0::")) {
            return Err("the server is in no cgroup v2 hierarchy".into());
        }
        candidates
            .into_iter()
            .find(|dir| dir.join("cgroup.procs").is_file())
            .ok_or_else(|| "no cgroup2 mount holds the server's cgroup".into())
    }

    /// Where the server's cgroup v2 (the `0::PATH` line of `/proc/self/cgroup`) can be, given
    /// the `cgroup2` mounts of `/proc/self/mountinfo`: under each mount whose root is a prefix
    /// of `PATH` (a mount of a sub-tree, or the namespace's root).
    fn candidates(cgroups: &str, mountinfo: &str) -> Vec<PathBuf> {
        let Some(path) = cgroups.lines().find_map(|l| l.strip_prefix("0::")) else { return Vec::new() };
        let mut found = Vec::new();
        for line in mountinfo.lines() {
            let Some((left, right)) = line.split_once(" - ") else { continue };
            if right.split(' ').next() != Some("cgroup2") {
                continue;
            }
            let fields: Vec<&str> = left.split(' ').collect();
            let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else { continue };
            let (root, point) = (unescape(root), unescape(point));
            let Some(rest) = path
                .strip_prefix(root.as_str())
                .filter(|r| root == "/" || r.is_empty() || r.starts_with('/'))
            else {
                continue;
            };
            found.push(Path::new(&point).join(rest.trim_start_matches('/')));
        }
        found
    }

    /// `\040`-style escapes of `/proc/self/mountinfo`.
    fn unescape(field: &str) -> String {
        let bytes = field.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\'
                && i + 3 < bytes.len()
                && let Some(v) =
                    std::str::from_utf8(&bytes[i + 1..i + 4]).ok().and_then(|o| u8::from_str_radix(o, 8).ok())
            {
                out.push(v);
                i += 4;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Removes the cgroups that servers gone before left behind (named by their pid), when they
    /// are empty and at least a minute old. A populated one refuses `rmdir`, so nothing running
    /// is touched (its processes may belong to a live server in another PID namespace); a live
    /// server's cgroups are never removed, not even the one it just created for a call.
    fn remove_stale(base: &Path) {
        let Ok(entries) = std::fs::read_dir(base) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| {
                    n.strip_prefix(Kind::Shell.prefix()).or_else(|| n.strip_prefix(Kind::Server.prefix()))
                })
                .and_then(|rest| rest.split('.').next())
                .and_then(|pid| pid.parse::<i32>().ok())
                .and_then(Pid::from_raw)
            else {
                continue;
            };
            let gone = rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH);
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(60)));
            if gone && old {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }

    fn create_cgroup(prefix: &str, token: &str) -> Result<PathBuf, String> {
        let base = own_cgroup()?;
        // Moving a process needs write access to the common ancestor's `cgroup.procs`.
        rustix::fs::access(base.join("cgroup.procs"), rustix::fs::Access::WRITE_OK)
            .map_err(|e| format!("{}: {e}", base.join("cgroup.procs").display()))?;
        let dir = base.join(format!("{prefix}{token}"));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(dir)
    }

    /// Makes the command's process write `0` to `procs` (entering that cgroup) between `fork`
    /// and `exec`: a process that cannot enter fails to spawn, and never runs its program.
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(super) fn enter_on_exec(cmd: &mut tokio::process::Command, procs: &Path) -> Result<(), String> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(procs.as_os_str().as_bytes())
            .map_err(|_| format!("{}: the path holds a NUL byte", procs.display()))?;
        // SAFETY: the closure runs in the child between fork and exec and makes only
        // async-signal-safe system calls (open, write, close) on memory prepared before the fork.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || {
                let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC;
                let fd = rustix::fs::open(path.as_c_str(), flags, rustix::fs::Mode::empty())?;
                rustix::io::write(&fd, b"0")?;
                Ok(())
            });
        }
        Ok(())
    }

    /// Kills everything in the scope's cgroup, waits until it is empty and removes it.
    pub(super) fn close_cgroup(dir: &Path, shell: Option<i32>) {
        if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
            // Before Linux 5.14: freeze (no more forks), then kill every member until none is left.
            let _ = std::fs::write(dir.join("cgroup.freeze"), "1");
            for _ in 0..100 {
                let pids = procs(dir);
                if pids.is_empty() {
                    break;
                }
                for pid in pids {
                    kill(pid, Signal::KILL);
                }
            }
        }
        let deadline = Instant::now() + GIVE_UP;
        while populated(dir) {
            if Instant::now() > deadline {
                tracing::warn!(cgroup = %dir.display(), "contained processes are still alive after SIGKILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Orphans come to the server when it is a subreaper (an earlier call fell back) or PID 1
        // (in a container): reap the call's, recognised by the cgroup a zombie still names.
        let me = std::process::id() as i32;
        if subreaper_enabled() || me == 1 {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            for (pid, p) in scan() {
                if p.ppid == me && p.state == b'Z' && Some(pid) != shell && in_cgroup(pid, &name) {
                    reap(pid);
                }
            }
        }
        if let Err(e) = remove_tree(dir, 16) {
            tracing::warn!(cgroup = %dir.display(), error = %e, "cannot remove a containment cgroup");
        }
    }

    /// Whether the process's cgroup v2 is the one named `name` or inside it.
    fn in_cgroup(pid: i32, name: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|text| {
            text.lines()
                .filter_map(|l| l.strip_prefix("0::"))
                .any(|path| path.split('/').any(|part| part == name))
        })
    }

    /// Removes an empty cgroup and the cgroups a command (as root) may have created inside it,
    /// `depth` levels down at most.
    fn remove_tree(dir: &Path, depth: u32) -> std::io::Result<()> {
        if depth > 0 {
            for entry in std::fs::read_dir(dir)?.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = remove_tree(&entry.path(), depth - 1);
                }
            }
        }
        std::fs::remove_dir(dir)
    }

    fn procs(dir: &Path) -> Vec<i32> {
        std::fs::read_to_string(dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    fn populated(dir: &Path) -> bool {
        match std::fs::read_to_string(dir.join("cgroup.events")) {
            Ok(events) => events.lines().any(|l| l == "populated 1"),
            Err(_) => !procs(dir).is_empty(),
        }
    }

    // ----- subreaper -------------------------------------------------------------------------

    static SUBREAPER: OnceLock<Result<(), String>> = OnceLock::new();

    fn enable_subreaper() -> Result<(), String> {
        SUBREAPER
            .get_or_init(|| {
                rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
                    .map_err(|e| format!("cannot contain the command (PR_SET_CHILD_SUBREAPER): {e}"))
            })
            .clone()
    }

    fn subreaper_enabled() -> bool {
        SUBREAPER.get().is_some_and(Result::is_ok)
    }

    /// What `/proc/PID/stat` says about a process.
    #[derive(Debug, Clone, Copy)]
    struct Proc {
        ppid: i32,
        pgrp: i32,
        state: u8,
        start: u64,
    }

    fn stat(pid: i32) -> Option<Proc> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn parse_stat(text: &str) -> Option<Proc> {
        // The command name (field 2) is in parentheses and may hold anything: split after it.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Proc {
            state: fields.first()?.bytes().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgrp: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    /// A process's start time (clock ticks after boot), which tells a reused pid apart.
    pub(super) fn start_time(pid: i32) -> Option<u64> {
        stat(pid).map(|p| p.start)
    }

    fn scan() -> HashMap<i32, Proc> {
        let Ok(entries) = std::fs::read_dir("/proc") else { return HashMap::new() };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
            .filter_map(|pid| stat(pid).map(|p| (pid, p)))
            .collect()
    }

    fn has_token(pid: i32, entry: &[u8]) -> bool {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == entry))
    }

    /// Whether the process holds one of `pipes` (`pipe:[INODE]` in `/proc/PID/fd`).
    fn holds_pipe(pid: i32, pipes: &[String]) -> bool {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
        fds.flatten().take(4096).any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| pipes.iter().any(|p| target.as_os_str() == p.as_str()))
        })
    }

    /// Who the call's processes are: its token, its shell (pid and start time), the inodes of
    /// its output pipes.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Marks<'a> {
        pub(super) token: &'a str,
        pub(super) shell: Option<(i32, u64)>,
        pub(super) pipes: &'a [u64],
    }

    /// The call's processes among `procs`: descendants of the server that carry the token, are
    /// in the shell's group, are the shell, hold the call's output pipes, or descend from one of
    /// those.
    fn members(procs: &HashMap<i32, Proc>, me: i32, marks: Marks<'_>) -> Vec<(i32, u64)> {
        let Marks { token, shell, pipes } = marks;
        let entry = format!("{TOKEN_VAR}={token}").into_bytes();
        let pipes: Vec<String> = pipes.iter().map(|ino| format!("pipe:[{ino}]")).collect();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (&pid, p) in procs {
            children.entry(p.ppid).or_default().push(pid);
        }
        let mut found = Vec::new();
        let mut stack: Vec<(i32, bool)> =
            children.get(&me).into_iter().flatten().map(|&pid| (pid, false)).collect();
        while let Some((pid, parent_is_member)) = stack.pop() {
            let Some(p) = procs.get(&pid) else { continue };
            let member = parent_is_member
                || shell.is_some_and(|(spid, sstart)| {
                    (pid == spid && p.start == sstart) || (p.pgrp == spid && p.start >= sstart)
                })
                || (p.state != b'Z' && (has_token(pid, &entry) || holds_pipe(pid, &pipes)));
            if member {
                found.push((pid, p.start));
            }
            stack.extend(children.get(&pid).into_iter().flatten().map(|&c| (c, member)));
        }
        found
    }

    /// Stops, kills and reaps every process of the call (see the parent module).
    pub(super) fn sweep(token: &str, shell: Option<(i32, u64)>, pipes: &[u64]) {
        let marks = Marks { token, shell, pipes };
        let me = std::process::id() as i32;
        let mut known: HashMap<i32, u64> = HashMap::new();
        // Stop them all first: a stopped process cannot fork, so the set closes.
        for _ in 0..64 {
            let procs = scan();
            let mut running = false;
            for (pid, start) in members(&procs, me, marks) {
                known.insert(pid, start);
                if procs.get(&pid).is_some_and(|p| !matches!(p.state, b'T' | b't' | b'Z' | b'X'))
                    && kill(pid, Signal::STOP)
                {
                    running = true;
                }
            }
            if !running {
                break;
            }
        }
        for (&pid, &start) in &known {
            if start_time(pid) == Some(start) {
                kill(pid, Signal::KILL);
            }
        }
        // Reap those that are (or become, as their parents die) the server's children. The shell
        // is left to the runtime, which waits for it.
        let deadline = Instant::now() + GIVE_UP;
        loop {
            let procs = scan();
            for (pid, start) in members(&procs, me, marks) {
                if known.insert(pid, start).is_none() {
                    kill(pid, Signal::KILL);
                }
            }
            let mut pending = false;
            for (&pid, &start) in &known {
                let Some(p) = procs.get(&pid).filter(|p| p.start == start) else { continue };
                if p.state == b'Z' {
                    if p.ppid == me {
                        if shell.is_none_or(|(spid, _)| spid != pid) {
                            reap(pid);
                        }
                    } else if known.contains_key(&p.ppid) {
                        pending = true;
                    }
                } else if kill(pid, Signal::KILL) {
                    // Not dead yet; a process the server may not signal (a setuid program) is
                    // not waited for: nothing would change.
                    pending = true;
                }
            }
            if !pending {
                return;
            }
            if Instant::now() > deadline {
                tracing::warn!(token, "contained processes are still alive after SIGKILL");
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Sends `signal`; false when the server may not signal that process.
    fn kill(pid: i32, signal: Signal) -> bool {
        Pid::from_raw(pid)
            .is_none_or(|pid| rustix::process::kill_process(pid, signal) != Err(rustix::io::Errno::PERM))
    }

    fn reap(pid: i32) {
        if let Some(pid) = Pid::from_raw(pid) {
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_own_cgroup_is_found_under_its_mount() {
            let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                          35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                          41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
            assert_eq!(
                candidates("4:memory:/x\n0::/app.slice/a b.scope\n", hybrid),
                [PathBuf::from("/sys/fs/cgroup/unified/app.slice/a b.scope")]
            );
            assert_eq!(candidates("0::/\n", hybrid), [PathBuf::from("/sys/fs/cgroup/unified")]);
            // A container that sees a sub-tree mounted at its root, with an escaped space.
            let subtree = "50 40 0:30 /user.slice /mnt/cg\\040x rw - cgroup2 cgroup2 rw\n";
            assert_eq!(
                candidates("0::/user.slice/u.service\n", subtree),
                [PathBuf::from("/mnt/cg x/u.service")]
            );
            assert!(
                candidates("0::/user.sliced\n", subtree).is_empty(),
                "a prefix of a name is not a parent"
            );
            assert!(candidates("1:name=systemd:/\n", hybrid).is_empty(), "no cgroup v2 membership");
        }

        #[test]
        fn stat_lines_with_hostile_command_names_parse() {
            let line = "42 (a) b ) c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 50";
            let p = parse_stat(line).expect("parsed");
            assert_eq!((p.state, p.ppid, p.pgrp, p.start), (b'S', 7, 42, 98765));
            assert!(parse_stat("42 (x) S 7").is_none());
        }

        #[test]
        fn the_servers_descendants_are_told_apart_by_call() {
            // The test process is the "server": a child without the token that is neither the
            // shell nor in the shell's group is not the call's; with its pid as the shell, it is.
            let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
            let pid = child.id() as i32;
            let me = std::process::id() as i32;
            let start = start_time(pid).expect("start time");
            let procs = scan();
            let other = Marks { token: "nobody", shell: Some((1, 0)), pipes: &[] };
            assert!(!members(&procs, me, other).iter().any(|(p, _)| *p == pid));
            let ours = Marks { token: "nobody", shell: Some((pid, start)), pipes: &[] };
            assert!(members(&procs, me, ours).contains(&(pid, start)));
            let reused = Marks { token: "nobody", shell: Some((pid, start + 1)), pipes: &[] };
            assert!(
                !members(&procs, me, reused).iter().any(|(p, _)| *p == pid),
                "a reused pid is not the shell"
            );
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    //! Elsewhere: the shell's process group only.

    use std::path::{Path, PathBuf};

    pub(super) fn prepare(_prefix: &str, _token: &str) -> Result<Option<PathBuf>, String> {
        Ok(None)
    }

    pub(super) fn enter_on_exec(_cmd: &mut tokio::process::Command, _procs: &Path) -> Result<(), String> {
        Ok(())
    }

    pub(super) fn start_time(_pid: i32) -> Option<u64> {
        Some(0)
    }

    pub(super) fn close_cgroup(_dir: &Path, _shell: Option<i32>) {}

    pub(super) fn sweep(_token: &str, shell: Option<(i32, u64)>, _pipes: &[u64]) {
        if let Some(pid) = shell.and_then(|(pid, _)| rustix::process::Pid::from_raw(pid)) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}
