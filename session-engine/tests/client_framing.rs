//! Every valid SSE framing real servers use is accepted (peers/README.md,
//! "What the peers do differently"): CRLF (Python SDK), CR, `data`/`id`/
//! `retry` in any order with a trailing space after the JSON (Rust SDK),
//! comments and keep-alives, multi-line data, other event types, batches.

mod client_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::{
    Misbehaviour, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

fn progress(n: u32) -> Value {
    notification(
        "notifications/progress",
        json!({"progressToken": "t", "progress": n}),
    )
}

/// Splits `text` into chunks of `size` bytes (cutting CRLF pairs and
/// fields apart on purpose).
fn chunked(text: &str, size: usize) -> Vec<String> {
    text.as_bytes()
        .chunks(size)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect()
}

async fn events_of(fake: &Fake, config: ClientConfig) -> Result<Vec<String>, TransportError> {
    let client = LegacyClient::connect(config.with_reconnect_backoff(Duration::from_millis(5)))
        .await
        .unwrap();
    let mut stream = client
        .request("tools/call", None, RequestOptions::default())
        .await?;
    let mut out = Vec::new();
    while let Some(ev) = within("reading", stream.next()).await {
        out.push(match ev? {
            StreamEvent::Notification(n) => {
                let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
                format!("progress {}", p["progress"])
            }
            StreamEvent::ServerRequest(r) => format!("request {}", r.method),
            StreamEvent::Response(r) => {
                let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
                format!("response {v}")
            }
        });
    }
    let _ = fake;
    Ok(out)
}

/// A fake whose `tools/call` answer is `first` (split into `chunk`-byte
/// pieces) and whose resumption GET answers `resumed(last_event_id)`.
async fn framed(
    version: &str,
    first: impl Fn(&Value) -> String + Send + Sync + 'static,
    chunk: usize,
    resumed: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ended: Option<Arc<Mutex<Vec<tokio::time::Instant>>>>,
) -> Fake {
    legacy_fake(version, move |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(
                chunked(&first(seen.rpc_id().unwrap()), chunk),
                Ending::Eof,
                ended.clone(),
            ));
        }
        if seen.is_get() {
            let body = resumed(seen.header("last-event-id")?)?;
            return Some(sse(chunked(&body, chunk), Ending::Eof, None));
        }
        None
    })
    .await
}

#[tokio::test]
async fn crlf_framing_is_read_at_every_chunk_size() {
    for chunk in [1, 2, 3, 7, 64, 4096] {
        let fake = framed(
            "2025-11-25",
            |_| {
                format!(
                    "id: c0\r\nretry: 5\r\ndata:\r\n\r\n: keep-alive\r\n\r\nevent: message\r\nid: c1\r\ndata: {}\r\n\r\n",
                    progress(1)
                )
            },
            chunk,
            |last| {
                assert_eq!(last, "c1");
                Some(format!("event: message\r\nid: c2\r\ndata: {}\r\n\r\n", result(&json!(2), json!({"crlf": true}))))
            },
            None,
        )
        .await;
        let events = events_of(&fake, ClientConfig::new(&fake.url))
            .await
            .unwrap();
        assert_eq!(
            events,
            ["progress 1", r#"response {"crlf":true}"#],
            "chunk {chunk}"
        );
    }
}

#[tokio::test]
async fn cr_only_framing_is_read() {
    let fake = framed(
        "2025-11-25",
        |id| {
            format!(
                "id: r0\rdata:\r\rid: r1\rdata: {}\r\rdata: {}\r\r",
                progress(1),
                result(id, json!(1))
            )
        },
        5,
        |_| None,
        None,
    )
    .await;
    let events = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(events, ["progress 1", "response 1"]);
}

#[tokio::test(start_paused = true)]
async fn rust_sdk_field_order_and_trailing_space_are_read_and_resumed() {
    let ended = Arc::new(Mutex::new(Vec::new()));
    let fake = framed(
        "2025-11-25",
        |_| {
            format!(
                "data: \nid: 0\nretry: 3000\n\ndata: {} \nid: 1\n\n",
                progress(1)
            )
        },
        11,
        |last| {
            assert_eq!(last, "1");
            Some(format!(
                "data: {} \nid: 2\nretry: 3000\n\n",
                result(&json!(2), json!({"rmcp": 1}))
            ))
        },
        Some(ended.clone()),
    )
    .await;
    let events = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(events, ["progress 1", r#"response {"rmcp":1}"#]);
    let get = &fake.seen_where(Seen::is_get)[0];
    assert_eq!(
        get.at - ended.lock().unwrap()[0],
        Duration::from_millis(3000)
    );
}

#[tokio::test]
async fn comments_multi_line_data_and_other_event_types() {
    let fake = framed(
        "2025-11-25",
        |id| {
            let response = serde_json::to_string_pretty(&result(id, json!({"lines": [1, 2]}))).unwrap();
            let data: String = response.lines().map(|l| format!("data: {l}\n")).collect();
            format!(
                ":\n: ping\nid: m0\ndata:\n\n\
                 event: endpoint\nid: m1\ndata: /not-json\n\n\
                 id: m2\ndata: {{\"jsonrpc\":\"2.0\",\n: a comment inside an event\ndata: \"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"t\",\"progress\":7}}}}\n\n\
                 retry: 100\n\n\
                 id: m3\n{data}\n"
            )
        },
        9,
        |_| None,
        None,
    )
    .await;
    let events = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(events, ["progress 7", r#"response {"lines":[1,2]}"#]);
}

#[tokio::test]
async fn a_batch_in_one_event_is_read_on_2025_03_26() {
    let fake = framed(
        "2025-03-26",
        |id| {
            format!(
                "id: b0\ndata: [{},{}]\n\n",
                progress(1),
                result(id, json!({"batched": true}))
            )
        },
        4096,
        |_| None,
        None,
    )
    .await;
    let config = ClientConfig::new(&fake.url).with_versions(vec![ProtocolVersion::V2025_03_26]);
    let events = events_of(&fake, config).await.unwrap();
    assert_eq!(events, ["progress 1", r#"response {"batched":true}"#]);
}

#[tokio::test]
async fn a_batch_is_refused_on_revisions_without_batches() {
    let fake = framed(
        "2025-11-25",
        |id| {
            format!(
                "id: b0\ndata: [{},{}]\n\n",
                progress(1),
                result(id, json!({}))
            )
        },
        4096,
        |_| None,
        None,
    )
    .await;
    let err = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::InvalidJsonRpc { detail, .. })
                if detail.contains("batches")
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn json_answers_with_parameters_in_the_content_type() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call").then(|| {
            http::Response::builder()
                .header("content-type", "Application/JSON; charset=utf-8")
                .body(axum::body::Body::from(
                    result(seen.rpc_id().unwrap(), json!(5)).to_string(),
                ))
                .unwrap()
        })
    })
    .await;
    let events = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(events, ["response 5"]);
}

#[tokio::test]
async fn an_id_only_block_sets_the_id_resumed_from() {
    let fake = framed(
        "2025-11-25",
        |_| format!("id: d1\ndata: {}\n\nid: only-id\nretry: 5\n\n", progress(1)),
        3,
        |last| {
            assert_eq!(last, "only-id");
            Some(format!("id: d2\ndata: {}\n\n", result(&json!(2), json!(0))))
        },
        None,
    )
    .await;
    let events = events_of(&fake, ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(events, ["progress 1", "response 0"]);
    assert_eq!(fake.seen_where(Seen::is_get).len(), 1);
}
