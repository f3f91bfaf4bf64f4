//! Multi round-trip requests: sealing `requestState`, and the client
//! capabilities input requests need (*Multi Round-Trip Requests*).
//!
//! # The sealed state
//!
//! When the handler returns `Outcome::InputRequired`, the server answers
//! an `InputRequiredResult` whose `requestState` it mints itself:
//!
//! ```text
//! v1.<base64url(payload JSON)>.<base64url(HMAC-SHA256(key, domain ‖ payload))>
//! ```
//!
//! The payload binds the handler's own state (`InputRequired::state`) to
//! what "Server Requirements" 5 lists: "the authenticated principal" (a
//! SHA-256 of what [`ModernConfig::principal`] names, when configured), "a
//! short expiry (TTL)", and "an identifier for the originating request, e.g.
//! the method name and a digest of its salient parameters" — the method and
//! a SHA-256 of the canonical JSON of `params` without `inputResponses`,
//! `requestState` and `_meta` (which legitimately change between rounds). It
//! also carries the round number, which bounds the rounds
//! ([`ModernConfig::max_input_rounds`]) without any server-side memory.
//!
//! "If a client request contains a `requestState` field, servers MUST treat
//! `requestState` as attacker-controlled input … and MUST reject state that
//! fails verification." A state that does not verify, has expired, was
//! issued for another request or another principal is rejected with
//! `-32602`.
//!
//! The seal gives integrity, **not confidentiality**: the client can read
//! the payload. Handlers must not put secrets in `InputRequired::state`.
//!
//! [`ModernConfig::principal`]: super::ModernConfig::principal
//! [`ModernConfig::max_input_rounds`]: super::ModernConfig::max_input_rounds

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use mcp_transport_core::handler::InputRequest;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::validate::Params;

type HmacSha256 = Hmac<Sha256>;

/// Separates this MAC from any other use of the key.
const DOMAIN: &[u8] = b"mcp-rev-2026-07-28/requestState/v1\0";

/// The `params` members left out of the request digest.
pub(crate) const UNBOUND_PARAMS: [&str; 3] = ["inputResponses", "requestState", "_meta"];

/// `method` as a static name when it may answer with an
/// `InputRequiredResult` ("Supported Requests": "Servers MUST NOT send
/// `InputRequiredResult` responses on any other client requests"). Only
/// these requests get a [`BindingSource`], so a request without one may not
/// ask for input.
pub(crate) fn input_method(method: &str) -> Option<&'static str> {
    ["tools/call", "prompts/get", "resources/read"]
        .into_iter()
        .find(|m| *m == method)
}

/// Milliseconds since the Unix epoch (state may be verified by another
/// instance, so a wall clock).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// What a state is bound to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The JSON-RPC method.
    pub method: String,
    /// SHA-256 of the canonical params (see [`params_digest`]).
    pub params: [u8; 32],
    /// SHA-256 of the principal, when one is configured and named.
    pub principal: Option<[u8; 32]>,
}

impl Binding {
    /// The binding of a request.
    pub fn new(method: &str, params: &Params, principal: Option<&str>) -> Self {
        Binding {
            method: method.to_owned(),
            params: params_digest(params),
            principal: principal.map(|p| Sha256::digest(p.as_bytes()).into()),
        }
    }
}

/// What a request's binding is computed from, kept until needed: the
/// digest costs a full parse of the params, and most requests never need
/// it (only a retry, to verify its state, or an `InputRequired` outcome).
pub(crate) struct BindingSource {
    /// One of the [`input_method`]s.
    method: &'static str,
    params: Params,
    principal: Option<String>,
    computed: Option<Binding>,
}

impl BindingSource {
    /// The source of `method`'s binding.
    pub fn new(method: &'static str, params: Params, principal: Option<String>) -> Self {
        BindingSource {
            method,
            params,
            principal,
            computed: None,
        }
    }

