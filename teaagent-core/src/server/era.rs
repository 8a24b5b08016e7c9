//! The two protocol eras' entry points: the legacy `initialize` answer and the modern request's
//! own `_meta` (who is asking, which version), and what differs between them.

use std::sync::Arc;

use super::announcement::Announcement;
use crate::error::{Error, ParamsProblem};
use crate::jsonrpc::{RawParams, RequestId, error_line, result_line};
use crate::mcp::lifecycle::{ListCapability, ResourcesCapability};
use crate::mcp::modern::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, ModernMeta};
use crate::mcp::{Implementation, InitializeParams, InitializeResult, ProtocolVersion, ServerCapabilities};
use crate::session::peer::SessionInfo;

/// Methods protocol `2026-07-28` removed: `-32601` in the modern era.
pub(crate) const REMOVED_IN_MODERN: [&str; 4] =
    ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"];

/// What the server implements, the same in both eras.
pub(super) fn capabilities(offers: &Announcement) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ListCapability { list_changed: offers.tools_list_changed }),
        resources: offers
            .resources
            .then_some(ResourcesCapability { subscribe: offers.resource_subscribe, list_changed: false }),
        // Without prompts, `prompts/list` still answers (empty) for clients that call it anyway,
        // but the capability is not declared (a capability is declared only when the server has it), so
        // clients do not show an empty prompts menu.
        prompts: offers.prompts.then(ListCapability::default),
        completions: offers.completions.then(Default::default),
        logging: Some(Default::default()),
        // Extensions are declared in `server/discover` only (`Shared::discover`), 2025-11-25's
        // tasks in `initialize` only (`initialize_answer`).
        extensions: None,
        tasks: None,
    }
}

/// The answer to an `initialize` request and the session it settles (the version negotiated),
/// or the error line for params that are not `initialize`'s.
pub(crate) fn initialize_answer(
    id: &RequestId,
    params: Option<&str>,
    announcement: &Announcement,
) -> Result<(Vec<u8>, SessionInfo), Vec<u8>> {
    let params: InitializeParams =
        super::params::parse_params(params).map_err(|e| error_line(Some(id), &e.to_error_object()))?;
    let version = ProtocolVersion::negotiate(&params.protocol_version);
    let mut capabilities = capabilities(announcement);
    if announcement.tasks {
        capabilities.tasks =
            Some(serde_json::json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}));
    }
    let result = InitializeResult {
        protocol_version: version,
        capabilities,
        server_info: announcement.server_info.clone(),
        instructions: announcement.instructions.clone(),
    };
    let info = SessionInfo {
        version,
        capabilities: params.capabilities,
        client: params.client_info,
        log_level: None,
    };
    Ok((result_line(id, &result), info))
}

/// The modern `_meta` of a request's params, if it has one; params that are not an object, or a
/// `_meta` whose reserved keys have the wrong shape, are `-32602`.
/// Who is asking in the modern era: what one request's `_meta` says (every modern request speaks
/// for itself; stdio and HTTP alike). The methods 2026-07-28 removed are unknown whatever their
/// `_meta` says.
pub(crate) fn modern_caller(method: &str, meta: Option<ModernMeta>) -> Result<Arc<SessionInfo>, Error> {
    if REMOVED_IN_MODERN.contains(&method) {
        return Err(Error::MethodNotFound { method: method.to_owned() });
    }
    let meta = meta.unwrap_or_default();
    let invalid = |details: String| Error::InvalidParams { reason: ParamsProblem::InvalidMeta, details };
    let Some(requested) = meta.protocol_version else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_PROTOCOL_VERSION}\"]`"
        )));
    };
    let Some(version) = ProtocolVersion::MODERN.into_iter().find(|v| v.as_str() == requested) else {
        return Err(Error::UnsupportedVersion { requested });
    };
    let Some(capabilities) = meta.client_capabilities else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_CLIENT_CAPABILITIES}\"]` (`{{}}` for none)"
        )));
    };
    let client = meta.client_info.unwrap_or_else(|| Implementation {
        name: String::new(),
        version: String::new(),
        title: None,
    });
    Ok(Arc::new(SessionInfo { version, capabilities, client, log_level: meta.log_level }))
}

pub(crate) fn modern_meta(params: Option<&RawParams>) -> Result<Option<ModernMeta>, Error> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta", default)]
        meta: Option<ModernMeta>,
    }
    let Some(params) = params else { return Ok(None) };
    serde_json::from_str::<Params>(params.get())
        .map(|p| p.meta)
        .map_err(|e| Error::InvalidParams { reason: ParamsProblem::InvalidMeta, details: e.to_string() })
}

/// Whether a legacy request's params name a modern protocol version in `_meta` (a request of the
/// other era).
pub(crate) fn names_modern_version(params: Option<&RawParams>) -> bool {
    let Some(params) = params else { return false };
    memchr::memmem::find(params.get().as_bytes(), META_PROTOCOL_VERSION.as_bytes()).is_some()
        && modern_meta(Some(params)).ok().flatten().is_some_and(|m| m.is_modern())
}
