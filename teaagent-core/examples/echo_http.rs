//! The `echo` example served over Streamable HTTP (`Server::serve_http`) on a loopback port: the
//! one `--port PORT` names, else a free one; it prints where on stderr (`listening on
//! http://ADDR/mcp`) and stops cleanly on SIGINT or SIGTERM. The HTTP benchmarks' teaagent.
//!
//! ```sh
//! cargo run --release -p teaagent-core --features http --example echo_http -- --port 8787
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
    let port = port()?;
    teaagent_core::logging::init("warn");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        let stop = teaagent_core::server::stop_on_signals();
        Server::registered().serve_http(listener, HttpOptions::default(), stop).await
    });
    // A blocking tool's thread still running after the grace period does not hold the exit.
    teaagent_core::server::end_runtime(runtime);
    served
}

/// `--port PORT` (or `--port=PORT`); 0, a free port, without it.
fn port() -> std::io::Result<u16> {
    let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let mut args = std::env::args().skip(1);
    let mut port = 0;
    while let Some(arg) = args.next() {
        let value = match arg.strip_prefix("--port=") {
            Some(value) => value.to_owned(),
            None if arg == "--port" => args.next().ok_or_else(|| bad("--port needs a number".into()))?,
            None => return Err(bad(format!("unknown argument {arg:?} (usage: echo_http [--port PORT])"))),
        };
        port = value.parse().map_err(|_| bad(format!("--port {value:?} is not a port number")))?;
    }
    Ok(port)
}
