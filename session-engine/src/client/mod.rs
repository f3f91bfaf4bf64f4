//! The legacy-era Streamable HTTP client: [`LegacyClient`], an
//! implementation of [`mcp_transport_core::transport::Transport`] for the
//! session-based revisions 2025-03-26, 2025-06-18 and 2025-11-25.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_transport_core::transport::TransportError> {
//! use mcp_session_engine::client::{ClientConfig, LegacyClient};
//! use mcp_transport_core::transport::{RequestOptions, Transport};
//!
//! let client = LegacyClient::connect(ClientConfig::new("http://127.0.0.1:8080/mcp")).await?;
//! let response = client
//!     .request("tools/list", None, RequestOptions::default())
//!     .await?
//!     .response()
//!     .await?;
//! println!("{:?}", response.payload);
//! client.close().await?;
//! # Ok(()) }
//! ```
//!
//! What differs between the revisions is read from the negotiated
//! revision's [`Features`](mcp_transport_core::version::Features) row, never
//! from its version string: `version_header` (send `MCP-Protocol-Version`
//! after `initialize`), `batches` (JSON-RPC batches may arrive in SSE events
//! and JSON answers, and [`LegacyClient::batch`] sends them), `get_stream`.
//! Polling (SEP-1699) needs no switch: the resumption loop honours `retry`
//! and `Last-Event-ID` whenever a server uses them.
//!
//! | module | what it does |
//! | --- | --- |
//! | `config` | [`ClientConfig`]: offered versions, input handler, bounds |
//! | `session` | the `initialize` handshake, session headers, starting over after 404 |
//! | `wire` | building POST/GET/DELETE, statuses to errors, media types, JSON bodies |
//! | `sse_reader` | one SSE connection: body bytes → frames (events with their own ids, ids, `retry`) |
//! | `resume` | one logical SSE stream across connections: `retry`/backoff, `Last-Event-ID`, de-duplication, bounds |
//! | `request` | POST of a request, JSON or SSE answer, the [`ResponseStream`](mcp_transport_core::transport::ResponseStream) |
//! | `batch` | POST of a JSON-RPC batch (2025-03-26), its answer matched to the requests by id |
//! | `input` | answering server-to-client requests by POST |
//! | `cancel` | `notifications/cancelled` when a request's stream is dropped |
//! | `task` | a request the server made a task of (`params.task` → `CreateTaskResult`): waiting on `tasks/result`, `tasks/cancel` on drop, `resume_task` |
//! | `listen` | the standalone GET stream |
//! | `legacy_client` | [`LegacyClient`] and its `Transport` implementation |

mod batch;
mod cancel;
mod config;
mod exchange;
mod input;
mod legacy_client;
mod listen;
mod request;
mod resume;
mod session;
mod shared;
mod sse_reader;
mod state;
mod task;
mod wire;

pub use batch::{BatchItem, BatchResponses};
pub use config::{
    ClientConfig, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_RESUME_ATTEMPTS, DEFAULT_MAX_RESUME_TIME,
    DEFAULT_RECONNECT_BACKOFF, DEFAULT_REQUEST_TIMEOUT,
};
pub use legacy_client::LegacyClient;
pub use state::InitializeResult;
