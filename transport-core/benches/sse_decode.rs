//! SSE decoding throughput: our sans-IO [`Decoder`] against eventsource-stream
//! 0.2 and sse-stream 0.3, on the same bytes fed in the same 16 KiB chunks.
//!
//! Workloads:
//! - `small_events`: 10,000 JSON-RPC progress notifications (~170-200 bytes
//!   each, with `id:` lines);
//! - `large_single_line`: four 1 MiB events, each one long `data:` line;
//! - `large_multi_line`: four 1 MiB events of 1 KiB `data:` lines.
//!
//! Run: `cargo bench -p mcp-transport-core --bench sse_decode`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use mcp_transport_core::sse::{Decoder, SseItem};

const CHUNK: usize = 16 * 1024;
const SMALL_EVENTS: usize = 10_000;
const LARGE_EVENTS: usize = 4;
const LARGE_SIZE: usize = 1 << 20;

/// 10,000 notifications in the shape of an MCP server's progress stream.
fn small_events() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..SMALL_EVENTS {
        out.push_str(&format!(
            "id: 0-{i}\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\
             {{\"progressToken\":\"tok-{token}\",\"progress\":{i},\"total\":{SMALL_EVENTS},\
             \"message\":\"processed item {i} of {SMALL_EVENTS}\"}}}}\n\n",
            token = i % 64,
        ));
    }
    out.into_bytes()
}

/// A 1 MiB JSON-ish payload without line breaks.
fn big_payload(seed: usize) -> String {
    let mut payload = String::from("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"");
    let mut n = seed;
    while payload.len() < LARGE_SIZE - 3 {
        payload.push(char::from(b'a' + (n % 26) as u8));
        n = n.wrapping_mul(31).wrapping_add(7);
    }
    payload.push_str("\"}}");
    payload
}

fn large_single_line() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..LARGE_EVENTS {
        out.push_str(&format!("id: {i}\ndata: {}\n\n", big_payload(i)));
    }
    out.into_bytes()
}

fn large_multi_line() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..LARGE_EVENTS {
        out.push_str(&format!("id: {i}\n"));
        let payload = big_payload(i);
        for line in payload.as_bytes().chunks(1024) {
            out.push_str("data: ");
            out.push_str(std::str::from_utf8(line).unwrap());
            out.push('\n');
        }
        out.push('\n');
    }
    out.into_bytes()
}

fn chunks(input: &[u8]) -> Vec<Bytes> {
    input.chunks(CHUNK).map(Bytes::copy_from_slice).collect()
}

/// Our decoder; returns the number of events and the total data length.
fn ours(chunks: &[Bytes]) -> (usize, usize) {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    let (mut events, mut bytes) = (0, 0);
    for chunk in chunks {
        decoder.feed(chunk, &mut items).unwrap();
        for item in items.drain(..) {
            if let SseItem::Event(event) = item {
                events += 1;
                bytes += event.data.len();
                black_box(event);
            }
        }
    }
    decoder.finish(&mut items).unwrap();
    (events, bytes)
}

fn byte_stream(
    chunks: &[Bytes],
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Unpin + '_ {
    futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, std::io::Error>))
}

fn eventsource_stream(chunks: &[Bytes]) -> (usize, usize) {
    let mut stream = eventsource_stream::EventStream::new(byte_stream(chunks));
    futures::executor::block_on(async {
        let (mut events, mut bytes) = (0, 0);
        while let Some(event) = stream.next().await {
            let event = event.unwrap();
            events += 1;
            bytes += event.data.len();
            black_box(event);
        }
        (events, bytes)
    })
}

fn sse_stream(chunks: &[Bytes]) -> (usize, usize) {
    let mut stream = sse_stream::SseByteStream::new(byte_stream(chunks));
    futures::executor::block_on(async {
        let (mut events, mut bytes) = (0, 0);
        while let Some(block) = stream.next().await {
            let block = block.unwrap();
            if let Some(data) = &block.data {
                events += 1;
                bytes += data.len();
            }
            black_box(block);
        }
        (events, bytes)
    })
}

type Implementation = fn(&[Bytes]) -> (usize, usize);

const IMPLEMENTATIONS: [(&str, Implementation); 3] = [
    ("mcp-transport-core", ours),
    ("eventsource-stream-0.2", eventsource_stream),
    ("sse-stream-0.3", sse_stream),
];

fn bench_workload(c: &mut Criterion, name: &str, input: &[u8], events: usize, sample_size: usize) {
    let chunks = chunks(input);
    // Outside the timing loop: every implementation really decodes every
    // event, with the same data.
    let expected = ours(&chunks);
    assert_eq!(expected.0, events, "{name}: our event count");
    for (implementation, decode) in IMPLEMENTATIONS {
        assert_eq!(decode(&chunks), expected, "{name}: {implementation}");
    }

    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(sample_size);
    for (implementation, decode) in IMPLEMENTATIONS {
        group.bench_function(implementation, |b| b.iter(|| decode(black_box(&chunks))));
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    bench_workload(c, "small_events", &small_events(), SMALL_EVENTS, 50);
    bench_workload(
        c,
        "large_single_line",
        &large_single_line(),
        LARGE_EVENTS,
        10,
    );
    bench_workload(c, "large_multi_line", &large_multi_line(), LARGE_EVENTS, 10);
}

criterion_group!(sse_decode, benches);
criterion_main!(sse_decode);
