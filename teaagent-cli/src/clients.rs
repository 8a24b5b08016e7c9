//! The MCP clients teaagent installs itself into (`teaagent mcp install CLIENT`): where each one
//! keeps its configuration on this OS, and how it spells a server entry.
//!
//! | id | client | user file | project file (`--project`) | entry |
//! |---|---|---|---|---|
//! | `claude-desktop` | Claude Desktop | `Claude/claude_desktop_config.json` in the OS's application-configuration directory | none | `mcpServers` |
//! | `claude-code` | Claude Code | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`) | `<root>/.mcp.json` | `mcpServers`, `"type": "stdio"` |
//! | `cursor` | Cursor | `~/.cursor/mcp.json` | `<root>/.cursor/mcp.json` | `mcpServers` |
//! | `vscode` | VS Code | `Code/User/mcp.json` in the application-configuration directory | `<root>/.vscode/mcp.json` | `servers`, `"type": "stdio"` |
//! | `codex` | Codex | `~/.codex/config.toml` (`$CODEX_HOME/config.toml`) | `<root>/.codex/config.toml` (trusted projects) | `[mcp_servers.NAME]` |
//! | `windsurf` | Windsurf | `~/.codeium/windsurf/mcp_config.json` | none | `mcpServers` |
//! | `gemini-cli` | Gemini CLI | `~/.gemini/settings.json` | `<root>/.gemini/settings.json` | `mcpServers` |
//!
//! The application-configuration directory is `$XDG_CONFIG_HOME` (default `~/.config`) on Linux,
//! `~/Library/Application Support` on macOS and `%APPDATA%` on Windows.
//!
//! Reading ([`Client::entries`]: the servers a file declares, for `install` and for
//! `teaagent doctor`) is separate from editing ([`edit`]: one entry added, replaced or removed
//! in the file's text, everything else kept byte for byte) and from writing ([`file`](mod@file): atomic,
//! with a backup).

pub(crate) mod edit;
pub(crate) mod entry;
pub(crate) mod error;
pub(crate) mod file;
mod json;
pub(crate) mod locate;
mod toml;

use std::path::{Path, PathBuf};

pub(crate) use entry::Entry;
pub(crate) use error::ClientError;
pub(crate) use locate::Env;

/// How a client's file spells its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A JSON object (comments and trailing commas tolerated) whose `key` maps names to entries
    /// `{"command", "args", "env"}`, with `"type": "stdio"` when `stdio_type`.
    Json {
        /// `mcpServers`, or VS Code's `servers`.
        key: &'static str,
        /// Whether entries carry `"type": "stdio"`.
        stdio_type: bool,
    },
    /// Codex's TOML: `[mcp_servers.NAME]` tables with `command`, `args`, `env`.
    CodexToml,
}

/// Where a client's user-level configuration lives, as [`locate`] finds it for this OS.
#[derive(Debug, Clone, Copy)]
enum UserFile {
    /// `file` inside the OS's application-configuration directory (`dir` is its first part,
    /// the client's own directory).
    AppConfig { dir: &'static str, file: &'static str },
    /// `file` inside a directory in the home directory, or the one an environment variable names.
    Home { dir: &'static str, var: Option<&'static str>, file: &'static str },
    /// Claude Code: `~/.claude.json` beside its `~/.claude` directory, or both in
    /// `$CLAUDE_CONFIG_DIR`.
    ClaudeCode,
}

/// One MCP client.
#[derive(Debug)]
pub(crate) struct Client {
    /// The name on the command line (`teaagent mcp install ID`).
    pub(crate) id: &'static str,
    /// The name people know it by.
    pub(crate) name: &'static str,
    /// How its files spell a server.
    pub(crate) format: Format,
    user: UserFile,
    /// Its project-level file, relative to the project's root, if it has one.
    pub(crate) project: Option<&'static str>,
    /// What to do after installing: how the client picks the change up.
    pub(crate) after: &'static str,
}

/// Where one client's configuration file is, and the directory whose presence says that the
/// client is installed.
#[derive(Debug, Clone)]
pub(crate) struct Location {
    /// The configuration file.
    pub(crate) file: PathBuf,
    /// The client's own directory: absent means the client was never started on this machine
    /// (for a project file: the directory the file goes in, created when missing).
    pub(crate) dir: PathBuf,
    /// A project-level file (inside `--root`).
    pub(crate) project: bool,
}

const CLIENTS: &[Client] = &[
    Client {
        id: "claude-desktop",
        name: "Claude Desktop",
        format: Format::Json { key: "mcpServers", stdio_type: false },
        user: UserFile::AppConfig { dir: "Claude", file: "claude_desktop_config.json" },
        project: None,
        after: "quit Claude Desktop completely and start it again",
    },
    Client {
        id: "claude-code",
        name: "Claude Code",
        format: Format::Json { key: "mcpServers", stdio_type: true },
        user: UserFile::ClaudeCode,
        project: Some(".mcp.json"),
        after: "start a new Claude Code session (`/mcp` lists its servers)",
    },
    Client {
        id: "cursor",
        name: "Cursor",
        format: Format::Json { key: "mcpServers", stdio_type: false },
        user: UserFile::Home { dir: ".cursor", var: None, file: "mcp.json" },
        project: Some(".cursor/mcp.json"),
        after: "Cursor picks it up in its MCP settings (restart it if it does not)",
    },
    Client {
        id: "vscode",
        name: "VS Code",
        format: Format::Json { key: "servers", stdio_type: true },
        user: UserFile::AppConfig { dir: "Code/User", file: "mcp.json" },
        project: Some(".vscode/mcp.json"),
        after: "start it from the MCP server list of VS Code (or reload its window)",
    },
    Client {
        id: "codex",
        name: "Codex",
        format: Format::CodexToml,
        user: UserFile::Home { dir: ".codex", var: Some("CODEX_HOME"), file: "config.toml" },
        project: Some(".codex/config.toml"),
        after: "start a new Codex session (`/mcp` lists its servers; Codex reads a project's file only in a trusted project)",
    },
    Client {
        id: "windsurf",
        name: "Windsurf",
        format: Format::Json { key: "mcpServers", stdio_type: false },
        user: UserFile::Home { dir: ".codeium/windsurf", var: None, file: "mcp_config.json" },
        project: None,
        after: "refresh the MCP servers in Windsurf's Cascade panel",
    },
    Client {
        id: "gemini-cli",
        name: "Gemini CLI",
        format: Format::Json { key: "mcpServers", stdio_type: false },
        user: UserFile::Home { dir: ".gemini", var: None, file: "settings.json" },
        project: Some(".gemini/settings.json"),
        after: "start Gemini CLI again (`/mcp` lists its servers)",
    },
];

/// The id of the pseudo-client that prints the entry instead of writing a file.
pub(crate) const MCP_JSON: &str = "mcp-json";

/// Every client, in the order of the table in the module docs.
pub(crate) fn all() -> &'static [Client] {
    CLIENTS
}

