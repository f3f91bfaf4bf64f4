//! Tracing spans: every HTTP request to `MultiServer` runs in an
//! `mcp.request` span (the same fields in both engines), and what the
//! handler logs — in its own task — is inside it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_rev_2025_11_25::PollingExt;
use mcp_test_support::TestServer;
use mcp_test_support::client::answer;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{Request, to_raw};
use mcp_transport_core::transport::{RequestOptions, Transport};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Clone, Debug, Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// An event: its fields, and its spans from the root with their fields.
#[derive(Clone, Debug)]
struct Captured {
    fields: Fields,
    spans: Vec<(String, Fields)>,
}

/// Every event, and every closed span with its final fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>, Arc<Mutex<Vec<ClosedSpan>>>);

/// A span when it closed: its name, its fields, its parents (nearest
/// first) with their fields.
#[derive(Clone, Debug)]
struct ClosedSpan {
    name: String,
    fields: Fields,
    parents: Vec<(String, Fields)>,
}

impl ClosedSpan {
    /// The field `name` of the nearest parent called `parent`.
    fn parent_field(&self, parent: &str, name: &str) -> Option<&str> {
        let (_, f) = self.parents.iter().find(|(n, _)| n == parent)?;
        f.0.get(name).map(String::as_str)
    }

    fn has_parent(&self, parent: &str) -> bool {
        self.parents.iter().any(|(n, _)| n == parent)
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut f = Fields::default();
        attrs.record(&mut f);
        ctx.span(id).unwrap().extensions_mut().insert(f);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(f) = ctx.span(id).unwrap().extensions_mut().get_mut::<Fields>() {
            values.record(f);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let spans = ctx
            .event_scope(event)
            .map(|scope| {
                scope
                    .from_root()
                    .map(|s| {
                        let f = s.extensions().get::<Fields>().cloned().unwrap_or_default();
                        (s.name().to_owned(), f)
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.0.lock().unwrap().push(Captured { fields, spans });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        let fields = span
            .extensions()
            .get::<Fields>()
            .cloned()
            .unwrap_or_default();
        let parents = span
            .scope()
            .skip(1)
            .map(|s| {
                let f = s.extensions().get::<Fields>().cloned().unwrap_or_default();
                (s.name().to_owned(), f)
            })
            .collect();
        self.1.lock().unwrap().push(ClosedSpan {
            name: span.name().to_owned(),
            fields,
            parents,
        });
    }
}

/// Logs `handler ran` with the tool's name, then answers.
struct Logs;

#[async_trait]
impl Handler for Logs {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "logs", "version": "1" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, _cx: RequestContext) -> Outcome {
        tracing::info!(method = %request.method, "handler ran");
        Outcome::json(&json!({ "content": [] }))
    }
}

#[tokio::test]
async fn the_handlers_events_are_inside_the_request_span_in_both_engines() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let server = MultiServer::new(Arc::new(Logs), MultiConfig::all());
    let http = TestServer::serve(server.route("/mcp")).await;
    for (revision, era) in [(V::V2025_11_25, "Legacy"), (V::V2026_07_28, "Modern")] {
        capture.0.lock().unwrap().clear();
        let conn = connect(NegotiateConfig::new(http.url()).with_revisions(vec![revision.clone()]))
            .await
            .unwrap();
        let params = to_raw(&json!({ "name": "x", "arguments": {} })).unwrap();
        answer(&conn, "tools/call", Some(params)).await.unwrap();
        conn.close().await.unwrap();
        let events = capture.0.lock().unwrap().clone();
        let ran = events
            .iter()
            .find(|e| {
                e.fields
                    .0
                    .get("message")
                    .is_some_and(|m| m == "handler ran")
            })
            .unwrap_or_else(|| panic!("{revision}: no handler event in {events:#?}"));
        let (name, span) = ran
            .spans
            .iter()
            .find(|(n, _)| n == "mcp.request")
            .unwrap_or_else(|| {
                panic!("{revision}: the handler's event is in no request span: {ran:#?}")
            });
        assert_eq!(name, "mcp.request");
        let f = &span.0;
        assert_eq!(
            f.get("http.method").map(String::as_str),
            Some("POST"),
            "{f:?}"
        );
        assert_eq!(
            f.get("rpc.method").map(String::as_str),
            Some("tools/call"),
            "{f:?}"
        );
        assert!(f.contains_key("rpc.id"), "{f:?}");
        assert_eq!(f.get("mcp.era").map(String::as_str), Some(era), "{f:?}");
        assert_eq!(
            f.get("mcp.protocol_version").map(String::as_str),
            Some(revision.as_str()),
            "{f:?}"
        );
        if era == "Legacy" {
            assert!(f.contains_key("mcp.session_id"), "{f:?}");
        }
    }
}

/// Sends one progress notification (so a 2026-07-28 answer is a stream,
/// not a single event), then answers.
struct Progresses;

#[async_trait]
impl Handler for Progresses {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            capabilities: json!({ "tools": { "listChanged": true } }),
            ..Logs.describe()
        }
    }

    async fn handle(&self, _request: Request, cx: RequestContext) -> Outcome {
        cx.progress(1.0, None, None).await.unwrap();
        Outcome::json(&json!({ "content": [] }))
    }
}

fn field<'a>(span: &'a ClosedSpan, name: &str) -> Option<&'a str> {
    span.fields.0.get(name).map(String::as_str)
}

