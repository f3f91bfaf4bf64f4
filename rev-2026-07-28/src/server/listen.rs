//! `subscriptions/listen`: long-lived streams of change notifications
//! (*Subscriptions*; *Streamable HTTP*, "Receiving Messages").
//!
//! * The answer is an SSE stream whose first event is
//!   `notifications/subscriptions/acknowledged` carrying the filter the
//!   server honours: "the subset the server agreed to honor. Notification
//!   types the server does not support are omitted." Support comes from the
//!   handler's capabilities: `tools.listChanged`, `prompts.listChanged`,
//!   `resources.listChanged`, `resources.subscribe` (for
//!   `resourceSubscriptions`).
//! * [`ModernServer::publish`](super::ModernServer::publish) delivers a
//!   change notification to every stream whose honoured filter asked for
//!   it ("The server MUST NOT send notification types the client has not
//!   explicitly requested"), tagged with
//!   `_meta["io.modelcontextprotocol/subscriptionId"]` = the JSON-RPC id of
//!   the listen request ("The value is the JSON-RPC ID of the
//!   `subscriptions/listen` request"). `notifications/resources/updated`
//!   goes to streams that subscribed to its `uri`, or to a URI it is a
//!   sub-resource of (the schema: the URI "might be a sub-resource of the one
//!   that the client actually subscribed to"): the subscribed URI followed
//!   by `/`, `?` or `#`, or ending in `/`. Request-scoped notifications
//!   (progress, log messages) never go here.
//! * With the Tasks extension, `notifications.taskIds` asks for
//!   `notifications/tasks` of those tasks: `-32021` when the request does
//!   not declare the extension; the acknowledgment lists the ids visible
//!   to the request's principal.
//! * Keep-alive comments every [`keepalive`](super::ModernConfig::keepalive).
//! * The client ends a subscription by closing the stream; its registry
//!   entry is removed when the body is dropped.
//! * [`ModernServer::end_listeners`](super::ModernServer::end_listeners)
//!   ends every subscription gracefully: queued notifications are
//!   delivered, then a `subscriptions/listen` result ("Graceful Closure"),
//!   then the stream closes.
//! * Bounds: at most `max_listen_streams` streams (one more gets 503) and
//!   `listen_queue` notifications queued per stream. A stream whose queue
//!   is full when a notification is published is ended: what was queued is
//!   delivered, then a JSON-RPC error response to the listen request says
//!   that notifications were lost and the client must re-subscribe and
//!   re-fetch. Notifications are never dropped silently.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::StatusCode;
use mcp_transport_core::jsonrpc::{self, ErrorObject, Message, Notification, RequestId, to_raw};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tracing::Instrument;

use super::Shared;
use super::reply::{self, HttpResponse};
use super::result;
use super::validate::{Params, Rejection};
use crate::headers::META_SUBSCRIPTION_ID;

/// The `notifications` filter of a listen request (and of its
/// acknowledgment).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Filter {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource_subscriptions: Option<Vec<String>>,
    /// The Tasks extension's `taskIds` (*Tasks*, "Task Status
    /// Notifications"): `notifications/tasks` for these tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task_ids: Option<Vec<String>>,
}

fn flag(caps: &Value, feature: &str, key: &str) -> bool {
    caps.get(feature)
        .and_then(|f| f.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

impl Filter {
    /// What the server honours of `self`, given its capabilities.
    pub fn honoured(&self, caps: &Value) -> Filter {
        Filter {
            tools_list_changed: self.tools_list_changed && flag(caps, "tools", "listChanged"),
            prompts_list_changed: self.prompts_list_changed && flag(caps, "prompts", "listChanged"),
            resources_list_changed: self.resources_list_changed
                && flag(caps, "resources", "listChanged"),
            resource_subscriptions: self
                .resource_subscriptions
                .clone()
                .filter(|_| flag(caps, "resources", "subscribe")),
            // Decided with the task store (see `open`).
            task_ids: None,
        }
    }

    /// Whether this filter asked for `n`.
    pub fn wants(&self, n: &Notification) -> bool {
        match n.method.as_str() {
            "notifications/tools/list_changed" => self.tools_list_changed,
            "notifications/prompts/list_changed" => self.prompts_list_changed,
            "notifications/resources/list_changed" => self.resources_list_changed,
            "notifications/resources/updated" => {
                let Some(subs) = &self.resource_subscriptions else {
                    return false;
                };
                let uri = n
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned));
                uri.is_some_and(|uri| subs.iter().any(|s| covers(s, &uri)))
            }
            "notifications/tasks" => {
                let Some(ids) = &self.task_ids else {
                    return false;
                };
                let id = n
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .and_then(|p| p.get("taskId").and_then(Value::as_str).map(str::to_owned));
                id.is_some_and(|id| ids.contains(&id))
            }
            _ => false,
        }
    }
}

