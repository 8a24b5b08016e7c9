//! The OS sandbox that commands run in: what a `shell_exec` command (and an external server of
//! the gateway) may write, and whether it may reach the network, follow the permission mode.
//!
//! | mode | a command may write | network |
//! |---|---|---|
//! | `read-only` | nothing (only `/dev/null` and the like) | no |
//! | `workspace-write`, `prompt`, `allow` | the workspace, its own temporary directory (`TMPDIR`), the directories of `[shell] writable` | no, unless `[shell] network = true` |
//! | `danger-full-access` | anything the user can | yes |
//!
//! Inside the writable places, some paths stay read-only: teaagent's home (configuration, trust
//! store, lock registry, audit log) when it lies there, the workspace's `.teaagent/`, and
//! `.git/hooks` and `.git/config` (a hook, a `core.hooksPath` or a `core.fsmonitor` would run a
//! program at the user's next `git` command). Reading is not restricted.
//!
//! # How (Linux)
//!
//! - **Landlock** (the kernel's unprivileged access control): the command's process and
//!   everything it starts may write only beneath the writable directories; the rule holds for
//!   the file a path leads to, so a symbolic link out of the workspace does not help. From ABI 4
//!   Landlock also refuses TCP `connect`/`bind`, and from ABI 6 signals to processes outside the
//!   sandbox (teaagent itself) and abstract Unix sockets.
//! - **Namespaces**: a mount namespace in which the protected paths are bind-mounted read-only,
//!   and, without network, a network namespace with no interface but a loopback that is down:
//!   no TCP, UDP or any other socket reaches anything. As root this needs nothing more; any
//!   other user gets a user namespace too (their own uid, no new privileges).
//!
//! Both are set up between `fork` and `exec` with system calls only, from data prepared before
//! the fork. [`Support::probe`] finds once what this machine enforces (it runs `/bin/true` in a
//! full sandbox); a server that cannot enforce it says so at start, and each command is then
//! refused, or run with what can be enforced and a warning in its result
//! ([`WhenUnavailable`], `[shell] unsandboxed`). Nothing is silently downgraded.
//! `TEAAGENT_SHELL_SANDBOX=landlock` (no namespaces) or `none` makes the server use fewer means
//! than the machine has, as on a machine without them (read once).
//!
//! What the sandbox does not cover: reading (a command can read any file the user can), UDP and
//! Unix sockets when only Landlock is available (no namespaces), what another service runs for
//! the command (`systemd-run`, `at`, a daemon it talks to over a Unix socket that is already
//! open), and processes the command signals inside its own sandbox. Other systems than Linux
//! have no sandbox: commands there run as the user, with the warning.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::policy::PermissionMode;

mod temp_dir;

use temp_dir::TempDir;

/// Where commands may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Nowhere.
    ReadOnly,
    /// The workspace, the per-call temporary directory and the configured directories.
    Workspace,
    /// Anywhere the user can: no sandbox.
    Unrestricted,
}

/// What to do where the sandbox cannot be (fully) enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenUnavailable {
    /// Refuse sandboxed commands, saying what is missing (the default).
    #[default]
    Refuse,
    /// Run them with what can be enforced, and say what is not in every result.
    Warn,
}

/// The sandbox of a server's commands (module docs). Give it to the server with
/// [`crate::Server::state`]; a server without one sandboxes commands as in `workspace-write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    reach: Reach,
    network: bool,
    writable: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    when_unavailable: WhenUnavailable,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::for_mode(PermissionMode::WorkspaceWrite)
    }
}

impl Sandbox {
    /// The sandbox of `mode`: no writes in `read-only`; the workspace in `workspace-write`,
    /// `prompt` and `allow`; none in `danger-full-access`. No network unless allowed.
    pub fn for_mode(mode: PermissionMode) -> Sandbox {
        let reach = match mode {
            PermissionMode::ReadOnly => Reach::ReadOnly,
            PermissionMode::WorkspaceWrite | PermissionMode::Prompt | PermissionMode::Allow => {
                Reach::Workspace
            }
            PermissionMode::DangerFullAccess => Reach::Unrestricted,
        };
        Sandbox {
            reach,
            network: reach == Reach::Unrestricted,
            writable: Vec::new(),
            protected: Vec::new(),
            when_unavailable: WhenUnavailable::Refuse,
        }
    }

