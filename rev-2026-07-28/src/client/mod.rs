//! The 2026-07-28 client: [`ModernClient`], an implementation of
//! [`mcp_transport_core::transport::Transport`] for the stateless model.
//!
//! No `initialize`, no session, no GET stream, no resumption: every request
//! is its own POST carrying its protocol version, capabilities and client
//! info in `params._meta`, mirrored into `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers (*Streamable HTTP*,
//! "Request Metadata"). Closing a request's response stream cancels it;
//! server-to-client input arrives as `InputRequiredResult` (MRTR) and change
//! notifications on `subscriptions/listen` streams.
//!
//! | module | what it does |
//! | --- | --- |
//! | `config` | [`ModernClientConfig`]: versions, metadata, input handler, bounds |
//! | `meta` | `_meta` of each attempt and the headers that mirror it |
//! | [`tool_cache`] | `x-mcp-header`: validating tool definitions, extracting `Mcp-Param-*` values |
//! | `request` | one logical request: attempts, JSON/SSE answers, version / MRTR / safe-to-retry re-sends; a header mismatch is handed up as a refresh step |
//! | `mrtr` | `InputRequiredResult` rounds through the input handler |
//! | `task` | following a task (Tasks extension) to its end: `tasks/get` every `pollIntervalMs`, input through `tasks/update`, `tasks/cancel` on drop |
//! | `run` | driving a call: the `tools/list` refresh and retry a header mismatch asks for; running a call to its end |
//! | `listen` | `subscriptions/listen`: acknowledgment checks, filtering, graceful end |
//! | `sse`, `wire` | the SSE reader (core WHATWG decoder) and HTTP plumbing |
//! | `modern_client` | [`ModernClient`]: `Transport`, `discover`, `list_tools`, `subscribe` |

//! # Requests
//!
//! [`Transport::request`](mcp_transport_core::transport::Transport::request)
//! returns once the server has started answering (an HTTP refusal is
//! returned there); the stream then yields, in order, the request's
//! notifications (progress, log), one `StreamEvent::ServerRequest` per MRTR
//! input request answered (its id is the `inputRequests` key), and the final
//! `StreamEvent::Response`. Both `application/json` and
//! `text/event-stream` answers are read ("The client MUST support both").
//!
//! * A JSON-RPC error for the request is a `Response` even when it came
//!   with a 4xx status (this revision MUST answer several errors with
//!   400/404); a non-2xx answer without one is `TransportError::Http`.
//! * A result without `resultType` is complete; an unrecognized
//!   `resultType` is `TransportError::PeerMisbehaved` (*Overview*,
//!   "ResultType": "MUST be considered invalid").
//! * A JSON-RPC **request** on a response stream is
//!   `TransportError::PeerMisbehaved` ("The server MUST NOT send
//!   independent JSON-RPC requests on this stream").
//! * Every attempt gets a new id. Re-sends happen on
//!   `-32022 UnsupportedProtocolVersionError` (once: the highest version in
//!   both [`ModernClientConfig::versions`] and `data.supported` becomes the
//!   client's version from then on, even when it is the one just rejected;
//!   no mutual version is
//!   `TransportError::Negotiation` naming both lists), on `-32020
//!   HeaderMismatch` for `tools/call` (once, after re-fetching `tools/list`),
//!   on `InputRequiredResult` (up to [`ModernClientConfig::max_input_rounds`],
//!   then `TransportError::Limit`), and on a broken stream only when
//!   `RequestOptions::safe_to_retry` is set (once).
//! * A stream that ends or breaks before its response is **not resumed**
//!   (no GET, no `Last-Event-ID`: "Resumable SSE streams via
//!   `Last-Event-ID` are not supported"): `TransportError::ResumeFailed`
//!   with `ResumeFailure::NotResumable`.
//! * **Cancellation** is closing: dropping the `ResponseStream` drops the
//!   POST or the response body, which closes the connection (*Streamable
//!   HTTP*, "Cancellation"). No `notifications/cancelled` is ever sent;
//!   `notify` refuses it. A timeout ([`ModernClientConfig::with_request_timeout`],
//!   per HTTP exchange) closes the stream the same way.
//! * Bounds: [`ModernClientConfig::max_event_bytes`] per SSE event,
//!   [`ModernClientConfig::max_body_bytes`] per JSON body
//!   (`TransportError::Limit`).
//!
//! # MRTR: when the input handler fails
//!
//! `InputResponses` values are results; there is no slot for an error, and
//! the client "MUST construct the requested inputs before retrying". So an
//! input handler error **abandons the request**: no retry is sent, the
//! error is logged (`tracing::warn!`, with the input key and method), and
//! the stream fails with `TransportError::Unsupported` ("retrying after an
//! input handler error"). Servers "MUST NOT assume that clients will
//! fulfill the `inputRequests` or retry". To tell the server "no", answer
//! with a result that says so (elicitation: `{"action": "decline"}`).
//!
//! # Subscriptions
//!
//! [`ModernClient::subscribe`] (and `Transport::listen`) POSTs
//! `subscriptions/listen` with the filter's opted-in fields and returns once
//! `notifications/subscriptions/acknowledged` has arrived; anything else
//! first is `PeerMisbehaved`, a JSON-RPC error is `TransportError::Http`.
//! Acknowledged entries that were not requested are warned about and
//! ignored; [`Subscription::acknowledged`] is the acknowledged ∩ requested
//! filter, and **exactly those types are delivered**: any other
//! notification (unrequested, unacknowledged, or request-scoped such as
//! progress) is skipped with a warning rather than failing the
//! subscription. The messages start with the acknowledgment; keep-alive
//! comments are ignored and no timeout applies after the acknowledgment. A
//! `subscriptions/listen` result (graceful closure) or a
//! `notifications/cancelled` for the subscription is yielded and ends the
//! stream; an end without either is `TransportError::ResumeFailed` with
//! `ResumeFailure::SubscriptionEnded`.
//! Dropping the `ServerMessages` closes the stream, which ends the
//! subscription.
//!
//! # Tools
//!
//! `tools/list` results (through `request` or [`ModernClient::list_tools`])
//! lose the tools whose `x-mcp-header` annotations break the spec's
//! constraints, with a warning naming the tool and the reason; the others'
//! annotations are cached and mirrored into `Mcp-Param-{Name}` headers on
//! `tools/call` (see [`tool_cache`]).

mod config;
mod listen;
mod meta;
mod modern_client;
mod mrtr;
mod request;
mod run;
mod shared;
mod sse;
mod task;
pub mod tool_cache;
mod wire;

pub use config::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_REQUEST_TIMEOUT, ModernClientConfig,
};
pub use listen::Subscription;
pub use modern_client::{DiscoverResult, ModernClient};
pub use tool_cache::{HeaderParam, ToolRejection, header_params};