    /// The binding, computed once.
    pub fn binding(&mut self) -> &Binding {
        let (method, params, principal) = (&self.method, &self.params, &self.principal);
        self.computed
            .get_or_insert_with(|| Binding::new(method, params, principal.as_deref()))
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// Format version.
    v: u8,
    /// Method.
    m: String,
    /// Params digest.
    d: String,
    /// Principal digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    /// The handler's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<String>,
    /// Expiry, Unix milliseconds.
    e: u64,
    /// Rounds issued so far (1 for the first `InputRequiredResult`).
    r: u32,
}

/// A verified state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opened {
    /// The handler's state, for `RequestContext::request_state`.
    pub state: Option<String>,
    /// Rounds issued so far.
    pub round: u32,
}

/// Why a `requestState` was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StateError {
    /// Not a state this server format produces.
    #[error(
        "Invalid params: requestState is malformed (it must be echoed back exactly as the server sent it)"
    )]
    Malformed,
    /// The MAC does not verify.
    #[error(
        "Invalid params: requestState failed verification (it was modified, or issued by a server with another state key)"
    )]
    Forged,
    /// Past its expiry.
    #[error(
        "Invalid params: requestState expired {0} ms ago; send the original request again without inputResponses and requestState"
    )]
    Expired(u64),
    /// Issued for another method or other params.
    #[error(
        "Invalid params: requestState was issued for a different request (method or params differ from the request that received it)"
    )]
    OtherRequest,
    /// Issued to another principal.
    #[error("Invalid params: requestState was issued to a different principal")]
    OtherPrincipal,
}

/// Seals and opens `requestState` with one key.
pub(crate) struct Sealer {
    key: [u8; 32],
    ttl: Duration,
}

impl Sealer {
    /// A sealer with `key` whose states live `ttl`.
    pub fn new(key: [u8; 32], ttl: Duration) -> Self {
        Sealer { key, ttl }
    }

    fn mac(&self, payload: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        mac.update(DOMAIN);
        mac.update(payload);
        mac
    }

    /// Seals the handler's `state` for round `round` of the request bound
    /// by `binding`.
    pub fn seal(&self, binding: &Binding, state: Option<&str>, round: u32, now_ms: u64) -> String {
        let ttl = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let payload = Payload {
            v: 1,
            m: binding.method.clone(),
            d: URL_SAFE_NO_PAD.encode(binding.params),
            p: binding.principal.map(|p| URL_SAFE_NO_PAD.encode(p)),
            s: state.map(str::to_owned),
            e: now_ms.saturating_add(ttl),
            r: round,
        };
        let bytes = serde_json::to_vec(&payload).unwrap_or_default();
        let tag = self.mac(&bytes).finalize().into_bytes();
        format!(
            "v1.{}.{}",
            URL_SAFE_NO_PAD.encode(&bytes),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Verifies a state presented with a request bound by `binding`.
    pub fn open(&self, token: &str, binding: &Binding, now_ms: u64) -> Result<Opened, StateError> {
        let rest = token.strip_prefix("v1.").ok_or(StateError::Malformed)?;
        let (payload, tag) = rest.split_once('.').ok_or(StateError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| StateError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| StateError::Malformed)?;
        // Constant-time comparison.
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| StateError::Forged)?;
        let p: Payload = serde_json::from_slice(&payload).map_err(|_| StateError::Malformed)?;
        if p.v != 1 {
            return Err(StateError::Malformed);
        }
        if now_ms > p.e {
            return Err(StateError::Expired(now_ms - p.e));
        }
        if p.m != binding.method || p.d != URL_SAFE_NO_PAD.encode(binding.params) {
            return Err(StateError::OtherRequest);
        }
        if p.p != binding.principal.map(|b| URL_SAFE_NO_PAD.encode(b)) {
            return Err(StateError::OtherPrincipal);
        }
        Ok(Opened {
            state: p.s,
            round: p.r,
        })
    }
}

/// SHA-256 of the canonical JSON of `params` without [`UNBOUND_PARAMS`].
pub(crate) fn params_digest(params: &Params) -> [u8; 32] {
    let mut out = String::new();
    let members = params.values_except(&UNBOUND_PARAMS);
    out.push('{');
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        canonical_str(k, &mut out);
        out.push(':');
        canonical(v, &mut out);
    }
    out.push('}');
    Sha256::digest(out.as_bytes()).into()
}

