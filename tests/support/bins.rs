//! The real binaries under test, built once per test process.
//!
//! Integration tests only get `CARGO_BIN_EXE_*` for their own package, so the binaries of the
//! other packages (`teaagent`, the `echo` example) are built here with the cargo that runs the
//! tests, in the same profile and target directory: a no-op when they are fresh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A binary the tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    /// The shipped `teaagent` command.
    Teaagent,
    /// The core crate's `echo` example (the hello-world).
    Echo,
    /// The benchmark baseline example.
    Baseline,
    /// The tests' own server with misbehaving tools.
    Fixture,
    /// A server written the way a tool author writes one, with their mistakes.
    Author,
    /// A hand-written external MCP server that misbehaves, for the gateway.
    Rogue,
    /// The server the official conformance suite runs against.
    Conformance,
}

impl Bin {
    fn target(self) -> &'static str {
        match self {
            Bin::Teaagent => "teaagent",
            Bin::Echo => "echo",
            Bin::Baseline => "baseline",
            Bin::Fixture => "fixture",
            Bin::Author => "author",
            Bin::Rogue => "rogue",
            Bin::Conformance => "conformance-fixture",
        }
    }

    /// The path of the built binary.
    pub fn path(self) -> &'static Path {
        static BUILT: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
        let built = BUILT.get_or_init(build);
        match built.get(self.target()) {
            Some(path) => path,
            None => panic!("cargo built no `{}` binary (built: {:?})", self.target(), built.keys()),
        }
    }
}

fn build() -> HashMap<String, PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(manifest)
        // The whole workspace, as `cargo test --workspace` resolves it: with fewer packages,
        // the dev-dependencies of the others (teaagent-macros' trybuild) would not count, some
        // shared crate would get other features, and everything above it would be built again.
        .args(["--message-format=json-render-diagnostics", "--workspace", "--bins", "--examples"]);
    // Cargo runs this test with the variables it sets for a package (`CARGO_MANIFEST_DIR`,
    // `CARGO_PKG_NAME`, `OUT_DIR`…); some build scripts (ring's) rerun when those change, so
    // passing them on would rebuild those crates here and again at the next `cargo test`.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&&*name)
        {
            cmd.env_remove(&*name);
        }
    }
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run cargo to build the binaries under test: {e}"),
    };
    assert!(
        out.status.success(),
        "building the binaries under test failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut built = HashMap::new();
    for line in out.stdout.split(|b| *b == b'\n') {
        let Ok(msg) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        if let (Some(name), Some(exe)) = (msg["target"]["name"].as_str(), msg["executable"].as_str()) {
            built.insert(name.to_owned(), PathBuf::from(exe));
        }
    }
    built
}