/// The client called `id`.
pub(crate) fn find(id: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.id == id)
}

/// Every id `install` takes: the clients', then [`MCP_JSON`].
pub(crate) fn ids() -> Vec<&'static str> {
    CLIENTS.iter().map(|c| c.id).chain([MCP_JSON]).collect()
}

impl Client {
    /// Where this client's user-level file is for `env` (`None` without a home directory).
    pub(crate) fn user_location(&self, env: &Env) -> Option<Location> {
        let (dir, file) = match self.user {
            UserFile::AppConfig { dir, file } => {
                let dir = env.app_config()?.join(dir);
                (dir.clone(), dir.join(file))
            }
            UserFile::Home { dir, var, file } => {
                let dir = match var.and_then(|v| env.var(v)) {
                    Some(dir) => dir,
                    None => env.home()?.join(dir),
                };
                (dir.clone(), dir.join(file))
            }
            UserFile::ClaudeCode => match env.var("CLAUDE_CONFIG_DIR") {
                Some(dir) => (dir.clone(), dir.join(".claude.json")),
                None => {
                    let home = env.home()?;
                    (home.join(".claude"), home.join(".claude.json"))
                }
            },
        };
        Some(Location { file, dir, project: false })
    }

    /// Where this client's project-level file is for the project at `root` (`None` when the
    /// client has none).
    pub(crate) fn project_location(&self, root: &Path) -> Option<Location> {
        let file = root.join(self.project?);
        let dir = file.parent().unwrap_or(root).to_path_buf();
        Some(Location { file, dir, project: true })
    }

    /// The servers `file` declares (empty when it does not exist), read as this client reads
    /// them. An error names the file and says what is wrong with it.
    pub(crate) fn entries(&self, file: &Path) -> Result<Vec<Entry>, ClientError> {
        match file::read(file)? {
            None => Ok(Vec::new()),
            Some(text) => self.entries_in(file, &text),
        }
    }

    /// The servers `text` (the contents of `file`) declares.
    pub(crate) fn entries_in(&self, file: &Path, text: &str) -> Result<Vec<Entry>, ClientError> {
        match self.format {
            Format::Json { .. } => json::entries(self, file, text),
            Format::CodexToml => toml::entries(self, file, text),
        }
    }

    /// The entries of `file` that start teaagent ([`Entry::is_teaagent`]), for `teaagent doctor`.
    pub(crate) fn teaagent_entries(&self, file: &Path) -> Result<Vec<Entry>, ClientError> {
        Ok(self.entries(file)?.into_iter().filter(Entry::is_teaagent).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `teaagent doctor` reads: every server of a file, teaagent's told apart with its root.
    #[test]
    fn entries_of_either_format() {
        let vscode = find("vscode").expect("vscode");
        let text = "{\n  // c\n  \"servers\": {\n    \"web\": {\"type\": \"http\", \"url\": \"https://x\"},\n    \"npx\": {\"command\": \"npx\", \"args\": [\"-y\", \"s\"]},\n    \"ta\": {\"type\": \"stdio\", \"command\": \"/opt/bin/teaagent\", \"args\": [\"mcp\", \"serve\", \"--root\", \"/src/app\"]},\n  },\n}";
        let entries = vscode.entries_in(Path::new("mcp.json"), text).expect("entries");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["npx", "ta"], "the HTTP server has no command");
        let ours: Vec<&Entry> = entries.iter().filter(|e| e.is_teaagent()).collect();
        assert_eq!((ours.len(), ours[0].root()), (1, Some("/src/app")));

        let codex = find("codex").expect("codex");
        let text = "[mcp_servers.ta]\ncommand = \"/opt/bin/teaagent\"\nargs = [\"mcp\", \"serve\", \"--root=/w\"]\n[mcp_servers.ta.env]\nA = \"1\"\n";
        let entries = codex.entries_in(Path::new("config.toml"), text).expect("entries");
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].root(), entries[0].env.clone()), (Some("/w"), vec![("A".into(), "1".into())]));
        assert!(codex.entries_in(Path::new("config.toml"), "[mcp_servers\n").is_err());
        assert!(
            find("cursor")
                .expect("cursor")
                .entries(Path::new("/nonexistent/mcp.json"))
                .expect("none")
                .is_empty()
        );
    }
}
