//! What the trust store pins of an external server beyond its command line (README, "Other MCP
//! servers behind teaagent"), and what it does not:
//!
//! - **Files its arguments name** — the script an interpreter runs (`python3 server.py`, `node
//!   dist/index.js`, `--script=run.sh`): every argument (or the value of a `--flag=value`) that
//!   names a regular file, relative to where the server runs, is hashed into the fingerprint;
//!   the gateway checks the hashes again right before each start (`teaagent_core::gateway::Pins`).
//! - **A package a runner fetches** (`npx`, `bunx`, `pnpx`, `uvx`, `pipx run`): only an exact
//!   version pins what runs (`pkg@1.2.3`, `pkg==1.2.3`); one without (`pkg`, `pkg@latest`,
//!   `pkg@^1`) may be another release at any start, so such a server is neither allowed nor
//!   started ([`unpinned_package`]).
//! - **Values of variables that decide which code runs** (`PATH`, `HOME`, `LD_PRELOAD`,
//!   `PYTHONPATH`, `NODE_OPTIONS`, `npm_config_*`, …: [`loads_code`]) are pinned whole; other
//!   variables only by name (their values are often secrets, and changing a token changes no
//!   code). A variable whose name looks like a credential is never pinned by value.
//!
//! Not pinned: what a pinned script imports, an interpreter's own libraries, a package's
//! dependencies beyond what its exact version locks, and a script changed in the moment between
//! its check and the interpreter opening it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A file an argument names, pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PinnedFile {
    /// The argument as written.
    pub(crate) arg: String,
    /// Where it led (canonical).
    pub(crate) path: PathBuf,
    pub(crate) sha256: String,
}

/// At most this many files are pinned (a server with more file arguments than this is unusual;
/// the rest are named as not pinned).
const MAX_FILES: usize = 64;

/// The files `args` name, from `base` (where the server runs), but not `executable`.
pub(crate) fn files(args: &[String], base: &Path, executable: Option<&Path>) -> Vec<PinnedFile> {
    let mut out: Vec<PinnedFile> = Vec::new();
    for arg in args {
        let value = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => arg.as_str(),
        };
        if value.is_empty() || value.contains('\0') || out.len() >= MAX_FILES {
            continue;
        }
        let path = base.join(value);
        let Ok(path) = std::fs::canonicalize(&path) else { continue };
        if Some(path.as_path()) == executable || !path.is_file() || out.iter().any(|f| f.path == path) {
            continue;
        }
        if let Some(sha256) = teaagent_core::gateway::sha256_of(&path) {
            out.push(PinnedFile { arg: arg.clone(), path, sha256 });
        }
    }
    out
}

