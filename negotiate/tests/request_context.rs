//! `RequestContext::http`: a handler sees the HTTP request that carried its
//! request — headers, the extensions an auth layer set (its principal) and
//! the peer address (`ConnectInfo`, set by `mcp_http_edge::server::serve`)
//! — in every Streamable HTTP era.

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use axum::extract::{ConnectInfo, Request};
use axum::middleware::{self, Next};
use http::HeaderValue;
use mcp_http_edge::server::{ConnLimits, serve};
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::client::answer;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request as RpcRequest, to_raw};
use mcp_transport_core::transport::Transport;
use serde_json::{Value, json};

/// What the auth layer found out about the caller.
#[derive(Clone, Debug)]
struct Principal(String);

/// Answers `tools/call whoami` with what it sees of the HTTP request.
struct WhoAmI;

#[async_trait]
impl Handler for WhoAmI {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "whoami", "version": "1" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: RpcRequest, cx: RequestContext) -> Outcome {
        if request.method != "tools/call" {
            return Outcome::Error(ErrorObject::method_not_found(&request.method));
        }
        let Some(http) = cx.http.as_ref() else {
            return Outcome::json(&json!({ "content": [], "seen": null }));
        };
        let seen = json!({
            "principal": http.extensions().get::<Principal>().map(|p| p.0.clone()),
            "peer_ip": http.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_string()),
            "trace": http.header_str("x-trace"),
            "method": http.method().as_str(),
            "path": http.uri().path(),
        });
        Outcome::json(&json!({ "content": [], "seen": seen }))
    }
}

/// The auth layer: the bearer token names the principal.
async fn auth(mut req: Request, next: Next) -> axum::response::Response {
    let who = req
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    if let Some(who) = who {
        req.extensions_mut().insert(Principal(who));
    }
    next.run(req).await
}

async fn whoami(url: &str, revision: V) -> Value {
    let config = NegotiateConfig::new(url)
        .with_revisions(vec![revision])
        .with_header(
            http::header::AUTHORIZATION,
            HeaderValue::from_static("Bearer ada"),
        )
        .with_header(
            http::HeaderName::from_static("x-trace"),
            HeaderValue::from_static("t-1"),
        );
    let conn = connect(config).await.expect("negotiated");
    let params = to_raw(&json!({ "name": "whoami", "arguments": {} })).unwrap();
    let response = answer(&conn, "tools/call", Some(params)).await.unwrap();
    conn.close().await.unwrap();
    let v: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
    v["seen"].clone()
}

#[tokio::test]
async fn handlers_see_the_principal_headers_and_peer_in_every_era() {
    let server = MultiServer::new(Arc::new(WhoAmI), MultiConfig::all());
    let app = server.route("/mcp").layer(middleware::from_fn(auth));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(serve(listener, app, ConnLimits::default()));
    for revision in [
        V::V2025_03_26,
        V::V2025_06_18,
        V::V2025_11_25,
        V::V2026_07_28,
    ] {
        let seen = whoami(&url, revision.clone()).await;
        assert_eq!(
            seen,
            json!({ "principal": "ada", "peer_ip": "127.0.0.1", "trace": "t-1", "method": "POST", "path": "/mcp" }),
            "{revision}"
        );
    }
    task.abort();
}
