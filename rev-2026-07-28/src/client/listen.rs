//! `subscriptions/listen` (*Subscriptions*; *Streamable HTTP*, "Receiving
//! Messages"): the long-lived stream of change notifications that replaces
//! the GET stream.
//!
//! The client POSTs `subscriptions/listen` with the caller's
//! [`ListenFilter`] as `params.notifications` (schema,
//! `SubscriptionFilter`: only the fields the caller opted in to are sent,
//! since "Omitting a field is equivalent to not subscribing"). Version
//! negotiation works as for any request ([`request`](super::request)).
//! [`subscribe`] returns once the acknowledgment has arrived (within the
//! request timeout); after it the stream has no deadline (servers keep it
//! alive with SSE comments, which the decoder drops).
//!
//! # Checks
//!
//! * The first message MUST be `notifications/subscriptions/acknowledged`
//!   ("The server MUST send ... as the first message ... and MUST NOT send
//!   any notification on the subscription before it"). Anything else first
//!   is `TransportError::PeerMisbehaved`; a JSON-RPC error instead (for
//!   example `-32601`, no listen support) is `TransportError::Http` carrying
//!   it.
//! * The acknowledged filter "reflects the subset the server agreed to
//!   honor", and "The client SHOULD check the acknowledged filter against
//!   what it requested". Entries the client did not request are logged as a
//!   warning and ignored (they cannot widen what is delivered); the
//!   acknowledged subset is reported in [`Subscription::acknowledged`].
//! * **Decision**: what is delivered is exactly [`Subscription::acknowledged`]
//!   (the acknowledged types, limited to the requested ones). A
//!   notification of any other type — not requested (the server "MUST NOT
//!   send" it), requested but not acknowledged (the server said it would
//!   not send it), or request-scoped such as `notifications/progress`
//!   (which "are not delivered on the listen stream") — is **skipped with a
//!   warning**, not turned into an error: one stray message is no reason
//!   to lose the subscription, and the caller can rely on the stream
//!   matching the acknowledgment it was shown.
//!   `notifications/resources/updated` is delivered for any URI when URIs
//!   were acknowledged (it "might be a sub-resource of the one that the
//!   client actually subscribed to").
//!
//! # The end of the stream
//!
//! * A `subscriptions/listen` **result** is the graceful closure
//!   ("Graceful Closure"): it is yielded as `Message::Response` and the
//!   stream ends (`None`). So does a JSON-RPC error response.
//! * A `notifications/cancelled` referencing the listen request (how a
//!   server tears a subscription down, *Cancellation*) is yielded and ends
//!   the stream.
//! * A transport close without either is an "unexpected disconnect":
//!   `TransportError::ResumeFailed` (this revision does not resume; send
//!   `subscriptions/listen` again to resubscribe).
//! * Dropping the [`ServerMessages`] closes the SSE response, which cancels
//!   the subscription ("close the SSE stream (HTTP)").

use std::sync::Arc;

use futures_util::stream;
use mcp_transport_core::jsonrpc::{Message, Notification, RequestId};
use mcp_transport_core::transport::{
    ListenFilter, Misbehaviour, RequestOptions, ResumeFailure, ServerMessages, StreamEvent,
    TransportError,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::request::Call;
use super::run;
use super::shared::Shared;
use crate::headers;

/// The acknowledgment's method.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// An open `subscriptions/listen` stream.
#[derive(Debug)]
pub struct Subscription {
    /// The subscription id: the JSON-RPC id of the `subscriptions/listen`
    /// request the server acknowledged (notifications carry it in
    /// `_meta["io.modelcontextprotocol/subscriptionId"]`).
    pub id: RequestId,
    /// What the server agreed to honor, limited to what was requested: the
    /// notification types [`messages`](Self::messages) delivers.
    pub acknowledged: ListenFilter,
    /// The messages: the acknowledgment first, then the change
    /// notifications, then possibly the closing response.
    pub messages: ServerMessages,
}

/// The `SubscriptionFilter` JSON of a [`ListenFilter`].
pub(crate) fn filter_json(filter: &ListenFilter) -> Value {
    let mut map = Map::new();
    if filter.tools_list_changed {
        map.insert("toolsListChanged".into(), Value::Bool(true));
    }
    if filter.prompts_list_changed {
        map.insert("promptsListChanged".into(), Value::Bool(true));
    }
    if filter.resources_list_changed {
        map.insert("resourcesListChanged".into(), Value::Bool(true));
    }
    if !filter.resource_uris.is_empty() {
        map.insert("resourceSubscriptions".into(), json!(filter.resource_uris));
    }
    Value::Object(map)
}

/// The wire form of a `SubscriptionFilter`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFilter {
    #[serde(default)]
    tools_list_changed: bool,
    #[serde(default)]
    prompts_list_changed: bool,
    #[serde(default)]
    resources_list_changed: bool,
    #[serde(default)]
    resource_subscriptions: Vec<String>,
}

