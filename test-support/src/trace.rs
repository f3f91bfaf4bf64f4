//! Tracing layers for tests: [`SseEnds`] collects how each SSE stream
//! ended; [`Logged`] collects every event's level and text.
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

/// A new `L` installed (over a registry) as the thread's default
/// subscriber until the guard drops.
fn install<L>() -> (L, tracing::subscriber::DefaultGuard)
where
    L: Layer<tracing_subscriber::Registry> + Clone + Default + Send + Sync + 'static,
{
    let layer = L::default();
    let guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(layer.clone()));
    (layer, guard)
}

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
        install()
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

/// Every event logged while installed: its level and its text (the
/// message, then each other field as ` name=value`).
#[derive(Clone, Default)]
pub struct Logged(Arc<Mutex<Vec<(tracing::Level, String)>>>);

impl Logged {
    /// Installs a new collector as the thread's default subscriber until
    /// the guard drops.
    pub fn install() -> (Self, tracing::subscriber::DefaultGuard) {
        install()
    }

    /// The text of each event at `level` so far, in order, emptied.
    pub fn take(&self, level: tracing::Level) -> Vec<String> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (hit, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(l, _)| *l == level);
        *all = rest;
        hit.into_iter().map(|(_, text)| text).collect()
    }
}

struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for Logged {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut text = Text(String::new());
        event.record(&mut text);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((*event.metadata().level(), text.0));
    }
}
