//! POST header and body rules (*Transports*, "Sending Messages to the Server").

mod server_common;

use mcp_transport_core::ProtocolVersion;
use serde_json::json;
use server_common::*;

#[tokio::test]
async fn accept_must_list_json_and_event_stream() {
    let t = start(config()).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    // (reqwest sends `Accept: */*` when none is set, which counts as both.)
    for accept in [
        Some("application/json"),
        Some("text/event-stream"),
        Some("text/html"),
        Some("application/json, text/event-stream;q=0"),
    ] {
        let mut req = t
            .http
            .post(&t.url)
            .header("content-type", "application/json");
        if let Some(a) = accept {
            req = req.header("accept", a);
        }
        let resp = req.body(init).send().await.unwrap();
        assert_eq!(resp.status(), 406, "Accept {accept:?}");
        let v = error_body(resp).await;
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("text/event-stream")
        );
    }
    // Parameters, q-values and `*/*` are fine.
    for accept in [
        "application/json;q=0.9, text/event-stream;q=0.8",
        "*/*",
        "application/*, text/*",
    ] {
        let resp = t
            .http
            .post(&t.url)
            .header("content-type", "application/json")
            .header("accept", accept)
            .body(init)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "Accept {accept}");
    }
}

#[tokio::test]
async fn content_type_must_be_json() {
    let t = start(config()).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut req = t
            .http
            .post(&t.url)
            .header("accept", "application/json, text/event-stream");
        if let Some(ct) = ct {
            req = req.header("content-type", ct);
        }
        let resp = req.body(init).send().await.unwrap();
        assert_eq!(resp.status(), 415, "{ct:?}");
        error_body(resp).await;
    }
    let resp = t
        .post()
        .header("content-type", "application/json; charset=utf-8")
        .body(init)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn oversized_body_is_413() {
    let t = start(config().with_max_body_bytes(1024)).await;
    let s = t.init("2025-11-25").await;
    let big = call_body(1, "echo", json!({"pad": "x".repeat(2000)}));
    let resp = t.post_in(&s).body(big).send().await.unwrap();
    assert_eq!(resp.status(), 413);
    let v = error_body(resp).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("1024"));
    // Still serving.
    let resp = t.call(&s, 2, "echo", json!({})).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn bad_json_and_bad_messages_are_400_with_the_reason() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let cases = [
        ("{", -32700, "Parse error"),
        ("", -32700, "Parse error"),
        (r#"{"id":1,"method":"x"}"#, -32600, "jsonrpc"),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, -32600, "id"),
        (r#"{"jsonrpc":"2.0"}"#, -32600, "method"),
        ("42", -32600, "object"),
        (
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
            -32600,
            "batches",
        ),
    ];
    for (body, code, says) in cases {
        let resp = t.post_in(&s).body(body).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let v = error_body(resp).await;
        assert_eq!(v["error"]["code"], code, "{body}: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{body}: {msg}");
    }
    // The server keeps serving after every bad input.
    let (recs, _) = read_all(t.call(&s, 9, "echo", json!({"a": 1})).await).await;
    assert_eq!(messages(&recs).last().unwrap()["result"]["echo"]["a"], 1);
}

#[tokio::test]
async fn a_batch_of_notifications_on_a_2025_03_26_session_is_accepted() {
    let t = start(config().with_versions([ProtocolVersion::V2025_03_26])).await;
    let s = t.init("2025-03-26").await;
    assert_eq!(s.version, "2025-03-26");
    let resp = t
        .post_in(&s)
        .body(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#)
        .send()
        .await
        .unwrap();
    // Batches are answered by the batch module (tested in
    // mcp-rev-2025-03-26): notifications only are 202 without a body.
    assert_eq!(resp.status(), 202);
    assert!(resp.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn notifications_and_responses_get_202_without_body() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        r#"{"jsonrpc":"2.0","id":"nobody-asked","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"s-99","error":{"code":-1,"message":"no"}}"#,
    ] {
        let resp = t.post_in(&s).body(body).send().await.unwrap();
        assert_eq!(resp.status(), 202, "{body}");
        assert!(resp.bytes().await.unwrap().is_empty());
    }
    // The handler saw the notification the transport does not consume.
    let seen = t.handler.notifications.lock().unwrap().clone();
    assert_eq!(seen, ["notifications/roots/list_changed"]);
}

#[tokio::test]
async fn ping_is_answered_by_the_transport() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .post_in(&s)
        .body(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
}

#[tokio::test]
async fn a_request_id_in_flight_cannot_be_reused() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let first = t.call(&s, 5, "slow", json!({"ms": 300})).await;
    assert_eq!(first.status(), 200);
    let again = t.call(&s, 5, "echo", json!({})).await;
    assert_eq!(again.status(), 400);
    let v = error_body(again).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("already"));
    let (recs, _) = read_all(first).await;
    assert!(is_response(messages(&recs).last().unwrap(), 5));
    // Free again once answered.
    let (recs, _) = read_all(t.call(&s, 5, "echo", json!({})).await).await;
    assert!(is_response(messages(&recs).last().unwrap(), 5));
}

#[tokio::test]
async fn other_methods_are_405() {
    let t = start(config()).await;
    let resp = t.http.put(&t.url).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert!(resp.headers().contains_key("allow"));
    error_body(resp).await;
}
