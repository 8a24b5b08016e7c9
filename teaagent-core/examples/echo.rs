//! The hello-world of teaagent: one `echo` tool served over stdio.
//!
//! ```sh
//! cargo build --release -p teaagent-core --example echo
//! echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   | target/release/examples/echo
//! ```

use std::process::ExitCode;

use teaagent_core::{Registry, Server, tool};

/// Echo the text back unchanged.
#[tool(read_only, idempotent)]
async fn echo(
    /// The text to echo.
    text: String,
) -> String {
    text
}

fn main() -> ExitCode {
    match Registry::builder().registered().build() {
        Ok(registry) => Server::new(registry).run_stdio(),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
