//! Which revisions the server speaks, who it says it is, and the requests
//! every check builds on: a legacy session ([`LegacySession`]) and a
//! modern request ([`modern_request`]).

use mcp_transport_core::ProtocolVersion;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::wire::{Headers, Wire, short};
use mcp_http_edge::headers;

/// The `clientInfo` the checks send.
pub(crate) fn client_info() -> Value {
    json!({ "name": "mcp-compat check-server", "version": env!("CARGO_PKG_VERSION") })
}

/// How the server answered one revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeAnswer {
    /// It speaks the revision.
    Accepted,
    /// `initialize` was answered with another revision.
    CounterOffered,
    /// Refused (an HTTP or JSON-RPC error, or no usable answer).
    Refused,
}

/// One revision tried.
#[derive(Clone, Debug, Serialize)]
pub struct RevisionProbe {
    /// The revision offered.
    pub revision: ProtocolVersion,
    /// How the server answered.
    pub answer: ProbeAnswer,
    /// What exactly it answered (the counter-offer, the error, the
    /// advertised versions).
    pub detail: String,
}

/// The server, from the `serverInfo` it sent.
#[derive(Clone, Debug, Serialize)]
pub struct Peer {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`, as sent.
    pub version: String,
    /// The version parsed as semver (a leading `v` allowed), when it is one.
    #[serde(serialize_with = "semver_text")]
    pub semver: Option<semver::Version>,
    /// The revision whose probe was answered with it (a counter-offer
    /// carries one too).
    pub revision: ProtocolVersion,
}

fn semver_text<S: Serializer>(v: &Option<semver::Version>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&v.to_string()),
        None => s.serialize_none(),
    }
}

impl Peer {
    /// Reads an `Implementation` object (`{name, version, …}`).
    pub fn from_server_info(info: &Value, revision: &ProtocolVersion) -> Option<Peer> {
        let name = info.get("name")?.as_str()?.to_owned();
        let version = match info.get("version") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let text = version.trim();
        let semver = semver::Version::parse(text.strip_prefix('v').unwrap_or(text)).ok();
        Some(Peer {
            name,
            version,
            semver,
            revision: revision.clone(),
        })
    }
}

/// A session opened by `initialize` at one revision.
#[derive(Clone, Debug)]
pub(crate) struct LegacySession {
    /// The `MCP-Session-Id` the server assigned, if it assigned one.
    pub id: Option<String>,
    /// The negotiated revision.
    pub version: ProtocolVersion,
}

/// How `initialize` went.
pub(crate) enum Init {
    /// The server took the offered revision.
    Accepted(LegacySession, Option<Value>),
    /// It answered with another one (the session, at that revision, is
    /// open: close it).
    Counter(LegacySession, Option<Value>),
    /// It refused.
    Refused(String),
}

/// The `initialize` request offering `rev`.
pub(crate) fn initialize_body(id: i64, rev: &ProtocolVersion) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": { "protocolVersion": rev, "capabilities": {}, "clientInfo": client_info() }
    })
}

/// Sends `initialize` offering `rev`.
pub(crate) async fn initialize(wire: &Wire, rev: &ProtocolVersion) -> Init {
    let id = wire.id();
    let reply = match wire.post(&Vec::new(), &initialize_body(id, rev)).await {
        Ok(r) => r,
        Err(e) => return Init::Refused(e),
    };
    let status = reply.status;
    let session_id = reply.header(headers::SESSION_ID);
    let answer = match reply.rpc_answer(id, wire.timeout).await {
        Ok(a) => a,
        Err(e) => return Init::Refused(e),
    };
    if let Some(err) = answer.get("error") {
        return Init::Refused(format!(
            "HTTP {status}, JSON-RPC error {}",
            short(&err.to_string())
        ));
    }
    let result = &answer["result"];
    let Some(offered) = result.get("protocolVersion").and_then(Value::as_str) else {
        return Init::Refused(format!(
            "HTTP {status}: the result has no protocolVersion: {}",
            short(&result.to_string())
        ));
    };
    let info = result.get("serverInfo").cloned();
    let session = LegacySession {
        id: session_id,
        version: ProtocolVersion::parse(offered),
    };
    if &session.version == rev {
        Init::Accepted(session, info)
    } else {
        Init::Counter(session, info)
    }
}

impl LegacySession {
    /// Opens a session at exactly `rev` (initialize, then
    /// `notifications/initialized`).
    pub(crate) async fn open(wire: &Wire, rev: &ProtocolVersion) -> Result<LegacySession, String> {
        match initialize(wire, rev).await {
            Init::Accepted(s, _) => {
                let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
                let _ = wire.post(&s.headers(), &note).await;
                Ok(s)
            }
            Init::Counter(s, _) => {
                let offered = s.version.clone();
                s.close(wire).await;
                Err(format!(
                    "initialize offering {rev} was answered with {offered}"
                ))
            }
            Init::Refused(e) => Err(format!("initialize offering {rev} failed: {e}")),
        }
    }

    /// The headers every later request of the session carries.
    pub(crate) fn headers(&self) -> Headers {
        let mut h = Headers::new();
        if let Some(id) = &self.id {
            h.push((headers::SESSION_ID, id.clone()));
        }
        if self.version.has(|f| f.version_header) {
            h.push((headers::PROTOCOL_VERSION, self.version.to_string()));
        }
        h
    }

    /// Ends the session with DELETE (best effort).
    pub(crate) async fn close(&self, wire: &Wire) {
        if self.id.is_some() {
            let _ = wire.delete(&self.headers()).await;
        }
    }
}

/// Probes a legacy revision with `initialize`; returns the probe and the
/// `serverInfo` seen.
pub(crate) async fn probe_legacy(
    wire: &Wire,
    rev: &ProtocolVersion,
) -> (RevisionProbe, Option<Value>) {
    let (answer, detail, info) = match initialize(wire, rev).await {
        Init::Accepted(s, info) => {
            s.close(wire).await;
            let detail = match &s.id {
                Some(_) => "initialize accepted; session id assigned".to_owned(),
                None => "initialize accepted; no session id".to_owned(),
            };
            (ProbeAnswer::Accepted, detail, info)
        }
        Init::Counter(s, info) => {
            s.close(wire).await;
            let detail = format!("initialize answered with {}", s.version);
            (ProbeAnswer::CounterOffered, detail, info)
        }
        Init::Refused(e) => (ProbeAnswer::Refused, e, None),
    };
    let probe = RevisionProbe {
        revision: rev.clone(),
        answer,
        detail,
    };
    (probe, info)
}

/// `_meta` key carrying the protocol version (2026-07-28).
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the server's identity in results (2026-07-28).
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A modern request: `params` plus the per-request `_meta` naming
/// `version`, and the matching `MCP-Protocol-Version`, `Mcp-Method` and
/// (for `tools/call`, `prompts/get`, `resources/read`) `Mcp-Name` headers.
pub(crate) fn modern_request(
    id: i64,
    method: &str,
    mut params: Value,
    version: &str,
) -> (Headers, Value) {
    if !params.is_object() {
        params = json!({});
    }
    params["_meta"] = json!({
        META_VERSION: version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": client_info(),
    });
    let mut headers: Headers = vec![
        (headers::PROTOCOL_VERSION, version.to_owned()),
        (headers::METHOD, method.to_owned()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    };
    if let Some(Value::String(n)) = name {
        headers.push((headers::NAME, n.clone()));
    }
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    (headers, body)
}

/// Probes 2026-07-28 with `server/discover`.
pub(crate) async fn probe_modern(
    wire: &Wire,
    rev: &ProtocolVersion,
) -> (RevisionProbe, Option<Value>) {
    let id = wire.id();
    let (headers, body) = modern_request(id, "server/discover", json!({}), rev.as_str());
    let outcome = match wire.post(&headers, &body).await {
        Ok(reply) => {
            let status = reply.status;
            reply
                .rpc_answer(id, wire.timeout)
                .await
                .map(|a| (status, a))
        }
        Err(e) => Err(e),
    };
    let (answer, detail, info) = match outcome {
        Err(e) => (ProbeAnswer::Refused, e, None),
        Ok((status, a)) => match (a.get("result"), a.get("error")) {
            (Some(result), _) => {
                let versions: Vec<ProtocolVersion> = result["supportedVersions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(ProtocolVersion::parse)
                    .collect();
                let info = result
                    .pointer(&format!("/_meta/{}", META_SERVER_INFO.replace('/', "~1")))
                    .or_else(|| result.get("serverInfo"))
                    .cloned();
                let listed = mcp_transport_core::version::list(&versions);
                if versions.is_empty() || versions.contains(rev) {
                    let detail = format!("server/discover answered; supportedVersions: {listed}");
                    (ProbeAnswer::Accepted, detail, info)
                } else {
                    let detail = format!("server/discover lists only {listed}");
                    (ProbeAnswer::Refused, detail, info)
                }
            }
            (None, Some(err)) => (
                ProbeAnswer::Refused,
                format!("HTTP {status}, JSON-RPC error {}", short(&err.to_string())),
                None,
            ),
            (None, None) => (
                ProbeAnswer::Refused,
                format!("HTTP {status}: no result"),
                None,
            ),
        },
    };
    let probe = RevisionProbe {
        revision: rev.clone(),
        answer,
        detail,
    };
    (probe, info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_versions() {
        let rev = ProtocolVersion::V2025_11_25;
        let p = Peer::from_server_info(&json!({"name": "rmcp", "version": "0.8.0"}), &rev).unwrap();
        assert_eq!(p.semver, Some(semver::Version::new(0, 8, 0)));
        let p = Peer::from_server_info(&json!({"name": "x", "version": "v1.2.3"}), &rev).unwrap();
        assert_eq!(p.semver, Some(semver::Version::new(1, 2, 3)));
        let p = Peer::from_server_info(&json!({"name": "x", "version": "2024.1"}), &rev).unwrap();
        assert_eq!(p.semver, None);
        assert!(Peer::from_server_info(&json!({"version": "1"}), &rev).is_none());
    }

    #[test]
    fn modern_request_mirrors_the_body() {
        let (h, b) = modern_request(7, "tools/call", json!({"name": "slow"}), "2026-07-28");
        assert!(h.contains(&("mcp-name", "slow".to_owned())));
        assert!(h.contains(&("mcp-method", "tools/call".to_owned())));
        assert_eq!(b["params"]["_meta"][META_VERSION], "2026-07-28");
        assert_eq!(b["id"], 7);
        // The client names itself in every request's `_meta`.
        assert_eq!(
            b["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-compat check-server"
        );
        let (h, _) = modern_request(
            8,
            "resources/read",
            json!({"uri": "test://a"}),
            "2026-07-28",
        );
        assert!(h.contains(&("mcp-name", "test://a".to_owned())), "{h:?}");
        let (h, _) = modern_request(9, "tools/list", json!({"name": "x"}), "2026-07-28");
        assert!(!h.iter().any(|(n, _)| *n == "mcp-name"), "{h:?}");
    }

    #[tokio::test]
    async fn closing_a_session_deletes_it_and_nothing_without_an_id() {
        use super::super::test_fake::{bare, serving};
        let (fake, wire) = serving(|_| bare(200)).await;
        let version = ProtocolVersion::V2025_11_25;
        LegacySession {
            id: None,
            version: version.clone(),
        }
        .close(&wire)
        .await;
        LegacySession {
            id: Some("s-1".into()),
            version,
        }
        .close(&wire)
        .await;
        let seen: Vec<_> = fake
            .seen()
            .into_iter()
            .map(|s| (s.method, s.headers.get(headers::SESSION_ID).cloned()))
            .collect();
        assert_eq!(
            seen,
            [(
                http::Method::DELETE,
                Some(http::HeaderValue::from_static("s-1"))
            )]
        );
    }
}