    /// Lets commands reach the network (`[shell] network = true`).
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed || self.reach == Reach::Unrestricted;
        self
    }

    /// More directories commands may write (`[shell] writable`), in the modes that write.
    pub fn writable(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        self.writable.extend(dirs);
        self
    }

    /// A path that stays read-only even inside a writable directory (teaagent's home).
    pub fn protect(mut self, path: impl Into<PathBuf>) -> Self {
        self.protected.push(path.into());
        self
    }

    /// What to do where the sandbox cannot be enforced (`[shell] unsandboxed`).
    pub fn when_unavailable(mut self, choice: WhenUnavailable) -> Self {
        self.when_unavailable = choice;
        self
    }

    /// Where commands may write.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// What is done where the sandbox cannot be enforced.
    pub fn unavailable(&self) -> WhenUnavailable {
        self.when_unavailable
    }

    /// Whether commands may reach the network.
    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// One line for people: what a command can and cannot reach under this sandbox.
    pub fn summary(&self) -> String {
        let network = if self.network { "network allowed" } else { "no network" };
        match self.reach {
            Reach::Unrestricted => {
                "no sandbox: the command can write anything you can, and reach the network".into()
            }
            Reach::ReadOnly => format!("sandboxed: the command cannot write any file; {network}"),
            Reach::Workspace => {
                let extra = if self.writable.is_empty() {
                    String::new()
                } else {
                    let dirs: Vec<String> = self
                        .writable
                        .iter()
                        .map(|d| crate::visible::escape(&d.display().to_string()))
                        .collect();
                    format!(", {}", dirs.join(", "))
                };
                format!(
                    "sandboxed: the command can write only the workspace (not .git/hooks, .git/config, .teaagent/) and its own temporary directory{extra}; {network}"
                )
            }
        }
    }

    /// What this machine enforces of this sandbox, and what not (empty: all of it).
    pub fn missing(&self) -> Vec<&'static str> {
        if self.reach == Reach::Unrestricted {
            return Vec::new();
        }
        Support::probe().missing(self.network)
    }

    /// The sandbox of one command run in `root` (the workspace, if any): a temporary directory
    /// of its own, and what the child does before `exec`. `extra_writable` are files the
    /// command must write besides (its cgroup's `cgroup.procs`). Fails when the sandbox cannot
    /// be enforced and [`WhenUnavailable::Refuse`] is chosen, saying what is missing.
    pub(crate) fn prepare(&self, root: Option<&Path>, extra_writable: &[PathBuf]) -> Result<Jail, String> {
        let tmp = TempDir::new()?;
        if self.reach == Reach::Unrestricted {
            return Ok(Jail { tmp, setup: None, warning: None });
        }
        let support = Support::probe();
        let missing = support.missing(self.network);
        if !missing.is_empty() && self.when_unavailable == WhenUnavailable::Refuse {
            return Err(format!(
                "refused: this machine cannot enforce the command sandbox ({}); nothing was run. Run on a Linux kernel with Landlock and namespaces, or set `[shell] unsandboxed = \"warn\"` in your configuration to run commands with what can be enforced",
                missing.join("; ")
            ));
        }
        let warning = (!missing.is_empty()).then(|| {
            format!(
                "warning: the command sandbox is not fully enforced on this machine ({}); `[shell] unsandboxed = \"warn\"` let it run",
                missing.join("; ")
            )
        });
        let mut writable: Vec<PathBuf> = Vec::new();
        if self.reach == Reach::Workspace {
            writable.extend(root.map(Path::to_path_buf));
            writable.push(tmp.path.clone());
            writable.extend(self.writable.iter().cloned());
        }
        let mut protected: Vec<PathBuf> = self.protected.clone();
        if let Some(root) = root.filter(|_| self.reach == Reach::Workspace) {
            let git = root.join(".git");
            if git.is_dir() && !git.join("hooks").exists() {
                // Made empty now, so that it can be protected like any other.
                let _ = std::fs::create_dir(git.join("hooks"));
            }
            protected.extend([git.join("hooks"), git.join("config"), root.join(".teaagent")]);
        }
        // Only what exists and lies inside a writable place needs a read-only mount; both are
        // compared where they really are (links followed), whatever their spelling.
        let real = |p: &PathBuf| std::fs::canonicalize(p).ok();
        let writable_real: Vec<PathBuf> = writable.iter().filter_map(real).collect();
        let protected: Vec<PathBuf> = protected
            .iter()
            .filter_map(real)
            .filter(|p| writable_real.iter().any(|w| p.starts_with(w)))
            .collect();
        let setup = linux::prepare(&support, self.network, &writable, extra_writable, &protected)?;
        Ok(Jail { tmp, setup: Some(setup), warning })
    }
}