/// Whether a subscription to `sub` covers an update of `uri`: the same URI,
/// or a sub-resource of it.
fn covers(sub: &str, uri: &str) -> bool {
    match uri.strip_prefix(sub) {
        Some("") => true,
        Some(rest) => sub.ends_with('/') || rest.starts_with(['/', '?', '#']),
        None => false,
    }
}

/// Reads `params.notifications` (required: "The `notifications` field is
/// required", SEP-2575).
pub(crate) fn read_filter(params: &Params) -> Result<Filter, Rejection> {
    let Some(raw) = params.get("notifications") else {
        return Err(Rejection::params(
            "Invalid params: subscriptions/listen requires params.notifications (the notification filter, e.g. {\"toolsListChanged\": true})",
        ));
    };
    serde_json::from_str(raw).map_err(|e| {
        Rejection::params(format!(
            "Invalid params: params.notifications is not a valid filter: {e}"
        ))
    })
}

/// `notification` with `_meta.subscriptionId` = `id` added to its params.
fn tagged(n: &Notification, id: &RequestId) -> String {
    type Members = BTreeMap<String, Box<RawValue>>;
    let mut params: Members = n
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or_default();
    let mut meta: Members = params
        .get("_meta")
        .and_then(|m| serde_json::from_str(m.get()).ok())
        .unwrap_or_default();
    if let Ok(id) = to_raw(id) {
        meta.insert(META_SUBSCRIPTION_ID.to_owned(), id);
    }
    if let Ok(meta) = to_raw(&meta) {
        params.insert("_meta".to_owned(), meta);
    }
    Message::Notification(Notification {
        method: n.method.clone(),
        params: to_raw(&params).ok(),
    })
    .to_json()
}

const OPEN: u8 = 0;
const ENDED: u8 = 1;
const OVERFLOWED: u8 = 2;

struct Entry {
    id: RequestId,
    filter: Filter,
    tx: mpsc::Sender<Bytes>,
    /// How the stream ends once `tx` is dropped.
    end: Arc<AtomicU8>,
}

/// The open listen streams. Their only state: a filter and a queue each.
#[derive(Default)]
pub(crate) struct Registry {
    next: AtomicU64,
    entries: Mutex<HashMap<u64, Entry>>,
    /// The self-test's `ListenUnfiltered` fault: every stream gets every
    /// notification.
    unfiltered: bool,
}

