//! Links the `teaagent` binary with packed relative relocations where the machine it is built
//! on can run them.
//!
//! A position-independent executable carries a relocation for every pointer in its read-only
//! data — name tables (regex's Unicode tables alone hold about 5,600), panic locations, vtables —
//! about 17,000 in `teaagent`, 24 bytes each in `.rela.dyn`, all read at every start and then
//! kept resident. `-z pack-relative-relocs` (lld, the default linker of Rust on x86-64 Linux, and
//! GNU ld ≥ 2.38) packs them into a bitmap (`.relr.dyn`) of a few KiB that glibc ≥ 2.36 applies:
//! the same relocations, the same ASLR, 420 KiB of `.rela.dyn` down to 9 KiB. The echo example
//! linked that way keeps about 170 KiB less resident at idle (`cargo bench -p teaagent-core
//! --bench stdio` links every server it compares the way this script links `teaagent`, and
//! says so in its report). Such a binary names the glibc version `GLIBC_ABI_DT_RELR`, so an
//! older glibc refuses to start it with a clear message ("version `GLIBC_ABI_DT_RELR' not
//! found") rather than misbehaving.
//!
//! Used for a native build (host = target) on Linux with glibc ≥ 2.36, the version read with
//! `getconf GNU_LIBC_VERSION`. `TEAAGENT_PACKED_RELOCS=0` turns it off (a build meant for
//! machines with an older glibc); `TEAAGENT_PACKED_RELOCS=1` turns it on without the checks.

use std::env;
use std::process::Command;

/// The first glibc that applies `DT_RELR` relocations.
const FIRST_GLIBC: (u32, u32) = (2, 36);

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TEAAGENT_PACKED_RELOCS");
    let pack = match env::var("TEAAGENT_PACKED_RELOCS").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        Ok(other) => {
            println!(
                "cargo::warning=TEAAGENT_PACKED_RELOCS={other:?} is neither 0 nor 1; deciding as if unset"
            );
            native_glibc_runs_relr()
        }
        Err(_) => native_glibc_runs_relr(),
    };
    if pack {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
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
