//! `MultiServer` driven as a `tower::Service`, in memory: no socket, no
//! axum router, no connection extensions (`ConnectInfo`).

mod support;

use std::sync::Arc;

use axum::body::Body;
use http::header::CONTENT_TYPE;
use http::{Request, Response, StatusCode};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A POST as a client sends it; `B` is any axum-compatible body.
fn post<B>(body: B, extra: &[(&str, &str)]) -> Request<B> {
    let mut builder = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json");
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder.body(body).unwrap()
}

async fn json_body(response: Response<Body>) -> Value {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn server() -> MultiServer {
    MultiServer::new(Arc::new(support::test_handler()), MultiConfig::all())
}

#[tokio::test]
async fn a_modern_discover_is_served_in_memory() {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": { "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    // A `String` body: the service takes any axum-compatible body.
    let request = post(
        body.to_string(),
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
    );
    let response = server().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
    let v = json_body(response).await;
    assert_eq!(v["id"], 1);
    let versions = v["result"]["supportedVersions"].as_array().unwrap();
    // The modern engine advertises every configured revision.
    assert!(versions.contains(&json!("2026-07-28")), "{v}");
    assert!(versions.contains(&json!("2025-11-25")), "{v}");
}

#[tokio::test]
async fn a_legacy_initialize_is_served_in_memory() {
    let server = server();
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "in-memory", "version": "1" }
        }
    });
    let request = post(Body::from(body.to_string()), &[]);
    let response = server.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let v = json_body(response).await;
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(v["result"]["serverInfo"]["name"], "negotiate-test");
    // The session lives in the legacy engine behind the service.
    assert_eq!(server.legacy().unwrap().session_ids(), [session]);
}

#[tokio::test]
async fn the_edge_checks_apply_in_memory_too() {
    // No Host: refused by the DNS-rebinding check, as on the wire.
    let mut request = post(Body::empty(), &[]);
    request.headers_mut().remove("host");
    let response = server().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let v = json_body(response).await;
    assert_eq!(v["error"]["code"], -32600);
}

/// Counts the live chunks of a body made of one-byte chunks that each own
/// a 4 KiB block (as a chunk sliced out of a socket's read buffer does),
/// and the most alive at once.
#[derive(Clone, Default)]
struct Live {
    now: Arc<std::sync::atomic::AtomicUsize>,
    peak: Arc<std::sync::atomic::AtomicUsize>,
}

struct Block(Live, Box<[u8]>);

impl AsRef<[u8]> for Block {
    fn as_ref(&self) -> &[u8] {
        &self.1[..1]
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn one_byte_chunks(n: usize, live: Live) -> Body {
    use futures::StreamExt;
    use std::sync::atomic::Ordering::SeqCst;
    let chunks = futures::stream::iter(0..n).map(move |i| {
        let now = live.now.fetch_add(1, SeqCst) + 1;
        live.peak.fetch_max(now, SeqCst);
        let mut block = vec![b' '; 4096];
        block[0] = if i == 0 { b'{' } else { b' ' };
        Ok::<_, std::io::Error>(bytes::Bytes::from_owner(Block(
            live.clone(),
            block.into_boxed_slice(),
        )))
    });
    Body::from_stream(chunks)
}

/// Issue 13 (3): a body in one-byte chunks costs memory proportional to
/// its size, not one block per chunk until the whole body has arrived.
#[tokio::test]
async fn an_upload_in_one_byte_chunks_keeps_no_chunk() {
    let live = Live::default();
    let request = post(one_byte_chunks(20_000, live.clone()), &[]);
    let response = server().oneshot(request).await.unwrap();
    // The body is `{` and spaces: a parse error, after the whole body was read.
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let peak = live.peak.load(std::sync::atomic::Ordering::SeqCst);
    assert!(peak <= 2, "{peak} chunks of 4 KiB were alive at once");
}

/// Issue 13 (3): a declared length above the limit is refused before a
/// byte of the body is read (so `Expect: 100-continue` never gets 100).
#[tokio::test]
async fn an_oversized_content_length_is_refused_before_reading() {
    let live = Live::default();
    let limit = 4 * 1024 * 1024 + 1;
    let request = post(
        one_byte_chunks(10, live.clone()),
        &[
            ("content-length", &limit.to_string()),
            ("expect", "100-continue"),
        ],
    );
    let response = server().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(live.peak.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(json_body(response).await["error"]["code"], -32600);
}

/// Each engine holds a request to its own body limit, also when the
/// dispatcher in front (whose read allows the larger of the two) has
/// already read and parsed the body and hands the engine the message.
#[tokio::test]
async fn each_engine_holds_a_parsed_body_to_its_own_limit() {
    let padded = |pad: usize| {
        json!({
            "jsonrpc": "2.0", "id": 3, "method": "server/discover",
            "params": { "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "pad": "x".repeat(pad)
            }}
        })
        .to_string()
    };
    let modern_headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    for (modern_limit, legacy_limit, status) in [
        (1024, 64 * 1024, StatusCode::PAYLOAD_TOO_LARGE),
        (64 * 1024, 1024, StatusCode::OK),
    ] {
        let mut config = MultiConfig::all();
        config.modern.http.max_body_bytes = modern_limit;
        config.legacy.http.max_body_bytes = legacy_limit;
        let server = MultiServer::new(Arc::new(support::test_handler()), config);
        let small = post(Body::from(padded(10)), &modern_headers);
        let response = server.clone().oneshot(small).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let large = post(Body::from(padded(2048)), &modern_headers);
        let response = server.oneshot(large).await.unwrap();
        assert_eq!(response.status(), status, "modern limit {modern_limit}");
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            assert_eq!(json_body(response).await["error"]["code"], -32600);
        }
    }
    // A session's request (parsed in front the session way) and a new
    // session's `initialize`, each over the legacy engine's limit and
    // within the modern one's: 413 from the legacy engine. Within both,
    // the unknown session is the engine's answer (404).
    let legacy = |method: &str, pad: usize| {
        json!({
            "jsonrpc": "2.0", "id": 4, "method": method,
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"}, "pad": "x".repeat(pad)
            }
        })
        .to_string()
    };
    let session = [
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", "no-such-session"),
    ];
    let mut config = MultiConfig::all();
    config.modern.http.max_body_bytes = 64 * 1024;
    config.legacy.http.max_body_bytes = 1024;
    let server = MultiServer::new(Arc::new(support::test_handler()), config);
    let within = post(Body::from(legacy("tools/list", 10)), &session);
    let response = server.clone().oneshot(within).await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    for (request, what) in [
        (
            post(Body::from(legacy("tools/list", 2048)), &session),
            "a session's request",
        ),
        (
            post(Body::from(legacy("initialize", 2048)), &[]),
            "initialize",
        ),
    ] {
        let response = server.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE, "{what}");
        assert_eq!(json_body(response).await["error"]["code"], -32600);
    }
}
