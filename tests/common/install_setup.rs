//! The set-up of `tests/install.rs`: a temporary home the real `teaagent` runs in, the clients as
//! the tests see them (files, formats, a file of each with comments and another server), and a
//! reader of the entries it writes that is not teaagent's own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use teaagent_tests::Bin;

/// A temporary home with a project directory in it.
pub(crate) struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("teaagent-install-").tempdir().expect("temp dir");
        let home = Self { dir };
        std::fs::create_dir(home.project()).expect("project");
        home
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical home")
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.path().join("project")
    }

    /// `home/rel`.
    pub(crate) fn at(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    /// Writes `home/rel`, with its directories.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.at(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.at(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// `teaagent ARGS` in the project directory, with this home.
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run teaagent")
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(args)
            .current_dir(self.project())
            .env("HOME", self.path())
            .env("TEAAGENT_HOME", self.at(".teaagent"))
            .stdin(Stdio::null());
        for var in
            ["XDG_CONFIG_HOME", "APPDATA", "USERPROFILE", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "RUST_LOG"]
        {
            cmd.env_remove(var);
        }
        cmd
    }
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
pub(crate) fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}{}", o.status.code(), stdout(o), stderr(o));
    stdout(o)
}

/// One client as the tests see it.
pub(crate) struct Case {
    pub(crate) id: &'static str,
    /// The user file, relative to the home.
    pub(crate) user: &'static str,
    /// The project file, relative to the project.
    pub(crate) project: Option<&'static str>,
    /// The JSON key of the servers (`None`: Codex's TOML).
    pub(crate) key: Option<&'static str>,
    /// Whether entries carry `"type": "stdio"`.
    pub(crate) typed: bool,
}

pub(crate) const CASES: &[Case] = &[
    Case {
        id: "claude-desktop",
        user: ".config/Claude/claude_desktop_config.json",
        project: None,
        key: Some("mcpServers"),
        typed: false,
    },
    Case {
        id: "claude-code",
        user: ".claude.json",
        project: Some(".mcp.json"),
        key: Some("mcpServers"),
        typed: true,
    },
    Case {
        id: "cursor",
        user: ".cursor/mcp.json",
        project: Some(".cursor/mcp.json"),
        key: Some("mcpServers"),
        typed: false,
    },
    Case {
        id: "vscode",
        user: ".config/Code/User/mcp.json",
        project: Some(".vscode/mcp.json"),
        key: Some("servers"),
        typed: true,
    },
    Case {
        id: "codex",
        user: ".codex/config.toml",
        project: Some(".codex/config.toml"),
        key: None,
        typed: false,
    },
    Case {
        id: "windsurf",
        user: ".codeium/windsurf/mcp_config.json",
        project: None,
        key: Some("mcpServers"),
        typed: false,
    },
    Case {
        id: "gemini-cli",
        user: ".gemini/settings.json",
        project: Some(".gemini/settings.json"),
        key: Some("mcpServers"),
        typed: false,
    },
];

impl Case {
    /// The directory whose presence says the client is installed.
    pub(crate) fn client_dir(&self) -> &'static str {
        match self.id {
            "claude-code" => ".claude",
            _ => self.user.rsplit_once('/').map_or("", |(dir, _)| dir),
        }
    }

    /// A file of this client's format with a comment, another server and (for VS Code) trailing
    /// commas; the comment is `MARK`.
    pub(crate) fn existing(&self) -> String {
        match (self.key, self.id) {
            (None, _) => "# MARK: my Codex settings\nmodel = \"o3\"   # aligned\n\n[mcp_servers.other]\ncommand = \"npx\"\nargs = [\"-y\", \"other\"]  # pinned\n".into(),
            (Some(key), "vscode") => format!(
                "// MARK: my servers\n{{\n\t\"inputs\": [],\n\t\"{key}\": {{\n\t\t\"other\": {{ \"type\": \"stdio\", \"command\": \"npx\" }}, // keep\n\t}},\n}}\n"
            ),
            (Some(key), _) => format!(
                "{{\n  // MARK: keep this\n  \"theme\": \"dark\",\n  \"{key}\": {{\n    \"other\": {{\"command\": \"npx\", \"args\": [\"-y\", \"other\"]}}\n  }}\n}}\n"
            ),
        }
    }
}

/// The entry called `name` in `text` as (command, args, env), for either format.
pub(crate) fn entry(case: &Case, text: &str, name: &str) -> Option<(String, Vec<String>, Value)> {
    let Some(key) = case.key else {
        // Codex: the table this command writes, read line by line (the tests package has no
        // TOML parser; the unit tests of `clients` parse it).
        let header = format!("[mcp_servers.{name}]");
        let body: Vec<&str> =
            text.lines().skip_while(|l| *l != header).skip(1).take_while(|l| !l.starts_with('[')).collect();
        if body.is_empty() {
            return None;
        }
        // A value, without the comment the fixtures put after some (`  # …`).
        let field = |k: &str| {
            let value = body.iter().find_map(|l| l.strip_prefix(&format!("{k} = ")))?;
            Some(value.split("  #").next().unwrap_or(value).to_owned())
        };
        let command: String = serde_json::from_str(&field("command")?).expect("command");
        let args: Vec<String> = serde_json::from_str(&field("args")?).expect("args");
        let env = field("env").map_or(json!({}), |e| json!(e));
        return Some((command, args, env));
    };
    // The files hold comments: strip whole-line and trailing `//` comments outside strings the
    // simple way (the fixtures put none inside strings), then trailing commas.
    let mut plain = String::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(at) if !line[..at].contains("\"/") => &line[..at],
            _ => line,
        };
        plain.push_str(code);
        plain.push('\n');
    }
    let plain = plain.replace(",\n}", "\n}").replace(",\n\t}", "\n\t}");
    let plain: String = {
        // Trailing commas before a closing brace, whatever the indentation.
        let mut out = String::new();
        let chars: Vec<char> = plain.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            if *c == ','
                && chars[i + 1..].iter().find(|c| !c.is_whitespace()).is_some_and(|n| *n == '}' || *n == ']')
            {
                continue;
            }
            out.push(*c);
        }
        out
    };
    let value: Value = serde_json::from_str(&plain).unwrap_or_else(|e| panic!("{e}: {plain}"));
    let server = value.get(key)?.get(name)?;
    if case.typed && name == "teaagent" {
        assert_eq!(server["type"], "stdio", "{text}");
    }
    let args = match server.get("args") {
        Some(args) => args.as_array()?.iter().map(|a| a.as_str().expect("arg").to_owned()).collect(),
        None => Vec::new(),
    };
    Some((server["command"].as_str()?.to_owned(), args, server.get("env").cloned().unwrap_or(json!({}))))
}

pub(crate) fn binary() -> String {
    Bin::Teaagent.path().canonicalize().expect("binary").to_str().expect("utf-8").to_owned()
}

pub(crate) fn serve_args(root: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["mcp", "serve", "--root"].map(String::from).to_vec();
    args.push(root.to_str().expect("utf-8").to_owned());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}
