//! How the `teaagent` binary is linked: with packed relative relocations where the machine it
//! is built on can run them, and with its hot functions placed together.
//!
//! **Packed relative relocations.** A position-independent executable carries a relocation for
//! every pointer in its read-only data — name tables (regex's Unicode tables alone hold about
//! 5,600), panic locations, vtables — about 17,000 in `teaagent`, 24 bytes each in `.rela.dyn`,
//! all read at every start and then kept resident. `-z pack-relative-relocs` (lld, the default
//! linker of Rust on x86-64 Linux, and GNU ld ≥ 2.38) packs them into a bitmap (`.relr.dyn`) of a
//! few KiB that glibc ≥ 2.36 applies: the same relocations, the same ASLR, 420 KiB of `.rela.dyn`
//! down to 9 KiB. The echo example linked that way keeps about 170 KiB less resident at idle
//! (`cargo bench -p teaagent-core --bench stdio` links every server it compares the way this
//! script links `teaagent`, and says so in its report). Such a binary names the glibc version
//! `GLIBC_ABI_DT_RELR`, so an older glibc refuses to start it with a clear message ("version
//! `GLIBC_ABI_DT_RELR' not found") rather than misbehaving.
//!
//! Used for a native build (host = target) on Linux with glibc ≥ 2.36, the version read with
//! `getconf GNU_LIBC_VERSION`. `TEAAGENT_PACKED_RELOCS=0` turns it off (a build meant for
//! machines with an older glibc); `TEAAGENT_PACKED_RELOCS=1` turns it on without the checks.
//!
//! **Hot functions together.** The code `teaagent mcp serve` runs from its start to its first
//! answers is about a thousand functions, scattered over 8 MiB of `.text`. The kernel maps a
//! program's pages in blocks around each one touched, so a few hundred scattered functions keep
//! most of `.text` resident. `link/hot-functions.txt` names them (written by
//! `link/refresh_hot_functions.py` from a real session under callgrind), and lld's
//! `--symbol-ordering-file` places them first, together. Measured on the `dist` build, idle
//! after `initialize` and `tools/list`: 8.7 MiB resident before, 5.2 MiB after.
//!
//! The names are those of one build: the `dist` profile, this `Cargo.lock`, this toolchain.
//! Another build (the `release` profile, an updated dependency, a changed profile setting) shares
//! few of them. The linker skips a name it does not find, so a stale list costs memory, never
//! correctness: 3 MiB of `mcp serve`'s idle memory, the one time it happened unnoticed. So the
//! list records a SHA-256 of the files those inputs come from, a test in `tests/cli.rs` fails
//! when they change, and the stdio benchmark reports how many names are found. Used where rustc links with lld, its default for
//! `x86_64-unknown-linux-gnu` since 1.90 (GNU ld has no such option): that target, with no
//! linker chosen in the configuration or the flags. `TEAAGENT_HOT_ORDER=0` turns it off,
//! `TEAAGENT_HOT_ORDER=1` on without the checks.

use std::env;
use std::path::Path;
use std::process::Command;

/// The first glibc that applies `DT_RELR` relocations.
const FIRST_GLIBC: (u32, u32) = (2, 36);

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed={HOT_FUNCTIONS}");
    if switch("TEAAGENT_PACKED_RELOCS", native_glibc_runs_relr) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let hot = Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join(HOT_FUNCTIONS);
    if switch("TEAAGENT_HOT_ORDER", links_with_lld) && hot.is_file() {
        // `-Xlinker` passes the path as one argument, commas and all.
        println!("cargo::rustc-link-arg-bins=-Xlinker");
        println!("cargo::rustc-link-arg-bins=--symbol-ordering-file={}", hot.display());
        println!("cargo::rustc-link-arg-bins=-Xlinker");
        println!("cargo::rustc-link-arg-bins=--no-warn-symbol-ordering");
    }
}

/// The functions placed first in `.text`, one mangled name a line (`#` starts a comment).
const HOT_FUNCTIONS: &str = "link/hot-functions.txt";

/// `NAME=1` on, `NAME=0` off, otherwise what `default` decides.
fn switch(name: &str, default: fn() -> bool) -> bool {
    println!("cargo::rerun-if-env-changed={name}");
    match env::var(name).as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        Ok(other) => {
            println!("cargo::warning={name}={other:?} is neither 0 nor 1; deciding as if unset");
            default()
        }
        Err(_) => default(),
    }
}

/// Whether rustc links this build with its own lld: the target whose default linker it is, and
/// no linker chosen by `target.<triple>.linker` (cargo then sets `RUSTC_LINKER`) or by a flag.
fn links_with_lld() -> bool {
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let chooses_linker = flags
        .split('\x1f')
        .any(|f| ["linker", "link-self-contained", "fuse-ld"].iter().any(|k| f.contains(k)));
    target == "x86_64-unknown-linux-gnu" && env::var_os("RUSTC_LINKER").is_none() && !chooses_linker
}

/// Whether this is a native glibc Linux build on a glibc that applies `DT_RELR`.
fn native_glibc_runs_relr() -> bool {
    let var = |name| env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // The architectures whose linkers (lld, GNU ld) are known to pack them.
    let arch = matches!(var("CARGO_CFG_TARGET_ARCH").as_str(), "x86_64" | "aarch64");
    native && linux_gnu && arch && glibc_version().is_some_and(|v| v >= FIRST_GLIBC)
}

/// The build machine's glibc, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let out = Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    if !out.status.success() {
        return None;
    }
    parse_glibc(std::str::from_utf8(&out.stdout).ok()?)
}

fn parse_glibc(text: &str) -> Option<(u32, u32)> {
    let version = text.trim().strip_prefix("glibc ")?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.trim_end_matches(|c: char| !c.is_ascii_digit()).parse().ok()?;
    Some((major, minor))
}
