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

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    /// The response carries the refusal's status, and its code and
    /// message as a JSON-RPC error without an `id` member (*Transports*: the
    /// body "MAY comprise a JSON-RPC error response that has no id").
    #[tokio::test]
    async fn a_refusal_is_answered_with_its_status_and_error() {
        let reject = Reject {
            code: -32001,
            ..Reject::invalid(StatusCode::NOT_FOUND, "Session not found")
        };
        let (head, body) = reject.response().into_parts();
        assert_eq!(head.status, StatusCode::NOT_FOUND);
        let bytes = body.collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jsonrpc": "2.0",
                "error": {"code": -32001, "message": "Session not found"}})
        );
        assert_eq!(Reject::invalid(StatusCode::BAD_REQUEST, "x").code, -32600);
    }
}
