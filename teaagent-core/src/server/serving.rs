//! [`Serving`]: a server at work, as a future of its own type so that a forgotten `.await` gets
//! a warning that says what happens (nothing) and what to write.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::BoxFuture;

/// A server at work: what [`Server::serve_stdio`](super::Server::serve_stdio),
/// [`Server::serve`](super::Server::serve) and `Server::serve_http` return. It resolves when
/// the server stops, to what they describe.
///
/// Like every future it does nothing until it is awaited (or spawned). It is a type of its own
/// rather than an `async fn`'s future so that `server.serve_stdio();` without `.await` is
/// warned about in words that fit: rustc's generic note for futures ("futures do nothing unless
/// you `.await` or poll them") does not say that the program will then exit at once with code
/// 0, which a client reports as a server that closed. (`#[must_use]` on an `async fn` would also
/// fire after the `.await`, on the ignored result, with the same text.)
///
/// ```no_run
/// use teaagent_core::{Registry, Server};
///
/// # async fn run() -> std::io::Result<()> {
/// let registry = Registry::builder().registered().build().expect("valid tools");
/// Server::new(registry).serve_stdio().await
/// # }
/// ```
#[must_use = "a server does nothing until it is awaited: add `.await` (in `#[tokio::main] async fn main`), or serve stdio from a plain `fn main` with `run_stdio()`"]
pub struct Serving(BoxFuture<'static, io::Result<()>>);

impl Serving {
    pub(super) fn new(serve: impl Future<Output = io::Result<()>> + Send + 'static) -> Self {
        Serving(Box::pin(serve))
    }
}

impl Future for Serving {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for Serving {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Serving")
    }
}
