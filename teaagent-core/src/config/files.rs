//! Where the configuration files are and how they are read: the user's (`config.toml` in the
//! home, or a named one), the workspace's, parsed with every error naming its key and line.

use std::path::{Path, PathBuf};

use super::Choices;
use super::{ConfigError, ConfigFile, USER_FILE, WORKSPACE_FILE};
use crate::error::PathRefusal;
use crate::home::{Home, HomeError, MAX_CONFIG_BYTES, OwnFileError};
use crate::visible;
use crate::workspace::PathError;
use crate::workspace::Workspace;

/// Where the user's configuration is: a file the user named, or `config.toml` in the home.
#[derive(Debug)]
pub enum UserFile {
    /// A file the user named (it must exist; links are followed).
    Named(PathBuf),
    /// The home's `config.toml` (may be missing; never a link).
    InHome(Home),
    /// The home directory does not exist, so neither does its file (nothing is created).
    NoHome(PathBuf),
}

impl UserFile {
    /// `named`, else the home's file (the home is created if missing, as for the `teaagent`
    /// command, which keeps its state there).
    pub fn locate(named: Option<&Path>) -> Result<Self, ConfigError> {
        match named {
            Some(path) => Ok(UserFile::Named(path.to_path_buf())),
            None => Ok(UserFile::InHome(Home::open()?)),
        }
    }

    /// The home's file, without creating the home when it does not exist (for servers that
    /// keep nothing there). With neither `TEAAGENT_HOME` nor `HOME` set (a client that starts
    /// servers with an empty environment) there is no user file either: nothing names one.
    pub fn locate_existing() -> Result<Self, ConfigError> {
        let dir = match crate::home::dir() {
            Ok(dir) => dir,
            Err(HomeError::Unset) => {
                return Ok(UserFile::NoHome(PathBuf::from("$TEAAGENT_HOME/config.toml")));
            }
            Err(e) => return Err(e.into()),
        };
        if std::fs::symlink_metadata(&dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            return Ok(UserFile::NoHome(dir.join(USER_FILE)));
        }
        Ok(UserFile::InHome(Home::open()?))
    }

    /// Its path, for messages.
    pub fn path(&self) -> PathBuf {
        match self {
            UserFile::Named(path) | UserFile::NoHome(path) => path.clone(),
            UserFile::InHome(home) => home.file(USER_FILE),
        }
    }

    /// Reads and parses it; a missing home file is `Ok(None)`, a missing named file an error.
    pub fn read(&self) -> Result<Option<ConfigFile>, ConfigError> {
        let path = self.path();
        let unreadable = |e: OwnFileError| ConfigError::Unreadable { file: path.clone(), why: e.to_string() };
        let bytes = match self {
            UserFile::NoHome(_) => return Ok(None),
            UserFile::Named(named) => match crate::home::read_path(named, MAX_CONFIG_BYTES) {
                Ok(Some(bytes)) => {
                    use std::os::unix::fs::MetadataExt;
                    if std::fs::metadata(named).is_ok_and(|m| m.mode() & 0o022 != 0) {
                        tracing::warn!(
                            "{} is writable by others: they could change your configuration; run `chmod 600` on it",
                            visible::escape(&path.display().to_string())
                        );
                    }
                    bytes
                }
                Ok(None) => {
                    return Err(ConfigError::Unreadable { file: path, why: "no such file".to_owned() });
                }
                Err(e) => return Err(unreadable(e)),
            },
            UserFile::InHome(home) => {
                if let Some(loose) = home.loose_permissions(USER_FILE) {
                    tracing::warn!(
                        "{} is {loose}: others could change your configuration; run `chmod 600` on it",
                        visible::escape(&path.display().to_string())
                    );
                }
                match home.read(USER_FILE, MAX_CONFIG_BYTES).map_err(unreadable)? {
                    Some(bytes) => bytes,
                    None => return Ok(None),
                }
            }
        };
        parse(&bytes, &path).map(Some)
    }
}

/// The workspace's configuration file, read through the workspace (see the module docs);
/// `Ok(None)` when there is none.
pub(super) fn read_workspace(workspace: &Workspace) -> Result<Option<ConfigFile>, ConfigError> {
    let path = workspace.root().join(WORKSPACE_FILE);
    let refused = |e: PathError| ConfigError::Unreadable { file: path.clone(), why: e.to_string() };
    let resolved = match workspace.resolve(WORKSPACE_FILE) {
        Ok(resolved) => resolved,
        Err(PathError::NotFound) => return Ok(None),
        // The root's `.teaagent/` is teaagent's home (a server started in the user's home
        // directory): its file is the user's, read as such, and tools never reach it.
        Err(PathError::Refused { reason: PathRefusal::TeaagentHome, .. }) => return Ok(None),
        Err(e) => return Err(refused(e)),
    };
    let file = match resolved.open_read() {
        Ok(file) => file,
        Err(PathError::NotFound) => return Ok(None),
        Err(e) => return Err(refused(e)),
    };
    let bytes = crate::home::read_regular(file, &path, MAX_CONFIG_BYTES)
        .map_err(|e| ConfigError::Unreadable { file: path.clone(), why: e.to_string() })?;
    parse(&bytes, &path).map(Some)
}

