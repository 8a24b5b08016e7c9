//! The OS sandbox that commands run in: what a `shell_exec` command (and an external server of
//! the gateway) may write, and whether it may reach the network, follow the permission mode.
//!
//! | mode | a command may write | network |
//! |---|---|---|
//! | `read-only` | nothing (only `/dev/null` and the like) | no |
//! | `workspace-write`, `prompt`, `allow` | the workspace, its own temporary directory (`TMPDIR`), the directories of `[shell] writable` | no, unless `[shell] network = true` |
//! | `danger-full-access` | anything the user can | yes |
//!
//! Inside the writable places, some paths stay read-only: the workspace's `.teaagent/`, and the
//! git data of the workspace and of each `[shell] writable` directory, their submodules' included
//! (what git runs at the user's next `git` command is named there: a hook, a `core.hooksPath` or
//! `core.fsmonitor` in the configuration, and a gitlink in the index that makes `git status`
//! enter a "submodule" configured anywhere; so commands cannot `git add` or `git commit` in these
//! modes, as in Codex's: `sandbox/git_data.rs`). Every directory between a writable place and a
//! read-only path is a mount point of its own, so that none is moved away with the directory
//! that holds it. teaagent's home (configuration with the
//! environment of external servers, trust store, tokens, lock registry, audit log) is hidden:
//! in the command's mount namespace an empty, read-only directory lies over it, so a command
//! can neither read nor change what is there ([`Sandbox::hide`]); a home that holds a writable
//! place (a workspace inside it) cannot be hidden without hiding that too, and is read-only
//! instead. Reading is not restricted otherwise.
//!
//! # How (Linux)
//!
//! - **Landlock** (the kernel's unprivileged access control): the command's process and
//!   everything it starts may write only beneath the writable directories; the rule holds for
//!   the file a path leads to, so a symbolic link out of the workspace does not help. From ABI 4
//!   Landlock also refuses TCP `connect`/`bind`, and from ABI 6 signals to processes outside the
//!   sandbox (teaagent itself) and abstract Unix sockets.
//! - **Namespaces**: a mount namespace in which the protected paths are bind-mounted read-only
//!   and an empty read-only `tmpfs` is mounted over the hidden ones, and, without network, a
//!   network namespace with no interface but a loopback that is down: no TCP, UDP or any other
//!   socket reaches anything. These come with a user namespace, root's commands too (their
//!   own uid mapped, no new privileges, and no capability over anything outside it: not over
//!   teaagent, which is not dumpable, through `/proc`).
//!
//! Both are set up between `fork` and `exec` with system calls only, from data prepared before
//! the fork. [`Support::probe`] finds once what this machine enforces (it runs `/bin/true` in a
//! full sandbox); a server that cannot enforce it says so at start, and each command is then
//! refused, or run with what can be enforced and a warning in its result
//! ([`WhenUnavailable`], `[shell] unsandboxed`). Nothing is silently downgraded.
//! `TEAAGENT_SHELL_SANDBOX=landlock` (no namespaces) or `none` makes the server use fewer means
//! than the machine has, as on a machine without them (read once).
//!
//! What the sandbox does not cover: reading (a command can read any file the user can but
//! teaagent's home), a repository nested in the workspace that no index records (git runs what
//! its `.git` names when the user runs git there), UDP and Unix sockets when only Landlock is
//! available (no namespaces), what another service runs for the command (`systemd-run`, `at`, a
//! daemon it talks to over a Unix socket that is already open), and processes the command
//! signals inside its own sandbox. Other systems than Linux have no sandbox: commands there run as the user,
//! with the warning.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::policy::PermissionMode;

