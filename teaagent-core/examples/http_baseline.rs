//! The HTTP benchmark's baseline: the least a Streamable HTTP MCP echo server can do on hyper —
//! read the body, parse it with `serde_json`, answer the correct JSON. No checks, no framework.
//! `benches/http.rs` compares teaagent's `echo_http` example with it; not an example to copy.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{Value, json};

async fn answer(request: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let result = json!({
        "content": [{"type": "text", "text": message["params"]["arguments"]["text"]}],
        "isError": false
    });
    let response = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
    let mut reply = Response::new(Full::new(Bytes::from(response.to_string())));
    reply
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    Ok(reply)
}

fn main() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(
                        hyper_util::rt::TokioIo::new(stream),
                        hyper::service::service_fn(answer),
                    )
                    .await;
            });
        }
    })
}
