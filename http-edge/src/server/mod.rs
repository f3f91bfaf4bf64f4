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

pub mod body;
pub mod checks;
pub mod reject;
pub mod reply;
pub mod service;

pub use body::read_body;
pub use reject::Reject;
pub use reply::HttpResponse;
