//! A request's params as the typed value its method takes; malformed params are `-32602`.

use serde::de::DeserializeOwned;

use crate::error::{Error, ParamsProblem};

/// Parses a method's params (absent params parse as `{}`); a mismatch is `-32602`.
pub(crate) fn parse_params<T: DeserializeOwned>(params: Option<&str>) -> Result<T, Error> {
    let text = params.unwrap_or("{}");
    serde_json::from_str(text)
        .map_err(|e| Error::InvalidParams { reason: ParamsProblem::Malformed, details: e.to_string() })
}
