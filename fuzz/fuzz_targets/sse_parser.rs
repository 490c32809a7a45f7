//! Any bytes as an SSE stream: parsing never panics, and the events and the error are the same
//! however the stream is chunked (whole, split at a position taken from the first byte, or one
//! byte at a time). Small limits so that both caps are reached often.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_crawler::sse::{Event, SseError, SseParser};

/// Small enough that fuzz inputs reach them, different so the two errors are told apart.
const MAX_LINE: usize = 64;
const MAX_EVENT: usize = 100;

fn feed(chunks: &[&[u8]]) -> (Vec<Event>, Result<(), SseError>) {
    let mut p = SseParser::new(MAX_LINE, MAX_EVENT);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = p.push(c, &mut out) {
            return (out, Err(e));
        }
    }
    let end = p.finish(&mut out);
    let total: usize = chunks.iter().map(|c| c.len()).sum();
    assert_eq!(p.bytes_seen(), total as u64);
    (out, end)
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let whole = feed(&[stream]);
    let at = usize::from(first) % (stream.len() + 1);
    let (a, b) = stream.split_at(at);
    assert_eq!(feed(&[a, b]), whole, "split at {at}");
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(feed(&bytes), whole, "one byte at a time");
    for e in &whole.0 {
        assert!(!e.data.is_empty() && e.data.len() <= MAX_EVENT);
        assert!(!e.event.is_empty());
    }
});
