//! The HTTP+SSE server (2024-11-05) against this crate's client: the
//! endpoint event, answers and progress down the stream, a Streamable POST
//! refused with 405, cancellation by `notifications/cancelled`, and a
//! broken stream reported as not resumable.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;
use mcp_rev_2024_11_05::server::HttpSseServer;
use mcp_rev_2024_11_05::{HttpSseClient, HttpSseConfig};
use mcp_test_support::client::answer;
use mcp_test_support::handler::TestHandler;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{
    RequestOptions, ResumeFailure, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

async fn start(handler: Arc<TestHandler>) -> (String, HttpSseServer, tokio::task::JoinHandle<()>) {
    let server = HttpSseServer::new(handler, "/messages");
    let app = server.router("/sse");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/sse"), server, task)
}

/// A client config whose requests give up after 5 s, so that a server that
/// never answers fails the test rather than hanging it.
fn bounded(url: String) -> HttpSseConfig {
    HttpSseConfig::new(url).with_request_timeout(Some(Duration::from_secs(5)))
}

fn call(name: &str, args: Value) -> Option<Box<serde_json::value::RawValue>> {
    to_raw(&json!({ "name": name, "arguments": args })).ok()
}

#[tokio::test]
async fn a_client_connects_calls_and_gets_progress_down_the_stream() {
    let handler = Arc::new(TestHandler::builder("old").streaming_tools().build());
    let (url, server, _task) = start(handler).await;
    // The SSE URL refuses a Streamable HTTP POST, as old servers do.
    let post = reqwest::Client::new()
        .post(&url)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 405);

    let client = HttpSseClient::connect(bounded(url)).await.unwrap();
    assert_eq!(client.revision().as_str(), "2024-11-05");
    assert_eq!(server.session_count(), 1);
    let resp = answer(&client, "tools/call", call("echo", json!({ "text": "hi" })))
        .await
        .unwrap();
    assert!(resp.payload.unwrap().get().contains("hi"));
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let mut stream = client
        .request(
            "tools/call",
            call("countdown", json!({ "n": 3, "interval_ms": 5 })),
            options,
        )
        .await
        .unwrap();
    let mut progress = 0;
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamEvent::Notification(n) if n.method == "notifications/progress" => progress += 1,
            StreamEvent::Response(r) => {
                assert!(r.payload.is_ok());
                break;
            }
            _ => {}
        }
    }
    assert_eq!(progress, 3);
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_and_a_broken_stream_is_not_resumable() {
    let handler = Arc::new(TestHandler::builder("old").streaming_tools().build());
    let (url, _server, _task) = start(handler.clone()).await;
    // Through a proxy that can cut the stream.
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/sse")
        .parse()
        .unwrap();
    let proxy = mcp_test_support::Proxy::start(addr).await.unwrap();
    let url = format!("http://{}/sse", proxy.addr());
    let client = HttpSseClient::connect(bounded(url)).await.unwrap();
    let slow = client
        .request(
            "tools/call",
            call("slow", json!({ "ms": 10_000 })),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(slow);
    mcp_test_support::wait::eventually("the handler sees the cancellation", || {
        handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;

    let pending = client
        .request(
            "tools/call",
            call("slow", json!({ "ms": 10_000 })),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    // The network drops: the stream breaks.
    assert!(proxy.cut_and_wait().await > 0);
    let err = pending.response().await.unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::ResumeFailed(ResumeFailure::NotResumable { .. })
        ),
        "{err:?}"
    );
}
