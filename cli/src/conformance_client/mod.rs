//! `mcp-compat conformance-client URL`: the client the official conformance
//! suite (`@modelcontextprotocol/conformance` client mode) drives.
//!
//! The suite starts a mock server for one scenario and runs this command
//! with the server's URL as the last argument and, in the environment,
//! `MCP_CONFORMANCE_SCENARIO` (the scenario), `MCP_CONFORMANCE_PROTOCOL_VERSION`
//! (the revision the mock speaks) and, for some scenarios,
//! `MCP_CONFORMANCE_CONTEXT` (JSON, e.g. the exact tool calls to make). The
//! command must do what the scenario checks and exit 0; the mock server
//! records and judges the requests.
//!
//! Everything goes through the negotiating client
//! ([`mcp_negotiate::client::connect`]) offering only the revision the mock
//! speaks: 2026-07-28 scenarios offer `[2026-07-28]` (the modern probe,
//! `server/discover`), the others the legacy revisions from the pinned one
//! down (`initialize`). The scenarios, by what they make the client do:
//!
//! | scenario | revision | what the client does |
//! | --- | --- | --- |
//! | `initialize`, `tools_call`, `sse-retry`, `elicitation-sep1034-client-defaults` | 2025-11-25 | lists the tools and calls each with arguments made up from its schema ([`tools`]); elicitations are accepted with the schema's defaults ([`input`]); `sse-retry` resumption is the transport's (wait `retry`, GET with `Last-Event-ID`) |
//! | `request-metadata`, `sep-2322-client-request-state`, `http-invalid-tool-headers` | 2026-07-28 | the same; `_meta`, the version retry, MRTR rounds and dropping tools with invalid `x-mcp-header` are the transport's |
//! | `http-standard-headers` | 2026-07-28 | every tool called, resource read and prompt fetched ([`headers`]) |
//! | `http-custom-headers` | 2026-07-28 | `tools/list`, then the context's `toolCalls` verbatim |
//! | `json-schema-ref-no-deref` | 2026-07-28 | `tools/list` only ([`schema`]) |
//! | `json-schema-2020-12-preservation` | 2025-11-25 | `tools/list`, then the focal tool's `inputSchema` echoed back verbatim |
//! | (no scenario set) | every revision | the generic default: connect, list tools, call the first tool, close |
//!
//! An unknown scenario name is an error (exit non-zero) naming the known ones.

pub mod headers;
pub mod input;
pub mod schema;
pub mod session;
pub mod tools;

use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::version::HttpTransport;
use serde_json::Value;

use session::Session;

/// The environment variable naming the scenario.
pub const SCENARIO_ENV: &str = "MCP_CONFORMANCE_SCENARIO";
/// The environment variable naming the revision the mock server speaks.
pub const PROTOCOL_VERSION_ENV: &str = "MCP_CONFORMANCE_PROTOCOL_VERSION";
/// The environment variable holding the scenario's context (JSON).
pub const CONTEXT_ENV: &str = "MCP_CONFORMANCE_CONTEXT";

/// What the client does in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// List the tools and call each, in order ([`tools::call_every_tool`]).
    CallEveryTool,
    /// List the tools and call the first ([`tools::call_first_tool`]).
    CallFirstTool,
    /// [`headers::standard_headers`].
    StandardHeaders,
    /// [`headers::custom_headers`].
    CustomHeaders,
    /// [`schema::list_without_dereferencing`].
    ListToolsOnly,
    /// [`schema::echo_schema`].
    EchoSchema,
}

/// The revisions a scenario's mock speaks when the suite does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// 2025-11-25 and older (sessions, `initialize`).
    Legacy,
    /// 2026-07-28 (stateless).
    Modern,
    /// Unknown: negotiate over every revision.
    Any,
}

/// One client scenario of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Its name (`MCP_CONFORMANCE_SCENARIO`).
    pub name: &'static str,
    /// The revisions its mock speaks by default (the suite's spec version:
    /// 2026-07-28 for scenarios introduced in it, else 2025-11-25).
    pub wire: Wire,
    /// What the client does.
    pub behaviour: Behaviour,
}

const fn scenario(name: &'static str, wire: Wire, behaviour: Behaviour) -> Scenario {
    Scenario {
        name,
        wire,
        behaviour,
    }
}

