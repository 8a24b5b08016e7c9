//! GET of a small JSON document from the authorization server: its metadata, its key set.
//!
//! hyper's HTTP/1 client on one fresh connection per GET (a few an hour: no pool), over rustls
//! for `https` (the `ring` provider, the system's trust store, loaded once when first needed).
//! Every GET has a deadline ([`DEADLINE`], connecting included) and a size cap ([`MAX_BYTES`]);
//! only `200` is an answer. Redirects are not followed: the URLs are configured or come from the
//! issuer's own metadata, so a redirect means a wrong URL, said as such.

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::header::{ACCEPT, HOST, USER_AGENT};
use hyper::{Request, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

use super::url::Url;

/// How long one GET may take, from connecting to the last byte.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);
/// The largest document read (a key set of a dozen RSA keys is under 10 KiB).
pub(crate) const MAX_BYTES: usize = 512 * 1024;

/// Why a GET failed. Said in logs and startup errors, after the URL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum FetchError {
    /// The TCP connection failed (name resolution included).
    #[error("cannot connect: {0}")]
    Connect(#[source] io::Error),
    /// The TLS handshake failed (a certificate the trust store does not vouch for, …).
    #[error("TLS failed: {0}")]
    Tls(#[source] io::Error),
    /// No trust anchors: https cannot be verified.
    #[error(
        "no CA certificates found to verify https ({0}); install the system's CA bundle (ca-certificates) or point SSL_CERT_FILE at one"
    )]
    NoTrustStore(String),
    /// The whole GET took longer than [`DEADLINE`].
    #[error("no complete answer within {} s", DEADLINE.as_secs())]
    Timeout,
    /// HTTP itself failed (the connection closed early, a malformed answer).
    #[error("HTTP failed: {0}")]
    Http(#[source] hyper::Error),
    /// A redirect, not followed.
    #[error("answered {0} (a redirect, not followed): configure the final URL")]
    Redirect(StatusCode),
    /// Any other status than `200`.
    #[error("answered {0}")]
    Status(StatusCode),
    /// The body is larger than [`MAX_BYTES`].
    #[error("the answer is larger than {MAX_BYTES} bytes")]
    TooLarge,
    /// The request could not be written (a URL that passed its checks always can).
    #[error("the request cannot be made: {0}")]
    Request(#[source] hyper::http::Error),
}

/// Makes the GETs; holds the TLS configuration once it was needed.
#[derive(Default)]
pub(crate) struct Fetcher {
    tls: OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
}

impl Fetcher {
    /// The TLS configuration, built on first use: the system's trust store, `ring`.
    pub(crate) fn tls(&self) -> Result<Arc<rustls::ClientConfig>, FetchError> {
        self.tls.get_or_init(tls_config).clone().map_err(FetchError::NoTrustStore)
    }

    /// GET `url`: the body of its `200` answer.
    pub(crate) async fn get(&self, url: &Url) -> Result<Bytes, FetchError> {
        match tokio::time::timeout(DEADLINE, self.get_now(url)).await {
            Ok(got) => got,
            Err(_) => Err(FetchError::Timeout),
        }
    }

    async fn get_now(&self, url: &Url) -> Result<Bytes, FetchError> {
        let tcp = TcpStream::connect((url.bare_host(), url.port)).await.map_err(FetchError::Connect)?;
        let _ = tcp.set_nodelay(true);
        if !url.https {
            return exchange(tcp, url).await;
        }
        let tls = self.tls()?;
        let name = rustls::pki_types::ServerName::try_from(url.bare_host().to_owned())
            .map_err(|e| FetchError::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
        let stream =
            tokio_rustls::TlsConnector::from(tls).connect(name, tcp).await.map_err(FetchError::Tls)?;
        exchange(stream, url).await
    }
}

/// One request on a fresh connection.
async fn exchange<S>(stream: S, url: &Url) -> Result<Bytes, FetchError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(FetchError::Http)?;
    // The connection is driven beside the request; it ends with it (or with the deadline).
    let driver = tokio::spawn(connection);
    let _abort = AbortOnDrop(driver.abort_handle());
    let request = Request::get(url.target())
        .header(HOST, url.authority())
        .header(ACCEPT, "application/json")
        .header(USER_AGENT, concat!("teaagent/", env!("CARGO_PKG_VERSION")))
        .body(Empty::<Bytes>::new())
        .map_err(FetchError::Request)?;
    let answer = sender.send_request(request).await.map_err(FetchError::Http)?;
    let status = answer.status();
    if status.is_redirection() {
        return Err(FetchError::Redirect(status));
    }
    if status != StatusCode::OK {
        return Err(FetchError::Status(status));
    }
    match Limited::new(answer.into_body(), MAX_BYTES).collect().await {
        Ok(body) => Ok(body.to_bytes()),
        Err(e) => match e.downcast::<hyper::Error>() {
            Ok(e) => Err(FetchError::Http(*e)),
            Err(_) => Err(FetchError::TooLarge),
        },
    }
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why: Vec<String> = found.errors.iter().map(|e| e.to_string()).collect();
        return Err(if why.is_empty() { "the trust store is empty".into() } else { why.join("; ") });
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let mut config = config;
    // HTTP/1 is what the client speaks; say so, for servers that also offer h2.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
