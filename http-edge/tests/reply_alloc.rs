//! `reply::json`: a JSON text with spare capacity becomes the body's bytes
//! with no allocation beside its buffer (`Bytes::from(String)` of such a
//! string allocates a shared header; docs/PERFORMANCE.md, session 48).
//!
//! One test in this binary: the allocation count is global, and a second
//! test running beside it would be counted too.

use std::alloc::System;

use http::StatusCode;
use http_body_util::BodyExt;
use mcp_http_edge::server::reply;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const TEXT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;

/// Allocations made by answering `text` (the string is made before the
/// count starts), and the body the answer carries.
fn answer(text: String) -> (usize, http::Response<axum::body::Body>) {
    let region = Region::new(GLOBAL);
    let response = reply::json(StatusCode::OK, text);
    (region.change().allocations, response)
}

#[tokio::test]
async fn spare_capacity_costs_no_allocation() {
    let (exact, _) = answer(TEXT.to_owned());
    let mut roomy = String::with_capacity(TEXT.len() + 96);
    roomy.push_str(TEXT);
    let (spare, response) = answer(roomy);
    assert_eq!(
        spare, exact,
        "a text with spare capacity cost allocations an exact one did not"
    );
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[http::header::CONTENT_TYPE],
        "application/json"
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, TEXT);
}