/// Checks the acknowledged filter against the requested one; returns the
/// acknowledged subset of the request, warning about anything else.
fn check_ack(requested: &ListenFilter, ack: &WireFilter) -> ListenFilter {
    let mut extra = Vec::new();
    let mut flag = |asked: bool, acked: bool, name: &str| {
        if acked && !asked {
            extra.push(name.to_owned());
        }
        asked && acked
    };
    let tools = flag(
        requested.tools_list_changed,
        ack.tools_list_changed,
        "toolsListChanged",
    );
    let prompts = flag(
        requested.prompts_list_changed,
        ack.prompts_list_changed,
        "promptsListChanged",
    );
    let resources = flag(
        requested.resources_list_changed,
        ack.resources_list_changed,
        "resourcesListChanged",
    );
    let mut uris = Vec::new();
    for uri in &ack.resource_subscriptions {
        if requested.resource_uris.contains(uri) {
            uris.push(uri.clone());
        } else {
            extra.push(format!("resourceSubscriptions[{uri:?}]"));
        }
    }
    if !extra.is_empty() {
        tracing::warn!(
            extra = ?extra,
            "the subscriptions/listen acknowledgment names notification types that were not requested; ignored"
        );
    }
    let acknowledged = ListenFilter {
        tools_list_changed: tools,
        prompts_list_changed: prompts,
        resources_list_changed: resources,
        resource_uris: uris,
    };
    let missing = (requested.tools_list_changed && !tools)
        || (requested.prompts_list_changed && !prompts)
        || (requested.resources_list_changed && !resources)
        || acknowledged.resource_uris.len() != requested.resource_uris.len();
    if missing {
        tracing::info!(
            ?requested,
            ?acknowledged,
            "the server acknowledged only part of the subscription filter"
        );
    }
    acknowledged
}

/// Whether a notification of `method` is covered by `filter`.
fn delivered(filter: &ListenFilter, method: &str) -> bool {
    match method {
        "notifications/tools/list_changed" => filter.tools_list_changed,
        "notifications/prompts/list_changed" => filter.prompts_list_changed,
        "notifications/resources/list_changed" => filter.resources_list_changed,
        "notifications/resources/updated" => !filter.resource_uris.is_empty(),
        _ => false,
    }
}

