//! The server side of the edge: what both engines do with an
//! `http::Request` before their protocol rules start, and how they build
//! their `http::Response`s.
//!
//! | module | what |
//! | --- | --- |
//! | [`reject`] | [`Reject`]: a refusal (status, JSON-RPC code, message) small enough for a `Result` |
//! | [`checks`] | `Accept` and `Content-Type` of a POST; `Origin`/`Host` are checked by [`OriginPolicy`](crate::config::OriginPolicy) |
//! | [`body`] | reading a request body up to a size limit (413 beyond) |
//! | [`reply`] | JSON answers, SSE heads, JSON-RPC errors with their HTTP status, 202, 405 |
//! | [`service`] | the `tower::Service` glue every engine implements, and its axum `Router` |
//! | [`endpoint`] | [`Endpoint`]: an engine at one path without a `Router` (what `mcp-compat serve` runs) |
//! | [`conn`] | [`serve`]: the HTTP/1.1 accept loop with header, body and idle timeouts and a connection cap ([`ConnLimits`]); [`serve_with_shutdown`]: the same, with a graceful shutdown |
//! | `race` | the connection raced against its controls (idle timer, shutdown), each polled only when woken |
//! | [`limits`] | [`ConnLimits`]: the connection bounds of [`serve`] and their defaults |
//! | [`timed_io`] | the socket wrapper of [`serve`] whose blocked writes time out |
//! | [`span_body`] | [`SpanBody`](span_body::SpanBody): a response body polled inside a tracing span (an SSE stream logs under its request) |
//! | [`timed_body`] | the body wrappers of [`serve`]: request bodies whose reads time out (408), response bodies that mark a request in flight |

pub mod body;
pub mod checks;
pub mod conn;
pub mod endpoint;
mod in_place;
pub mod limits;
mod race;
pub mod reject;
pub mod reply;
pub mod service;
pub mod span_body;
pub mod timed_body;
pub mod timed_io;

pub use body::{read_body, read_body_unless_parsed};
pub use conn::{serve, serve_with_shutdown};
pub use endpoint::Endpoint;
pub use limits::ConnLimits;
pub use reject::Reject;
pub use reply::HttpResponse;
