//! Tests of the `text/event-stream` encoder, and encode → decode round trips.

use bytes::BytesMut;
use mcp_transport_core::sse::{
    Decoder, EncodeError, Event, SseItem, write_comment, write_event, write_event_with_retry,
    write_priming, write_retry,
};
use proptest::prelude::*;

/// Decodes `chunks` with a fresh decoder; panics on a decoder error.
fn decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> (Vec<SseItem>, String) {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut items).expect("decoder error");
    }
    decoder.finish(&mut items).expect("decoder error");
    (items, decoder.last_event_id().to_owned())
}

fn ev(event_type: &str, data: &str, last_event_id: &str) -> SseItem {
    SseItem::Event(Event {
        event_type: event_type.to_owned(),
        data: data.to_owned(),
        last_event_id: last_event_id.to_owned(),
    })
}

/// The round trip's view of data: CRLF and lone CR become LF.
fn normalise(data: &str) -> String {
    data.replace("\r\n", "\n").replace('\r', "\n")
}

struct Case {
    name: &'static str,
    event_type: Option<&'static str>,
    id: Option<&'static str>,
    retry: Option<u64>,
    data: &'static str,
    wire: &'static str,
}

#[test]
fn write_event_vectors() {
    let cases = [
        Case {
            name: "data only",
            event_type: None,
            id: None,
            retry: None,
            data: "hello",
            wire: "data: hello\n\n",
        },
        Case {
            name: "all fields",
            event_type: Some("progress"),
            id: Some("s1-42"),
            retry: Some(3000),
            data: "{\"a\":1}",
            wire: "event: progress\nid: s1-42\nretry: 3000\ndata: {\"a\":1}\n\n",
        },
        Case {
            name: "empty data is one bare data line",
            event_type: None,
            id: None,
            retry: None,
            data: "",
            wire: "data:\n\n",
        },
        Case {
            name: "LF split",
            event_type: None,
            id: None,
            retry: None,
            data: "a\nb",
            wire: "data: a\ndata: b\n\n",
        },
        Case {
            name: "CRLF split",
            event_type: None,
            id: None,
            retry: None,
            data: "a\r\nb",
            wire: "data: a\ndata: b\n\n",
        },
        Case {
            name: "CR split",
            event_type: None,
            id: None,
            retry: None,
            data: "a\rb",
            wire: "data: a\ndata: b\n\n",
        },
        Case {
            name: "LF CR is two line ends",
            event_type: None,
            id: None,
            retry: None,
            data: "a\n\rb",
            wire: "data: a\ndata:\ndata: b\n\n",
        },
        Case {
            name: "trailing LF",
            event_type: None,
            id: None,
            retry: None,
            data: "a\n",
            wire: "data: a\ndata:\n\n",
        },
        Case {
            name: "only a newline",
            event_type: None,
            id: None,
            retry: None,
            data: "\r\n",
            wire: "data:\ndata:\n\n",
        },
        Case {
            name: "leading space survives",
            event_type: None,
            id: None,
            retry: None,
            data: " x",
            wire: "data:  x\n\n",
        },
        Case {
            name: "empty event type and id",
            event_type: Some(""),
            id: Some(""),
            retry: None,
            data: "x",
            wire: "event: \nid: \ndata: x\n\n",
        },
        Case {
            name: "retry zero and unicode",
            event_type: None,
            id: Some("ü"),
            retry: Some(0),
            data: "😀",
            wire: "id: ü\nretry: 0\ndata: 😀\n\n",
        },
        Case {
            name: "retry u64::MAX",
            event_type: None,
            id: None,
            retry: Some(u64::MAX),
            data: "x",
            wire: "retry: 18446744073709551615\ndata: x\n\n",
        },
    ];
    for case in cases {
        let mut buf = Vec::new();
        write_event_with_retry(&mut buf, case.event_type, case.id, case.retry, case.data).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            case.wire,
            "{}",
            case.name
        );

        if case.retry.is_none() {
            let mut plain = Vec::new();
            write_event(&mut plain, case.event_type, case.id, case.data).unwrap();
            assert_eq!(plain, buf, "{}: write_event", case.name);
        }

        // And it decodes back.
        let (items, _) = decode([buf.as_slice()]);
        let mut expected = Vec::new();
        if let Some(ms) = case.retry {
            expected.push(SseItem::Retry(ms));
        }
        let event_type = match case.event_type {
            None | Some("") => "message",
            Some(event_type) => event_type,
        };
        expected.push(ev(event_type, &normalise(case.data), case.id.unwrap_or("")));
        assert_eq!(items, expected, "{}: round trip", case.name);
    }
}