/// Reads a notification's `params` as JSON (small).
fn params(n: &Notification) -> Value {
    n.params
        .as_ref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

/// Opens a subscription and waits for its acknowledgment.
pub(crate) async fn subscribe(
    shared: Arc<Shared>,
    filter: ListenFilter,
) -> Result<Subscription, TransportError> {
    shared.check_open()?;
    let mut base = Map::new();
    base.insert("notifications".into(), filter_json(&filter));
    let mut call = Call::from_map(
        shared,
        "subscriptions/listen",
        base,
        RequestOptions::default(),
    );
    run::open(&mut call).await?;
    let ack = loop {
        match run::next(&mut call).await {
            Some(Ok(StreamEvent::Notification(n))) if n.method == ACKNOWLEDGED => break n,
            Some(Ok(StreamEvent::Notification(n))) => {
                return Err(TransportError::PeerMisbehaved(
                    Misbehaviour::UnexpectedMessage {
                        got: n.method,
                        context: "a subscriptions/listen stream".into(),
                        rule: "it arrived before notifications/subscriptions/acknowledged, which MUST be the first message",
                    },
                ));
            }
            Some(Ok(StreamEvent::ServerRequest(_))) => {}
            Some(Ok(StreamEvent::Response(r))) => {
                return Err(match r.payload {
                    Err(e) => TransportError::Http {
                        status: call.status().as_u16(),
                        message: e.message.clone(),
                        rpc: Some(e),
                    },
                    Ok(_) => TransportError::PeerMisbehaved(Misbehaviour::UnexpectedMessage {
                        got: "result".into(),
                        context: "a subscriptions/listen stream".into(),
                        rule: "the request was answered before it was acknowledged",
                    }),
                });
            }
            Some(Err(e)) => return Err(e),
            None => {
                return Err(TransportError::PeerMisbehaved(Misbehaviour::EndedWithout {
                    what: "the subscriptions/listen stream".into(),
                    missing: "its acknowledgment".into(),
                }));
            }
        }
    };
    let id = call.request_id().cloned().unwrap_or(RequestId::Number(0));
    let ack_params = params(&ack);
    if let Some(sub) = ack_params
        .get("_meta")
        .and_then(|m| m.get(headers::META_SUBSCRIPTION_ID))
        && serde_json::to_value(&id).ok().as_ref() != Some(sub)
    {
        tracing::warn!(%id, subscription_id = %sub, "the acknowledgment's subscriptionId is not the listen request's id");
    }
    let wire: WireFilter = ack_params
        .get("notifications")
        .and_then(|n| serde_json::from_value(n.clone()).ok())
        .unwrap_or_else(|| {
            tracing::warn!(
                "the acknowledgment has no valid notifications filter; treating it as empty"
            );
            WireFilter::default()
        });
    let acknowledged = check_ack(&filter, &wire);
    call.disable_deadline();
    let state = Listener {
        call,
        filter: acknowledged.clone(),
        id: id.clone(),
        ack: Some(ack),
        done: false,
    };
    let messages = ServerMessages::new(stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    }));
    Ok(Subscription {
        id,
        acknowledged,
        messages,
    })
}

/// The state behind a subscription's [`ServerMessages`].
struct Listener {
    call: Call,
    /// The acknowledged filter: what is delivered.
    filter: ListenFilter,
    id: RequestId,
    ack: Option<Notification>,
    done: bool,
}

