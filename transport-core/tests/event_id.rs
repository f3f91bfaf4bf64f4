//! Event ids: format, canonical parsing, typed errors, session checks.

use std::collections::HashSet;

use mcp_transport_core::event_id::{EventId, EventIdError, Malformed, SessionTag, StreamId};
use proptest::prelude::*;

fn tag(s: &str) -> SessionTag {
    SessionTag::parse(s).expect("valid tag")
}

fn malformed(s: &str) -> Malformed {
    match EventId::parse(s) {
        Err(EventIdError::Malformed { reason }) => reason,
        other => panic!("{s:?}: expected Malformed, got {other:?}"),
    }
}

#[test]
fn display_format() {
    let id = EventId::new(tag("abc_DEF-9"), StreamId(7), 12);
    assert_eq!(id.to_string(), "abc_DEF-9.7.12");
    assert_eq!(
        EventId::priming(tag("t"), StreamId::STANDALONE).to_string(),
        "t.0.0"
    );
    let max = EventId::new(tag("ABCDEFGHIJKLMNOP"), StreamId(u64::MAX), u64::MAX);
    assert_eq!(max.renewed(u32::MAX).to_string().len(), EventId::MAX_LEN);
}

#[test]
fn roundtrip_examples() {
    for s in [
        "a.0.0",
        "abc.1.1",
        "none.18446744073709551615.18446744073709551615",
        "-_.10.200",
    ] {
        let id: EventId = s.parse().unwrap();
        assert_eq!(id.to_string(), s);
    }
    let id = EventId::parse("k3Jx_9aQ-2Lm0pZb.7.12").unwrap();
    assert_eq!(id.session.as_str(), "k3Jx_9aQ-2Lm0pZb");
    assert_eq!(id.stream, StreamId(7));
    assert_eq!(id.seq, 12);
    assert!(!id.is_priming());
    assert!(EventId::parse("x.3.0").unwrap().is_priming());
}

#[test]
fn minted_tags() {
    let a = SessionTag::from_random_bytes([0; 12]);
    assert_eq!(a.as_str(), "AAAAAAAAAAAAAAAA");
    let b = SessionTag::from_random_bytes([0xff; 12]);
    assert_eq!(b.as_str(), "________________");
    let c = SessionTag::from_random_bytes(*b"hello world!");
    assert_eq!(c.as_str(), "aGVsbG8gd29ybGQh"); // base64url of the bytes
    assert_eq!(SessionTag::from_u64(0).as_str(), "AAAAAAAAAAA");
    assert_eq!(SessionTag::from_u64(u64::MAX).as_str(), "P__________");
    assert_ne!(SessionTag::from_u64(1), SessionTag::from_u64(2));
    for t in [a, b, c, SessionTag::from_u64(42), SessionTag::SESSIONLESS] {
        assert_eq!(SessionTag::parse(t.as_str()), Ok(t));
        assert_eq!(t.to_string(), t.as_str());
    }
    assert_eq!(SessionTag::SESSIONLESS.as_str(), "none");
    assert_eq!(
        format!("{:?}", SessionTag::SESSIONLESS),
        "SessionTag(\"none\")"
    );
}

#[test]
fn tag_parse_errors() {
    assert_eq!(SessionTag::parse(""), Err(EventIdError::Empty));
    assert_eq!(
        SessionTag::parse("a.b"),
        Err(EventIdError::Malformed {
            reason: Malformed::InvalidByte { at: 1 }
        })
    );
    assert_eq!(
        SessionTag::parse("ABCDEFGHIJKLMNOPQ"),
        Err(Malformed::TagTooLong.into())
    );
    assert_eq!(
        "a b".parse::<SessionTag>(),
        Err(Malformed::InvalidByte { at: 1 }.into())
    );
}

#[test]
fn stream_ids() {
    assert_eq!(StreamId::STANDALONE, StreamId(0));
    assert!(StreamId::STANDALONE.is_standalone());
    assert_eq!(StreamId::STANDALONE.next(), Some(StreamId::FIRST_REQUEST));
    assert!(!StreamId::FIRST_REQUEST.is_standalone());
    assert_eq!(StreamId(u64::MAX).next(), None);
    assert_eq!(StreamId(5).get(), 5);
    assert_eq!(StreamId(5).to_string(), "5");
}

#[test]
fn ids_unique_across_streams_of_a_session() {
    let t = SessionTag::from_u64(99);
    let mut seen = HashSet::new();
    for stream in 0..50 {
        for seq in 0..50 {
            let id = EventId::new(t, StreamId(stream), seq);
            assert!(seen.insert(id.to_string()), "duplicate {id}");
        }
    }
    // And across sessions.
    let other = SessionTag::from_u64(100);
    assert!(seen.insert(EventId::new(other, StreamId(1), 1).to_string()));
}

