//! Every contender built with the `dist` profile (fat LTO, one codegen unit) and linked alike.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) struct Built {
    pub(crate) examples: PathBuf,
    pub(crate) rmcp_echo: PathBuf,
    pub(crate) teaagent: PathBuf,
    /// Whether every server is linked with packed relative relocations.
    pub(crate) packed_relocs: bool,
    /// How many of the functions `teaagent-cli/link/hot-functions.txt` names are in `teaagent`,
    /// and how many it names.
    pub(crate) hot_functions: (usize, usize),
}

/// The link argument `teaagent-cli/build.rs` gives the shipped binary where glibc applies it.
pub(crate) const PACK_RELATIVE_RELOCS: &str = "link-arg=-Wl,-z,pack-relative-relocs";

/// Builds every server with `--profile dist`: the shipped binary, the echo and baseline examples, and
/// the rmcp peer (its own workspace, `bench-peers/rmcp-echo`, into this target directory).
///
/// Every server is linked alike: when the shipped binary came out with packed relative
/// relocations (its build script decides, from this machine's glibc), the others are linked with
/// the same argument, so no contender's memory or start-up figures owe anything to a link
/// option another lacks.
pub(crate) fn build() -> Built {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = core.parent().expect("workspace");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // target/release/deps/stdio-HASH → target, and the servers in target/dist
    let exe = std::env::current_exe().expect("bench path");
    let target = exe.parent().and_then(Path::parent).and_then(Path::parent).expect("target");
    let release = target.join("dist");
    // `cargo rustc` when the link needs the extra argument (it takes one target at a time).
    let run = |args: &[&str], manifest: &Path, link: Option<&str>| {
        let mut cmd = Command::new(&cargo);
        cmd.arg(if link.is_some() { "rustc" } else { "build" })
            .args(["--profile", "dist", "--locked"])
            .args(args)
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(target);
        if let Some(link) = link {
            cmd.args(["--", "-C", link]);
        }
        let status = cmd.status().expect("run cargo");
        assert!(status.success(), "building {args:?} failed");
    };
    run(&["-p", "teaagent-cli"], &workspace.join("Cargo.toml"), None);
    let teaagent = release.join("teaagent");
    let packed_relocs = names_dt_relr(&teaagent);
    let link = packed_relocs.then_some(PACK_RELATIVE_RELOCS);
    for example in ["echo", "echo_json", "baseline"] {
        run(&["-p", "teaagent-core", "--example", example], &core.join("Cargo.toml"), link);
    }
    run(&[], &workspace.join("bench-peers/rmcp-echo/Cargo.toml"), link);
    let built = Built {
        examples: release.join("examples"),
        rmcp_echo: release.join("rmcp-echo"),
        hot_functions: hot_functions_found(&teaagent, &workspace.join("teaagent-cli/link/hot-functions.txt")),
        teaagent,
        packed_relocs,
    };
    let servers = ["echo", "echo_json", "baseline"].map(|e| built.examples.join(e));
    for program in servers.iter().chain([&built.rmcp_echo]) {
        assert_eq!(
            names_dt_relr(program),
            packed_relocs,
            "{} is not linked like teaagent",
            program.display()
        );
    }
    built
}

/// Whether an executable was linked with packed relative relocations: it then names the glibc
/// version that guards them.
pub(crate) fn names_dt_relr(program: &Path) -> bool {
    let bytes = std::fs::read(program).expect("read a built server");
    bytes.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR")
}

/// How many of the functions a hot-function list names are defined in `program` (its symbol
/// table holds each name as one NUL-terminated string), and how many it names. A list written for
/// another build (other dependencies, another toolchain) shares few names with this one.
fn hot_functions_found(program: &Path, list: &Path) -> (usize, usize) {
    let bytes = std::fs::read(program).expect("read teaagent");
    let strings: std::collections::HashSet<&[u8]> = bytes.split(|&b| b == 0).collect();
    let list = std::fs::read_to_string(list).unwrap_or_default();
    let names: Vec<&str> = list.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    (names.iter().filter(|n| strings.contains(n.as_bytes())).count(), names.len())
}
