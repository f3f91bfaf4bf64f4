//! Event ids (`{tag}.{stream}.{seq}[.{renewal}]`): parsing never panics and
//! accepts exactly what `Display` writes (parse ∘ display and
//! display ∘ parse are identities); every built id is short, visible ASCII
//! and parses back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(id) = EventId::parse(text) {
            assert_eq!(id.to_string(), text, "parse accepted a non-canonical id");
            assert_eq!(EventId::parse_in_session(text, &id.session), Ok(id));
            assert_eq!(id.position().renewal, 0);
        }
        if let Ok(tag) = SessionTag::parse(text) {
            assert_eq!(tag.as_str(), text);
        }
    }
    // Structured: the bytes pick a tag, numbers and a renewal.
    if data.len() >= 21 {
        let tag_len = usize::from(data[0] % 16) + 1;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let tag: String = data[1..=tag_len.min(data.len() - 1)]
            .iter()
            .map(|b| char::from(alphabet[usize::from(b % 64)]))
            .collect();
        let tag = SessionTag::parse(&tag).expect("a tag from the alphabet");
        let rest = &data[data.len() - 20..];
        let stream = u64::from_le_bytes(rest[..8].try_into().unwrap());
        let seq = u64::from_le_bytes(rest[8..16].try_into().unwrap());
        let renewal = u32::from_le_bytes(rest[16..20].try_into().unwrap());
        let mut id = EventId::new(tag, StreamId(stream), seq);
        if renewal > 0 {
            id = id.renewed(renewal);
        }
        let text = id.to_string();
        assert!(
            text.len() <= EventId::MAX_LEN,
            "{text} is longer than MAX_LEN"
        );
        assert!(text.bytes().all(|b| b.is_ascii_graphic()), "{text:?}");
        assert_eq!(EventId::parse(&text), Ok(id));
        assert_eq!(
            EventId::parse(&text).map(|i| i.position()),
            Ok(id.position())
        );
    }
});