fn canonical_str(s: &str, out: &mut String) {
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// JSON with object keys sorted, whatever the map implementation's order.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_str(k, out);
                out.push(':');
                canonical(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::String(s) => canonical_str(s, out),
        other => out.push_str(&other.to_string()),
    }
}

/// Merges `add` into `into` (objects recursively).
fn merge(into: &mut Map<String, Value>, add: Value) {
    let Value::Object(add) = add else { return };
    for (k, v) in add {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(existing)), v @ Value::Object(_)) => merge(existing, v),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

fn declared<'a>(caps: &'a Value, name: &str) -> Option<&'a Value> {
    caps.get(name).filter(|v| !v.is_null())
}

/// The client capabilities the input requests need but the client did not
/// declare (*Overview*, "Per-request protocol fields": "If processing a
/// request requires a capability the client did not include …, the server
/// MUST return a `MissingRequiredClientCapabilityError` (`-32021`) whose
/// `data.requiredCapabilities` lists the missing capabilities"; *MRTR*:
/// "Servers MUST NOT send an `inputRequests` that the client has not
/// declared support for").
///
/// * `elicitation/create` needs `elicitation`; mode `url` needs
///   `elicitation.url`, mode `form` (the default) `elicitation.form` — an
///   empty `elicitation` object means form only (*Elicitation*,
///   "Capabilities").
/// * `sampling/createMessage` needs `sampling`; with `tools` or
///   `toolChoice`, `sampling.tools`.
/// * `roots/list` needs `roots`.
///
/// `Ok(None)`: nothing is missing. `Err`: an input request the handler may
/// not make at all (another method, an unknown elicitation mode).
pub(crate) fn missing_capabilities(
    requests: &BTreeMap<String, InputRequest>,
    client: &Value,
) -> Result<Option<Value>, String> {
    let mut missing = Map::new();
    for (key, req) in requests {
        let params: Value = req
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match req.method.as_str() {
            "elicitation/create" => {
                let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                let need = match (mode, declared(client, "elicitation")) {
                    (_, None) if mode == "form" => Some(json!({"elicitation": {}})),
                    ("form", Some(e)) => {
                        let form = e.get("form").is_some_and(|v| !v.is_null());
                        let url = e.get("url").is_some_and(|v| !v.is_null());
                        (!form && url).then(|| json!({"elicitation": {"form": {}}}))
                    }
                    ("url", e) => {
                        let url = e.is_some_and(|e| e.get("url").is_some_and(|v| !v.is_null()));
                        (!url).then(|| json!({"elicitation": {"url": {}}}))
                    }
                    (other, _) => {
                        return Err(format!(
                            "input request {key:?} asks for elicitation mode {other:?} (only form and url exist)"
                        ));
                    }
                };
                if let Some(n) = need {
                    merge(&mut missing, n);
                }
            }
            "sampling/createMessage" => {
                let tools = params.get("tools").is_some() || params.get("toolChoice").is_some();
                match declared(client, "sampling") {
                    None if tools => merge(&mut missing, json!({"sampling": {"tools": {}}})),
                    None => merge(&mut missing, json!({"sampling": {}})),
                    Some(s) if tools && s.get("tools").is_none_or(Value::is_null) => {
                        merge(&mut missing, json!({"sampling": {"tools": {}}}));
                    }
                    Some(_) => {}
                }
            }
            "roots/list" => {
                if declared(client, "roots").is_none() {
                    merge(&mut missing, json!({"roots": {}}));
                }
            }
            other => {
                return Err(format!(
                    "input request {key:?} uses method {other:?}; input requests must be elicitation/create, sampling/createMessage or roots/list"
                ));
            }
        }
    }
    Ok((!missing.is_empty()).then_some(Value::Object(missing)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport_core::jsonrpc::to_raw;

    fn params(v: Value) -> Params {
        Params::parse(Some(&to_raw(&v).unwrap()))
    }

    fn sealer() -> Sealer {
        Sealer::new([42u8; 32], Duration::from_secs(60))
    }

    #[test]
    fn roundtrip_and_binding() {
        let p = params(json!({"name": "ask", "arguments": {"a": 1, "b": [1, {"y": 2, "x": 1}]}}));
        let b = Binding::new("tools/call", &p, None);
        let token = sealer().seal(&b, Some("round-1"), 1, 1_000);
        let opened = sealer().open(&token, &b, 2_000).unwrap();
        assert_eq!(opened.state.as_deref(), Some("round-1"));
        assert_eq!(opened.round, 1);

        // The retry adds inputResponses, requestState and other _meta, and
        // orders keys differently: same binding.
        let retry = params(json!({
            "arguments": {"b": [1, {"x": 1, "y": 2}], "a": 1},
            "name": "ask",
            "_meta": {"progressToken": 9},
            "inputResponses": {"k": {"action": "accept"}},
            "requestState": token,
        }));
        assert_eq!(Binding::new("tools/call", &retry, None), b);

        // Other arguments, method or principal.
        let other = params(json!({"name": "ask", "arguments": {"a": 2}}));
        let err = sealer()
            .open(&token, &Binding::new("tools/call", &other, None), 2_000)
            .unwrap_err();
        assert_eq!(err, StateError::OtherRequest);
        let err = sealer()
            .open(&token, &Binding::new("prompts/get", &p, None), 2_000)
            .unwrap_err();
        assert_eq!(err, StateError::OtherRequest);
        let err = sealer()
            .open(
                &token,
                &Binding::new("tools/call", &p, Some("mallory")),
                2_000,
            )
            .unwrap_err();
        assert_eq!(err, StateError::OtherPrincipal);
    }

    #[test]
    fn expiry_tamper_and_key() {
        let p = params(json!({"name": "ask"}));
        let b = Binding::new("tools/call", &p, Some("alice"));
        let token = sealer().seal(&b, None, 3, 1_000);
        assert_eq!(
            sealer().open(&token, &b, 61_000).unwrap(),
            Opened {
                state: None,
                round: 3
            }
        );
        assert_eq!(
            sealer().open(&token, &b, 61_001).unwrap_err(),
            StateError::Expired(1)
        );
        assert_eq!(
            sealer().open(&token, &b, 63_000).unwrap_err(),
            StateError::Expired(2_000),
            "how long ago, in ms"
        );
        // Another key.
        let other = Sealer::new([1u8; 32], Duration::from_secs(60));
        assert_eq!(
            other.open(&token, &b, 2_000).unwrap_err(),
            StateError::Forged
        );
        // A flipped payload character.
        let (head, tag) = token.rsplit_once('.').unwrap();
        let mut chars: Vec<char> = head.chars().collect();
        let i = chars.len() - 3;
        chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
        let forged = format!("{}.{tag}", chars.into_iter().collect::<String>());
        assert!(matches!(
            sealer().open(&forged, &b, 2_000).unwrap_err(),
            StateError::Forged | StateError::Malformed
        ));
        for junk in ["", "v1.", "v1.abc", "v2.a.b", "v1.!!.??"] {
            assert_eq!(
                sealer().open(junk, &b, 2_000).unwrap_err(),
                StateError::Malformed,
                "{junk}"
            );
        }
    }

    /// The digest's input is pinned: instances of different builds behind
    /// one load balancer (a rolling deploy) must bind a request alike, so
    /// it is the SHA-256 of the canonical JSON (members sorted at every
    /// level, no spaces) of `params` without the unbound members.
    #[test]
    fn the_params_digest_is_sha256_of_the_canonical_json() {
        let p = params(json!({
            "name": "ask",
            "arguments": {"b": [1, {"y": 2, "x": [true, null]}], "a": "s"},
            "_meta": {"progressToken": 1},
            "requestState": "z",
            "inputResponses": {}
        }));
        let canonical = r#"{"arguments":{"a":"s","b":[1,{"x":[true,null],"y":2}]},"name":"ask"}"#;
        let want: [u8; 32] = Sha256::digest(canonical.as_bytes()).into();
        assert_eq!(params_digest(&p), want);
    }

    fn req(method: &str, params: Value) -> BTreeMap<String, InputRequest> {
        let mut m = BTreeMap::new();
        m.insert(
            "k".to_owned(),
            InputRequest {
                method: method.into(),
                params: Some(to_raw(&params).unwrap()),
            },
        );
        m
    }

    #[test]
    fn capabilities() {
        let form = req("elicitation/create", json!({"message": "?"}));
        let url = req(
            "elicitation/create",
            json!({"mode": "url", "url": "https://x", "message": "?"}),
        );
        assert_eq!(
            missing_capabilities(&form, &json!({})).unwrap(),
            Some(json!({"elicitation": {}}))
        );
        assert_eq!(
            missing_capabilities(&form, &json!({"elicitation": {}})).unwrap(),
            None
        );
        assert_eq!(
            missing_capabilities(&form, &json!({"elicitation": {"url": {}}})).unwrap(),
            Some(json!({"elicitation": {"form": {}}}))
        );
        assert_eq!(
            missing_capabilities(&url, &json!({"elicitation": {}})).unwrap(),
            Some(json!({"elicitation": {"url": {}}}))
        );
        assert_eq!(
            missing_capabilities(&url, &json!({"elicitation": {"url": {}}})).unwrap(),
            None
        );
        let sampling = req(
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 1}),
        );
        assert_eq!(
            missing_capabilities(&sampling, &json!({"elicitation": {}})).unwrap(),
            Some(json!({"sampling": {}}))
        );
        let tools = req(
            "sampling/createMessage",
            json!({"messages": [], "tools": []}),
        );
        assert_eq!(
            missing_capabilities(&tools, &json!({"sampling": {}})).unwrap(),
            Some(json!({"sampling": {"tools": {}}}))
        );
        // A declared mode counts only when it is not null; both declared
        // need nothing.
        assert_eq!(
            missing_capabilities(&form, &json!({"elicitation": {"form": null, "url": {}}}))
                .unwrap(),
            Some(json!({"elicitation": {"form": {}}}))
        );
        assert_eq!(
            missing_capabilities(&form, &json!({"elicitation": {"form": {}, "url": {}}})).unwrap(),
            None
        );
        // Sampling with tools needs `sampling.tools`, whether or not
        // sampling is declared; without tools it needs no more than
        // `sampling`.
        assert_eq!(
            missing_capabilities(&tools, &json!({})).unwrap(),
            Some(json!({"sampling": {"tools": {}}}))
        );
        assert_eq!(
            missing_capabilities(&tools, &json!({"sampling": {"tools": {}}})).unwrap(),
            None
        );
        assert_eq!(
            missing_capabilities(&sampling, &json!({"sampling": {}})).unwrap(),
            None
        );
        let roots = req("roots/list", json!({}));
        assert_eq!(
            missing_capabilities(&roots, &json!({"roots": {}})).unwrap(),
            None
        );
        assert!(missing_capabilities(&req("ping", json!({})), &json!({})).is_err());
        assert!(
            missing_capabilities(
                &req("elicitation/create", json!({"mode": "telepathy"})),
                &json!({})
            )
            .is_err()
        );
    }
}