#[test]
fn empty_and_too_long() {
    assert_eq!(EventId::parse(""), Err(EventIdError::Empty));
    let long = format!("a.1.{}", "1".repeat(200));
    assert_eq!(
        EventId::parse(&long),
        Err(EventIdError::TooLong {
            len: long.len(),
            max: EventId::MAX_LEN
        })
    );
    // Exactly MAX_LEN characters of valid shape is accepted.
    let max = format!("{}.{}.{}.{}", "T".repeat(16), u64::MAX, u64::MAX, u32::MAX);
    assert_eq!(max.len(), EventId::MAX_LEN);
    assert!(EventId::parse(&max).is_ok());
    // One more byte is TooLong even before looking at the shape.
    assert!(matches!(
        EventId::parse(&format!("{max}0")),
        Err(EventIdError::TooLong { .. })
    ));
}

#[test]
fn missing_and_extra_parts() {
    assert_eq!(malformed("abc"), Malformed::MissingPart);
    assert_eq!(malformed("abc.1"), Malformed::MissingPart);
    assert_eq!(malformed("abc.1.2.3.4"), Malformed::ExtraPart);
    assert_eq!(malformed("abc.1.2.3."), Malformed::ExtraPart);
    assert_eq!(malformed("abc.1.2."), Malformed::EmptyPart);
    assert_eq!(malformed(".1.2"), Malformed::EmptyPart);
    assert_eq!(malformed("abc..2"), Malformed::EmptyPart);
    assert_eq!(malformed("abc.1."), Malformed::EmptyPart);
    assert_eq!(malformed(".."), Malformed::EmptyPart);
    assert_eq!(malformed("."), Malformed::MissingPart);
}

#[test]
fn non_digits() {
    assert_eq!(malformed("abc.x.2"), Malformed::NotADigit);
    assert_eq!(malformed("abc.1.2a"), Malformed::NotADigit);
    assert_eq!(malformed("abc.-1.2"), Malformed::NotADigit);
    assert_eq!(malformed("abc.1._2"), Malformed::NotADigit);
    assert_eq!(malformed("abc.0x1.2"), Malformed::NotADigit);
    // '+', spaces and other signs are not even allowed bytes.
    assert_eq!(malformed("abc.+1.2"), Malformed::InvalidByte { at: 4 });
    assert_eq!(malformed("abc. 1.2"), Malformed::InvalidByte { at: 4 });
    assert_eq!(malformed("abc.1.2 "), Malformed::InvalidByte { at: 7 });
}

#[test]
fn non_canonical_numbers() {
    assert_eq!(malformed("abc.01.2"), Malformed::LeadingZero);
    assert_eq!(malformed("abc.1.00"), Malformed::LeadingZero);
    assert_eq!(malformed("abc.1.007"), Malformed::LeadingZero);
    assert!(EventId::parse("abc.0.0").is_ok());
    assert!(EventId::parse("abc.10.100").is_ok());
}

#[test]
fn overflow() {
    // u64::MAX + 1
    assert_eq!(malformed("abc.18446744073709551616.1"), Malformed::Overflow);
    assert_eq!(malformed("abc.1.99999999999999999999"), Malformed::Overflow);
    assert_eq!(
        malformed("abc.1.100000000000000000000"),
        Malformed::Overflow
    );
    assert!(EventId::parse("abc.1.18446744073709551615").is_ok());
}

#[test]
fn tag_too_long_in_id() {
    assert_eq!(malformed("ABCDEFGHIJKLMNOPQ.1.1"), Malformed::TagTooLong);
}

#[test]
fn control_bytes_and_non_ascii() {
    assert_eq!(malformed("abc.1.2\0"), Malformed::InvalidByte { at: 7 });
    assert_eq!(malformed("abc\r.1.2"), Malformed::InvalidByte { at: 3 });
    assert_eq!(malformed("abc.1\n.2"), Malformed::InvalidByte { at: 5 });
    assert_eq!(
        malformed("\u{feff}abc.1.2"),
        Malformed::InvalidByte { at: 0 }
    );
    assert_eq!(malformed("abcé.1.2"), Malformed::InvalidByte { at: 3 });
    assert_eq!(malformed("ab:c.1.2"), Malformed::InvalidByte { at: 2 });
}

#[test]
fn foreign_session() {
    let mine = tag("mine");
    let theirs = tag("theirs");
    let id = EventId::new(theirs, StreamId(1), 3);
    assert_eq!(id.check_session(&mine), Err(EventIdError::ForeignSession));
    assert_eq!(id.check_session(&theirs), Ok(()));
    assert_eq!(
        EventId::parse_in_session("theirs.1.3", &mine),
        Err(EventIdError::ForeignSession)
    );
    assert_eq!(
        EventId::parse_in_session("mine.1.3", &mine),
        Ok(EventId::new(mine, StreamId(1), 3))
    );
    // Malformed input is reported as such, not as foreign.
    assert_eq!(
        EventId::parse_in_session("", &mine),
        Err(EventIdError::Empty)
    );
}

