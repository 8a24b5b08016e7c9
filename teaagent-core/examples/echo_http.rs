//! The `echo` example served over Streamable HTTP (`Server::serve_http`) on a free loopback port,
//! which it prints on stderr (`listening on http://ADDR/mcp`). The HTTP benchmark's teaagent.
//!
//! ```sh
//! cargo run --release -p teaagent-core --features http --example echo_http
//! ```

use teaagent_core::server::http::HttpOptions;
use teaagent_core::{Server, tool};

/// Echo the text back unchanged.
#[tool(read_only, idempotent)]
async fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

fn main() -> std::io::Result<()> {
    teaagent_core::logging::init("warn");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        let stop = tokio_util::sync::CancellationToken::new();
        Server::registered().serve_http(listener, HttpOptions::default(), stop).await
    })
}
