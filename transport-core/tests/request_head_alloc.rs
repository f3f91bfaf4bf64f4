//! `RequestHead::new` keeps an origin-form target and every header in one
//! buffer, allocated once at its final size: no `Display` round for the
//! target, no growth while it is filled, no shrink when it is boxed. A
//! pending 2025-11-25 request keeps this head between SEP-1699 polls, so
//! its size is part of the bound on what such a request holds.
//!
//! One test in this binary: the allocation count is global, and a second
//! test running beside it would be counted too.

use std::alloc::System;

use mcp_transport_core::request_head::RequestHead;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn an_origin_form_head_is_one_allocation_of_its_final_size() {
    for target in ["/mcp?x=1", "/", "/a/much/longer/path?with=a&query=string"] {
        let (parts, ()) = http::Request::post(target)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("x-multi", "one")
            .header("x-multi", "two")
            .header("mcp-method", "tools/call")
            .header("x-empty", "")
            .body(())
            .unwrap()
            .into_parts();
        let region = Region::new(GLOBAL);
        let head = RequestHead::new(parts);
        let stats = region.change();
        assert_eq!(
            (stats.allocations, stats.reallocations),
            (1, 0),
            "{target}: {stats:?}"
        );
        // And it holds what it was given.
        assert_eq!(head.target(), target);
        assert_eq!(head.headers().count(), 6);
        assert_eq!(head.header_str("X-Multi"), Some("one"));
    }
}
