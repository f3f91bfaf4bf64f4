//! # mcp-rev-2025-03-26
//!
//! MCP Streamable HTTP as it was first defined: revision **2025-03-26**, and
//! its successor **2025-06-18**, served as two *profiles* of one crate. Both
//! run on the session-based engine of [`mcp_session_engine`] (sessions, the
//! standalone GET stream, the replay log, the client's stream handling and
//! resumption are the same code as for 2025-11-25); this crate's
//! [`Revision`] is the engine's
//! [`SessionRevision`](mcp_session_engine::revision::SessionRevision) for
//! each, chosen once when `initialize` has settled on a version.
//!
//! # What differs, and where it is handled
//!
//! | rule | 2025-03-26 | 2025-06-18 |
//! | --- | --- | --- |
//! | JSON-RPC batches ([`Revision`]`::batches`) | *Transports*, "Sending Messages to the Server" 3: the body may be "an array batching one or more requests and/or notifications" or "one or more responses"; 4: only responses/notifications → 202; 5-6: requests → one JSON body or an SSE stream with "one JSON-RPC response per each JSON-RPC request" (which "MAY be batched"). The server answers element by element (below); [`LegacyClient::batch`] sends batches | removed (changelog, "Major changes" 1): an array is 400 `-32600` "batches ended with 2025-03-26"; `LegacyClient::batch` is `Unsupported` |
//! | `MCP-Protocol-Version` (`version_header`) | not defined: the client does not send it, the server serves requests without it | "Protocol Version Header": the client "MUST include" it after `initialize`; the server answers 400 "with an invalid or unsupported" value, and serves a request without it (or naming another supported version) at the version negotiated for the session ("relying on the protocol version negotiated during initialization") |
//! | elicitation (`elicitation`) | not in `schema.ts` (`ServerRequest` is ping, sampling, roots): a handler's `elicitation/create` ends a `tools/call` with a tool execution error (`isError: true`, *Tools*, "Error Handling"), any other request with `-32021` | `elicitation/create`, to clients that declared `elicitation` |
//! | SEP-1699 (`polling`) | none: no priming event, no `retry`, and the 2025-11-25 disconnect policy does not apply — "The server SHOULD NOT close the SSE stream before sending a JSON-RPC response per each received JSON-RPC request" | the same |
//!
//! Both: "Servers MAY attach an `id` field to their SSE events"
//! ("Resumability and Redelivery" 1). Here that is
//! [`ServerConfig::event_ids`], **on by default**, so that a client whose
//! connection breaks resumes "with an HTTP GET ... and include the
//! `Last-Event-ID` header" (2). With no `retry` in these revisions, the
//! client waits [`ClientConfig::reconnect_backoff`] before each
//! reconnection; when the server sent no event id it fails at once with
//! `TransportError::ResumeFailed` saying so, instead of waiting.
//!
//! Capabilities, checked against each revision's `schema.ts`: clients may
//! declare `roots`, `sampling` (and from 2025-06-18 `elicitation`); servers
//! `logging`, `completions`, `prompts`, `resources`, `tools`. The engine
//! sends `sampling/createMessage` and `roots/list` only to clients that
//! declared them (else `-32021`), and answers `ping` and
//! `logging/setLevel` itself.
//!
//! # Batches on the server (2025-03-26)
//!
//! As JSON-RPC 2.0 §6 ("Batch") says: an empty array is one `-32600` error
//! (400); each invalid element gets its own error response; notifications
//! and responses inside are processed and get no response; valid requests
//! run concurrently and are answered. `initialize` inside a batch gets a
//! `-32600` error response (*Lifecycle*, "Initialization": "The initialize
//! request MUST NOT be part of a JSON-RPC batch"); a batch before any
//! session is 400 like any non-`initialize` POST. A batch longer than
//! [`ServerConfig::max_batch_len`] (default 64) is 400 `-32600`. In SSE mode
//! (the default) the answer is one stream carrying **each message as its
//! own event** — related notifications and server requests of every
//! request of the batch, and one response per request — that ends after the
//! last response; in [`ServerConfig::json_response`] mode it is one JSON
//! array, unless a request streams first. See `mcp_session_engine`'s server
//! documentation for the full table.
//!
//! # Use
//!
//! ```no_run
//! use std::sync::Arc;
//! # async fn run(handler: Arc<dyn mcp_transport_core::handler::Handler>) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_rev_2025_03_26::{self as rev, BatchItem, Profile};
//! use mcp_transport_core::jsonrpc::to_raw;
//!
//! // Server: both profiles on one endpoint.
//! let server = rev::server(handler, rev::server_config(Profile::Both));
//! let app = axum::Router::new().nest_service("/mcp", server.router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! tokio::spawn(async move { axum::serve(listener, app).await });
//!
//! // Client: 2025-03-26, sending a batch of two requests.
//! let client = rev::connect("http://127.0.0.1:3000/mcp", Profile::V2025_03_26).await?;
//! let answer = client
//!     .batch(vec![
//!         BatchItem::request("tools/list", None),
//!         BatchItem::request("tools/call", Some(to_raw(&serde_json::json!({"name": "echo"}))?)),
//!     ])
//!     .await?;
//! for (id, response) in answer.ids.iter().zip(&answer.responses) {
//!     println!("{id}: {:?}", response.payload);
//! }
//! # Ok(()) }
//! ```
//!
//! To add 2025-11-25 to the same endpoint, build a [`ServerConfig`] with
//! more `versions` and use [`LegacyServer::new`] directly: the engine is
//! the same.