#[test]
fn error_messages_are_readable() {
    assert_eq!(EventIdError::Empty.to_string(), "event id is empty");
    assert_eq!(
        EventId::parse("a.01.1").unwrap_err().to_string(),
        "malformed event id: numbers must not have leading zeros"
    );
    assert_eq!(
        EventIdError::ForeignSession.to_string(),
        "event id was issued in a different session"
    );
}

fn arb_tag() -> impl Strategy<Value = SessionTag> {
    prop_oneof![
        "[A-Za-z0-9_-]{1,16}".prop_map(|s| SessionTag::parse(&s).unwrap()),
        any::<u64>().prop_map(SessionTag::from_u64),
        any::<[u8; 12]>().prop_map(SessionTag::from_random_bytes),
    ]
}

fn arb_id() -> impl Strategy<Value = EventId> {
    (
        arb_tag(),
        any::<u64>(),
        any::<u64>(),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(|(t, stream, seq, n)| EventId::new(t, StreamId(stream), seq).renewed(n))
}

proptest! {
    #[test]
    fn prop_roundtrip(id in arb_id()) {
        let s = id.to_string();
        prop_assert!(s.len() <= EventId::MAX_LEN);
        prop_assert!(s.bytes().all(|b| b.is_ascii_graphic()));
        prop_assert_eq!(EventId::parse(&s), Ok(id));
        prop_assert_eq!(id.check_session(&id.session), Ok(()));
    }

    /// `text()` (written without `fmt`) is the parts joined by dots, as
    /// `format!` writes them; `Display` is the same text.
    #[test]
    fn prop_text_is_the_parts_formatted(id in arb_id()) {
        let mut expected = format!("{}.{}.{}", id.session.as_str(), id.stream.0, id.seq);
        if id.renewal > 0 {
            expected.push_str(&format!(".{}", id.renewal));
        }
        prop_assert_eq!(&*id.text(), expected.as_str());
        prop_assert_eq!(format!("{:?}", id.text()), format!("{expected:?}"));
        prop_assert_eq!(id.to_string(), expected);
    }

    #[test]
    fn prop_distinct_ids_distinct_strings(a in arb_id(), b in arb_id()) {
        prop_assert_eq!(a == b, a.to_string() == b.to_string());
    }

    #[test]
    fn prop_parse_never_panics(s in any::<String>()) {
        let _ = EventId::parse(&s);
        let _ = SessionTag::parse(&s);
    }

    #[test]
    fn prop_parse_near_valid_never_panics(s in "[A-Za-z0-9_.+ \\-\r\n\0]{0,80}") {
        // Whatever parses must be canonical: it displays back as the input.
        if let Ok(id) = EventId::parse(&s) {
            prop_assert_eq!(id.to_string(), s);
        }
    }

    #[test]
    fn prop_numbers_parse_like_u64(stream in "[0-9]{1,25}", seq in "[0-9]{1,25}") {
        let s = format!("t.{stream}.{seq}");
        let canonical = |d: &str| d.len() == 1 || !d.starts_with('0');
        match (stream.parse::<u64>(), seq.parse::<u64>()) {
            (Ok(a), Ok(b)) if canonical(&stream) && canonical(&seq) => {
                prop_assert_eq!(EventId::parse(&s), Ok(EventId::new(SessionTag::parse("t").unwrap(), StreamId(a), b)));
            }
            _ => prop_assert!(EventId::parse(&s).is_err()),
        }
    }
}

#[test]
fn renewed_ids_name_the_same_position_and_are_unique() {
    let t = SessionTag::from_u64(7);
    let id = EventId::new(t, StreamId(3), 12);
    assert_eq!(id.renewal, 0);
    let r1 = id.renewed(1);
    let r2 = id.renewed(2);
    assert_eq!(r1.to_string(), format!("{t}.3.12.1"));
    assert_eq!(EventId::parse(&r1.to_string()), Ok(r1));
    assert_eq!(r2.position(), id);
    assert_eq!(r1.position(), id);
    assert_ne!(r1, r2);
    assert_ne!(r1, id);
    assert_eq!(
        id.renewed(u32::MAX).to_string().parse::<EventId>(),
        Ok(id.renewed(u32::MAX))
    );
    assert_eq!(malformed("abc.1.2.0"), Malformed::ZeroRenewal);
    assert_eq!(malformed("abc.1.2.01"), Malformed::LeadingZero);
    assert_eq!(malformed("abc.1.2.4294967296"), Malformed::Overflow);
    assert_eq!(malformed("abc.1.2.x"), Malformed::NotADigit);
}