pub(super) fn parse(bytes: &[u8], path: &Path) -> Result<ConfigFile, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid { file: path.to_path_buf(), why };
    let text = std::str::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8 text: {e}")))?;
    toml::from_str(text).map_err(|e| invalid(located(text, &e)))
}

/// A TOML error as `line L, column C: message` — without the quoted source line the parser's
/// own report carries, which could be a megabyte of the workspace's bytes.
pub(super) fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join(" ");
    match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let before = &text.as_bytes()[..start];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            match key_at(text, start) {
                Some(key) => {
                    format!("line {line}, column {column}: `{}`: {message}", crate::visible::escape(&key))
                }
                None => format!("line {line}, column {column}: {message}"),
            }
        }
        None => message,
    }
}

/// The dotted key whose value is at byte `at` of a TOML text: the table header above it, the
/// key of its line and, for a value inside an inline table on that line, the key before it
/// (`mcp_servers.x.env.A`). `None` when `at` is not in a `key = value` line.
pub(super) fn key_at(text: &str, at: usize) -> Option<String> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let upto = &line[..(at - line_start).min(line.len())];
    let first_eq = line.find('=')?;
    if first_eq > upto.len() {
        return None;
    }
    let bare = |k: &str| k.trim().trim_matches('"').to_owned();
    let mut key = bare(&line[..first_eq]);
    // A value inside an inline table: the key just before it on this line.
    if let Some(last_eq) = upto.rfind('=')
        && last_eq > first_eq
    {
        let inner = upto[..last_eq].rsplit(['{', ',']).next().map(bare).unwrap_or_default();
        if !inner.is_empty() {
            key = format!("{key}.{inner}");
        }
    }
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|h| h.trim_matches(|c| c == '[' || c == ']').trim().to_owned());
    Some(match header {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key,
    })
}

/// The user's file, read once: where it is and what it holds.
///
/// For a program that needs the file before its settings (the `teaagent` command takes its
/// external servers from it to build the registry the settings are checked against): given to
/// [`Settings::load`](super::Settings::load) as [`Sources::user_read`], the one reading is the
/// one in force, and a warning about the file is said once.
#[derive(Debug)]
pub struct ReadUserFile {
    /// Where it is.
    pub file: UserFile,
    /// What it holds; `None` when there is no such file (only the home's may be missing).
    pub contents: Option<ConfigFile>,
}

impl ReadUserFile {
    /// Reads `file`.
    pub fn read(file: UserFile) -> Result<Self, ConfigError> {
        let contents = file.read()?;
        Ok(ReadUserFile { file, contents })
    }
}

/// Which sources [`Settings::load`](super::Settings::load) reads.
#[derive(Debug, Default)]
pub struct Sources<'a> {
    /// The user's file, if not the home's `config.toml` (`--config FILE`).
    pub user_file: Option<&'a Path>,
    /// The user's file as the program already read it: when set, it is not read again
    /// (`user_file` and `create_home` are then not used).
    pub user_read: Option<&'a ReadUserFile>,
    /// Whether to create the home directory when it is missing (the `teaagent` command keeps
    /// its state there); otherwise a missing home means no user file.
    pub create_home: bool,
    /// The workspace whose `.teaagent/config.toml` may tighten the settings.
    pub workspace: Option<&'a Workspace>,
    /// A server's own file (`$TEAAGENT_HOME/servers/NAME.toml`, [`server_file`]), read after the
    /// user's when it exists: the same keys, for that server only.
    pub server_file: Option<&'a Path>,
    /// Whether to read the `TEAAGENT_*` variables.
    pub environment: bool,
    /// Choices applied last (the command's flags).
    pub flags: Choices,
    /// Whether `[tools.NAME]` for a tool the registry does not have is an error (else a
    /// warning; see "One file, many servers" in the module docs).
    pub strict_tool_names: bool,
}

impl Sources<'_> {
    /// What a server built on this crate reads by default: the user's file (the home is not
    /// created) and the environment; add [`Sources::workspace`] for a server with one.
    pub fn environment() -> Self {
        Sources { environment: true, ..Sources::default() }
    }
}

/// The file of a server's own settings, `$TEAAGENT_HOME/servers/NAME.toml`, for a server named
/// `name` (its `serverInfo` name): `None` for the default name `teaagent` (shared by every server
/// that has not named itself, and by the `teaagent` command) or a name that is not a plain file
/// name (`[A-Za-z0-9._-]`, at most 64 bytes, not starting with `.`).
pub fn server_file(name: &str) -> Option<PathBuf> {
    let plain = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !plain || name == "teaagent" {
        return None;
    }
    Some(crate::home::dir().ok()?.join("servers").join(format!("{name}.toml")))
}
