//! `subscriptions/listen` (*Subscriptions*; *Streamable HTTP*, "Receiving
//! Messages").

mod server_common;

use std::time::Duration;

use mcp_transport_core::jsonrpc::{Notification, to_raw};
use serde_json::{Value, json};
use server_common::*;

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn listen(id: impl Into<Value>, filter: Value) -> Value {
    body(
        id,
        "subscriptions/listen",
        json!({"notifications": filter}),
        json!({}),
    )
}

fn notification(method: &str, params: Option<Value>) -> Notification {
    Notification {
        method: method.into(),
        params: params.map(|p| to_raw(&p).unwrap()),
    }
}

fn tools_changed() -> Notification {
    notification("notifications/tools/list_changed", None)
}

fn updated(uri: &str) -> Notification {
    notification("notifications/resources/updated", Some(json!({"uri": uri})))
}

async fn open(t: &TestServer, id: impl Into<Value>, filter: Value) -> (SseReader, Value) {
    let resp = t.send(&listen(id, filter)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    let mut r = SseReader::without_ids(resp);
    let ack = r.next_json().await.unwrap();
    (r, ack)
}

#[tokio::test]
async fn acknowledgment_comes_first_with_the_honoured_filter() {
    let t = start(config()).await;
    let (_r, ack) = open(
        &t,
        "sub-1",
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourcesListChanged": true, "resourceSubscriptions": ["file:///a"]}),
    )
    .await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(ack.get("id").is_none());
    assert_eq!(ack["params"]["_meta"][SUB], "sub-1");
    // The server's capabilities: tools.listChanged and resources.subscribe
    // only; prompts and resources list changes are not supported.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
    assert_eq!(t.server.active_listen_streams(), 1);
}

#[tokio::test]
async fn each_stream_gets_only_what_it_asked_for() {
    let t = start(config()).await;
    let (mut tools, _) = open(&t, 1, json!({"toolsListChanged": true})).await;
    let (mut res, ack) = open(&t, "r", json!({"resourceSubscriptions": ["file:///a.txt"]})).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///a.txt"]})
    );
    assert_eq!(t.server.active_listen_streams(), 2);

    assert_eq!(t.server.publish(tools_changed()), 1);
    assert_eq!(t.server.publish(updated("file:///a.txt")), 1);
    assert_eq!(t.server.publish(updated("file:///b.txt")), 0);
    assert_eq!(
        t.server
            .publish(notification("notifications/prompts/list_changed", None)),
        0
    );
    // Request-scoped notifications never go to listen streams.
    assert_eq!(
        t.server.publish(notification(
            "notifications/progress",
            Some(json!({"progressToken": 1, "progress": 1}))
        )),
        0
    );
    assert_eq!(
        t.server.publish(notification(
            "notifications/message",
            Some(json!({"level": "error", "data": "x"}))
        )),
        0
    );
    assert_eq!(t.server.publish(tools_changed()), 1);

    let a = tools.next_json().await.unwrap();
    assert_eq!(a["method"], "notifications/tools/list_changed");
    assert_eq!(a["params"]["_meta"][SUB], 1);
    let b = tools.next_json().await.unwrap();
    assert_eq!(b["method"], "notifications/tools/list_changed");

    let c = res.next_json().await.unwrap();
    assert_eq!(c["method"], "notifications/resources/updated");
    assert_eq!(c["params"]["uri"], "file:///a.txt");
    assert_eq!(c["params"]["_meta"][SUB], "r");

    // End both gracefully and check nothing else was queued on either.
    assert_eq!(t.server.end_listeners(), 2);
    let last = tools.next_json().await.unwrap();
    assert_eq!(last["id"], 1);
    assert!(tools.next_event().await.is_none());
    let last = res.next_json().await.unwrap();
    assert_eq!(last["id"], "r");
    assert!(res.next_event().await.is_none());
}

