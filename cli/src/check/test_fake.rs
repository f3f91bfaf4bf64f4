//! Scripted servers for the unit tests of the checks: test-support's
//! [`Fake`] answering each request with the test's closure, and a
//! [`Wire`] to it.

use std::time::Duration;

use axum::response::Response;
use http::StatusCode;
use mcp_test_support::fake::{Fake, status, status_json};
use mcp_test_support::server::Seen;
use serde_json::{Value, json};

use super::detect::LegacySession;
use super::wire::Wire;
use mcp_transport_core::ProtocolVersion;

/// A fake server answering `answer(seen)`, and a wire to it.
pub(crate) async fn serving(
    answer: impl Fn(&Seen) -> Response + Send + Sync + 'static,
) -> (Fake, Wire) {
    let fake = Fake::start(answer).await;
    let wire = Wire::new(&fake.url, Duration::from_secs(5), None).expect("a wire");
    (fake, wire)
}

/// A bare status with an empty body.
pub(crate) fn bare(code: u16) -> Response {
    status(StatusCode::from_u16(code).expect("a status"), "")
}

/// A JSON-RPC error answer: HTTP `code`, error `rpc` with `data` when given.
pub(crate) fn rpc_error(code: u16, rpc: i64, data: Option<Value>) -> Response {
    let mut error = json!({ "code": rpc, "message": "m" });
    if let Some(d) = data {
        error["data"] = d;
    }
    status_json(
        StatusCode::from_u16(code).expect("a status"),
        &json!({ "jsonrpc": "2.0", "id": 1, "error": error }),
    )
}

/// A 2025-11-25 session with `id`.
pub(crate) fn session(id: Option<&str>) -> LegacySession {
    LegacySession {
        id: id.map(str::to_owned),
        version: ProtocolVersion::V2025_11_25,
    }
}
