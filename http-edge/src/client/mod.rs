//! The client side of the edge: what the Streamable HTTP clients of both
//! engines and the HTTP+SSE client do with reqwest below their protocol
//! rules.
//!
//! | module | what |
//! | --- | --- |
//! | [`send`](mod@send) | sending a request (a failure is `TransportError::Connection`), reqwest error chains |
//! | [`deadline`](mod@deadline) | a request's deadline over retries and resumptions |
//! | [`answer`] | media types, bounded answer bodies, the JSON-RPC error or text of an error body |
//! | [`sse`](mod@sse) | [`SseBody`]: a response body read as SSE through the core decoder |

pub mod answer;
pub mod deadline;
pub mod send;
pub mod sse;
#[cfg(test)]
mod test_bodies;

pub use answer::{
    BodyError, MAX_ERROR_BODY, MediaType, body_excerpt, media_type, read_body, read_limited,
    rpc_error,
};
pub use deadline::with_deadline;
pub use send::{error_chain, send};
pub use sse::{SseBody, SseEnd, SseNext, SseOverflow};
