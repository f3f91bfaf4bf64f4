//! Answers that are not the request's answer, told apart by what they are:
//! a connection never made, a media type that is neither JSON nor SSE, a
//! JSON-RPC error meant for another request or for none, a
//! `HeaderMismatch` whose `tools/list` refresh or retry fails, and a
//! `CreateTaskResult` where no task may start.

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use client_common::*;
use http::StatusCode;
use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
use mcp_transport_core::transport::{Misbehaviour, RequestOptions, Transport, TransportError};
use serde_json::{Value, json};

/// A 200 answer with this `Content-Type` (none when `None`).
fn typed(content_type: Option<&str>, body: &str) -> Response {
    let mut builder = Response::builder().status(StatusCode::OK);
    if let Some(ct) = content_type {
        builder = builder.header("content-type", ct);
    }
    builder.body(Body::from(body.to_owned())).unwrap()
}

/// `request()`'s own refusal of a `tools/call` with `p` as its params.
async fn refused(client: &ModernClient, p: Value) -> TransportError {
    client
        .request("tools/call", params(p), RequestOptions::default())
        .await
        .expect_err("request() itself refuses")
}

/// `request()`'s refusal of a `tools/call` answered `answer`.
async fn refusal(answer: fn(&Seen) -> Response) -> TransportError {
    let fake = Fake::start(answer).await;
    refused(&fake.client(), json!({"name": "t"})).await
}

#[tokio::test]
async fn a_connection_never_made_is_a_connection_error_from_request() {
    // A port nothing listens on: bound, then released.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let client = ModernClient::new(ModernClientConfig::new(&url)).unwrap();
    let err = client
        .request(
            "tools/call",
            params(json!({"name": "t"})),
            RequestOptions {
                // Nothing was delivered, so even a retryable call fails at once.
                safe_to_retry: true,
                ..Default::default()
            },
        )
        .await
        .expect_err("no server: request() itself fails");
    assert!(
        matches!(&err, TransportError::Connection(why) if why.contains("POST tools/call")),
        "a refused connection is not a stream that broke: {err}"
    );
}

#[tokio::test]
async fn a_wrong_media_type_names_what_came() {
    let fake = Fake::start(|seen| match seen.params()["as"].as_str() {
        Some("text") => typed(Some("text/plain"), "hello"),
        _ => typed(None, "hello"),
    })
    .await;
    let client = fake.client();
    let mut got = Vec::new();
    for kind in ["text", "none"] {
        match refused(&client, json!({"name": "t", "as": kind})).await {
            TransportError::PeerMisbehaved(Misbehaviour::WrongContentType { got: ct, .. }) => {
                got.push(ct);
            }
            other => panic!("{kind}: {other}"),
        }
    }
    assert_eq!(
        got,
        [Some("text/plain".to_owned()), None],
        "a missing Content-Type is reported as none, not as an empty one"
    );
}

#[tokio::test]
async fn an_error_without_an_id_is_the_request_s_only_for_the_retry_codes() {
    // 400 with an id-less -32600: an HTTP refusal carrying the error, not
    // this request's response (only -32020 and -32022 without an id are
    // taken as the request's, since the server may not have read its id).
    let err = refusal(|_| {
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&Value::Null, -32600, "Invalid Request", None),
        )
    })
    .await;
    assert!(
        matches!(&err, TransportError::Http { status: 400, rpc: Some(e), .. } if e.code == -32600),
        "{err}"
    );
}

#[tokio::test]
async fn an_error_for_another_request_on_the_stream_is_a_mismatch() {
    let fake = Fake::start(|_| {
        sse(&[rpc_error(
            &json!("someone-else"),
            -32603,
            "Internal error",
            None,
        )])
    })
    .await;
    let err = answer(&fake.client(), "tools/call", params(json!({"name": "t"})))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::ResponseIdMismatch { .. })
        ),
        "an error response names its request like a result does: {err}"
    );
}

fn mismatch(seen: &Seen) -> Response {
    status_json(
        StatusCode::BAD_REQUEST,
        &rpc_error(&seen.id(), -32020, "Header mismatch", None),
    )
}

