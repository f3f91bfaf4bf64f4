//! [`Reject`]: a request refused before any work.

use http::StatusCode;
use mcp_transport_core::jsonrpc::{ErrorObject, INVALID_REQUEST};

use super::reply::{self, HttpResponse};

/// A request refused before any work: status, JSON-RPC code and message.
/// Small (unlike a whole response), so checks can return it in a `Result`;
/// [`response`](Self::response) turns it into the HTTP error, whose body is
/// a JSON-RPC error without id.
#[derive(Debug)]
pub struct Reject {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON-RPC error code of the body.
    pub code: i64,
    /// What was wrong.
    pub message: String,
}

impl Reject {
    /// A refusal with code `-32600 Invalid Request`.
    pub fn invalid(status: StatusCode, message: impl Into<String>) -> Self {
        Reject {
            status,
            code: INVALID_REQUEST,
            message: message.into(),
        }
    }

    /// The HTTP response.
    pub fn response(self) -> HttpResponse {
        reply::error(self.status, None, ErrorObject::new(self.code, self.message))
    }
}
