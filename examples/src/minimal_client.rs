//! A minimal MCP client: the negotiating client finds the best revision
//! the server speaks (2026-07-28's `server/discover`, then `initialize`,
//! then the deprecated HTTP+SSE transport), lists the tools and calls
//! `add`. A bearer token, when given, goes on every request — the probes,
//! every POST, every resume and the final DELETE.
//!
//! ```sh
//! cargo run -p mcp-examples --bin minimal_client -- http://127.0.0.1:PORT/mcp [TOKEN]
//! ```

use http::HeaderValue;
use http::header::AUTHORIZATION;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, Transport};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: minimal_client URL [TOKEN]")?;
    let mut config = NegotiateConfig::new(url);
    if let Some(token) = args.next() {
        config = config.with_header(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}"))?,
        );
    }
    let client = connect(config).await?;
    println!("revision: {}", client.revision());

    let tools = call(&client, "tools/list", json!({})).await?;
    println!("tools: {}", tools["tools"]);
    let sum = call(
        &client,
        "tools/call",
        json!({ "name": "add", "arguments": { "a": 2, "b": 3 } }),
    )
    .await?;
    println!("add(2, 3) = {}", sum["content"][0]["text"]);
    client.close().await?;
    Ok(())
}

/// Sends one request and waits for its result.
async fn call(
    client: &impl Transport,
    method: &str,
    params: Value,
) -> Result<Value, Box<dyn std::error::Error>> {
    let response = client
        .request(method, Some(to_raw(&params)?), RequestOptions::default())
        .await?
        .response()
        .await?;
    let result = response.payload.map_err(|e| format!("{method}: {e}"))?;
    Ok(serde_json::from_str(result.get())?)
}