pub(crate) mod git_data;
mod git_index;
#[cfg(target_os = "linux")]
mod linux;
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
    hidden: Vec<PathBuf>,
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
            hidden: Vec::new(),
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

    /// A directory commands can neither read nor write (teaagent's home): an empty read-only
    /// directory lies over it in the command's mount namespace. One that holds a writable place
    /// stays visible (outside the writable places, Landlock keeps it read-only).
    pub fn hide(mut self, dir: impl Into<PathBuf>) -> Self {
        self.hidden.push(dir.into());
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
        let network = match self.hidden.is_empty() {
            true => network.to_owned(),
            false => format!("teaagent's home is hidden from it; {network}"),
        };
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
                    "sandboxed: the command can write only the workspace (not .git/, .teaagent/) and its own temporary directory{extra}; {network}"
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
        let real = |p: &PathBuf| std::fs::canonicalize(p).ok();
        let writable_real: Vec<PathBuf> = writable.iter().filter_map(real).collect();
        // A hidden directory that holds a writable place is left visible: outside the writable
        // places, Landlock keeps it read-only.
        let hidden: Vec<PathBuf> = self
            .hidden
            .iter()
            .filter_map(real)
            .filter(|h| !writable_real.iter().any(|w| w.starts_with(h)))
            .collect();
        let mut protected: Vec<PathBuf> = self.protected.clone();
        if self.reach == Reach::Workspace {
            protected.extend(root.map(|root| root.join(".teaagent")));
            for dir in root.into_iter().chain(self.writable.iter().map(PathBuf::as_path)) {
                protected.extend(git_data::read_only(dir)?);
            }
        }
        // Only what exists and lies inside a writable place needs a read-only mount; both are
        // compared where they really are (links followed), whatever their spelling.
        let mut protected: Vec<PathBuf> = protected
            .iter()
            .filter_map(real)
            .filter(|p| writable_real.iter().any(|w| p.starts_with(w)))
            .collect();
        // Parents first; a path inside another one is read-only with it.
        protected.sort();
        protected.dedup_by(|inner, outer| inner.starts_with(outer));
        let pinned = pinned(&protected, &writable_real);
        let places = linux::Places {
            writable: &writable,
            files: extra_writable,
            pinned: &pinned,
            protected: &protected,
            hidden: &hidden,
        };
        let setup = linux::prepare(&support, self.network, &places)?;
        Ok(Jail { tmp, setup: Some(setup), warning })
    }
}

/// The directories between each protected path and the outermost writable place that holds it
/// (parents first), each made a mount point of its own: a mount point can be neither renamed nor
/// removed, so no command moves a read-only path away with a directory that holds it and puts
/// one of its own in its place. Directories inside a protected path need none.
fn pinned(protected: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    let read_only: std::collections::HashSet<&Path> = protected.iter().map(PathBuf::as_path).collect();
    let mut pinned = std::collections::BTreeSet::new();
    for path in protected {
        let Some(outermost) =
            writable.iter().filter(|w| path.starts_with(w)).min_by_key(|w| w.as_os_str().len())
        else {
            continue;
        };
        for dir in path.ancestors().skip(1) {
            if dir == outermost || !dir.starts_with(outermost) {
                break;
            }
            if !dir.ancestors().any(|up| read_only.contains(up)) {
                pinned.insert(dir.to_path_buf());
            }
        }
    }
    pinned.into_iter().collect()
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
            missing.push(
                "teaagent's home hidden, and read-only .git/ and .teaagent/: mount namespaces are needed",
            );
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

#[cfg(not(target_os = "linux"))]
mod linux {
    //! No sandbox on other systems: nothing is enforced, and [`super::Support`] says so.

    use std::path::PathBuf;

    use super::Support;

    pub(super) struct Setup;

    /// The places a sandbox names (nothing enforces them here).
    #[allow(dead_code)]
    pub(in crate::sandbox) struct Places<'a> {
        pub(in crate::sandbox) writable: &'a [PathBuf],
        pub(in crate::sandbox) files: &'a [PathBuf],
        pub(in crate::sandbox) pinned: &'a [PathBuf],
        pub(in crate::sandbox) protected: &'a [PathBuf],
        pub(in crate::sandbox) hidden: &'a [PathBuf],
    }

    pub(super) fn prepare(_support: &Support, _network: bool, _places: &Places<'_>) -> Result<Setup, String> {
        Ok(Setup)
    }

    pub(super) fn apply(_setup: &Setup, _cmd: &mut std::process::Command) {}

    pub(super) fn probe() -> Support {
        Support { landlock: 0, namespaces: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_between_a_writable_place_and_a_protected_path_are_pinned() {
        let paths = |list: &[&str]| list.iter().map(PathBuf::from).collect::<Vec<_>>();
        let protected =
            paths(&["/w/.git", "/w/a/b/sub/.git", "/w/a/b/empty", "/w/inner/x/.git", "/elsewhere/y"]);
        // `/w/inner` is a writable place inside `/w`: the outermost one decides.
        let found = pinned(&protected, &paths(&["/w", "/w/inner"]));
        assert_eq!(found, paths(&["/w/a", "/w/a/b", "/w/a/b/sub", "/w/inner", "/w/inner/x"]));
        // Nothing inside a protected path.
        assert_eq!(
            pinned(&paths(&["/w/.git", "/w/.git/modules/m/x"]), &paths(&["/w"])),
            Vec::<PathBuf>::new()
        );
    }
}