impl Registry {
    /// The registry of a server running with `faults`.
    pub(crate) fn new(faults: mcp_http_edge::faults::Faults) -> Self {
        Registry {
            unfiltered: faults.has(mcp_http_edge::faults::Fault::ListenUnfiltered),
            ..Registry::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of open streams.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn remove(&self, key: u64) {
        self.lock().remove(&key);
    }

    /// Delivers `n` to every stream that asked for it; returns how many.
    pub fn publish(&self, n: &Notification, queue: usize) -> usize {
        let mut delivered = 0;
        let mut entries = self.lock();
        entries.retain(|_, e| {
            if !e.filter.wants(n) && !self.unfiltered {
                return true;
            }
            match e.tx.try_send(reply::event(&tagged(n, &e.id))) {
                Ok(()) => {
                    delivered += 1;
                    true
                }
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(subscription = %e.id, queue, "listen stream fell behind; ending it");
                    e.end.store(OVERFLOWED, Ordering::Release);
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
        delivered
    }

    /// Ends every stream gracefully; returns how many there were.
    pub fn end_all(&self) -> usize {
        let mut entries = self.lock();
        for e in entries.values() {
            e.end.store(ENDED, Ordering::Release);
        }
        let n = entries.len();
        // Dropping the senders lets each stream drain and then close.
        entries.clear();
        n
    }
}

/// Removes a stream's entry when its body is dropped.
struct EntryGuard {
    registry: Arc<Registry>,
    key: u64,
}

impl Drop for EntryGuard {
    fn drop(&mut self) {
        self.registry.remove(self.key);
    }
}

/// The task ids of `requested` the server agrees to report on: with the
/// Tasks extension configured, those visible to `scope` (a task of another
/// principal, or unknown, is left out of the acknowledgment, as a
/// notification type the server does not support is).
async fn honoured_task_ids(
    shared: &Shared,
    requested: Option<Vec<String>>,
    scope: Option<&str>,
) -> Option<Vec<String>> {
    let (tasks, requested) = (shared.tasks.as_ref()?, requested?);
    let now = super::mrtr::now_ms();
    let mut ids = Vec::new();
    for id in requested {
        if !ids.contains(&id) && tasks.config.store.get(&id, scope, now).await.is_ok() {
            ids.push(id);
        }
    }
    Some(ids)
}

/// Opens a listen stream for request `id` (its checks have passed);
/// `capabilities` are the request's, `scope` its principal.
pub(crate) async fn open(
    shared: &Arc<Shared>,
    id: RequestId,
    params: &Params,
    capabilities: &Value,
    scope: Option<&str>,
) -> HttpResponse {
    // Change notifications published on other instances reach this stream.
    super::fanout::ensure_listener(shared);
    let requested = match read_filter(params) {
        Ok(f) => f,
        Err(r) => {
            return reply::error(
                StatusCode::BAD_REQUEST,
                Some(id),
                ErrorObject::new(r.code, r.message),
            );
        }
    };
    if let Some(ids) = &requested.task_ids {
        // *Tasks*: "If a client requests task status notifications but does
        // not declare the `io.modelcontextprotocol/tasks` extension
        // capability, the server MUST return a JSON-RPC error".
        if !super::tasks::wire::declared(capabilities) {
            return super::tasks::missing_extension(id, "notifications.taskIds");
        }
        let max = shared
            .tasks
            .as_ref()
            .map_or(0, |t| t.config.max_listen_task_ids);
        if shared.tasks.is_some() && ids.len() > max {
            return reply::error(
                StatusCode::BAD_REQUEST,
                Some(id),
                ErrorObject::invalid_params(format!(
                    "Invalid params: notifications.taskIds names {} tasks; at most {max} per subscription",
                    ids.len()
                )),
            );
        }
    }
    let mut filter = requested.honoured(&shared.description.capabilities);
    filter.task_ids = honoured_task_ids(shared, requested.task_ids, scope).await;
    let queue = shared.config.listen_queue.max(1);
    let (tx, rx) = mpsc::channel(queue);
    let end = Arc::new(AtomicU8::new(OPEN));
    let key = shared.listeners.next.fetch_add(1, Ordering::Relaxed);
    {
        let mut entries = shared.listeners.lock();
        if entries.len() >= shared.config.max_listen_streams {
            drop(entries);
            return reply::error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(id),
                ErrorObject::internal(format!(
                    "the server already has its maximum of {} subscriptions/listen streams open; try again later",
                    shared.config.max_listen_streams
                )),
            );
        }
        entries.insert(
            key,
            Entry {
                id: id.clone(),
                filter: filter.clone(),
                tx,
                end: end.clone(),
            },
        );
    }
    let ack = Notification {
        method: "notifications/subscriptions/acknowledged".to_owned(),
        params: to_raw(&serde_json::json!({ "notifications": filter })).ok(),
    };
    let mut pending = VecDeque::new();
    pending.push_back(reply::event(&tagged(&ack, &id)));
    let tally = reply::StreamTally::new(&id);
    let flow = ListenFlow {
        rx,
        pending,
        keepalive: shared.config.keepalive,
        end,
        id,
        queue,
        server_info: shared.server_info.clone(),
        tally,
        _guard: EntryGuard {
            registry: shared.listeners.clone(),
            key,
        },
    };
    reply::sse(Body::from_stream(futures_util::stream::unfold(flow, |f| {
        let span = f.tally.span.clone();
        next(f).instrument(span)
    })))
}

struct ListenFlow {
    rx: mpsc::Receiver<Bytes>,
    pending: VecDeque<Bytes>,
    keepalive: Option<Duration>,
    end: Arc<AtomicU8>,
    id: RequestId,
    queue: usize,
    server_info: Option<Box<RawValue>>,
    /// The stream's span, events and end (`done`: the server ended the
    /// subscription; its last event went out).
    tally: reply::StreamTally,
    _guard: EntryGuard,
}

async fn next(mut f: ListenFlow) -> Option<(Result<Bytes, Infallible>, ListenFlow)> {
    if let Some(b) = f.pending.pop_front() {
        f.tally.events += 1;
        return Some((Ok(b), f));
    }
    if f.tally.done {
        return None;
    }
    let Some(item) = reply::next_or_keepalive(&mut f.rx, f.keepalive).await else {
        return Some((Ok(reply::comment()), f));
    };
    if let Some(b) = item {
        f.tally.events += 1;
        return Some((Ok(b), f));
    }
    // The entry is gone: say why, then close.
    f.tally.done = true;
    let last = match f.end.load(Ordering::Acquire) {
        ENDED => jsonrpc::Response::result(
            f.id.clone(),
            result::listen_closed(&f.id, f.server_info.as_deref()),
        ),
        OVERFLOWED => jsonrpc::Response::error(
            Some(f.id.clone()),
            ErrorObject::internal(format!(
                "the subscription was ended because the client fell more than {} notifications behind; notifications were lost: re-open subscriptions/listen and re-fetch what you cache",
                f.queue
            ))
            .with_data(&serde_json::json!({ META_SUBSCRIPTION_ID: f.id })),
        ),
        _ => return None,
    };
    f.tally.events += 1;
    Some((Ok(reply::event(&reply::response_json(last))), f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(method: &str, params: Value) -> Notification {
        Notification {
            method: method.into(),
            params: Some(to_raw(&params).unwrap()),
        }
    }

    #[test]
    fn honoured_subset() {
        let f: Filter = serde_json::from_value(json!({
            "toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": true, "resourceSubscriptions": ["file:///a"]
        }))
        .unwrap();
        let caps = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}});
        let h = f.honoured(&caps);
        assert_eq!(
            serde_json::to_value(&h).unwrap(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
        assert_eq!(
            serde_json::to_value(Filter::default().honoured(&caps)).unwrap(),
            json!({})
        );
    }

    #[test]
    fn wants_and_covers() {
        let f: Filter = serde_json::from_value(json!({
            "toolsListChanged": true, "resourceSubscriptions": ["file:///p/config.json", "file:///dir/"]
        }))
        .unwrap();
        assert!(f.wants(&n("notifications/tools/list_changed", json!({}))));
        assert!(!f.wants(&n("notifications/prompts/list_changed", json!({}))));
        assert!(!f.wants(&n("notifications/resources/list_changed", json!({}))));
        let lists: Filter = serde_json::from_value(json!({
            "promptsListChanged": true, "resourcesListChanged": true
        }))
        .unwrap();
        assert!(lists.wants(&n("notifications/prompts/list_changed", json!({}))));
        assert!(lists.wants(&n("notifications/resources/list_changed", json!({}))));
        assert!(!lists.wants(&n("notifications/tools/list_changed", json!({}))));
        assert!(!f.wants(&n("notifications/progress", json!({"progressToken": 1}))));
        assert!(!f.wants(&n("notifications/message", json!({"level": "error"}))));
        let upd = |uri: &str| n("notifications/resources/updated", json!({"uri": uri}));
        assert!(f.wants(&upd("file:///p/config.json")));
        assert!(f.wants(&upd("file:///p/config.json#section")));
        assert!(f.wants(&upd("file:///dir/a/b.txt")));
        assert!(!f.wants(&upd("file:///p/config.json.bak")));
        assert!(!f.wants(&upd("file:///other")));
    }

    #[test]
    fn tagging_keeps_params() {
        let t = tagged(
            &n(
                "notifications/resources/updated",
                json!({"uri": "u", "_meta": {"a.b/c": 1}}),
            ),
            &RequestId::String("s1".into()),
        );
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["params"]["uri"], "u");
        assert_eq!(v["params"]["_meta"]["a.b/c"], 1);
        assert_eq!(v["params"]["_meta"][META_SUBSCRIPTION_ID], "s1");
        let t = tagged(
            &Notification {
                method: "notifications/tools/list_changed".into(),
                params: None,
            },
            &RequestId::Number(3),
        );
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["params"]["_meta"][META_SUBSCRIPTION_ID], 3);
    }

    #[test]
    fn filter_is_required_and_typed() {
        let p = |v: Value| Params::parse(Some(&to_raw(&v).unwrap()));
        assert!(read_filter(&p(json!({}))).is_err());
        assert!(read_filter(&p(json!({"notifications": {"toolsListChanged": "yes"}}))).is_err());
        assert!(read_filter(&p(json!({"notifications": {}}))).is_ok());
    }
}
