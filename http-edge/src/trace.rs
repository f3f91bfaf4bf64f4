//! The tracing vocabulary every engine and client of the workspace shares:
//! span names and field names are the same whichever revision runs, so one
//! filter (`RUST_LOG=mcp=debug`) or one OpenTelemetry mapping covers all.
//!
//! Servers:
//!
//! | span | when | fields |
//! | --- | --- | --- |
//! | `mcp.request` | one HTTP request to the endpoint (`mcp-negotiate`) | `http.method`, `http.status`, `mcp.era`, `mcp.session_id`, `mcp.protocol_version`, `mcp.last_event_id`, `rpc.method`, `rpc.id` |
//! | `mcp.stream` | one SSE connection that starts a stream (a POST answered as SSE, the standalone GET stream, a 2026-07-28 response or `subscriptions/listen` stream) | `mcp.session_id`, `mcp.stream_id`, `mcp.cursor`, `rpc.id`, then [`SSE_EVENTS`] and [`SSE_END`] |
//! | `mcp.resume` | one SSE connection that resumes a stream (`GET` + `Last-Event-ID`) | as `mcp.stream` |
//!
//! Clients:
//!
//! | span | when | fields |
//! | --- | --- | --- |
//! | `mcp.client.request` | one JSON-RPC request sent, until its answer | `rpc.method`, `rpc.id`, `mcp.protocol_version`, `mcp.session_id` |
//! | `mcp.client.resume` | one reconnection of a stream (`GET` + `Last-Event-ID`) | `mcp.session_id`, `mcp.last_event_id`, `mcp.attempt`, `http.status` |
//!
//! Stream spans are children of the request span that opened them, so a
//! log line written while a stream is sent names the HTTP request, the
//! JSON-RPC request and the stream.

use std::fmt;

/// Field recorded when a stream connection ends: message events written.
pub const SSE_EVENTS: &str = "sse.events";
/// Field recorded when a stream connection ends: how ([`SseEnd`]).
pub const SSE_END: &str = "sse.end";

/// How a server's SSE connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseEnd {
    /// The stream is complete: its last event (the response) went out.
    Finished,
    /// The server closed the connection before the stream's end (a
    /// SEP-1699 policy, `close_sse_stream`, a takeover, shutdown); the
    /// client resumes.
    Closed,
    /// The client went away first (on 2026-07-28 this cancels the
    /// request; on a session revision the request goes on).
    Detached,
}

impl SseEnd {
    /// The value recorded in [`SSE_END`].
    pub fn as_str(self) -> &'static str {
        match self {
            SseEnd::Finished => "finished",
            SseEnd::Closed => "closed",
            SseEnd::Detached => "detached",
        }
    }
}

impl fmt::Display for SseEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Records the end of a stream connection in its span and logs it (at
/// debug, inside the span).
pub fn record_sse_end(span: &tracing::Span, events: u64, how: SseEnd) {
    span.record(SSE_EVENTS, events);
    span.record(SSE_END, how.as_str());
    tracing::debug!(parent: span, events, end = how.as_str(), "SSE connection ended");
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, SubscriberExt};

    use super::*;

    /// Every field recorded on a span and logged in an event, as
    /// `name=value`, in order.
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<Vec<String>>>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            self.0
                .lock()
                .unwrap()
                .push(format!("{}={value:?}", field.name()));
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Fields {
        fn on_record(
            &self,
            _: &tracing::span::Id,
            values: &tracing::span::Record<'_>,
            _: Context<'_, S>,
        ) {
            values.record(&mut self.clone());
        }
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let level = event.metadata().level();
            self.0.lock().unwrap().push(format!("level={level}"));
            event.record(&mut self.clone());
        }
    }

    #[test]
    fn the_end_of_a_stream_is_recorded_in_its_span_and_logged() {
        let fields = Fields::default();
        let subscriber = tracing_subscriber::registry().with(fields.clone());
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::debug_span!(
                "mcp.stream",
                sse.events = tracing::field::Empty,
                sse.end = tracing::field::Empty
            );
            record_sse_end(&span, 3, SseEnd::Closed);
        });
        assert_eq!(
            *fields.0.lock().unwrap(),
            [
                "sse.events=3",
                r#"sse.end="closed""#,
                "level=DEBUG",
                r#"message=SSE connection ended"#,
                "events=3",
                r#"end="closed""#,
            ]
        );
    }

    #[test]
    fn each_end_has_its_name() {
        let names = [SseEnd::Finished, SseEnd::Closed, SseEnd::Detached].map(|e| e.to_string());
        assert_eq!(names, ["finished", "closed", "detached"]);
    }
}
