//! Choices made outside the files: the `TEAAGENT_*` variables and the command's flags.

use std::ffi::OsStr;

use super::{
    ConfigError, ENV_DENY, ENV_GRANTS, ENV_PERMISSION_MODE, ENV_PREAPPROVE, ENV_REQUEST_STATE_KEY,
    ENV_REQUEST_STATE_PREVIOUS_KEY,
};
use crate::policy::PermissionMode;
use crate::policy::grant::{Grant, GrantError};
use crate::policy::request_state::RequestStateKey;

/// What the user chose outside the files: the environment variables or the command's flags.
/// Every rule and digest in it has been checked.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    /// The mode, if chosen.
    pub permission_mode: Option<PermissionMode>,
    /// Grants.
    pub grants: Vec<String>,
    /// Deny rules.
    pub deny: Vec<String>,
    /// Preapproved digests (`sha256:<hex>`, lower case).
    pub preapprove: Vec<String>,
    /// The request-state key and the previous one, if chosen.
    pub request_state_keys: Option<(RequestStateKey, Option<RequestStateKey>)>,
}

impl Choices {
    /// The `TEAAGENT_*` variables of this process (module docs); unset or empty ones choose
    /// nothing.
    pub fn from_environment() -> Result<Self, ConfigError> {
        Self::from_variables(|name| std::env::var_os(name))
    }

    /// The variables as `get` gives them (for tests and for servers that read them elsewhere).
    pub fn from_variables<S: AsRef<OsStr>>(get: impl Fn(&str) -> Option<S>) -> Result<Self, ConfigError> {
        let text = |var: &'static str| -> Result<String, ConfigError> {
            match get(var) {
                None => Ok(String::new()),
                Some(value) => value.as_ref().to_str().map(str::to_owned).ok_or_else(|| {
                    ConfigError::Environment { var, why: "the value is not UTF-8 text".into() }
                }),
            }
        };
        let mut choices = Choices::default();
        let mode = text(ENV_PERMISSION_MODE)?;
        if !mode.trim().is_empty() {
            choices.permission_mode = Some(
                mode.trim()
                    .parse()
                    .map_err(|why: String| ConfigError::Environment { var: ENV_PERMISSION_MODE, why })?,
            );
        }
        let rules = |var: &'static str| -> Result<Vec<String>, ConfigError> {
            let value = text(var)?;
            let lines: Vec<String> =
                value.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
            for line in &lines {
                Grant::parse(line).map_err(|e: GrantError| ConfigError::Environment {
                    var,
                    why: format!("{e} (one rule per line)"),
                })?;
            }
            Ok(lines)
        };
        choices.grants = rules(ENV_GRANTS)?;
        choices.deny = rules(ENV_DENY)?;
        for digest in text(ENV_PREAPPROVE)?.split(|c: char| c.is_whitespace() || c == ',') {
            if digest.is_empty() {
                continue;
            }
            let digest = digest.to_ascii_lowercase();
            if !crate::digest::is_digest(&digest) {
                return Err(ConfigError::Environment {
                    var: ENV_PREAPPROVE,
                    why: format!(
                        "`{digest}` is not a digest: expected `sha256:` and 64 hex digits (see `teaagent approvals digest`)"
                    ),
                });
            }
            choices.preapprove.push(digest);
        }
        let key = |var: &'static str| -> Result<Option<RequestStateKey>, ConfigError> {
            let value = text(var)?;
            if value.trim().is_empty() {
                return Ok(None);
            }
            RequestStateKey::parse(&value).map(Some).map_err(|why| ConfigError::Environment { var, why })
        };
        let previous = key(ENV_REQUEST_STATE_PREVIOUS_KEY)?;
        match key(ENV_REQUEST_STATE_KEY)? {
            Some(current) => choices.request_state_keys = Some((current, previous)),
            None if previous.is_some() => {
                return Err(ConfigError::Environment {
                    var: ENV_REQUEST_STATE_PREVIOUS_KEY,
                    why: format!(
                        "a previous key is only accepted next to the current one in {ENV_REQUEST_STATE_KEY}"
                    ),
                });
            }
            None => {}
        }
        Ok(choices)
    }

    /// Adds `later` (which wins): its mode replaces this one's, its rules and digests are added.
    pub fn then(mut self, later: Choices) -> Self {
        if later.permission_mode.is_some() {
            self.permission_mode = later.permission_mode;
        }
        self.grants.extend(later.grants);
        self.deny.extend(later.deny);
        self.preapprove.extend(later.preapprove);
        if later.request_state_keys.is_some() {
            self.request_state_keys = later.request_state_keys;
        }
        self
    }
}