impl Listener {
    async fn next(&mut self) -> Option<Result<Message, TransportError>> {
        if let Some(ack) = self.ack.take() {
            return Some(Ok(Message::Notification(ack)));
        }
        loop {
            if self.done {
                return None;
            }
            match run::next(&mut self.call).await {
                None => return None,
                Some(Ok(StreamEvent::Notification(n))) => {
                    if n.method == "notifications/cancelled" && self.cancels_me(&n) {
                        self.done = true;
                        return Some(Ok(Message::Notification(n)));
                    }
                    if delivered(&self.filter, &n.method) {
                        return Some(Ok(Message::Notification(n)));
                    }
                    tracing::warn!(
                        method = %n.method,
                        subscription = %self.id,
                        "skipping a notification of a type the subscription did not acknowledge"
                    );
                }
                Some(Ok(StreamEvent::ServerRequest(_))) => {}
                Some(Ok(StreamEvent::Response(r))) => {
                    self.done = true;
                    return Some(Ok(Message::Response(r)));
                }
                Some(Err(TransportError::ResumeFailed(why))) => {
                    self.done = true;
                    return Some(Err(TransportError::ResumeFailed(
                        ResumeFailure::SubscriptionEnded {
                            id: self.id.clone(),
                            cause: Box::new(why),
                        },
                    )));
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// Whether a `notifications/cancelled` references this subscription.
    fn cancels_me(&self, n: &Notification) -> bool {
        let p = params(n);
        p.get("requestId")
            .is_some_and(|r| serde_json::to_value(&self.id).ok().as_ref() == Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_json_sends_only_opted_in_fields() {
        assert_eq!(filter_json(&ListenFilter::default()), json!({}));
        let f = ListenFilter {
            tools_list_changed: true,
            resource_uris: vec!["file:///a".into()],
            ..Default::default()
        };
        assert_eq!(
            filter_json(&f),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
    }

    #[test]
    fn each_type_is_delivered_only_when_acknowledged() {
        let types = [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated",
        ];
        let only = |i: usize| ListenFilter {
            tools_list_changed: i == 0,
            prompts_list_changed: i == 1,
            resources_list_changed: i == 2,
            resource_uris: if i == 3 { vec!["a".into()] } else { vec![] },
        };
        for (i, _) in types.iter().enumerate() {
            let got: Vec<bool> = types.iter().map(|t| delivered(&only(i), t)).collect();
            let want: Vec<bool> = (0..types.len()).map(|j| j == i).collect();
            assert_eq!(got, want, "only {}", types[i]);
        }
        assert!(!delivered(&only(0), "notifications/progress"));
    }

    /// What `check_ack` logged: (warnings, "only part" notes).
    fn ack_logs(asked: &ListenFilter, ack: &WireFilter) -> (Vec<String>, usize) {
        let (logged, _guard) = mcp_test_support::trace::Logged::install();
        check_ack(asked, ack);
        let partial = logged
            .take(tracing::Level::INFO)
            .iter()
            .filter(|l| l.contains("only part"))
            .count();
        (logged.take(tracing::Level::WARN), partial)
    }

    #[test]
    fn an_ack_is_logged_only_where_it_differs_from_the_request() {
        let all = ListenFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_uris: vec!["a".into()],
        };
        let wire = |f: &ListenFilter| WireFilter {
            tools_list_changed: f.tools_list_changed,
            prompts_list_changed: f.prompts_list_changed,
            resources_list_changed: f.resources_list_changed,
            resource_subscriptions: f.resource_uris.clone(),
        };
        // Exactly what was asked, all of it or one type: nothing to say.
        let tools = ListenFilter {
            tools_list_changed: true,
            ..Default::default()
        };
        for asked in [&all, &tools] {
            assert_eq!(ack_logs(asked, &wire(asked)), (vec![], 0), "{asked:?}");
        }
        // One type short, each in turn: noted (info), no warning.
        let short: [fn(&mut ListenFilter); 4] = [
            |f| f.tools_list_changed = false,
            |f| f.prompts_list_changed = false,
            |f| f.resources_list_changed = false,
            |f| f.resource_uris.clear(),
        ];
        for (i, cut) in short.iter().enumerate() {
            let mut acked = all.clone();
            cut(&mut acked);
            assert_eq!(ack_logs(&all, &wire(&acked)), (vec![], 1), "short #{i}");
        }
        // More than asked: a warning naming what was not requested.
        let (warned, partial) = ack_logs(&tools, &wire(&all));
        assert_eq!(partial, 0);
        assert_eq!(warned.len(), 1, "{warned:?}");
        for name in [
            "promptsListChanged",
            "resourcesListChanged",
            "resourceSubscriptions[\\\"a\\\"]",
        ] {
            assert!(warned[0].contains(name), "{name}: {}", warned[0]);
        }
        assert!(!warned[0].contains("toolsListChanged"), "{}", warned[0]);
    }

    #[test]
    fn ack_is_intersected_with_the_request() {
        let asked = ListenFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resource_uris: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let ack = WireFilter {
            tools_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: vec!["a".into(), "z".into()],
            ..Default::default()
        };
        let got = check_ack(&asked, &ack);
        assert!(got.tools_list_changed);
        assert!(!got.prompts_list_changed);
        assert!(!got.resources_list_changed);
        assert_eq!(got.resource_uris, ["a"]);
    }
}
