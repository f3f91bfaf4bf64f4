//! The 2024-11-05 HTTP+SSE client against a server of that era
//! (`mcp_test_support::http_sse_server`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::StreamExt;
use mcp_rev_2024_11_05::{HttpSseClient, HttpSseConfig};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{ErrorObject, Message, Notification, Response, to_raw};
use mcp_transport_core::transport::{
    ConfigError, InputHandler, ListenFilter, Misbehaviour, RequestOptions, ResponseStream,
    ResumeFailure, ServerMessages, StreamEvent, Transport, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use mcp_test_support::client::{answer, params, result_of as result};
use mcp_test_support::eventually;
use mcp_test_support::http_sse_server::{self as old_server, OldServer, Options};

fn config(addr: SocketAddr, path: &str) -> HttpSseConfig {
    HttpSseConfig::new(format!("http://{addr}{path}"))
        .with_endpoint_timeout(Duration::from_millis(800))
        .with_request_timeout(Some(Duration::from_secs(5)))
}

async fn start() -> (SocketAddr, OldServer, HttpSseClient) {
    let (addr, server) = old_server::spawn(Options::default()).await;
    let client = HttpSseClient::connect(config(addr, "/sse")).await.unwrap();
    (addr, server, client)
}

fn call(name: &str, args: Value) -> Option<Box<RawValue>> {
    params(json!({"name": name, "arguments": args}))
}

fn text_of(r: &Response) -> String {
    result(r)["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Calls `echo` with `text` and checks the answer.
async fn echoes(client: &HttpSseClient, text: &str) {
    let r = answer(client, "tools/call", call("echo", json!({ "text": text })))
        .await
        .unwrap();
    assert_eq!(text_of(&r), text);
}

/// After a moment for a cancellation to be sent, were one going to be:
/// the server received none.
async fn nothing_cancelled(server: &OldServer) {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let methods = server.received_methods();
    assert!(
        !methods.contains(&"notifications/cancelled".to_owned()),
        "{methods:?}"
    );
}

/// The listener's next message, within 5 s.
async fn heard(listener: &mut ServerMessages) -> Message {
    tokio::time::timeout(Duration::from_secs(5), listener.next())
        .await
        .expect("a message within 5 s")
        .expect("the listener is open")
        .unwrap()
}

/// Calls `tool` giving up after `timeout`; the call must fail, with this.
async fn failed_call(
    client: &HttpSseClient,
    tool: &str,
    args: Value,
    timeout: Duration,
) -> TransportError {
    let options = RequestOptions {
        timeout: Some(timeout),
        ..Default::default()
    };
    client
        .request("tools/call", call(tool, args), options)
        .await
        .unwrap()
        .response()
        .await
        .unwrap_err()
}

/// Every event of a request's stream, the response last.
async fn collect(mut stream: ResponseStream) -> (Vec<Value>, Response) {
    let mut notes = Vec::new();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            StreamEvent::Notification(n) => {
                assert_eq!(n.method, "notifications/progress");
                notes.push(serde_json::from_str(n.params.unwrap().get()).unwrap());
            }
            StreamEvent::Response(r) => return (notes, r),
            StreamEvent::ServerRequest(r) => panic!("unexpected server request {r:?}"),
        }
    }
    panic!("the stream ended without a response");
}

#[tokio::test]
async fn connects_initializes_lists_tools_and_echoes() {
    let (addr, server, client) = start().await;
    assert_eq!(client.revision(), ProtocolVersion::V2024_11_05);
    assert_eq!(client.server_info()["name"], "old-server");
    assert_eq!(
        client.initialize_result().protocol_version,
        ProtocolVersion::V2024_11_05
    );
    assert!(
        client
            .endpoint()
            .starts_with(&format!("http://{addr}/messages?sessionId="))
    );
    let reason = client.negotiated().reason;
    assert!(reason.contains("HTTP+SSE"), "{reason}");
    assert_eq!(client.sse_url(), format!("http://{addr}/sse"));
    assert_eq!(
        client.server_capabilities(),
        json!({"tools": {"listChanged": true}})
    );
    let debug = format!("{client:?}");
    assert!(
        debug.contains("HttpSseClient") && debug.contains(client.endpoint()),
        "{debug}"
    );

    // initialize offered 2024-11-05 with the client's info, then initialized.
    let received = server.received();
    assert_eq!(received[0]["method"], "initialize");
    assert_eq!(received[0]["params"]["protocolVersion"], "2024-11-05");
    assert_eq!(received[0]["params"]["clientInfo"]["name"], "mcp-negotiate");
    assert_eq!(received[1]["method"], "notifications/initialized");

    let tools = answer(&client, "tools/list", None).await.unwrap();
    let names: Vec<String> = result(&tools)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"echo".to_owned()), "{names:?}");

    echoes(&client, "hello").await;
    // An answered request is not cancelled when its stream is dropped.
    nothing_cancelled(&server).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn progress_reaches_the_right_request_before_its_response() {
    let (_addr, _server, client) = start().await;
    let progress = RequestOptions {
        progress: true,
        ..Default::default()
    };
    let a = client
        .request(
            "tools/call",
            call("countdown", json!({"n": 2})),
            progress.clone(),
        )
        .await
        .unwrap();
    let b = client
        .request("tools/call", call("countdown", json!({"n": 4})), progress)
        .await
        .unwrap();
    // Without a progress token the server sends none, and none leak in.
    let c = client
        .request(
            "tools/call",
            call("countdown", json!({"n": 3})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let ((notes_a, resp_a), (notes_b, resp_b), (notes_c, resp_c)) =
        tokio::join!(collect(a), collect(b), collect(c));
    assert_eq!(text_of(&resp_a), "liftoff");
    assert_eq!(text_of(&resp_b), "liftoff");
    assert_eq!(text_of(&resp_c), "liftoff");
    assert_eq!(notes_a.len(), 2, "{notes_a:?}");
    assert_eq!(notes_b.len(), 4, "{notes_b:?}");
    assert!(notes_c.is_empty(), "{notes_c:?}");
    // Each request's token is its own id, and progress arrives in order.
    let token_a = &notes_a[0]["progressToken"];
    let token_b = &notes_b[0]["progressToken"];
    assert_ne!(token_a, token_b);
    assert!(notes_a.iter().all(|n| &n["progressToken"] == token_a));
    assert!(notes_b.iter().all(|n| &n["progressToken"] == token_b));
    let steps: Vec<u64> = notes_b
        .iter()
        .map(|n| n["progress"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 2, 3, 4]);
}

#[tokio::test]
async fn concurrent_requests_get_their_own_responses() {
    let (_addr, _server, client) = start().await;
    // The slow one is sent first and answered last.
    let slow = client.request(
        "tools/call",
        call("echo", json!({"text": "slow", "delay_ms": 300})),
        RequestOptions::default(),
    );
    let fast = client.request(
        "tools/call",
        call("echo", json!({"text": "fast"})),
        RequestOptions::default(),
    );
    let (slow, fast) = tokio::join!(
        async { slow.await.unwrap().response().await.unwrap() },
        async { fast.await.unwrap().response().await.unwrap() },
    );
    assert_eq!(text_of(&slow), "slow");
    assert_eq!(text_of(&fast), "fast");
    assert_ne!(slow.id, fast.id);
}

struct Roots {
    calls: AtomicUsize,
}

#[async_trait]
impl InputHandler for Roots {
    async fn handle(
        &self,
        method: &str,
        _params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match method {
            "roots/list" => Ok(to_raw(&json!({"roots": [{"uri": "file:///work"}]})).unwrap()),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

#[tokio::test]
async fn server_requests_are_answered_through_the_input_handler() {
    let (addr, server) = old_server::spawn(Options::default()).await;
    let handler = Arc::new(Roots {
        calls: AtomicUsize::new(0),
    });
    let client = HttpSseClient::connect(config(addr, "/sse").with_input_handler(handler.clone()))
        .await
        .unwrap();
    let mut listener = client.listen(ListenFilter::default()).await.unwrap();
    let answer = answer(&client, "tools/call", call("ask", json!({})))
        .await
        .unwrap();
    // The tool returns what the client POSTed back to the server's request.
    let posted: Value = serde_json::from_str(&text_of(&answer)).unwrap();
    assert_eq!(posted["result"]["roots"][0]["uri"], "file:///work");
    assert!(posted["id"].as_str().unwrap().starts_with("srv-"));
    assert_eq!(handler.calls.load(Ordering::SeqCst), 1);
    // The answered request is shown to the listener too.
    let seen = heard(&mut listener).await;
    assert!(
        matches!(&seen, Message::Request(r) if r.method == "roots/list"),
        "{seen:?}"
    );
    assert!(
        server
            .received()
            .iter()
            .any(|m| m["result"]["roots"].is_array())
    );
}

#[tokio::test]
async fn unrelated_server_messages_go_to_the_one_listener() {
    let (_addr, _server, client) = start().await;
    let filter = ListenFilter {
        prompts_list_changed: true,
        ..Default::default()
    };
    let mut listener = client.listen(filter).await.unwrap();
    // One listener at a time.
    let second = client.listen(ListenFilter::default()).await.unwrap_err();
    assert!(
        matches!(second, TransportError::InvalidInput(_)),
        "{second}"
    );
    let done = answer(&client, "tools/call", call("announce", json!({})))
        .await
        .unwrap();
    assert_eq!(text_of(&done), "announced");
    let first = heard(&mut listener).await;
    // The filter selects prompts only: the tools' change notification is
    // left out, and a log message (not a change notification) is kept.
    assert_eq!(first.method(), Some("notifications/message"));
    // Dropping the listener frees the slot; the new one sees everything
    // (the change notification the filter above left out, this time).
    drop(listener);
    let mut all = client.listen(ListenFilter::default()).await.unwrap();
    answer(&client, "tools/call", call("announce", json!({})))
        .await
        .unwrap();
    let mut methods = Vec::new();
    for _ in 0..2 {
        let m = heard(&mut all).await;
        methods.push(m.method().unwrap().to_owned());
    }
    assert_eq!(
        methods,
        ["notifications/tools/list_changed", "notifications/message"]
    );
    // Closing ends the listener without an error.
    client.close().await.unwrap();
    let end = tokio::time::timeout(Duration::from_secs(5), all.next())
        .await
        .unwrap();
    assert!(end.is_none(), "{end:?}");
}

/// Connecting to something that is not an HTTP+SSE server fails quickly.
async fn refused(addr: SocketAddr, path: &str) -> TransportError {
    let started = Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        HttpSseClient::connect(config(addr, path)),
    )
    .await
    .expect("connect must not hang")
    .expect_err("connect must fail");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{path}: took {:?}",
        started.elapsed()
    );
    err
}

#[tokio::test]
async fn a_server_without_http_sse_is_refused_quickly_and_clearly() {
    let (addr, server) = old_server::spawn(Options::default()).await;
    let e404 = refused(addr, "/nowhere").await;
    assert!(
        matches!(e404, TransportError::Http { status: 404, .. }),
        "{e404}"
    );
    assert!(
        e404.to_string().contains("not an HTTP+SSE endpoint"),
        "{e404}"
    );
    // `/messages` is POST-only: GET is 405.
    let e405 = refused(addr, "/messages").await;
    assert!(
        matches!(e405, TransportError::Http { status: 405, .. }),
        "{e405}"
    );
    let json = refused(addr, "/json").await;
    assert!(
        matches!(
            &json,
            TransportError::PeerMisbehaved(Misbehaviour::WrongContentType {
                got: Some(got),
                expected: "text/event-stream",
                ..
            }) if got.starts_with("application/json")
        ),
        "{json}"
    );
    let first = refused(addr, "/no-endpoint").await;
    assert!(
        matches!(
            first,
            TransportError::PeerMisbehaved(Misbehaviour::FirstEventNotEndpoint { .. })
        ),
        "{first}"
    );
    assert!(first.to_string().contains("not `endpoint`"), "{first}");
    let silent = refused(addr, "/silent").await;
    assert!(
        matches!(
            silent,
            TransportError::PeerMisbehaved(Misbehaviour::NoEndpointEvent {
                waited: Some(_),
                ..
            })
        ),
        "{silent}"
    );
    assert!(
        silent.to_string().contains("no `endpoint` event"),
        "{silent}"
    );
    // Nothing was ever POSTed, and no stream is left open.
    assert!(server.received().is_empty());
    eventually("the refused streams to be dropped", || {
        server.open_streams() == 0
    })
    .await;
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused() {
    let (addr, server) = old_server::spawn(Options::default()).await;
    let err = refused(addr, "/evil").await;
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::EndpointOriginMismatch { origin, .. })
                if origin == "http://evil.example"
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("http://evil.example") && text.contains("origin"),
        "{text}"
    );
    assert!(server.received().is_empty());
}

#[tokio::test]
async fn the_server_closing_the_stream_fails_in_flight_and_later_requests() {
    let (_addr, server, client) = start().await;
    let in_flight = client
        .request(
            "tools/call",
            call("echo", json!({"text": "never", "delay_ms": 2000})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    // `hangup` ends the SSE stream without answering.
    let hangup = client
        .request(
            "tools/call",
            call("hangup", json!({})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    let err = in_flight.response().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "{err}");
    // In flight: lost, and said so the typed way (no resumption).
    let TransportError::ResumeFailed(ResumeFailure::NotResumable { revision, why, .. }) = &err
    else {
        panic!("{err}")
    };
    assert_eq!(revision.as_str(), "2024-11-05");
    assert!(why.contains("closed the HTTP+SSE stream"), "{why}");
    assert!(err.to_string().contains("not resumable"), "{err}");
    assert!(matches!(
        hangup.response().await.unwrap_err(),
        TransportError::ResumeFailed(ResumeFailure::NotResumable { .. })
    ));
    let later = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(later, TransportError::Connection(_)), "{later}");
    let note = Notification::new::<()>("notifications/roots/list_changed", None).unwrap();
    assert!(matches!(
        client.notify(note).await.unwrap_err(),
        TransportError::Connection(_)
    ));
    assert!(matches!(
        client.end_reason(),
        Some(TransportError::Connection(_))
    ));
    // Nothing more was POSTed after the stream ended (no cancellations).
    let methods = server.received_methods();
    assert_eq!(methods.last().map(String::as_str), Some("tools/call"));
}

/// A POST the server refuses with a JSON-RPC error body is an HTTP error
/// carrying that error, read whole though it is long (20 KiB); the
/// connection goes on.
#[tokio::test]
async fn a_refused_post_is_an_http_error_carrying_its_rpc_error() {
    let (_addr, server, client) = start().await;
    let err = client
        .request("test/refuse", None, RequestOptions::default())
        .await
        .map(|_| ())
        .unwrap_err();
    let TransportError::Http {
        status: 400,
        rpc: Some(e),
        ..
    } = &err
    else {
        panic!("{:.300}", format!("{err:?}"))
    };
    assert_eq!(e.code, -32602);
    assert_eq!(e.message.len(), "refused: ".len() + old_server::REFUSAL_PAD);
    echoes(&client, "on").await;
    // The server refused the request: there is nothing to cancel.
    nothing_cancelled(&server).await;
}

/// A message the server sends in the same chunk as the `endpoint` event
/// is read (queued behind it) and reading goes on: `initialize` is
/// answered.
#[tokio::test]
async fn a_message_in_the_endpoint_events_chunk_is_read_and_reading_goes_on() {
    let (addr, _server) = old_server::spawn(Options {
        greeting: Some(json!({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": "hello"}})),
        ..Default::default()
    })
    .await;
    let client = HttpSseClient::connect(
        config(addr, "/sse").with_request_timeout(Some(Duration::from_secs(3))),
    )
    .await
    .unwrap();
    echoes(&client, "on").await;
}

/// An event over `max_event_bytes` ends the connection with a limit error
/// (2024-11-05 has no resumption), after what was decoded before it in the
/// same chunk was delivered.
#[tokio::test]
async fn an_event_over_the_bound_ends_the_connection_after_what_came_before() {
    let (addr, _server) = old_server::spawn(Options::default()).await;
    let mut c = config(addr, "/sse");
    c.max_event_bytes = 4096;
    let client = HttpSseClient::connect(c).await.unwrap();
    let mut listener = client.listen(ListenFilter::default()).await.unwrap();
    let err = failed_call(
        &client,
        "oversize",
        json!({"bytes": 8192}),
        Duration::from_secs(3),
    )
    .await;
    assert!(matches!(err, TransportError::Limit(_)), "{err}");
    let before = heard(&mut listener).await;
    assert_eq!(before.method(), Some("notifications/message"));
    assert!(matches!(
        client.end_reason(),
        Some(TransportError::Limit(_))
    ));
}

#[tokio::test]
async fn close_drops_the_stream_and_later_calls_are_closed() {
    let (_addr, server, client) = start().await;
    assert_eq!(server.open_streams(), 1);
    let in_flight = client
        .request(
            "tools/call",
            call("echo", json!({"text": "x", "delay_ms": 2000})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    client.close().await.unwrap();
    assert!(matches!(
        in_flight.response().await.unwrap_err(),
        TransportError::Closed
    ));
    let err = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Closed), "{err}");
    let note = Notification::new::<()>("notifications/roots/list_changed", None).unwrap();
    assert!(matches!(
        client.notify(note).await.unwrap_err(),
        TransportError::Closed
    ));
    assert!(matches!(
        client.listen(ListenFilter::default()).await.unwrap_err(),
        TransportError::Closed
    ));
    // Closing twice is fine; the server sees the stream go away.
    client.close().await.unwrap();
    eventually("the SSE stream to be dropped", || {
        server.open_streams() == 0
    })
    .await;
}

#[tokio::test]
async fn dropping_the_last_handle_drops_the_stream() {
    let (_addr, server, client) = start().await;
    let clone = client.clone();
    drop(client);
    assert_eq!(server.open_streams(), 1);
    drop(clone);
    eventually("the SSE stream to be dropped", || {
        server.open_streams() == 0
    })
    .await;
}

#[tokio::test]
async fn dropping_a_request_stream_sends_cancelled_and_a_timeout_too() {
    let (_addr, server, client) = start().await;
    let mut listener = client.listen(ListenFilter::default()).await.unwrap();
    let stream = client
        .request(
            "tools/call",
            call("echo", json!({"text": "x", "delay_ms": 1000})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    drop(stream);
    eventually("notifications/cancelled", || {
        server
            .received_methods()
            .contains(&"notifications/cancelled".to_owned())
    })
    .await;
    let cancelled = server
        .received()
        .into_iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .unwrap();
    let call_id = server
        .received()
        .into_iter()
        .find(|m| m["method"] == "tools/call")
        .unwrap()["id"]
        .clone();
    assert_eq!(cancelled["params"]["requestId"], call_id);
    // This test server answers anyway: the dropped request was forgotten,
    // so its late response is one to no request, the listener's.
    let late = heard(&mut listener).await;
    let Message::Response(late) = late else {
        panic!("{late:?}")
    };
    assert_eq!(serde_json::to_value(&late.id).unwrap(), call_id);

    let err = failed_call(
        &client,
        "echo",
        json!({"text": "y", "delay_ms": 1000}),
        Duration::from_millis(100),
    )
    .await;
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
    eventually("a second notifications/cancelled", || {
        server
            .received_methods()
            .iter()
            .filter(|m| *m == "notifications/cancelled")
            .count()
            == 2
    })
    .await;
    // The connection is still usable.
    echoes(&client, "z").await;
}

#[tokio::test]
async fn a_counter_offer_outside_the_clients_set_is_a_negotiation_error() {
    let (addr, server) = old_server::spawn(Options {
        protocol_version: "2025-03-26".into(),
        ..Default::default()
    })
    .await;
    let err = HttpSseClient::connect(config(addr, "/sse"))
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Negotiation(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("2025-03-26") && text.contains("2024-11-05"),
        "{text}"
    );
    // "it SHOULD disconnect": no initialized, and the stream is dropped.
    assert_eq!(server.received_methods(), ["initialize"]);
    eventually("the SSE stream to be dropped", || {
        server.open_streams() == 0
    })
    .await;

    // A counter-offer inside the set is accepted.
    let client = HttpSseClient::connect(config(addr, "/sse").with_protocol_versions(vec![
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
    ]))
    .await
    .unwrap();
    assert_eq!(client.revision(), ProtocolVersion::V2025_03_26);
}

#[tokio::test]
async fn an_unusable_configuration_sends_nothing() {
    let (addr, server) = old_server::spawn(Options::default()).await;
    type Check = fn(&ConfigError) -> bool;
    let cases: [(HttpSseConfig, Check); 4] = [
        (config(addr, "/sse").with_protocol_versions(vec![]), |e| {
            matches!(e, ConfigError::NoVersions { .. })
        }),
        (
            config(addr, "/sse").with_protocol_versions(vec![ProtocolVersion::V2026_07_28]),
            |e| matches!(e, ConfigError::UnusableVersion { version, .. } if *version == ProtocolVersion::V2026_07_28),
        ),
        (HttpSseConfig::new("not a url"), |e| {
            matches!(e, ConfigError::InvalidUrl { .. })
        }),
        (HttpSseConfig::new(format!("ftp://{addr}/sse")), |e| {
            matches!(e, ConfigError::InvalidUrl { .. })
        }),
    ];
    for (cfg, expected) in cases {
        let err = HttpSseClient::connect(cfg).await.unwrap_err();
        assert!(
            matches!(&err, TransportError::Config(e) if expected(e)),
            "{err}"
        );
    }
    assert_eq!(server.open_streams(), 0);
}

#[tokio::test]
async fn an_old_server_has_no_streamable_http_endpoint() {
    let (addr, _server) = old_server::spawn(Options::default()).await;
    let http = reqwest::Client::new();
    let status = http
        .post(format!("http://{addr}/"))
        .body("{}")
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 405);
    let status = http
        .post(format!("http://{addr}/sse"))
        .body("{}")
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 405);
}
