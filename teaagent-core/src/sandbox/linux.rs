//! The Linux set-up of the command sandbox (see `sandbox.rs`): Landlock rules, namespaces and
//! mounts, prepared before the fork and entered between `fork` and `exec`.

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
    /// Directories bind-mounted onto themselves (writable still), parents first: a mount point
    /// can be neither renamed nor removed.
    pinned: Vec<CString>,
    /// Paths bind-mounted read-only, with the flags their mount already has.
    read_only: Vec<(CString, MountFlags)>,
    /// Directories an empty read-only `tmpfs` is mounted over.
    hidden: Vec<CString>,
    ruleset: Option<OwnedFd>,
}

/// The places a sandbox names (all existing, links resolved where it matters).
pub(in crate::sandbox) struct Places<'a> {
    /// Directories the command may write beneath.
    pub(in crate::sandbox) writable: &'a [PathBuf],
    /// Single files it may write besides (its cgroup's `cgroup.procs`).
    pub(in crate::sandbox) files: &'a [PathBuf],
    /// Directories inside writable places made mount points of their own, parents first.
    pub(in crate::sandbox) pinned: &'a [PathBuf],
    /// Paths inside writable places that stay read-only.
    pub(in crate::sandbox) protected: &'a [PathBuf],
    /// Directories it can neither read nor write.
    pub(in crate::sandbox) hidden: &'a [PathBuf],
}

/// The rights to write (and make, remove, rename, truncate) that Landlock knows of.
fn write_rights() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_write(ABI::V5)
}

pub(super) fn prepare(support: &Support, network: bool, places: &Places<'_>) -> Result<Setup, String> {
    let ruleset = if support.landlock > 0 {
        Some(ruleset(support, network, places.writable, places.files)?)
    } else {
        None
    };
    let mut unshare = UnshareFlags::empty();
    let mut maps = None;
    let mut pinned = Vec::new();
    let mut read_only = Vec::new();
    let mut hidden = Vec::new();
    if support.namespaces {
        if !places.protected.is_empty() || !places.hidden.is_empty() {
            unshare |= UnshareFlags::NEWNS;
            for path in places.pinned {
                pinned.push(c_path(path)?);
            }
            for path in places.protected {
                read_only.push((c_path(path)?, mount_flags(path)));
            }
            for path in places.hidden {
                hidden.push(c_path(path)?);
            }
        }
        if !network {
            unshare |= UnshareFlags::NEWNET;
        }
        if !unshare.is_empty() {
            unshare |= UnshareFlags::NEWUSER;
            let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
            maps = Some((format!("{uid} {uid} 1").into_bytes(), format!("{gid} {gid} 1").into_bytes()));
        }
    }
    Ok(Setup { unshare, maps, pinned, read_only, hidden, ruleset })
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
        let fd =
            PathFd::new(dir).map_err(|e| format!("cannot open {} for the sandbox: {e}", dir.display()))?;
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
    let pinned = setup.pinned.clone();
    let read_only = setup.read_only.clone();
    let hidden = setup.hidden.clone();
    let ruleset = setup.ruleset.as_ref().map(AsRawFd::as_raw_fd);
    // SAFETY: the closure runs in the child between fork and exec. It only makes system
    // calls (unshare, open, write, mount, prctl, landlock_restrict_self) on data prepared
    // before the fork, allocates nothing and touches no lock. The ruleset's descriptor
    // stays open in the parent until the child has been spawned (`Jail` outlives `spawn`).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || enter(unshare, maps.as_ref(), &pinned, &read_only, &hidden, ruleset));
    }
}

fn enter(
    unshare: UnshareFlags,
    maps: Option<&(Vec<u8>, Vec<u8>)>,
    pinned: &[CString],
    read_only: &[(CString, MountFlags)],
    hidden: &[CString],
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
    if !read_only.is_empty() || !hidden.is_empty() {
        rustix::mount::mount_change(c"/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)?;
        // Before the read-only mounts: a bind mount of a directory leaves out the mounts
        // beneath it, so one made after them would lay the writable directory over them.
        for path in pinned {
            rustix::mount::mount_bind(path.as_c_str(), path.as_c_str())?;
        }
        for (path, flags) in read_only {
            rustix::mount::mount_bind(path.as_c_str(), path.as_c_str())?;
            rustix::mount::mount_remount(
                path.as_c_str(),
                MountFlags::BIND | MountFlags::RDONLY | *flags,
                c"",
            )?;
        }
        // Over the protected ones, so a hidden directory inside a protected one is hidden.
        for path in hidden {
            let flags = MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
            rustix::mount::mount(c"none", path.as_c_str(), c"tmpfs", flags, c"mode=000,size=4k")?;
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
        let (protected, hidden) = (scratch.path.join("protected"), scratch.path.join("hidden"));
        for dir in [&protected, &hidden] {
            std::fs::create_dir(dir).map_err(|e| e.to_string())?;
        }
        let places = Places {
            writable: std::slice::from_ref(&scratch.path),
            files: &[],
            pinned: &[],
            protected: std::slice::from_ref(&protected),
            hidden: std::slice::from_ref(&hidden),
        };
        let setup = prepare(&assumed, false, &places)?;
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
