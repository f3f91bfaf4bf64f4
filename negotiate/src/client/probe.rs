//! Reading the answer to a modern probe, as a pure function.
//!
//! 2026-07-28 *Streamable HTTP*, "Backward Compatibility": "On `400 Bad
//! Request`, the client SHOULD inspect the response body before falling
//! back: modern servers also use `400` for `UnsupportedProtocolVersionError`,
//! `MissingRequiredClientCapabilityError`, and header-validation failures.
//! If the body contains a recognized modern JSON-RPC error, the server speaks
//! a modern version of MCP — retry using the advertised `supported` versions
//! or correct the request, rather than falling back. If the body is empty or
//! is not a recognized modern JSON-RPC error, fall back to `initialize`."
//! And for unknown methods a modern server answers "`404 Not Found` and a
//! JSON-RPC error with code `-32601`", which "distinguishes this case from a
//! `404` returned by a legacy HTTP+SSE server".

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{
    ErrorObject, HEADER_MISMATCH, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use mcp_transport_core::negotiation::{NegotiationError, UnsupportedVersionData};
use mcp_transport_core::transport::TransportError;

/// What a failed modern probe says about the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A modern server (a recognized modern error came back).
    Modern,
    /// A modern server with which no modern version is shared; `supported`
    /// is what it advertised (it may list legacy versions to fall back to).
    ModernWithout {
        /// The server's advertised versions.
        supported: Vec<ProtocolVersion>,
    },
    /// Not a modern server: a 4xx (or a 200 carrying a non-modern error)
    /// without a recognized modern error. Fall back to legacy.
    Legacy {
        /// The HTTP status of the refusal.
        status: u16,
    },
    /// Not an answer about eras at all (unreachable, 5xx, broken stream).
    Unreachable,
}

/// Whether a JSON-RPC error is one only a modern server sends.
pub fn is_modern_error(status: u16, error: &ErrorObject) -> bool {
    match error.code {
        UNSUPPORTED_PROTOCOL_VERSION => UnsupportedVersionData::from_error(error).is_some(),
        MISSING_REQUIRED_CLIENT_CAPABILITY | HEADER_MISMATCH => true,
        METHOD_NOT_FOUND => status == 404,
        _ => false,
    }
}

/// Classifies the error a modern probe (`server/discover`) failed with.
pub fn classify(error: &TransportError) -> Verdict {
    match error {
        TransportError::Http {
            status,
            rpc: Some(e),
            ..
        } if is_modern_error(*status, e) => Verdict::Modern,
        TransportError::Http { status, .. } if (200..500).contains(status) => {
            Verdict::Legacy { status: *status }
        }
        TransportError::Negotiation(NegotiationError::NoMutualVersion {
            server_supports, ..
        }) => Verdict::ModernWithout {
            supported: server_supports.clone(),
        },
        // A server that answered, but not with a JSON-RPC message we could
        // read, is not a modern server either.
        TransportError::PeerMisbehaved(_) => Verdict::Legacy { status: 200 },
        _ => Verdict::Unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, rpc: Option<ErrorObject>) -> TransportError {
        TransportError::Http {
            status,
            message: "m".into(),
            rpc,
        }
    }

    #[test]
    fn recognized_modern_errors() {
        let data = UnsupportedVersionData {
            supported: vec![ProtocolVersion::V2026_07_28],
            requested: ProtocolVersion::parse("2030-01-01"),
        };
        assert_eq!(classify(&http(400, Some(data.to_error()))), Verdict::Modern);
        assert_eq!(
            classify(&http(400, Some(ErrorObject::new(HEADER_MISMATCH, "x")))),
            Verdict::Modern
        );
        assert_eq!(
            classify(&http(
                404,
                Some(ErrorObject::method_not_found("server/discover"))
            )),
            Verdict::Modern
        );
    }

    #[test]
    fn a_modern_server_without_a_mutual_version_and_an_unreadable_answer() {
        let none = TransportError::Negotiation(
            mcp_transport_core::negotiation::NegotiationError::NoMutualVersion {
                client_supports: vec![ProtocolVersion::V2026_07_28],
                server_supports: vec![ProtocolVersion::parse("2030-01-01")],
            },
        );
        assert_eq!(
            classify(&none),
            Verdict::ModernWithout {
                supported: vec![ProtocolVersion::parse("2030-01-01")]
            }
        );
        // It answered, but nothing we could read as JSON-RPC: not modern.
        let garbled = TransportError::PeerMisbehaved(
            mcp_transport_core::transport::Misbehaviour::InvalidJsonRpc {
                what: "POST server/discover".into(),
                detail: "not JSON".into(),
            },
        );
        assert_eq!(classify(&garbled), Verdict::Legacy { status: 200 });
    }

    #[test]
    fn anything_else_is_legacy() {
        // A -32022 without its data is not recognized.
        assert_eq!(
            classify(&http(
                400,
                Some(ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "x"))
            )),
            Verdict::Legacy { status: 400 }
        );
        assert_eq!(classify(&http(400, None)), Verdict::Legacy { status: 400 });
        assert_eq!(
            classify(&http(400, Some(ErrorObject::new(-32600, "no session")))),
            Verdict::Legacy { status: 400 }
        );
        assert_eq!(classify(&http(404, None)), Verdict::Legacy { status: 404 });
        assert_eq!(classify(&http(405, None)), Verdict::Legacy { status: 405 });
        // -32601 in a 200 comes from a legacy server processing the method.
        assert_eq!(
            classify(&http(
                200,
                Some(ErrorObject::method_not_found("server/discover"))
            )),
            Verdict::Legacy { status: 200 }
        );
        assert_eq!(classify(&http(503, None)), Verdict::Unreachable);
        assert_eq!(
            classify(&TransportError::Connection("refused".into())),
            Verdict::Unreachable
        );
    }
}