mod server;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use mcp_transport_core::handler::Handler;
use mcp_transport_core::transport::TransportError;

pub use mcp_session_engine;
pub use mcp_session_engine::client::{
    BatchItem, BatchResponses, ClientConfig, InitializeResult, LegacyClient,
};
pub use mcp_session_engine::server::{DEFAULT_MAX_BATCH_LEN, LegacyServer, ServerConfig};
pub use mcp_transport_core;
pub use mcp_transport_core::ProtocolVersion;
pub use server::{Revision, register};

/// Revision `2025-03-26`: the first Streamable HTTP, with JSON-RPC batches
/// and without the `MCP-Protocol-Version` header.
pub const V2025_03_26: ProtocolVersion = ProtocolVersion::V2025_03_26;

/// Revision `2025-06-18`: no batches, the `MCP-Protocol-Version` header
/// ("For example: `MCP-Protocol-Version: 2025-06-18`"), elicitation.
pub const V2025_06_18: ProtocolVersion = ProtocolVersion::V2025_06_18;

/// Which of this crate's revisions a server serves or a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// 2025-03-26 only.
    V2025_03_26,
    /// 2025-06-18 only.
    V2025_06_18,
    /// Both. A server answers each `initialize` with the offered version,
    /// or 2025-06-18 for any other offer; a client offers 2025-06-18 and
    /// accepts a 2025-03-26 counter-offer (*Lifecycle*, "Version
    /// Negotiation").
    Both,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 3] = [Profile::V2025_03_26, Profile::V2025_06_18, Profile::Both];

    /// The revisions of the profile, newest first (the order a client
    /// offers them in).
    pub fn versions(self) -> Vec<ProtocolVersion> {
        match self {
            Profile::V2025_03_26 => vec![V2025_03_26],
            Profile::V2025_06_18 => vec![V2025_06_18],
            Profile::Both => vec![V2025_06_18, V2025_03_26],
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Profile::V2025_03_26 => "2025-03-26",
            Profile::V2025_06_18 => "2025-06-18",
            Profile::Both => "2025-03-26,2025-06-18",
        })
    }
}

/// Why a [`Profile`] could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseProfileError(pub String);

impl fmt::Display for ParseProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown profile {:?} (expected 2025-03-26, 2025-06-18, or both as \"2025-03-26,2025-06-18\" or \"both\")",
            self.0
        )
    }
}

impl std::error::Error for ParseProfileError {}

impl FromStr for Profile {
    type Err = ParseProfileError;

    /// `2025-03-26`, `2025-06-18`, `both`, or both versions separated by a
    /// comma in either order.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut has = (false, false);
        for part in s.split(',').map(str::trim) {
            match part {
                "2025-03-26" => has.0 = true,
                "2025-06-18" => has.1 = true,
                "both" => has = (true, true),
                _ => return Err(ParseProfileError(s.to_owned())),
            }
        }
        match has {
            (true, false) => Ok(Profile::V2025_03_26),
            (false, true) => Ok(Profile::V2025_06_18),
            (true, true) => Ok(Profile::Both),
            (false, false) => Err(ParseProfileError(s.to_owned())),
        }
    }
}

/// The server configuration for `profile`: [`ServerConfig::default`] with
/// `versions` set to the profile's revisions and this crate's
/// [`Revision`]s registered. Event ids are on
/// ([`ServerConfig::event_ids`]), so broken streams can be resumed.
pub fn server_config(profile: Profile) -> ServerConfig {
    register(ServerConfig::default().with_versions(profile.versions()))
}

