//! `Host` and `Origin`: the names and origins this server answers to (DNS rebinding
//! protection), and CORS for the browsers among its clients.

use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, StatusCode};

use super::Endpoint;
use super::Reply;
use super::is_loopback;
use super::reply::{empty, refused};

/// A browser's origin, once allowed, is told so on the answer (CORS).
pub(super) fn with_cors(origin: Option<HeaderValue>, mut reply: Reply) -> Reply {
    if let Some(origin) = origin
        && reply.status() != StatusCode::FORBIDDEN
    {
        let h = reply.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-session-id, www-authenticate"),
        );
    }
    reply
}

/// A browser's CORS preflight: allowed only for an allowed `Host` and `Origin` (no token: a
/// preflight never carries one; the request that follows is checked in full).
pub(super) fn preflight(endpoint: &Endpoint, request: &Request<Incoming>) -> Reply {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    if !host_allowed(endpoint, host, host_name(host)) || !origin.is_some_and(|o| origin_allowed(endpoint, o))
    {
        return refused(StatusCode::FORBIDDEN, "requests from that Origin are not allowed");
    }
    let mut reply = empty(StatusCode::NO_CONTENT);
    let h = reply.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("POST, GET, DELETE"));
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id",
        ),
    );
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    reply
}

/// `Host` and `Origin` (DNS rebinding protection). A request needs exactly one `Host` that is
/// a host name (or address) and an optional numeric port, else `400` (RFC 9112 §3.2).
pub(super) fn allowed_here(endpoint: &Endpoint, headers: &HeaderMap) -> Result<(), Box<Reply>> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = match (hosts.next(), hosts.next()) {
        (Some(host), None) => {
            host.to_str().ok().map(|h| (h, host_name(h))).filter(|(_, name)| !name.is_empty())
        }
        _ => None,
    };
    let Some((host, name)) = host else {
        return Err(Box::new(refused(
            StatusCode::BAD_REQUEST,
            "a request needs exactly one Host header: a host name and an optional numeric port",
        )));
    };
    if !host_allowed(endpoint, host, name) {
        return Err(Box::new(refused(
            StatusCode::FORBIDDEN,
            "this server does not answer to that Host (DNS rebinding protection)",
        )));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(endpoint, origin) {
            return Err(Box::new(refused(
                StatusCode::FORBIDDEN,
                "requests from that Origin are not allowed",
            )));
        }
    }
    Ok(())
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// `host` without its port (an IPv6 literal keeps its brackets).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        // `[v6]` or `[v6]:port`, nothing else after the bracket.
        return match host.find(']') {
            Some(end) if end + 1 == host.len() => host,
            Some(end)
                if host[end + 1..]
                    .strip_prefix(':')
                    .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit())) =>
            {
                &host[..=end]
            }
            _ => "",
        };
    }
    let name = match host.rsplit_once(':') {
        // A port is digits, and only digits: `localhost:evil.com` names no host.
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        Some(_) => return "",
        None => host,
    };
    // A registered name or an IPv4 address: letters, digits, `-`, `.`, `_`.
    let valid = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if valid { name } else { "" }
}

/// Whether this server answers to `host`, whose name is `name` ([`host_name`]).
fn host_allowed(endpoint: &Endpoint, host: &str, name: &str) -> bool {
    if LOOPBACK_NAMES.iter().any(|l| name.eq_ignore_ascii_case(l)) {
        return true;
    }
    let configured = &endpoint.options.allowed_hosts;
    if configured.iter().any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name)) {
        return true;
    }
    #[cfg(feature = "oauth")]
    if endpoint.oauth.as_ref().is_some_and(|o| o.is_resource_host(name)) {
        return true;
    }
    // A public bind with no list: whatever name the client used (authentication guards it).
    !is_loopback(&endpoint.local) && configured.is_empty()
}

fn origin_allowed(endpoint: &Endpoint, origin: &str) -> bool {
    let port = endpoint.local.port();
    let loopback = LOOPBACK_NAMES.iter().any(|name| {
        origin.eq_ignore_ascii_case(&format!("http://{name}:{port}"))
            || origin.eq_ignore_ascii_case(&format!("https://{name}:{port}"))
    });
    loopback || endpoint.options.allowed_origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("localhost:8787"), "localhost");
        assert_eq!(host_name("[::1]:8787"), "[::1]");
        assert_eq!(host_name("example.com"), "example.com");
        assert_eq!(host_name("[::1]evil.com"), "");
        assert_eq!(host_name("[::1]:x"), "");
    }
}
