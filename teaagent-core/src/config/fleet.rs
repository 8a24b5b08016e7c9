//! A fleet's shared state in the configuration: `[state]`'s Redis URL, password and options, as
//! the replicas' store is made from them.

use std::path::Path;

use serde::Deserialize;

use super::{ConfigError, Settings};
use crate::env::ENV_REDIS_PASSWORD;
use crate::env::ENV_REDIS_URL;
use crate::visible;

/// `[state]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StateConfig {
    pub(super) redis_url: Option<String>,
    pub(super) password_env: Option<String>,
    pub(super) prefix: Option<String>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) per_principal: Option<bool>,
    pub(super) fallback_local: Option<bool>,
}

/// Where a fleet's shared state lives (module docs, `[state]`).
#[derive(Clone, PartialEq, Eq)]
pub struct StateSettings {
    /// The Redis URL, with the password from the environment put in.
    pub redis_url: String,
    /// Key prefix.
    pub prefix: String,
    /// Connect and answer timeout.
    pub timeout: std::time::Duration,
    /// Rate-limit windows per caller.
    pub per_principal: bool,
    /// Redis down: this replica's own windows.
    pub fallback_local: bool,
}

impl std::fmt::Debug for StateSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password.
        f.debug_struct("StateSettings").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// `[state]` checked: a Redis URL (`redis://` or `rediss://`), the password from the
/// environment, the timeout in range.
pub(super) fn state_settings(
    state: &StateConfig,
    file: &Path,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<StateSettings, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid { file: file.to_path_buf(), why };
    let url = state.redis_url.clone().ok_or_else(|| invalid("`[state]` needs `redis_url`".into()))?;
    let timeout_ms = state.timeout_ms.unwrap_or(500);
    if !(1..=60_000).contains(&timeout_ms) {
        return Err(invalid(format!("`[state] timeout_ms` must be 1 to 60000 (got {timeout_ms})")));
    }
    let password_env = state.password_env.as_deref().unwrap_or(ENV_REDIS_PASSWORD);
    let redis_url = with_password(&url, get(password_env).as_deref())
        .map_err(|why| invalid(format!("`[state] redis_url`: {why}")))?;
    Ok(StateSettings {
        redis_url,
        prefix: state.prefix.clone().unwrap_or_else(|| "teaagent:".into()),
        timeout: std::time::Duration::from_millis(timeout_ms),
        per_principal: state.per_principal.unwrap_or(false),
        fallback_local: state.fallback_local.unwrap_or(false),
    })
}

/// `url` checked to be a Redis URL, with `password` put in when given (a password already in
/// the URL stays).
pub(super) fn with_password(url: &str, password: Option<&str>) -> Result<String, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("`{}` is not a redis:// or rediss:// URL", visible::escape(url)));
    };
    if scheme != "redis" && scheme != "rediss" {
        return Err(format!("the scheme must be redis or rediss (got `{}`)", visible::escape(scheme)));
    }
    match password {
        Some(password) if !rest.contains('@') => {
            let encoded = percent_encode_userinfo(password);
            Ok(format!("{scheme}://:{encoded}@{rest}"))
        }
        _ => Ok(url.to_owned()),
    }
}

/// Percent-encodes what a URL's userinfo cannot hold as is.
fn percent_encode_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Settings {
    /// `TEAAGENT_REDIS_URL` (and its password variable) over the user's `[state] redis_url`.
    pub(super) fn state_from_environment(
        &mut self,
        get: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        let Some(url) = get(ENV_REDIS_URL).filter(|u| !u.trim().is_empty()) else { return Ok(()) };
        let redis_url = with_password(url.trim(), get(ENV_REDIS_PASSWORD).as_deref())
            .map_err(|why| ConfigError::Environment { var: ENV_REDIS_URL, why })?;
        let mut state = self.state.clone().unwrap_or(StateSettings {
            redis_url: String::new(),
            prefix: "teaagent:".into(),
            timeout: std::time::Duration::from_millis(500),
            per_principal: false,
            fallback_local: false,
        });
        state.redis_url = redis_url;
        self.state = Some(state);
        Ok(())
    }
}