/// Whether a variable's value decides which code a server runs (module docs).
pub(crate) fn loads_code(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    // The names `shell_exec` leaves out as credentials (`*TOKEN*`, `*KEY*`, …).
    let credential = teaagent_core::builtin_tools::shell_exec::CREDENTIAL_PATTERNS
        .iter()
        .any(|pattern| upper.contains(pattern.trim_matches('*')));
    if credential {
        return false;
    }
    const NAMES: &[&str] =
        &["PATH", "HOME", "ENV", "BASH_ENV", "CLASSPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "SHELL", "TMPDIR"];
    const PREFIXES: &[&str] = &[
        "LD_",
        "DYLD_",
        "PYTHON",
        "NODE_",
        "NPM_CONFIG_",
        "YARN_",
        "PNPM_",
        "BUN_",
        "DENO_",
        "UV_",
        "PIP_",
        "PIPX_",
        "PERL",
        "RUBY",
        "GEM_",
        "BUNDLE_",
        "JAVA",
        "_JAVA_",
        "JDK_",
        "GIT_",
        "XDG_",
        "COREPACK_",
    ];
    NAMES.contains(&upper.as_str()) || PREFIXES.iter().any(|p| upper.starts_with(p))
}

/// The values pinned of `env` ([`loads_code`]).
pub(crate) fn code_env(env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    env.iter().filter(|(k, _)| loads_code(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A package a runner is told to fetch and run: the runner and the package as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Package {
    pub(crate) runner: String,
    pub(crate) spec: String,
    /// Whether the spec names one exact version.
    pub(crate) exact: bool,
}

/// The package `command args` fetches, when the command is a package runner.
pub(crate) fn package(command: &str, args: &[String]) -> Option<Package> {
    let runner = Path::new(command).file_name()?.to_str()?.to_owned();
    let (args, npm_style) = match runner.as_str() {
        "npx" | "bunx" | "pnpx" => (args, true),
        "uvx" => (args, false),
        "pipx" if args.first().is_some_and(|a| a == "run") => (&args[1..], false),
        _ => return None,
    };
    // `--package X`, `-p X`, `--package=X`, `--from X` name it; else the first word that is not
    // an option.
    let mut words = args.iter();
    let mut spec = None;
    while let Some(word) = words.next() {
        if let Some(value) = word.strip_prefix("--package=").or_else(|| word.strip_prefix("--from=")) {
            spec = Some(value.to_owned());
            break;
        }
        if matches!(word.as_str(), "--package" | "-p" | "--from" | "--spec") {
            spec = words.next().cloned();
            break;
        }
        if !word.starts_with('-') {
            spec = Some(word.clone());
            break;
        }
    }
    let spec = spec?;
    let exact = if npm_style { npm_exact(&spec) } else { python_exact(&spec) };
    Some(Package { runner, spec, exact })
}

/// `name@1.2.3` or `@scope/name@1.2.3` (a version, not a range or a tag).
fn npm_exact(spec: &str) -> bool {
    let body = spec.strip_prefix('@').unwrap_or(spec);
    body.split_once('@').is_some_and(|(_, version)| is_version(version))
}

/// `name==1.2.3` or `name@1.2.3`.
fn python_exact(spec: &str) -> bool {
    spec.split_once("==").or_else(|| spec.split_once('@')).is_some_and(|(_, version)| is_version(version))
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build` (digits first, no range characters).
fn is_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    (1..=4).contains(&parts.len())
        && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && !text.contains(['^', '~', '*', '<', '>', '|', ' ', 'x'])
}

/// Why a server cannot be pinned: its runner fetches a package without an exact version.
pub(crate) fn unpinned_package(command: &str, args: &[String]) -> Option<String> {
    let package = package(command, args)?;
    (!package.exact).then(|| {
        format!(
            "`{}` is told to run the package `{}` without an exact version, so it may run another release at any start; write its version in `args` (`NAME@1.2.3` for npm, `NAME==1.2.3` for Python)",
            teaagent_core::visible::shown(&package.runner),
            teaagent_core::visible::shown(&package.spec)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_package_is_pinned_only_by_an_exact_version() {
        for (command, list, exact) in [
            ("npx", &["-y", "@modelcontextprotocol/server-filesystem@2025.8.21"][..], true),
            ("npx", &["-y", "@modelcontextprotocol/server-filesystem"], false),
            ("/usr/bin/npx", &["--yes", "pkg@latest"], false),
            ("npx", &["pkg@^1.2.0"], false),
            ("npx", &["--package=pkg@1.0.0", "pkg-bin"], true),
            ("npx", &["-p", "pkg@1.x", "bin"], false),
            ("uvx", &["mcp-server-git==0.6.2"], true),
            ("uvx", &["--from", "mcp-server-git", "mcp-server-git"], false),
            ("uvx", &["mcp-server-fetch@2025.4.7"], true),
            ("pipx", &["run", "pkg>=1"], false),
        ] {
            let package = package(command, &args(list)).unwrap_or_else(|| panic!("{command} {list:?}"));
            assert_eq!(package.exact, exact, "{command} {list:?}");
            assert_eq!(unpinned_package(command, &args(list)).is_some(), !exact);
        }
        assert_eq!(package("node", &args(&["server.js"])), None);
        assert_eq!(package("pipx", &args(&["install", "x"])), None);
    }

    #[test]
    fn variables_that_load_code_are_pinned_by_value_and_credentials_never() {
        for name in
            ["PATH", "LD_PRELOAD", "PYTHONPATH", "NODE_OPTIONS", "npm_config_registry", "UV_INDEX_URL"]
        {
            assert!(loads_code(name), "{name}");
        }
        for name in ["GITHUB_TOKEN", "NPM_CONFIG__AUTH_TOKEN", "PYTHON_API_KEY", "LANG", "DEBUG"] {
            assert!(!loads_code(name), "{name}");
        }
    }

    #[test]
    fn files_named_by_arguments_are_pinned() {
        let dir = std::env::temp_dir().join(format!("teaagent-pins-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).expect("dir");
        std::fs::write(dir.join("server.py"), "print(1)\n").expect("write");
        std::fs::write(dir.join("sub/conf.json"), "{}\n").expect("write");
        let pinned = files(&args(&["server.py", "--config=sub/conf.json", "stdio", "sub", "-v"]), &dir, None);
        let named: Vec<&str> = pinned.iter().map(|f| f.arg.as_str()).collect();
        assert_eq!(named, ["server.py", "--config=sub/conf.json"]);
        assert_eq!(
            pinned[0].sha256,
            teaagent_core::gateway::sha256_of(&dir.join("server.py")).expect("hash")
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
