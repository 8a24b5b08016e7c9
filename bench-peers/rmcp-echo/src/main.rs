//! rmcp's echo server: one `echo` tool, the benchmark's peer (see Cargo.toml).

use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoRequest {
    /// The text to echo.
    text: String,
}

#[derive(Clone)]
struct Echo {
    #[allow(dead_code)] // read by the code #[tool_handler] generates
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    /// Echo the text back unchanged.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn echo(&self, Parameters(EchoRequest { text }): Parameters<EchoRequest>) -> String {
        text
    }
}

#[tool_handler]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Echo { tool_router: Echo::tool_router() }
        .serve(rmcp::transport::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}