#[test]
fn write_event_rejects_line_breaks_and_writes_nothing() {
    let bad: [(Option<&str>, Option<&str>, EncodeError); 7] = [
        (Some("a\nb"), None, EncodeError::InvalidEventType),
        (Some("a\rb"), None, EncodeError::InvalidEventType),
        (Some("\r\n"), Some("ok"), EncodeError::InvalidEventType),
        (None, Some("1\n"), EncodeError::InvalidId),
        (None, Some("\r1"), EncodeError::InvalidId),
        (None, Some("1\0x"), EncodeError::InvalidId),
        (Some("ok"), Some("\0"), EncodeError::InvalidId),
    ];
    for (event_type, id, error) in bad {
        let mut buf = b"keep".to_vec();
        assert_eq!(
            write_event(&mut buf, event_type, id, "data"),
            Err(error.clone())
        );
        assert_eq!(
            write_event_with_retry(&mut buf, event_type, id, Some(5), "data"),
            Err(error)
        );
        assert_eq!(buf, b"keep", "{event_type:?} {id:?}");
    }
    // NUL is fine in the event type and in data.
    let mut buf = Vec::new();
    write_event(&mut buf, Some("a\0b"), None, "x\0y").unwrap();
    assert_eq!(decode([buf.as_slice()]).0, [ev("a\0b", "x\0y", "")]);
}

#[test]
fn error_messages() {
    assert_eq!(
        EncodeError::InvalidEventType.to_string(),
        "SSE event type must not contain CR or LF"
    );
    assert_eq!(
        EncodeError::InvalidId.to_string(),
        "SSE event id must not contain CR, LF or NUL"
    );
    assert_eq!(
        EncodeError::InvalidComment.to_string(),
        "SSE comment must not contain CR or LF"
    );
}

#[test]
fn priming_event() {
    let mut buf = Vec::new();
    write_priming(&mut buf, "abc").unwrap();
    assert_eq!(buf, b"id: abc\ndata:\n\n");
    let (items, last_event_id) = decode([buf.as_slice()]);
    assert_eq!(items, [ev("message", "", "abc")]);
    assert_eq!(last_event_id, "abc");

    let mut buf = b"x".to_vec();
    assert_eq!(write_priming(&mut buf, "a\nb"), Err(EncodeError::InvalidId));
    assert_eq!(write_priming(&mut buf, "a\0b"), Err(EncodeError::InvalidId));
    assert_eq!(buf, b"x");
}

#[test]
fn retry_block() {
    let mut buf = Vec::new();
    write_retry(&mut buf, 5000);
    assert_eq!(buf, b"retry: 5000\n\n");
    write_retry(&mut buf, 0);
    write_retry(&mut buf, u64::MAX);
    assert_eq!(
        buf,
        b"retry: 5000\n\nretry: 0\n\nretry: 18446744073709551615\n\n"
    );
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    decoder.feed(&buf, &mut items).unwrap();
    // A retry-only block sets the reconnection time and dispatches nothing.
    assert_eq!(
        items,
        [
            SseItem::Retry(5000),
            SseItem::Retry(0),
            SseItem::Retry(u64::MAX)
        ]
    );
    assert_eq!(decoder.retry(), Some(u64::MAX));
}

#[test]
fn comments() {
    let mut buf = Vec::new();
    write_comment(&mut buf, "keep-alive").unwrap();
    write_comment(&mut buf, "").unwrap();
    write_comment(&mut buf, " x: y").unwrap();
    assert_eq!(buf, b": keep-alive\n:\n:  x: y\n");
    for bad in ["a\nb", "a\r", "\r\n"] {
        assert_eq!(
            write_comment(&mut buf, bad),
            Err(EncodeError::InvalidComment)
        );
    }
    assert_eq!(buf, b": keep-alive\n:\n:  x: y\n");

    // Comments between events change nothing.
    let mut stream = Vec::new();
    write_comment(&mut stream, "ping").unwrap();
    write_event(&mut stream, None, Some("1"), "a").unwrap();
    write_comment(&mut stream, "ping").unwrap();
    write_comment(&mut stream, "").unwrap();
    write_event(&mut stream, None, None, "b").unwrap();
    assert_eq!(
        decode([stream.as_slice()]).0,
        [ev("message", "a", "1"), ev("message", "b", "1")]
    );
}