#[tokio::test]
async fn keepalive_comments_flow_on_a_quiet_stream() {
    let t = start(config().with_keepalive(Some(Duration::from_millis(30)))).await;
    let (mut r, _) = open(&t, 1, json!({"toolsListChanged": true})).await;
    r.wait_raw(":\n:\n").await;
    // A notification after keep-alives is still intact.
    t.server.publish(tools_changed());
    let n = r.next_json().await.unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn graceful_end_sends_the_listen_result_last() {
    let t = start(config()).await;
    let (mut r, _) = open(&t, 7, json!({"toolsListChanged": true})).await;
    t.server.publish(tools_changed());
    assert_eq!(t.server.end_listeners(), 1);
    assert_eq!(t.server.active_listen_streams(), 0);
    // What was queued comes first, then the result, then the end.
    let n = r.next_json().await.unwrap();
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let last = r.next_json().await.unwrap();
    assert_eq!(
        last,
        json!({"jsonrpc": "2.0", "id": 7, "result": {
            "resultType": "complete",
            "_meta": {
                SUB: 7,
                "io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "0.0.1"}
            }
        }})
    );
    assert!(r.next_event().await.is_none());
}

#[tokio::test]
async fn closing_the_stream_ends_the_subscription_and_frees_it() {
    let t = start(config()).await;
    let (r1, _) = open(&t, 1, json!({"toolsListChanged": true})).await;
    let (r2, _) = open(&t, 2, json!({"toolsListChanged": true})).await;
    assert_eq!(t.server.active_listen_streams(), 2);
    drop(r1);
    eventually("one listen stream", || {
        t.server.active_listen_streams() == 1
    })
    .await;
    assert_eq!(t.server.publish(tools_changed()), 1);
    drop(r2);
    eventually("no listen stream", || t.server.active_listen_streams() == 0).await;
    assert_eq!(t.server.publish(tools_changed()), 0);
}

#[tokio::test]
async fn the_number_of_streams_is_bounded() {
    let t = start(config().with_max_listen_streams(1)).await;
    let (r1, _) = open(&t, 1, json!({})).await;
    let resp = t.send(&listen(2, json!({}))).await;
    assert_eq!(resp.status(), 503);
    let v = error_json(resp).await;
    assert_eq!(v["id"], 2);
    assert!(v["error"]["message"].as_str().unwrap().contains("maximum"));
    drop(r1);
    eventually("no listen stream", || t.server.active_listen_streams() == 0).await;
    let (_r, ack) = open(&t, 3, json!({})).await;
    assert_eq!(ack["params"]["notifications"], json!({}));
}

// Current-thread runtime: the publishing loop below does not yield, so the
// stream cannot drain its queue in between and must overflow.
#[tokio::test]
async fn a_listener_that_falls_behind_is_ended_with_an_error() {
    let t = start(config().with_listen_queue(2)).await;
    let (mut r, _) = open(&t, 5, json!({"toolsListChanged": true})).await;
    let delivered: usize = (0..5).map(|_| t.server.publish(tools_changed())).sum();
    assert_eq!(delivered, 2);
    assert_eq!(t.server.active_listen_streams(), 0);
    // The queued two are delivered, then the error, then the end.
    for _ in 0..2 {
        assert_eq!(
            r.next_json().await.unwrap()["method"],
            "notifications/tools/list_changed"
        );
    }
    let last = r.next_json().await.unwrap();
    assert_eq!(last["id"], 5);
    assert_eq!(last["error"]["code"], -32603);
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("behind")
    );
    assert_eq!(last["error"]["data"][SUB], 5);
    assert!(r.next_event().await.is_none());
}

#[tokio::test]
async fn the_filter_is_required_and_checked_like_any_request() {
    let t = start(config()).await;
    let b = body(1, "subscriptions/listen", json!({}), json!({}));
    let resp = t.send(&b).await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["error"]["code"], -32602);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("notifications")
    );
    // Headers are validated as for any request.
    let b = listen(2, json!({}));
    let resp = t
        .post()
        .body(b.to_string())
        .header("mcp-protocol-version", V)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(error_json(resp).await["error"]["code"], -32020);
    assert_eq!(t.server.active_listen_streams(), 0);
}

#[tokio::test]
async fn sub_resources_of_a_subscribed_uri_are_delivered() {
    let t = start(config()).await;
    let (mut r, _) = open(&t, 1, json!({"resourceSubscriptions": ["file:///dir"]})).await;
    assert_eq!(t.server.publish(updated("file:///dir/x.txt")), 1);
    assert_eq!(t.server.publish(updated("file:///directory")), 0);
    let n = r.next_json().await.unwrap();
    assert_eq!(n["params"]["uri"], "file:///dir/x.txt");
}

/// The method of the next event on `r`, failing after five seconds.
async fn next_method(r: &mut SseReader) -> String {
    let next = tokio::time::timeout(Duration::from_secs(5), r.next_json()).await;
    let n = next
        .expect("no event within 5 s")
        .expect("the stream ended");
    n["method"].as_str().unwrap().to_owned()
}

/// Two instances sharing a signal bus (`ModernConfig::signals`): what one
/// publishes reaches the listen streams the other holds, once, and its own
/// once (its broadcast comes back to it and is skipped); broadcasts of the
/// legacy engines' scope and session signals are not for these streams.
#[tokio::test]
async fn a_change_published_on_one_instance_reaches_the_others_streams_once() {
    use std::sync::Arc;

    use bytes::Bytes;
    use mcp_transport_core::jsonrpc::Message;
    use mcp_transport_core::session_store::{LocalSignalBus, SessionSignal, SignalBus};

    let bus = LocalSignalBus::default();
    let shared = || config().with_signals(Some(Arc::new(bus.clone())));
    let (a, b) = (start(shared()).await, start(shared()).await);
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]});
    let (mut on_a, _) = open(&a, 1, filter.clone()).await;
    let (mut on_b, _) = open(&b, 2, filter).await;
    assert_eq!(bus.subscriptions(), 2, "one bus subscription per instance");

    assert_eq!(a.server.publish(tools_changed()), 1);
    assert_eq!(
        next_method(&mut on_a).await,
        "notifications/tools/list_changed"
    );
    assert_eq!(
        next_method(&mut on_b).await,
        "notifications/tools/list_changed"
    );

    // Not for 2026-07-28 listen streams: the legacy engines' broadcast and
    // a session's signal, though they carry a change notification.
    let text: Bytes = Message::Notification(tools_changed()).to_json().into();
    let legacy = SessionSignal::broadcast("legacy", "elsewhere", text.clone());
    bus.publish(legacy).await.unwrap();
    let session = SessionSignal {
        session_id: "a-session".into(),
        message: text,
    };
    bus.publish(session).await.unwrap();

    // B's publication comes after them on the bus: A's next event is it,
    // and B's own broadcast is not delivered to B a second time.
    assert_eq!(b.server.publish(updated("file:///a")), 1);
    assert_eq!(
        next_method(&mut on_a).await,
        "notifications/resources/updated"
    );
    assert_eq!(
        next_method(&mut on_b).await,
        "notifications/resources/updated"
    );
    assert_eq!(a.server.publish(tools_changed()), 1);
    assert_eq!(
        next_method(&mut on_b).await,
        "notifications/tools/list_changed"
    );
    assert_eq!(
        next_method(&mut on_a).await,
        "notifications/tools/list_changed"
    );
}
