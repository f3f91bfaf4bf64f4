//! The dual-era router's pure decision (`mcp_negotiate::server::route`):
//! never panics, whatever the body; a single-era endpoint sends everything
//! to its era; GET and DELETE never look at a body; and, on bodies built
//! from the cases of the routing table, the table's answer.
//!
//! Input: byte 0 picks the HTTP method, session, `MCP-Protocol-Version`
//! header and eras; byte 1 picks raw mode (the rest is the body) or a
//! structured body (its bits pick the case, the rest is padding).
#![no_main]

use http::Method;
use libfuzzer_sys::fuzz_target;
use mcp_negotiate::server::{Probe, Target, route};

const HEADERS: [Option<&str>; 6] = [
    None,
    Some("2026-07-28"),
    Some("2025-11-25"),
    Some("2030-01-01"),
    Some(" 2026-07-28 "),
    Some("garbage"),
];

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let (a, b) = (input[0], input[1]);
    let method = match a & 3 {
        0 | 1 => Method::POST,
        2 => Method::GET,
        _ => Method::DELETE,
    };
    let has_session = a & 4 != 0;
    let version_header = HEADERS[usize::from((a >> 3) % 6)];
    let rest = &input[2..];
    let structured = b & 1 == 1;
    let body: Vec<u8> = if structured {
        build(b >> 1, rest)
    } else {
        rest.to_vec()
    };
    let probe = Probe {
        method: &method,
        has_session,
        version_header,
        body: Some(&body),
    };

    assert_eq!(route(&probe, true, false), Target::Legacy);
    assert_eq!(route(&probe, false, true), Target::Modern);
    let target = route(&probe, true, true);
    if method != Method::POST {
        let bodiless = Probe {
            body: None,
            ..probe
        };
        assert_eq!(
            target,
            route(&bodiless, true, true),
            "a {method} looked at a body"
        );
    }
    if structured && method == Method::POST {
        let header_modern =
            version_header.is_some_and(|v| matches!(v.trim(), "2026-07-28" | "2030-01-01"));
        let expected = match b >> 1 & 3 {
            // Modern `_meta`: modern even with a session or on `initialize`.
            0 => Target::Modern,
            // A batch: legacy.
            1 => Target::Legacy,
            // `initialize` without modern `_meta`: legacy.
            2 => Target::Legacy,
            // Anything else: the session, then the header decide.
            _ if has_session => Target::Legacy,
            _ if header_modern => Target::Modern,
            _ => Target::Legacy,
        };
        assert_eq!(target, expected, "body {}", String::from_utf8_lossy(&body));
    }
});

/// A body for one row of the routing table; `pad` varies the method name,
/// the other members and the whitespace around them.
fn build(bits: u8, pad: &[u8]) -> Vec<u8> {
    let word: String = pad
        .iter()
        .take(12)
        .map(|b| char::from(b'a' + b % 26))
        .collect();
    let ws = [" ", "\n", "\t", "\r\n", ""][usize::from(pad.first().copied().unwrap_or(0) % 5)];
    let method = if bits & 4 != 0 {
        "initialize".to_owned()
    } else {
        format!("tools/{word}")
    };
    let text = match bits & 3 {
        0 => format!(
            r#"{ws}{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"{word}x":[1,{{}}],"_meta":{{"other":{ws}true,"io.modelcontextprotocol/protocolVersion":{ws}"2026-07-28"}}}}}}{ws}"#
        ),
        1 => format!(
            r#"{ws}[{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}]"#
        ),
        2 => format!(
            r#"{ws}{{"jsonrpc":"2.0","id":"{word}","method":"initialize","params":{{"protocolVersion":"2025-11-25","_meta":{{"{word}":1}}}}}}{ws}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":2,{ws}"method":"tools/{word}","params":{{"_meta":{{"protocolVersion":"2026-07-28","progressToken":"{word}"}}}}}}"#
        ),
    };
    text.into_bytes()
}