/// One command's sandbox, prepared: its temporary directory (removed when dropped) and the
/// set-up its process makes before `exec`.
pub(crate) struct Jail {
    tmp: TempDir,
    setup: Option<linux::Setup>,
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    warning: Option<String>,
}

impl Jail {
    /// Points `TMPDIR` (and `TMP`, `TEMP`) at the command's temporary directory and sets the
    /// sandbox up in the child.
    pub(crate) fn apply(&self, cmd: &mut tokio::process::Command) {
        for var in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(var, &self.tmp.path);
        }
        if let Some(setup) = &self.setup {
            linux::apply(setup, cmd.as_std_mut());
        }
    }

    /// The warning for the result, when the sandbox is not fully enforced.
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    pub(crate) fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }
}

/// What this machine can enforce, found once ([`Support::probe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock: i32,
    /// Whether a command can be given mount and network namespaces.
    pub namespaces: bool,
}

/// Uses fewer means than the machine has: `landlock` (no namespaces) or `none` (nothing);
/// `auto` or unset uses everything found.
pub const PROBE_VAR: &str = crate::env::ENV_SHELL_SANDBOX;

/// The Landlock ABI whose rights the sandbox needs for writes (truncation and renames across
/// directories are covered from ABI 3).
const LANDLOCK_WRITES: i32 = 3;
/// The Landlock ABI that refuses TCP.
const LANDLOCK_TCP: i32 = 4;

impl Support {
    /// What this machine enforces: Landlock's ABI, and whether `/bin/true` runs in a full
    /// sandbox (namespaces included). Found once per process, on first use.
    pub fn probe() -> Support {
        static FOUND: OnceLock<Support> = OnceLock::new();
        *FOUND.get_or_init(|| {
            let found = linux::probe();
            // Fewer means than the machine has, to run as a machine without them would (the
            // tests use it for both of [`WhenUnavailable`]'s paths).
            match std::env::var(PROBE_VAR).as_deref() {
                Ok("landlock") => Support { namespaces: false, ..found },
                Ok("none") => Support { landlock: 0, namespaces: false },
                _ => found,
            }
        })
    }

    /// What a sandbox (with or without network) needs that is missing here.
    pub fn missing(&self, network: bool) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if self.landlock < LANDLOCK_WRITES {
            missing.push("writes outside the workspace: Landlock ABI 3 or later is needed");
        }
        if !self.namespaces {
            missing.push("read-only .git/hooks, .git/config, .teaagent/ and teaagent's home: mount namespaces are needed");
            if !network {
                missing.push(if self.landlock >= LANDLOCK_TCP {
                    "UDP and other sockets (TCP is refused by Landlock): network namespaces are needed"
                } else {
                    "the network: network namespaces or Landlock ABI 4 are needed"
                });
            }
        }
        missing
    }

    /// One line for people: what is enforced here.
    pub fn summary(&self) -> String {
        let landlock = match self.landlock {
            0 => "no Landlock".to_owned(),
            abi => format!("Landlock ABI {abi}"),
        };
        let namespaces = if self.namespaces { "mount and network namespaces" } else { "no namespaces" };
        format!("{landlock}, {namespaces}")
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("a path with a NUL byte: {}", path.display()))
}