/// The non-authorization client scenarios of
/// `@modelcontextprotocol/conformance` 0.2.0-alpha.12.
pub const SCENARIOS: &[Scenario] = &[
    scenario("initialize", Wire::Legacy, Behaviour::CallEveryTool),
    scenario("tools_call", Wire::Legacy, Behaviour::CallEveryTool),
    scenario("sse-retry", Wire::Legacy, Behaviour::CallEveryTool),
    scenario(
        "elicitation-sep1034-client-defaults",
        Wire::Legacy,
        Behaviour::CallEveryTool,
    ),
    scenario("request-metadata", Wire::Modern, Behaviour::CallEveryTool),
    scenario(
        "sep-2322-client-request-state",
        Wire::Modern,
        Behaviour::CallEveryTool,
    ),
    scenario(
        "http-standard-headers",
        Wire::Modern,
        Behaviour::StandardHeaders,
    ),
    scenario(
        "http-custom-headers",
        Wire::Modern,
        Behaviour::CustomHeaders,
    ),
    scenario(
        "http-invalid-tool-headers",
        Wire::Modern,
        Behaviour::CallEveryTool,
    ),
    scenario(
        "json-schema-ref-no-deref",
        Wire::Modern,
        Behaviour::ListToolsOnly,
    ),
    scenario(
        "json-schema-2020-12-preservation",
        Wire::Legacy,
        Behaviour::EchoSchema,
    ),
];

/// The generic default (no scenario named).
pub const DEFAULT: Scenario = scenario("", Wire::Any, Behaviour::CallFirstTool);

/// Finds a scenario by name; `""` is the generic default.
pub fn find(name: &str) -> Result<Scenario, String> {
    if name.is_empty() {
        return Ok(DEFAULT);
    }
    SCENARIOS
        .iter()
        .find(|s| s.name == name)
        .copied()
        .ok_or_else(|| {
            let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
            format!(
                "unknown conformance scenario {name:?} (from {SCENARIO_ENV}); known: {}",
                known.join(", ")
            )
        })
}

