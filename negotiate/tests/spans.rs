//! Tracing spans: every HTTP request to `MultiServer` runs in an
//! `mcp.request` span (the same fields in both engines), and what the
//! handler logs — in its own task — is inside it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::TestServer;
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

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

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
        conn.request("tools/call", Some(params), RequestOptions::default())
            .await
            .unwrap()
            .response()
            .await
            .unwrap();
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