#[cfg(target_os = "linux")]
mod linux {
    //! The Linux set-up (see the parent module).

    use std::ffi::CString;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::path::{Path, PathBuf};

    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, Scope,
    };
    use rustix::mount::{MountFlags, MountPropagationFlags};
    use rustix::thread::UnshareFlags;

    use super::{Support, c_path};

    /// What the child does before `exec`, prepared before the fork.
    pub(super) struct Setup {
        unshare: UnshareFlags,
        /// `/proc/self/uid_map` and `gid_map` contents, for a user namespace.
        maps: Option<(Vec<u8>, Vec<u8>)>,
        /// Paths bind-mounted read-only, with the flags their mount already has.
        read_only: Vec<(CString, MountFlags)>,
        ruleset: Option<OwnedFd>,
    }

    /// The rights to write (and make, remove, rename, truncate) that Landlock knows of.
    fn write_rights() -> landlock::BitFlags<AccessFs> {
        AccessFs::from_write(ABI::V5)
    }

    pub(super) fn prepare(
        support: &Support,
        network: bool,
        writable: &[PathBuf],
        files: &[PathBuf],
        protected: &[PathBuf],
    ) -> Result<Setup, String> {
        let ruleset =
            if support.landlock > 0 { Some(ruleset(support, network, writable, files)?) } else { None };
        let mut unshare = UnshareFlags::empty();
        let mut maps = None;
        let mut read_only = Vec::new();
        if support.namespaces {
            if !protected.is_empty() {
                unshare |= UnshareFlags::NEWNS;
                for path in protected {
                    read_only.push((c_path(path)?, mount_flags(path)));
                }
            }
            if !network {
                unshare |= UnshareFlags::NEWNET;
            }
            if !unshare.is_empty() && !rustix::process::geteuid().is_root() {
                unshare |= UnshareFlags::NEWUSER;
                let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
                maps = Some((format!("{uid} {uid} 1").into_bytes(), format!("{gid} {gid} 1").into_bytes()));
            }
        }
        Ok(Setup { unshare, maps, read_only, ruleset })
    }

    fn ruleset(
        support: &Support,
        network: bool,
        writable: &[PathBuf],
        files: &[PathBuf],
    ) -> Result<OwnedFd, String> {
        let failed = |e: landlock::RulesetError| format!("cannot build the command's Landlock rules: {e}");
        let mut rules = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(write_rights())
            .map_err(failed)?;
        if !network && support.landlock >= super::LANDLOCK_TCP {
            rules = rules.handle_access(AccessNet::from_all(ABI::V4)).map_err(failed)?;
        }
        if support.landlock >= 6 {
            let scopes = if network { Scope::Signal.into() } else { Scope::from_all(ABI::V6) };
            rules = rules.scope(scopes).map_err(failed)?;
        }
        let mut created = rules.create().map_err(failed)?;
        for dir in writable {
            let fd = PathFd::new(dir)
                .map_err(|e| format!("cannot open {} for the sandbox: {e}", dir.display()))?;
            created = created.add_rule(PathBeneath::new(fd, write_rights())).map_err(failed)?;
        }
        // Devices every program writes to, and the files the caller named.
        let devices = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"].map(PathBuf::from);
        for file in devices.iter().chain(files) {
            let Ok(fd) = PathFd::new(file) else { continue };
            let rights = write_rights() & AccessFs::from_file(ABI::V5);
            created = created.add_rule(PathBeneath::new(fd, rights)).map_err(failed)?;
        }
        let fd: Option<OwnedFd> = created.into();
        fd.ok_or_else(|| "Landlock is not available to build the command's rules".to_owned())
    }

    /// The flags `path`'s mount has, which a remount in a user namespace must keep.
    fn mount_flags(path: &Path) -> MountFlags {
        use rustix::fs::StatVfsMountFlags as S;
        let Ok(stat) = rustix::fs::statvfs(path) else { return MountFlags::empty() };
        let mut flags = MountFlags::empty();
        for (has, keep) in [
            (S::NOSUID, MountFlags::NOSUID),
            (S::NODEV, MountFlags::NODEV),
            (S::NOEXEC, MountFlags::NOEXEC),
            (S::NOATIME, MountFlags::NOATIME),
            (S::NODIRATIME, MountFlags::NODIRATIME),
            (S::RELATIME, MountFlags::RELATIME),
        ] {
            if stat.f_flag.contains(has) {
                flags |= keep;
            }
        }
        flags
    }

    /// Sets `setup` up in the child, between `fork` and `exec`.
    pub(super) fn apply(setup: &Setup, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let unshare = setup.unshare;
        let maps = setup.maps.clone();
        let read_only = setup.read_only.clone();
        let ruleset = setup.ruleset.as_ref().map(AsRawFd::as_raw_fd);
        // SAFETY: the closure runs in the child between fork and exec. It only makes system
        // calls (unshare, open, write, mount, prctl, landlock_restrict_self) on data prepared
        // before the fork, allocates nothing and touches no lock. The ruleset's descriptor
        // stays open in the parent until the child has been spawned (`Jail` outlives `spawn`).
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || enter(unshare, maps.as_ref(), &read_only, ruleset));
        }
    }

    fn enter(
        unshare: UnshareFlags,
        maps: Option<&(Vec<u8>, Vec<u8>)>,
        read_only: &[(CString, MountFlags)],
        ruleset: Option<i32>,
    ) -> std::io::Result<()> {
        if !unshare.is_empty() {
            // SAFETY: this thread is the child's only one; nothing shares its file table.
            #[allow(unsafe_code)]
            unsafe {
                rustix::thread::unshare_unsafe(unshare)?;
            }
        }
        if let Some((uid_map, gid_map)) = maps {
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", uid_map)?;
            write_file(c"/proc/self/gid_map", gid_map)?;
        }
        if !read_only.is_empty() {
            rustix::mount::mount_change(c"/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)?;
            for (path, flags) in read_only {
                rustix::mount::mount_bind(path.as_c_str(), path.as_c_str())?;
                rustix::mount::mount_remount(
                    path.as_c_str(),
                    MountFlags::BIND | MountFlags::RDONLY | *flags,
                    c"",
                )?;
            }
        }
        if let Some(fd) = ruleset {
            rustix::thread::set_no_new_privs(true)?;
            // SAFETY: a plain system call on a descriptor this process holds.
            #[allow(unsafe_code)]
            let done = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
            if done != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
        rustix::io::write(&fd, bytes)?;
        Ok(())
    }

    /// Landlock's ABI here, and whether `/bin/true` runs in a full sandbox.
    pub(super) fn probe() -> Support {
        // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only
        // returns the ABI version (or an error); it reads no memory.
        #[allow(unsafe_code)]
        let abi =
            unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32) };
        let landlock = i32::try_from(abi).unwrap_or(0).max(0);
        let assumed = Support { landlock, namespaces: true };
        let namespaces = (|| -> Result<bool, String> {
            let scratch = super::TempDir::new()?;
            let protected = scratch.path.join("protected");
            std::fs::create_dir(&protected).map_err(|e| e.to_string())?;
            let setup = prepare(&assumed, false, std::slice::from_ref(&scratch.path), &[], &[protected])?;
            let mut cmd = std::process::Command::new("/bin/true");
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            apply(&setup, &mut cmd);
            Ok(cmd.status().is_ok_and(|s| s.success()))
        })()
        .unwrap_or(false);
        Support { landlock, namespaces }
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    //! No sandbox on other systems: nothing is enforced, and [`super::Support`] says so.

    use std::path::PathBuf;

    use super::Support;

    pub(super) struct Setup;

    pub(super) fn prepare(
        _support: &Support,
        _network: bool,
        _writable: &[PathBuf],
        _files: &[PathBuf],
        _protected: &[PathBuf],
    ) -> Result<Setup, String> {
        Ok(Setup)
    }

    pub(super) fn apply(_setup: &Setup, _cmd: &mut std::process::Command) {}

    pub(super) fn probe() -> Support {
        Support { landlock: 0, namespaces: false }
    }
}
