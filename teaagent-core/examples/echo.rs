//! The hello-world of teaagent: one `echo` tool served over stdio.
//!
//! ```sh
//! cargo build --release -p teaagent-core --example echo
//! echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   | target/release/examples/echo
//! ```

use std::process::ExitCode;

use teaagent_core::{Server, tool};

/// Echo the text back unchanged.
#[tool(read_only, idempotent)]
async fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

/// Every `#[tool]` of the program, collected once a waiting `initialize` has been answered
/// (`Server::registered`); invalid tools stop it with exit code 1 and the problems on stderr.
fn main() -> ExitCode {
    Server::registered().run_stdio()
}
