//! The standard fields the transport adds to results.
//!
//! * `resultType` (*Overview*, "Result Responses": "The `result` MUST
//!   include a `resultType` field"): `"complete"` when the handler did not
//!   set one; `"input_required"` on an `InputRequiredResult`.
//! * `_meta["io.modelcontextprotocol/serverInfo"]` ("Per-response protocol
//!   fields": servers "SHOULD include the following … field in every
//!   result's `_meta`, unless specifically configured not to do so"), when
//!   the handler's `_meta` has none.
//! * `ttlMs` and `cacheScope` on complete results of the cacheable methods
//!   (*Caching*, "Cacheable Results": "Servers MUST include caching hints on
//!   results with `resultType: \"complete\"` returned by … `tools/list`,
//!   `prompts/list`, `resources/list`, `resources/templates/list`,
//!   `resources/read`"), when the handler's result has none. Interim
//!   `input_required` results "carry no caching hints".
//!
//! Values the handler set are never overwritten, and the other members stay
//! raw (byte-exact).

use std::collections::BTreeMap;

use mcp_transport_core::handler::InputRequest;
use mcp_transport_core::jsonrpc::{RequestId, to_raw};
use serde::Serialize;
use serde_json::value::RawValue;

use super::config::CacheScope;
use crate::headers::META_SUBSCRIPTION_ID;

/// `_meta` key of the server's identity in results.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The methods whose complete results carry caching hints.
const CACHEABLE: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// What the transport adds to results.
pub(crate) struct Decoration<'a> {
    /// `serverInfo`, serialized, or `None` when configured off.
    pub server_info: Option<&'a RawValue>,
    /// Default `ttlMs`.
    pub ttl_ms: u64,
    /// Default `cacheScope`.
    pub scope: CacheScope,
}

type Members = BTreeMap<String, Box<RawValue>>;

fn raw<T: Serialize + ?Sized>(v: &T) -> Box<RawValue> {
    to_raw(v).unwrap_or_else(|_| unreachable!("plain values always serialize"))
}

/// Inserts `serverInfo` into `_meta` unless present (or `_meta` is not an
/// object, which is the handler's business).
fn add_server_info(members: &mut Members, info: Option<&RawValue>) {
    let Some(info) = info else { return };
    let meta = match members.get("_meta") {
        None => Members::new(),
        Some(m) => match serde_json::from_str::<Members>(m.get()) {
            Ok(m) if m.contains_key(META_SERVER_INFO) => return,
            Ok(m) => m,
            Err(_) => return,
        },
    };
    let mut meta = meta;
    meta.insert(META_SERVER_INFO.to_owned(), info.to_owned());
    members.insert("_meta".to_owned(), raw(&meta));
}

/// Decorates a handler's result for `method`. Fails when the result is not
/// a JSON object.
pub(crate) fn complete(
    result: &RawValue,
    method: &str,
    deco: &Decoration<'_>,
) -> Result<Box<RawValue>, String> {
    let mut members: Members = serde_json::from_str(result.get())
        .map_err(|_| format!("the handler's {method} result is not a JSON object"))?;
    let result_type = match members.get("resultType") {
        Some(t) => serde_json::from_str::<String>(t.get()).ok(),
        None => {
            members.insert("resultType".to_owned(), raw("complete"));
            Some("complete".to_owned())
        }
    };
    if result_type.as_deref() == Some("complete") && CACHEABLE.contains(&method) {
        if !members.contains_key("ttlMs") {
            members.insert("ttlMs".to_owned(), raw(&deco.ttl_ms));
        }
        if !members.contains_key("cacheScope") {
            members.insert("cacheScope".to_owned(), raw(deco.scope.as_str()));
        }
    }
    add_server_info(&mut members, deco.server_info);
    Ok(raw(&members))
}

/// An `InputRequiredResult` (*MRTR*, "InputRequiredResult").
pub(crate) fn input_required(
    requests: &BTreeMap<String, InputRequest>,
    request_state: &str,
    server_info: Option<&RawValue>,
) -> Box<RawValue> {
    let mut members = Members::new();
    members.insert("resultType".to_owned(), raw("input_required"));
    if !requests.is_empty() {
        members.insert("inputRequests".to_owned(), raw(requests));
    }
    members.insert("requestState".to_owned(), raw(request_state));
    add_server_info(&mut members, server_info);
    raw(&members)
}

/// The `subscriptions/listen` result that ends a subscription gracefully
/// (*Subscriptions*, "Graceful Closure"): `resultType` and the
/// subscription id in `_meta`.
pub(crate) fn listen_closed(id: &RequestId, server_info: Option<&RawValue>) -> Box<RawValue> {
    let mut meta = Members::new();
    meta.insert(META_SUBSCRIPTION_ID.to_owned(), raw(id));
    let mut members = Members::new();
    members.insert("resultType".to_owned(), raw("complete"));
    members.insert("_meta".to_owned(), raw(&meta));
    add_server_info(&mut members, server_info);
    raw(&members)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn v(r: &RawValue) -> Value {
        serde_json::from_str(r.get()).unwrap()
    }

    #[test]
    fn adds_what_is_missing_only() {
        let info = raw(&json!({"name": "s", "version": "1"}));
        let deco = Decoration {
            server_info: Some(&info),
            ttl_ms: 5,
            scope: CacheScope::Private,
        };
        let out = v(&complete(&raw(&json!({"tools": []})), "tools/list", &deco).unwrap());
        assert_eq!(out["resultType"], "complete");
        assert_eq!(out["ttlMs"], 5);
        assert_eq!(out["cacheScope"], "private");
        assert_eq!(out["_meta"][META_SERVER_INFO]["name"], "s");

        let mine = json!({"tools": [], "ttlMs": 9, "cacheScope": "public",
                          "_meta": {"x.y/z": 1, META_SERVER_INFO: {"name": "mine"}}});
        let out = v(&complete(&raw(&mine), "tools/list", &deco).unwrap());
        assert_eq!(out["ttlMs"], 9);
        assert_eq!(out["cacheScope"], "public");
        assert_eq!(out["_meta"][META_SERVER_INFO]["name"], "mine");
        assert_eq!(out["_meta"]["x.y/z"], 1);

        // Not cacheable: no hints.
        let out = v(&complete(&raw(&json!({"content": []})), "tools/call", &deco).unwrap());
        assert!(out.get("ttlMs").is_none());
        assert!(complete(&raw(&json!([1])), "tools/call", &deco).is_err());

        let deco = Decoration {
            server_info: None,
            ..deco
        };
        let out = v(&complete(&raw(&json!({})), "tools/call", &deco).unwrap());
        assert!(out.get("_meta").is_none());
    }

    #[test]
    fn interim_and_closing_results() {
        let out = v(&input_required(&BTreeMap::new(), "tok", None));
        assert_eq!(
            out,
            json!({"resultType": "input_required", "requestState": "tok"})
        );
        let out = v(&listen_closed(&RequestId::Number(1), None));
        assert_eq!(
            out,
            json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: 1}})
        );
    }
}