/// A server of this crate's revisions answering with `handler`.
///
/// `config.versions` is narrowed to 2025-03-26 and 2025-06-18; when it
/// names neither (as [`ServerConfig::default`] does), both are served.
/// Every other field is used as given. Start from [`server_config`].
pub fn server(handler: Arc<dyn Handler>, config: ServerConfig) -> LegacyServer {
    let mut versions: Vec<ProtocolVersion> = config
        .versions
        .iter()
        .filter(|v| **v == V2025_03_26 || **v == V2025_06_18)
        .cloned()
        .collect();
    if versions.is_empty() {
        versions = Profile::Both.versions();
    }
    LegacyServer::new(handler, register(config.with_versions(versions)))
}

/// The client configuration for the endpoint `url` speaking `profile`:
/// [`ClientConfig::new`] with `versions` set to the profile's revisions
/// (newest first). A server answering `initialize` with another version is
/// refused with `TransportError::Negotiation` after a best-effort `DELETE`
/// (*Lifecycle*, "Version Negotiation": "If the client does not support the
/// version in the server's response, it SHOULD disconnect").
///
/// These revisions send no `retry`: set
/// [`reconnect_backoff`](ClientConfig::reconnect_backoff) for the wait
/// before resuming a broken stream.
pub fn client_config(url: impl Into<String>, profile: Profile) -> ClientConfig {
    ClientConfig::new(url).with_versions(profile.versions())
}

/// Connects to the endpoint `url` with [`client_config`]: `initialize`,
/// the version check and `notifications/initialized` (*Lifecycle*,
/// "Initialization").
pub async fn connect(
    url: impl Into<String>,
    profile: Profile,
) -> Result<LegacyClient, TransportError> {
    LegacyClient::connect(client_config(url, profile)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_name_their_revisions() {
        assert_eq!(V2025_03_26.as_str(), "2025-03-26");
        assert_eq!(V2025_06_18.as_str(), "2025-06-18");
        assert_eq!(server_config(Profile::V2025_03_26).versions, [V2025_03_26]);
        assert_eq!(server_config(Profile::V2025_06_18).versions, [V2025_06_18]);
        assert_eq!(
            client_config("http://127.0.0.1:1/mcp", Profile::Both).versions,
            [V2025_06_18, V2025_03_26]
        );
        assert!(server_config(Profile::Both).event_ids);
    }

    #[test]
    fn the_feature_rows_agree_with_the_revisions() {
        use mcp_session_engine::revision::SessionRevision;
        for r in Revision::ALL {
            let f = r.version().features().unwrap();
            assert_eq!(f.batches, r.batches(), "{r:?}");
            assert_eq!(f.version_header, r.version_header(), "{r:?}");
            assert_eq!(f.elicitation, r.elicitation(), "{r:?}");
            assert_eq!(f.sse_polling, r.polling().is_some(), "{r:?}");
            assert!(f.sessions && f.resumption && f.get_stream && f.server_requests);
        }
    }

    #[test]
    fn profiles_parse_and_print() {
        for p in Profile::ALL {
            assert_eq!(p.to_string().parse::<Profile>().unwrap(), p);
        }
        assert_eq!(
            "2025-06-18, 2025-03-26".parse::<Profile>().unwrap(),
            Profile::Both
        );
        assert_eq!("both".parse::<Profile>().unwrap(), Profile::Both);
        for bad in ["", "2025-11-25", "2025-03-26,x"] {
            assert!(bad.parse::<Profile>().is_err(), "{bad}");
        }
        let e = "2025-11-25".parse::<Profile>().unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"unknown profile "2025-11-25" (expected 2025-03-26, 2025-06-18, or both as "2025-03-26,2025-06-18" or "both")"#
        );
    }

    #[test]
    fn server_narrows_the_versions() {
        struct Nothing;
        #[async_trait::async_trait]
        impl Handler for Nothing {
            fn describe(&self) -> mcp_transport_core::handler::ServerDescription {
                mcp_transport_core::handler::ServerDescription {
                    info: serde_json::json!({"name": "n", "version": "0"}),
                    capabilities: serde_json::json!({}),
                    instructions: None,
                }
            }
            async fn handle(
                &self,
                _: mcp_transport_core::jsonrpc::Request,
                _: mcp_transport_core::handler::RequestContext,
            ) -> mcp_transport_core::handler::Outcome {
                mcp_transport_core::handler::Outcome::Error(
                    mcp_transport_core::jsonrpc::ErrorObject::internal("no"),
                )
            }
        }
        let s = server(Arc::new(Nothing), ServerConfig::default());
        assert_eq!(s.config().versions, [V2025_06_18, V2025_03_26]);
        let s = server(
            Arc::new(Nothing),
            ServerConfig::default().with_versions([ProtocolVersion::V2025_11_25, V2025_03_26]),
        );
        assert_eq!(s.config().versions, [V2025_03_26]);
    }
}
