//! `server/discover`, answered by the transport (*Discovery*: "Servers
//! MUST implement it").
//!
//! The result follows `DiscoverResult` of the schema exactly:
//! `supportedVersions` (the advertised versions), `capabilities` and
//! `instructions` from the handler's `describe()`, the server's identity in
//! `_meta["io.modelcontextprotocol/serverInfo"]` (the top-level
//! `serverInfo` of SEP-2575 was removed: "introduced
//! `io.modelcontextprotocol/serverInfo` in result `_meta` and removed the
//! top-level `DiscoverResult.serverInfo` field"), `resultType: "complete"`,
//! and the caching hints `DiscoverResult extends CacheableResult` requires
//! (`ttlMs`, `cacheScope`; *Caching*, "Cacheable Results").

use std::collections::BTreeMap;

use http::StatusCode;
use mcp_transport_core::jsonrpc::{self, RequestId, to_raw};
use serde_json::Value;
use serde_json::value::RawValue;

use super::Shared;
use super::reply::{self, HttpResponse};
use super::result::META_SERVER_INFO;

/// The `DiscoverResult`.
pub(crate) fn result(shared: &Shared) -> Box<RawValue> {
    let mut r = BTreeMap::<&str, Value>::new();
    r.insert("resultType", Value::from("complete"));
    r.insert(
        "supportedVersions",
        shared
            .advertised
            .iter()
            .map(|v| Value::from(v.as_str()))
            .collect(),
    );
    let mut caps = match &shared.description.capabilities {
        Value::Object(_) => shared.description.capabilities.clone(),
        _ => Value::Object(Default::default()),
    };
    // *Tasks*, "Capability Negotiation": the server declares the extension
    // in `capabilities.extensions` of `server/discover`.
    if shared.tasks.is_some()
        && let Value::Object(m) = &mut caps
    {
        let ext = m
            .entry("extensions")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Value::Object(ext) = ext {
            ext.entry(super::tasks::wire::EXTENSION)
                .or_insert_with(|| Value::Object(Default::default()));
        }
    }
    r.insert("capabilities", caps);
    if let Some(i) = &shared.description.instructions {
        r.insert("instructions", Value::from(i.as_str()));
    }
    r.insert("ttlMs", Value::from(shared.config.discover_ttl_ms));
    r.insert(
        "cacheScope",
        Value::from(shared.config.discover_cache_scope.as_str()),
    );
    if shared.server_info.is_some() {
        let mut meta = serde_json::Map::new();
        meta.insert(META_SERVER_INFO.to_owned(), shared.description.info.clone());
        r.insert("_meta", Value::Object(meta));
    }
    to_raw(&r).unwrap_or_else(|_| unreachable!("plain JSON values serialize"))
}

/// Answers `server/discover` (always as JSON).
pub(crate) fn respond(shared: &Shared, id: RequestId) -> HttpResponse {
    reply::json(
        StatusCode::OK,
        reply::response_json(jsonrpc::Response::result(id, result(shared))),
    )
}