/// The server's `mcp.stream` / `mcp.resume` spans (one per SSE connection,
/// children of `mcp.request`, with how each ended) and the clients'
/// `mcp.client.request` / `mcp.client.resume` spans, in both engines. The
/// 2025-11-25 server closes every connection after its priming event, so
/// the answer comes on a resume.
#[tokio::test]
async fn streams_resumes_and_client_requests_have_spans() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let server = MultiServer::new(
        Arc::new(Progresses),
        MultiConfig {
            revisions: vec![V::V2025_11_25, V::V2026_07_28],
            legacy: mcp_negotiate::server::legacy_config()
                .with_disconnect(mcp_rev_2025_11_25::DisconnectPolicy::AfterPriming)
                .with_retry_ms(5),
            modern: mcp_rev_2026_07_28::server::ModernConfig::default(),
            running: Default::default(),
        },
    );
    let http = TestServer::serve(server.route("/mcp")).await;
    for revision in [V::V2025_11_25, V::V2026_07_28] {
        capture.1.lock().unwrap().clear();
        let conn = connect(NegotiateConfig::new(http.url()).with_revisions(vec![revision.clone()]))
            .await
            .unwrap();
        let params = to_raw(&json!({ "name": "x", "arguments": {} })).unwrap();
        let options = RequestOptions {
            progress: true,
            ..RequestOptions::default()
        };
        conn.request("tools/call", Some(params), options)
            .await
            .unwrap()
            .response()
            .await
            .unwrap();
        conn.close().await.unwrap();
        drop(conn);
        let spans = capture.1.lock().unwrap().clone();
        let named = |name: &str| -> Vec<ClosedSpan> {
            spans.iter().filter(|s| s.name == name).cloned().collect()
        };
        let call = named("mcp.client.request")
            .into_iter()
            .find(|s| field(s, "rpc.method") == Some("tools/call"))
            .unwrap_or_else(|| panic!("{revision}: no client span of the call in {spans:#?}"));
        assert_eq!(field(&call, "http.status"), Some("200"), "{call:?}");
        assert_eq!(
            field(&call, "mcp.protocol_version"),
            Some(revision.as_str()),
            "{call:?}"
        );
        assert!(field(&call, "rpc.id").is_some(), "{call:?}");
        let streams = named("mcp.stream");
        if revision == V::V2025_11_25 {
            // The POST's stream: closed after its priming event.
            let first = streams
                .iter()
                .find(|s| s.parent_field("mcp.request", "rpc.method") == Some("tools/call"))
                .unwrap_or_else(|| panic!("no mcp.stream of the call in {spans:#?}"));
            assert_eq!(field(first, "sse.end"), Some("closed"), "{first:?}");
            assert_eq!(field(first, "sse.events"), Some("0"), "{first:?}");
            assert!(field(first, "mcp.session_id").is_some(), "{first:?}");
            // The answer came on resumes of that stream; the last one
            // finished it with the progress and the response.
            let resumes: Vec<ClosedSpan> = named("mcp.resume")
                .into_iter()
                .filter(|s| field(s, "mcp.stream_id") == field(first, "mcp.stream_id"))
                .collect();
            assert!(
                resumes.iter().all(|s| s.has_parent("mcp.request")),
                "{resumes:#?}"
            );
            assert_eq!(
                resumes.last().and_then(|s| field(s, "sse.end")),
                Some("finished"),
                "{resumes:#?}"
            );
            let delivered: u64 = resumes
                .iter()
                .map(|s| field(s, "sse.events").unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(delivered, 2, "progress and response: {resumes:#?}");
            let client_resumes: Vec<ClosedSpan> = named("mcp.client.resume")
                .into_iter()
                .filter(|s| {
                    s.parent_field("mcp.client.request", "rpc.method") == Some("tools/call")
                })
                .collect();
            assert_eq!(client_resumes.len(), resumes.len(), "{spans:#?}");
            assert!(
                client_resumes
                    .iter()
                    .all(|s| field(s, "http.status") == Some("200")
                        && field(s, "mcp.last_event_id").is_some()),
                "{client_resumes:#?}"
            );
        } else {
            let stream = streams
                .iter()
                .find(|s| field(s, "rpc.id") == field(&call, "rpc.id"))
                .unwrap_or_else(|| panic!("no mcp.stream of the call in {spans:#?}"));
            assert_eq!(field(stream, "sse.end"), Some("finished"), "{stream:?}");
            assert_eq!(field(stream, "sse.events"), Some("2"), "{stream:?}");
            assert!(named("mcp.resume").is_empty(), "{spans:#?}");
            assert!(stream.has_parent("mcp.request"), "{stream:?}");
        }
    }

    // A 2026-07-28 `subscriptions/listen` stream the client closes: its
    // span ends `detached` after the acknowledgement.
    let conn = connect(NegotiateConfig::new(http.url()).with_revisions(vec![V::V2026_07_28]))
        .await
        .unwrap();
    capture.1.lock().unwrap().clear();
    let filter = mcp_transport_core::transport::ListenFilter {
        tools_list_changed: true,
        ..Default::default()
    };
    let messages = conn.listen(filter).await.unwrap();
    drop(messages);
    let listen = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let found = capture.1.lock().unwrap().iter().find_map(|s| {
                (s.name == "mcp.stream"
                    && s.parent_field("mcp.request", "rpc.method") == Some("subscriptions/listen"))
                .then(|| s.clone())
            });
            if let Some(s) = found {
                return s;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the listen stream's span closed");
    assert_eq!(field(&listen, "sse.end"), Some("detached"), "{listen:?}");
    assert_eq!(field(&listen, "sse.events"), Some("1"), "{listen:?}");
}

/// The HTTP+SSE (2024-11-05) client's POST of a request runs in its
/// `mcp.client.request` span too.
#[tokio::test]
async fn the_http_sse_client_posts_in_a_request_span() {
    use mcp_test_support::http_sse_server as old_server;
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let (addr, _old) = old_server::spawn(old_server::Options::default()).await;
    let conn = connect(NegotiateConfig::new(format!("http://{addr}/sse")))
        .await
        .unwrap();
    assert_eq!(conn.negotiated().revision, V::V2024_11_05);
    let params = to_raw(&json!({ "name": "echo", "arguments": { "text": "a" } })).unwrap();
    answer(&conn, "tools/call", Some(params)).await.unwrap();
    conn.close().await.unwrap();
    drop(conn);
    let spans = capture.1.lock().unwrap().clone();
    let call = spans
        .iter()
        .find(|s| s.name == "mcp.client.request" && field(s, "rpc.method") == Some("tools/call"))
        .unwrap_or_else(|| panic!("no client span of the call in {spans:#?}"));
    assert_eq!(field(call, "http.status"), Some("202"), "{call:?}");
    assert_eq!(
        field(call, "mcp.protocol_version"),
        Some("2024-11-05"),
        "{call:?}"
    );
}

/// A POST's span names its message's method and id, after any leading
/// whitespace; a batch's, `batch` (its messages each have their own).
#[tokio::test]
async fn a_posts_span_names_its_method_or_batch() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let server = MultiServer::new(Arc::new(Logs), MultiConfig::all());
    for (body, method, id) in [
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "batch",
            None,
        ),
        (
            " \n[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            "batch",
            None,
        ),
        (
            " \t{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}",
            "tools/list",
            Some("7"),
        ),
    ] {
        capture.1.lock().unwrap().clear();
        let req = http::Request::post("/")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body))
            .unwrap();
        drop(server.handle(req).await);
        let spans = capture.1.lock().unwrap().clone();
        let request = spans
            .iter()
            .find(|s| s.name == "mcp.request")
            .unwrap_or_else(|| panic!("no request span for {body:?}: {spans:#?}"));
        assert_eq!(field(request, "rpc.method"), Some(method), "{body:?}");
        assert_eq!(field(request, "rpc.id"), id, "{body:?}");
    }
}
