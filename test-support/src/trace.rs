//! [`SseEnds`]: a tracing layer that collects how each SSE stream ended.
//!
//! Every engine records the end of a response or GET stream with
//! `mcp_http_edge::trace::record_sse_end`, which logs "SSE connection
//! ended" with `end` (`finished`, `closed`, `detached`) and `events` (the
//! message events written). A test installs this layer (on a
//! current-thread runtime, so every stream runs under the test's
//! subscriber) and reads what each stream recorded.

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// How one stream ended: `(end, events)`.
pub type Ended = (String, u64);

/// `(end, events)` as [`SseEnds::take`] returns it.
pub fn ended(end: &str, events: u64) -> Ended {
    (end.to_owned(), events)
}

/// Collects the `end` and `events` of every event that carries both.
#[derive(Clone, Default)]
pub struct SseEnds(Arc<Mutex<Vec<Ended>>>);

impl SseEnds {
    /// Installs a new collector as the thread's default subscriber until
    /// the guard drops.
    pub fn install() -> (Self, tracing::subscriber::DefaultGuard) {
        let ends = Self::default();
        let guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(ends.clone()));
        (ends, guard)
    }

    /// The ends recorded so far, in order, emptied.
    pub fn take(&self) -> Vec<Ended> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[derive(Default)]
struct EndFields {
    end: Option<String>,
    events: Option<u64>,
}

impl Visit for EndFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "end" {
            self.end = Some(value.to_owned());
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "events" {
            self.events = Some(value);
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber> Layer<S> for SseEnds {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = EndFields::default();
        event.record(&mut f);
        if let (Some(end), Some(events)) = (f.end, f.events) {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((end, events));
        }
    }
}