#[tokio::test]
async fn a_failed_refresh_ends_the_call_with_the_mismatch_without_resending() {
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/list") => status(StatusCode::INTERNAL_SERVER_ERROR, "down"),
        _ => mismatch(seen),
    })
    .await;
    let response = answer(&fake.client(), "tools/call", params(json!({"name": "x"})))
        .await
        .unwrap();
    assert_eq!(response.payload.unwrap_err().code, -32020);
    assert_eq!(fake.rpc("tools/list").len(), 1);
    assert_eq!(
        fake.rpc("tools/call").len(),
        1,
        "without fresh schemas the call is not sent again"
    );
}

#[tokio::test]
async fn a_refusal_of_the_retry_after_a_refresh_comes_from_request() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let fake = Fake::start(move |seen| match seen.rpc_method() {
        Some("tools/list") => json_ok(&result(&seen.id(), json!({"tools": []}))),
        _ if c.fetch_add(1, Ordering::SeqCst) == 0 => mismatch(seen),
        _ => status(StatusCode::SERVICE_UNAVAILABLE, "busy"),
    })
    .await;
    // The refresh and the retry run inside request().
    let err = refused(&fake.client(), json!({"name": "x"})).await;
    assert!(
        matches!(&err, TransportError::Http { status: 503, .. }),
        "{err}"
    );
    let methods: Vec<String> = fake
        .seen()
        .iter()
        .map(|s| s.rpc_method().unwrap().to_owned())
        .collect();
    assert_eq!(methods, ["tools/call", "tools/list", "tools/call"]);
}

/// Client capabilities that declare the Tasks extension.
fn tasks_declared() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

#[tokio::test]
async fn a_create_task_result_where_no_task_may_start_is_invalid() {
    // Even with the extension declared, only `tools/call` may become a task
    // (*Tasks*: a `CreateTaskResult` "in response to an unsupported request
    // type MUST" be an invalid response), and only `"task"` starts one.
    let fake = Fake::start(|seen| {
        let kind = seen.params()["kind"].as_str().unwrap_or("task").to_owned();
        json_ok(&result(
            &seen.id(),
            json!({"resultType": kind, "taskId": "t-1", "status": "working"}),
        ))
    })
    .await;
    let client = ModernClient::new(fake.config().with_capabilities(tasks_declared())).unwrap();
    for (method, kind) in [("prompts/get", "task"), ("tools/call", "deferred")] {
        // Bounded: a call that took the answer for a task would poll it
        // for ever (every answer here says "working").
        let err = tokio::time::timeout(
            Duration::from_secs(5),
            answer(&client, method, params(json!({"name": "p", "kind": kind}))),
        )
        .await
        .unwrap_or_else(|_| panic!("{method} answered {kind} was followed as a task"))
        .unwrap_err();
        assert!(
            matches!(
                &err,
                TransportError::PeerMisbehaved(Misbehaviour::UnknownResultType { method: m, result_type })
                    if m == method && result_type == kind
            ),
            "{method} answered {kind}: {err}"
        );
    }
    assert!(
        fake.rpc("tasks/get").is_empty(),
        "no task was followed: {:?}",
        fake.seen()
    );
}

#[tokio::test]
async fn a_result_on_an_error_status_is_not_a_response() {
    let err = refusal(|seen| {
        status_json(
            StatusCode::BAD_REQUEST,
            &result(&seen.id(), json!({"content": []})),
        )
    })
    .await;
    assert!(
        matches!(
            &err,
            TransportError::Http {
                status: 400,
                rpc: None,
                ..
            }
        ),
        "a 400 is a refusal even when its body holds a result: {err}"
    );
}

#[tokio::test]
async fn an_error_body_is_read_up_to_64_kib() {
    // An id-less JSON-RPC error (the refusal's reason, not a response)
    // with a long message, well past 1 KiB, is read whole.
    let err = refusal(|_| {
        let message = "m".repeat(60 * 1024);
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&Value::Null, -32600, &message, None),
        )
    })
    .await;
    assert!(
        matches!(&err, TransportError::Http { rpc: Some(e), .. } if e.code == -32600 && e.message.len() == 60 * 1024),
        "{:.200}",
        err.to_string()
    );
    // Past the bound the body is cut, so no error is found in it; the
    // excerpt stands in.
    let err = refusal(|_| {
        let message = "m".repeat(70 * 1024);
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&Value::Null, -32600, &message, None),
        )
    })
    .await;
    assert!(
        matches!(
            &err,
            TransportError::Http {
                status: 400,
                rpc: None,
                ..
            }
        ),
        "{:.200}",
        err.to_string()
    );
}