/// What the suite passes besides the URL and the scenario.
#[derive(Clone, Debug)]
pub struct Options {
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`: the revision the mock speaks.
    pub protocol_version: Option<String>,
    /// `MCP_CONFORMANCE_CONTEXT`, parsed.
    pub context: Option<Value>,
    /// The deadline of each request (the suite gives a client 30 s in all).
    pub request_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            protocol_version: None,
            context: None,
            request_timeout: Duration::from_secs(20),
        }
    }
}

impl Options {
    /// Reads the options from the environment.
    pub fn from_env() -> Result<Options, String> {
        let non_empty = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let context = non_empty(CONTEXT_ENV)
            .map(|text| {
                serde_json::from_str(&text).map_err(|e| format!("{CONTEXT_ENV} is not JSON: {e}"))
            })
            .transpose()?;
        Ok(Options {
            protocol_version: non_empty(PROTOCOL_VERSION_ENV),
            context,
            ..Options::default()
        })
    }
}

/// The revisions to offer, most preferred first: the pinned one (for a
/// legacy Streamable HTTP one, it and the older ones, so that a
/// counter-offer is accepted), else the scenario's default.
pub fn revisions(pinned: Option<&str>, wire: Wire) -> Result<Vec<ProtocolVersion>, String> {
    // The legacy Streamable HTTP revisions up to `top`, newest first.
    let legacy_from = |top: &ProtocolVersion| -> Vec<ProtocolVersion> {
        let legacy = ProtocolVersion::STREAMABLE.iter().filter(|v| v.is_legacy());
        let upto = legacy.clone().position(|v| v == top);
        let mut list: Vec<ProtocolVersion> = match upto {
            Some(i) => legacy.take(i + 1).cloned().collect(),
            None => Vec::new(),
        };
        list.reverse();
        list
    };
    if let Some(pinned) = pinned {
        let v = ProtocolVersion::parse(pinned.trim());
        if v.is_modern() || v.has(|f| f.http_transport == HttpTransport::HttpSse) {
            return Ok(vec![v]);
        }
        let list = legacy_from(&v);
        if list.is_empty() {
            return Err(format!(
                "{PROTOCOL_VERSION_ENV}={pinned:?} is not a protocol version this client speaks"
            ));
        }
        return Ok(list);
    }
    Ok(match wire {
        Wire::Legacy => legacy_from(&ProtocolVersion::V2025_11_25),
        Wire::Modern => vec![ProtocolVersion::V2026_07_28],
        Wire::Any => {
            let mut all = ProtocolVersion::KNOWN.to_vec();
            all.reverse();
            all
        }
    })
}

/// Runs `scenario` against `url` with the options in the environment.
pub async fn run(url: &str, scenario: &str) -> Result<(), String> {
    run_with(url, scenario, Options::from_env()?).await
}

/// Runs `scenario` (`""`: the generic default) against `url`.
pub async fn run_with(url: &str, scenario: &str, options: Options) -> Result<(), String> {
    let found = find(scenario)?;
    let revisions = revisions(options.protocol_version.as_deref(), found.wire)?;
    let label = if found.name.is_empty() {
        "(default)"
    } else {
        found.name
    };
    eprintln!(
        "conformance-client: scenario {label} at {url}, offering {}",
        mcp_transport_core::version::list(&revisions)
    );
    let session = Session::connect(url, revisions, options.request_timeout).await?;
    let outcome = match found.behaviour {
        Behaviour::CallEveryTool => tools::call_every_tool(&session).await,
        Behaviour::CallFirstTool => tools::call_first_tool(&session).await,
        Behaviour::StandardHeaders => headers::standard_headers(&session).await,
        Behaviour::CustomHeaders => {
            headers::custom_headers(&session, options.context.as_ref()).await
        }
        Behaviour::ListToolsOnly => schema::list_without_dereferencing(&session).await,
        Behaviour::EchoSchema => schema::echo_schema(&session).await,
    };
    session.close().await;
    outcome.map_err(|e| format!("scenario {label}: {e}"))
}

#[cfg(test)]
mod on_the_wire;

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[ProtocolVersion]) -> Vec<&str> {
        v.iter().map(ProtocolVersion::as_str).collect()
    }

    #[test]
    fn every_scenario_of_the_suite_is_known_and_unknown_ones_are_refused() {
        for name in [
            "initialize",
            "tools_call",
            "sse-retry",
            "elicitation-sep1034-client-defaults",
            "request-metadata",
            "sep-2322-client-request-state",
            "http-standard-headers",
            "http-custom-headers",
            "http-invalid-tool-headers",
            "json-schema-ref-no-deref",
            "json-schema-2020-12-preservation",
        ] {
            assert_eq!(find(name).unwrap().name, name);
        }
        assert_eq!(find("").unwrap().behaviour, Behaviour::CallFirstTool);
        let err = find("auth/basic-cimd").unwrap_err();
        assert!(
            err.contains("unknown conformance scenario") && err.contains("sse-retry"),
            "{err}"
        );
    }

    #[test]
    fn revisions_follow_the_pinned_version_else_the_scenario() {
        assert_eq!(
            names(&revisions(Some("2025-11-25"), Wire::Modern).unwrap()),
            ["2025-11-25", "2025-06-18", "2025-03-26"]
        );
        assert_eq!(
            names(&revisions(Some("2025-06-18"), Wire::Legacy).unwrap()),
            ["2025-06-18", "2025-03-26"]
        );
        assert_eq!(
            names(&revisions(Some("2026-07-28"), Wire::Legacy).unwrap()),
            ["2026-07-28"]
        );
        assert_eq!(
            names(&revisions(Some("2024-11-05"), Wire::Legacy).unwrap()),
            ["2024-11-05"]
        );
        assert_eq!(
            names(&revisions(None, Wire::Legacy).unwrap()),
            ["2025-11-25", "2025-06-18", "2025-03-26"]
        );
        assert_eq!(
            names(&revisions(None, Wire::Modern).unwrap()),
            ["2026-07-28"]
        );
        assert_eq!(
            revisions(None, Wire::Any).unwrap()[0],
            ProtocolVersion::V2026_07_28
        );
        assert!(revisions(Some("latest"), Wire::Any).is_err());
        assert!(revisions(Some("2025-09-01"), Wire::Any).is_err());
    }
}
