//! The parts of the environment that say where clients keep their files: the home directory, the
//! OS's application-configuration directory, and the variables some clients honour
//! (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`). Captured once, so a caller (or a test) can look every
//! client up against the same environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// The operating systems whose client locations differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    /// Linux and the other Unix-likes that follow the XDG base directories.
    Linux,
    /// macOS.
    Mac,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this binary was built for.
    pub(crate) fn current() -> Self {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The variables client locations depend on. Empty values count as unset.
#[derive(Debug, Clone)]
pub(crate) struct Env {
    os: Os,
    vars: BTreeMap<&'static str, OsString>,
}

/// Every variable a location may read.
const VARS: &[&str] =
    &["HOME", "USERPROFILE", "XDG_CONFIG_HOME", "APPDATA", "CODEX_HOME", "CLAUDE_CONFIG_DIR"];

impl Env {
    /// This process's environment, on this OS.
    pub(crate) fn from_process() -> Self {
        let vars = VARS
            .iter()
            .filter_map(|&name| std::env::var_os(name).filter(|v| !v.is_empty()).map(|v| (name, v)))
            .collect();
        Self { os: Os::current(), vars }
    }

    /// The variable `name` as a path, when set, not empty, and absolute (a relative one would
    /// depend on the directory the command runs in; clients do not use those either).
    pub(crate) fn var(&self, name: &str) -> Option<PathBuf> {
        self.vars.get(name).map(PathBuf::from).filter(|p| p.is_absolute())
    }

    /// The home directory: `$HOME`, or `%USERPROFILE%` on Windows.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        match self.os {
            Os::Windows => self.var("USERPROFILE").or_else(|| self.var("HOME")),
            _ => self.var("HOME"),
        }
    }

    /// Where applications keep their configuration: `$XDG_CONFIG_HOME` (default `~/.config`),
    /// `~/Library/Application Support`, `%APPDATA%`.
    pub(crate) fn app_config(&self) -> Option<PathBuf> {
        match self.os {
            Os::Linux => self.var("XDG_CONFIG_HOME").or_else(|| Some(self.home()?.join(".config"))),
            Os::Mac => Some(self.home()?.join("Library/Application Support")),
            Os::Windows => self.var("APPDATA").or_else(|| Some(self.home()?.join("AppData").join("Roaming"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(os: Os, vars: &[(&'static str, &str)]) -> Env {
        Env { os, vars: vars.iter().map(|(k, v)| (*k, OsString::from(v))).collect() }
    }

    #[test]
    fn app_config_per_os() {
        let linux = env(Os::Linux, &[("HOME", "/home/a")]);
        assert_eq!(linux.app_config(), Some(PathBuf::from("/home/a/.config")));
        let xdg = env(Os::Linux, &[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "/x")]);
        assert_eq!(xdg.app_config(), Some(PathBuf::from("/x")));
        let relative = env(Os::Linux, &[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "rel")]);
        assert_eq!(relative.app_config(), Some(PathBuf::from("/home/a/.config")));
        let mac = env(Os::Mac, &[("HOME", "/Users/a")]);
        assert_eq!(mac.app_config(), Some(PathBuf::from("/Users/a/Library/Application Support")));
        assert_eq!(env(Os::Linux, &[]).app_config(), None);
    }

    #[test]
    fn every_client_has_a_user_file_under_home() {
        let linux = env(Os::Linux, &[("HOME", "/home/a")]);
        let files: Vec<(&str, PathBuf)> = crate::clients::all()
            .iter()
            .map(|c| (c.id, c.user_location(&linux).expect("located").file))
            .collect();
        let expect = |id: &str, path: &str| {
            assert!(files.contains(&(id, PathBuf::from(path))), "{id}: {files:?}");
        };
        expect("claude-desktop", "/home/a/.config/Claude/claude_desktop_config.json");
        expect("claude-code", "/home/a/.claude.json");
        expect("cursor", "/home/a/.cursor/mcp.json");
        expect("vscode", "/home/a/.config/Code/User/mcp.json");
        expect("codex", "/home/a/.codex/config.toml");
        expect("windsurf", "/home/a/.codeium/windsurf/mcp_config.json");
        expect("gemini-cli", "/home/a/.gemini/settings.json");
        let moved = env(Os::Linux, &[("HOME", "/h"), ("CODEX_HOME", "/c"), ("CLAUDE_CONFIG_DIR", "/k")]);
        let codex = crate::clients::find("codex").expect("codex").user_location(&moved).expect("codex");
        assert_eq!(codex.file, PathBuf::from("/c/config.toml"));
        let claude = crate::clients::find("claude-code").expect("cc").user_location(&moved).expect("cc");
        assert_eq!((claude.file, claude.dir), (PathBuf::from("/k/.claude.json"), PathBuf::from("/k")));
    }
}