#[test]
fn writes_into_bytes_mut() {
    let mut buf = BytesMut::new();
    write_event(&mut buf, Some("t"), Some("1"), "a\nb").unwrap();
    write_priming(&mut buf, "2").unwrap();
    write_retry(&mut buf, 10);
    write_comment(&mut buf, "c").unwrap();
    assert_eq!(
        &buf[..],
        b"event: t\nid: 1\ndata: a\ndata: b\n\nid: 2\ndata:\n\nretry: 10\n\n: c\n"
    );
}

// --- Property: encode then decode gives the events back. ---

#[derive(Debug, Clone)]
struct Outgoing {
    event_type: Option<&'static str>,
    id: Option<String>,
    retry: Option<u64>,
    data: String,
    comment_before: Option<String>,
}

fn data_string() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        4 => any::<char>(),
        2 => Just('\n'),
        1 => Just('\r'),
        1 => Just(' '),
        1 => Just(':'),
        1 => Just('\u{FEFF}'),
        1 => prop::sample::select(vec!['a', 'é', '€', '😀', '\0']),
    ];
    prop::collection::vec(ch, 0..40).prop_map(String::from_iter)
}

fn outgoing() -> impl Strategy<Value = Outgoing> {
    (
        prop::option::of(prop::sample::select(vec![
            "message",
            "progress",
            "notifications/message",
            "with space",
            " leading",
            "",
            "ü€",
        ])),
        prop::option::of("[^\r\n\0]{0,12}"),
        prop::option::weighted(0.2, any::<u64>()),
        data_string(),
        prop::option::weighted(0.2, "[^\r\n]{0,8}"),
    )
        .prop_map(|(event_type, id, retry, data, comment_before)| Outgoing {
            event_type,
            id,
            retry,
            data,
            comment_before,
        })
}

fn cut(input: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for p in points {
        chunks.push(input[start..p].to_vec());
        start = p;
    }
    chunks.push(input[start..].to_vec());
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn encode_then_decode_round_trips(
        events in prop::collection::vec(outgoing(), 0..12),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
        bom in any::<bool>(),
    ) {
        let mut wire = Vec::new();
        if bom {
            wire.extend_from_slice(b"\xEF\xBB\xBF");
        }
        let mut expected = Vec::new();
        let mut last_event_id = String::new();
        for event in &events {
            if let Some(comment) = &event.comment_before {
                write_comment(&mut wire, comment).unwrap();
            }
            write_event_with_retry(
                &mut wire,
                event.event_type,
                event.id.as_deref(),
                event.retry,
                &event.data,
            )
            .unwrap();
            if let Some(ms) = event.retry {
                expected.push(SseItem::Retry(ms));
            }
            if let Some(id) = &event.id {
                last_event_id.clone_from(id);
            }
            expected.push(SseItem::Event(Event {
                event_type: match event.event_type {
                    None | Some("") => "message".to_owned(),
                    Some(t) => t.to_owned(),
                },
                data: normalise(&event.data),
                last_event_id: last_event_id.clone(),
            }));
        }
        let chunks = cut(&wire, &cuts);
        let (items, decoded_id) = decode(chunks.iter().map(Vec::as_slice));
        prop_assert_eq!(items, expected);
        prop_assert_eq!(decoded_id, last_event_id);
    }

    #[test]
    fn data_lines_never_contain_line_breaks(data in data_string()) {
        let mut wire = Vec::new();
        write_event(&mut wire, None, None, &data).unwrap();
        // Every line but the final blank one is a `data:` field.
        let text = String::from_utf8(wire).unwrap();
        let body = text.strip_suffix("\n\n").unwrap();
        for line in body.split('\n') {
            prop_assert!(line.starts_with("data:"), "{:?}", line);
            prop_assert!(!line.contains('\r'));
        }
    }
}
