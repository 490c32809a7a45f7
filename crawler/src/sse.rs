//! An incremental Server-Sent Events parser: the "event stream interpretation" of the WHATWG
//! HTML standard (§9.2.6), fed with whatever chunks the network delivers.
//!
//! What it does:
//! - Splits the stream into lines ending in CRLF, LF or CR, wherever the chunk boundaries fall
//!   (a CR ending one chunk and an LF starting the next are one line ending), and skips one
//!   UTF-8 byte order mark at the very start of the stream.
//! - Interprets each line as the standard says: `:` starts a comment; `field:value` has one
//!   leading space stripped from its value; a line without `:` is a field with an empty value;
//!   `data` lines accumulate (joined by `\n`), `event` sets the type, `id` sets the last event
//!   id (unless it holds NUL), `retry` sets the reconnection time (digits only); unknown fields
//!   are ignored. A blank line dispatches the event.
//! - One deliberate departure from the standard: an event whose data is empty is not emitted.
//!   The standard dispatches `data:\n\n` as a message with empty data (only an event with no
//!   `data` line at all is dropped); MCP servers send exactly that as a "priming" event
//!   (`id: 1\ndata:\n\n`, 2025-11-25 streamable HTTP) to give the client an id to resume
//!   from, and it never carries a JSON-RPC message. Its `id` still takes effect.
//! - Bounds memory: a line longer than `max_line` bytes is refused while it is still being
//!   buffered, and an event whose data grows beyond `max_event` bytes is refused, so the parser
//!   never holds more than about `max_line + max_event` bytes plus the chunk being fed.
//! - Runs in linear time: each byte is scanned once, whatever the chunking.
//!
//! What it does not do: no reconnection and no `Last-Event-ID` header (the caller decides; the
//! last event id and reconnection time in force are carried by every [`Event`]), no lossy
//! decoding (the standard replaces invalid UTF-8 with U+FFFD; a crawler recording raw responses
//! refuses such a stream with [`SseError::NotUtf8`] instead), and no interpretation of the data
//! (see [`toolmark_mcp::jsonrpc`]). An event not ended by a blank line when the stream ends is
//! discarded, as the standard says.

/// The UTF-8 encoding of U+FEFF, skipped once at the start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The event type: the last `event` field of the event, or `message` when there was none
    /// (or it was empty).
    pub event: String,
    /// The `data` lines of the event joined by `\n`; never empty (see the module documentation).
    pub data: String,
    /// The last event id in force when the event was dispatched (set by any earlier `id` field
    /// of the stream, not only this event's); `None` when it is unset or was reset by an empty
    /// `id` field.
    pub id: Option<String>,
    /// The reconnection time in milliseconds most recently set by a valid `retry` field anywhere
    /// earlier in the stream, if any.
    pub retry: Option<u64>,
}

/// Why a stream was refused. After an error the parser's state is unspecified: stop reading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line is longer than the limit (given) in bytes.
    #[error("SSE line longer than {0} bytes")]
    LineTooLong(usize),
    /// The data of one event is larger than the limit (given) in bytes.
    #[error("SSE event data larger than {0} bytes")]
    EventTooLarge(usize),
    /// A line is not valid UTF-8.
    #[error("SSE stream is not valid UTF-8")]
    NotUtf8,
}

/// The state of one event stream being parsed; see the [module documentation](self).
#[derive(Debug)]
pub struct SseParser {
    max_line: usize,
    max_event: usize,
    /// The bytes of the current line received so far (never more than `max_line`).
    line: Vec<u8>,
    /// The last byte fed was a CR that ended a line: an LF right after it is part of that
    /// line ending.
    after_cr: bool,
    /// No complete line has been interpreted yet: a BOM at its start is to be skipped.
    first_line: bool,
    /// The data buffer: each `data` value followed by `\n`.
    data: String,
    /// The event type buffer.
    event: String,
    /// The last event id buffer (empty when unset).
    last_id: String,
    /// The reconnection time, once a valid `retry` field set it.
    retry: Option<u64>,
    bytes_seen: u64,
}

impl SseParser {
    /// A parser refusing lines longer than `max_line` bytes and events whose data is larger
    /// than `max_event` bytes (the crawler uses [`crate::limits::MAX_SSE_LINE`] and
    /// [`crate::limits::MAX_SSE_EVENT`]).
    pub fn new(max_line: usize, max_event: usize) -> SseParser {
        SseParser {
            max_line,
            max_event,
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            data: String::new(),
            event: String::new(),
            last_id: String::new(),
            retry: None,
            bytes_seen: 0,
        }
    }

    /// Feed the next bytes of the stream (any chunking, even one byte at a time); every event
    /// completed by them is pushed to `out`, in order.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        self.bytes_seen += bytes.len() as u64;
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            let Some(end) = rest.iter().position(|&b| b == b'\r' || b == b'\n') else {
                // No line ending in the rest of the chunk: buffer it, within the limit.
                if self.line.len() + rest.len() > self.max_line {
                    return Err(SseError::LineTooLong(self.max_line));
                }
                self.line.extend_from_slice(rest);
                return Ok(());
            };
            if self.line.len() + end > self.max_line {
                return Err(SseError::LineTooLong(self.max_line));
            }
            if self.line.is_empty() {
                self.interpret(&rest[..end], out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..end]);
                let result = self.interpret(&line, out);
                // Keep the allocation for the next long line.
                line.clear();
                self.line = line;
                result?;
            }
            let mut next = end + 1;
            if rest[end] == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            rest = &rest[next..];
        }
        Ok(())
    }

    /// The end of the stream: a partial line and an event not ended by a blank line are
    /// discarded (as the standard says), so nothing is pushed to `out`. The last event id and
    /// reconnection time are kept; bytes pushed afterwards start a new line and a new event.
    pub fn finish(&mut self, out: &mut Vec<Event>) -> Result<(), SseError> {
        let _ = out;
        self.line.clear();
        self.after_cr = false;
        self.data.clear();
        self.event.clear();
        Ok(())
    }

    /// Total bytes fed so far.
    pub fn bytes_seen(&self) -> u64 {
        self.bytes_seen
    }

    /// Interpret one complete line (without its line ending).
    fn interpret(&mut self, mut line: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "data" => {
                // The data this event would carry with this line: the buffer (each line plus
                // its `\n`) plus the value, the final `\n` being removed at dispatch.
                if self.data.len() + value.len() > self.max_event {
                    return Err(SseError::EventTooLarge(self.max_event));
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                self.last_id.clear();
                self.last_id.push_str(value);
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                // Digits too many for a u64 are ignored rather than saturated: no real
                // reconnection time is 585 million years.
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A blank line: emit the buffered event unless its data is empty, and start a new one.
    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let mut data = std::mem::take(&mut self.data);
        let event = std::mem::take(&mut self.event);
        data.pop();
        if data.is_empty() {
            // No data line (the standard's rule), or only empty ones (ours: see the module
            // documentation).
            return;
        }
        out.push(Event {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
            id: (!self.last_id.is_empty()).then(|| self.last_id.clone()),
            retry: self.retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: usize = 1 << 20;

    /// Parse `stream` fed whole, and also fed one byte at a time and split at every position;
    /// every way must agree.
    fn parse(stream: &[u8]) -> Result<Vec<Event>, SseError> {
        parse_with(stream, BIG, BIG)
    }

    fn feed(chunks: &[&[u8]], max_line: usize, max_event: usize) -> Result<Vec<Event>, SseError> {
        let mut p = SseParser::new(max_line, max_event);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out)?;
        }
        p.finish(&mut out)?;
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        assert_eq!(p.bytes_seen(), total as u64);
        Ok(out)
    }

    fn parse_with(
        stream: &[u8],
        max_line: usize,
        max_event: usize,
    ) -> Result<Vec<Event>, SseError> {
        let whole = feed(&[stream], max_line, max_event);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(feed(&bytes, max_line, max_event), whole, "byte at a time");
        for at in 0..=stream.len() {
            let (a, b) = stream.split_at(at);
            assert_eq!(feed(&[a, b], max_line, max_event), whole, "split at {at}");
        }
        whole
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
            retry: None,
        }
    }

    #[test]
    fn spec_example_multiline_data() {
        // WHATWG HTML §9.2.6: "data: YHOO\ndata: +2\ndata: 10\n\n" is one event "YHOO\n+2\n10".
        let got = parse(b"data: YHOO\ndata: +2\ndata: 10\n\n").unwrap();
        assert_eq!(got, [ev("message", "YHOO\n+2\n10", None)]);
    }

    #[test]
    fn spec_example_comments_and_id_reset() {
        // The standard's four-block example: a comment-only block emits nothing, the id set in
        // the second block carries on to the third, and an empty `id:` resets it.
        let stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n";
        let got = parse(stream).unwrap();
        assert_eq!(
            got,
            [
                ev("message", "first event", Some("1")),
                ev("message", "second event", None),
                ev("message", " third event", None),
            ]
        );
    }

    #[test]
    fn spec_example_empty_data_and_trailing_event() {
        // "data\n\ndata\ndata\n\ndata:": the standard fires an event with empty data for the
        // first block, which we do not emit (see the module documentation); the middle block
        // is one newline; the last is not ended by a blank line and is discarded.
        let got = parse(b"data\n\ndata\ndata\n\ndata:").unwrap();
        assert_eq!(got, [ev("message", "\n", None)]);
    }

    #[test]
    fn spec_example_space_after_colon() {
        // "data:test\n\ndata: test\n\n" — the same data twice: only one space is stripped.
        let got = parse(b"data:test\n\ndata: test\n\n").unwrap();
        assert_eq!(
            got,
            [ev("message", "test", None), ev("message", "test", None)]
        );
    }

    #[test]
    fn event_types() {
        let got =
            parse(b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n")
                .unwrap();
        assert_eq!(
            got,
            [
                ev("add", "73857293", None),
                ev("remove", "2153", None),
                ev("add", "113411", None),
            ]
        );
        // The type does not leak into the next event, and an empty type is "message".
        let got = parse(b"event: x\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n").unwrap();
        assert_eq!(
            got,
            [
                ev("x", "1", None),
                ev("message", "2", None),
                ev("message", "3", None)
            ]
        );
        // An event type on an event without data is dropped with it.
        let got = parse(b"event: x\n\ndata: 2\n\n").unwrap();
        assert_eq!(got, [ev("message", "2", None)]);
    }

    #[test]
    fn line_endings_cr_lf_crlf() {
        let want = [ev("message", "a\nb", Some("7")), ev("e", "c", Some("7"))];
        for stream in [
            &b"data: a\ndata: b\nid: 7\n\nevent: e\ndata: c\n\n"[..],
            b"data: a\rdata: b\rid: 7\r\revent: e\rdata: c\r\r",
            b"data: a\r\ndata: b\r\nid: 7\r\n\r\nevent: e\r\ndata: c\r\n\r\n",
            b"data: a\r\ndata: b\rid: 7\n\r\nevent: e\rdata: c\n\r",
        ] {
            assert_eq!(parse(stream).unwrap(), want, "{stream:?}");
        }
        // CR CR is two line endings (a blank line), LF CR too; CR LF is one.
        assert_eq!(parse(b"data: x\r\r").unwrap(), [ev("message", "x", None)]);
        assert_eq!(parse(b"data: x\n\r").unwrap(), [ev("message", "x", None)]);
        assert_eq!(parse(b"data: x\r\n").unwrap(), []);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_ending() {
        let mut p = SseParser::new(BIG, BIG);
        let mut out = Vec::new();
        p.push(b"data: a\r", &mut out).unwrap();
        p.push(b"\ndata: b\r", &mut out).unwrap();
        p.push(b"\n", &mut out).unwrap();
        // Had either LF been a line ending of its own, "a\nb" would have been dispatched.
        assert!(out.is_empty());
        p.push(b"\r", &mut out).unwrap();
        p.push(b"", &mut out).unwrap();
        p.push(b"\n", &mut out).unwrap();
        assert_eq!(out, [ev("message", "a\nb", None)]);
        // The LF after the split CRLF above was swallowed, so nothing more is pending.
        p.push(b"data: c\n", &mut out).unwrap();
        p.finish(&mut out).unwrap();
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn bom_is_skipped_once() {
        assert_eq!(
            parse(b"\xEF\xBB\xBFdata: x\n\n").unwrap(),
            [ev("message", "x", None)]
        );
        // Split inside the BOM (parse() tries every split).
        assert_eq!(
            parse(b"\xEF\xBB\xBF: comment\n\xEF\xBB\xBFdata: x\n\n").unwrap(),
            // The second BOM is not at the start of the stream: it is part of a field name
            // that is not `data`, so the line is ignored.
            []
        );
        // A BOM alone on the first line makes it blank.
        assert_eq!(
            parse(b"\xEF\xBB\xBF\ndata: x\n\n").unwrap(),
            [ev("message", "x", None)]
        );
        // A BOM inside data is kept.
        assert_eq!(
            parse(b"data: \xEF\xBB\xBFx\n\n").unwrap(),
            [ev("message", "\u{FEFF}x", None)]
        );
    }

    #[test]
    fn priming_event_with_empty_data_is_not_emitted() {
        // server-everything and others send an id with empty data first (for resumability).
        assert_eq!(parse(b"id: 1\ndata:\n\n").unwrap(), []);
        assert_eq!(parse(b"id: 1\n\n").unwrap(), []);
        // ... but its id stays in force for later events.
        assert_eq!(
            parse(b"id: 1\ndata\n\ndata: x\n\n").unwrap(),
            [ev("message", "x", Some("1"))]
        );
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let got =
            parse(b":\n: keep-alive\nfoo: bar\nDATA: no\ndata : no\nbaz\ndata: yes\n\n").unwrap();
        assert_eq!(got, [ev("message", "yes", None)]);
        // A line with no colon is a field with an empty value.
        assert_eq!(
            parse(b"data\n\ndata\ndata\n\n").unwrap(),
            [ev("message", "\n", None)]
        );
        // Only the first colon separates; later ones are part of the value.
        assert_eq!(
            parse(b"data: a: b\n\n").unwrap(),
            [ev("message", "a: b", None)]
        );
    }

    #[test]
    fn id_with_nul_is_ignored() {
        let got = parse(b"id: 5\n\nid: a\0b\ndata: x\n\n").unwrap();
        assert_eq!(got, [ev("message", "x", Some("5"))]);
    }

    #[test]
    fn retry_only_when_all_digits() {
        let got =
            parse(b"retry: 1500\ndata: a\n\nretry: 10x\ndata: b\n\nretry:\ndata: c\n\nretry: 99999999999999999999999\ndata: d\n\nretry: 20\ndata: e\n\n")
                .unwrap();
        let retries: Vec<_> = got.iter().map(|e| e.retry).collect();
        assert_eq!(
            retries,
            [Some(1500), Some(1500), Some(1500), Some(1500), Some(20)]
        );
        // "retry: -1" and "retry:  5" (two spaces) are not all digits.
        let got = parse(b"retry: -1\nretry:  5\ndata: z\n\n").unwrap();
        assert_eq!(got[0].retry, None);
        // A retry with no data is not an event but still sets the time.
        let got = parse(b"retry: 3\n\ndata: z\n\n").unwrap();
        assert_eq!(got[0].retry, Some(3));
    }

    #[test]
    fn server_everything_style_stream() {
        let stream = b"event: message\nid: abc\ndata: {\"result\":{\"tools\":[]},\"jsonrpc\":\"2.0\",\"id\":1}\n\n";
        assert_eq!(
            parse(stream).unwrap(),
            [ev(
                "message",
                r#"{"result":{"tools":[]},"jsonrpc":"2.0","id":1}"#,
                Some("abc")
            )]
        );
    }

    #[test]
    fn unterminated_event_is_discarded_at_the_end() {
        assert_eq!(
            parse(b"data: a\n\ndata: b\n").unwrap(),
            [ev("message", "a", None)]
        );
        assert_eq!(
            parse(b"data: a\n\ndata: b").unwrap(),
            [ev("message", "a", None)]
        );
        // A partial last line is discarded without being decoded.
        assert_eq!(
            parse(b"data: a\n\ndata: \xFF").unwrap(),
            [ev("message", "a", None)]
        );
    }

    #[test]
    fn line_limit() {
        // Exactly at the limit is fine, one byte over is not, terminated or not.
        let ok = b"data: 0123\n\n"; // the longest line is 10 bytes
        assert_eq!(
            parse_with(ok, 10, BIG).unwrap(),
            [ev("message", "0123", None)]
        );
        assert_eq!(
            parse_with(b"data: 01234\n\n", 10, BIG),
            Err(SseError::LineTooLong(10))
        );
        assert_eq!(
            parse_with(b"data: 01234", 10, BIG),
            Err(SseError::LineTooLong(10))
        );
        // Comments count too, and the line is refused while still being buffered.
        let mut p = SseParser::new(10, BIG);
        let mut out = Vec::new();
        p.push(b": 3456789", &mut out).unwrap();
        assert_eq!(p.push(b"01", &mut out), Err(SseError::LineTooLong(10)));
        // The BOM counts towards the first line (it is part of the stream's bytes).
        assert_eq!(
            parse_with(b"\xEF\xBB\xBFdata: 0123\n\n", 10, BIG),
            Err(SseError::LineTooLong(10))
        );
    }

    #[test]
    fn event_limit() {
        // Data "ab\ncd" is 5 bytes.
        let stream = b"data: ab\ndata: cd\n\n";
        assert_eq!(
            parse_with(stream, BIG, 5).unwrap(),
            [ev("message", "ab\ncd", None)]
        );
        assert_eq!(parse_with(stream, BIG, 4), Err(SseError::EventTooLarge(4)));
        // The limit is per event: the buffer is emptied at each dispatch.
        let many = b"data: abcd\n\ndata: abcd\n\ndata: abcd\n\n";
        assert_eq!(parse_with(many, BIG, 4).unwrap().len(), 3);
        // Many empty data lines add up too (each is a newline of data).
        assert_eq!(
            parse_with(b"data\ndata\ndata\ndata\ndata\ndata\n\n", BIG, 4),
            Err(SseError::EventTooLarge(4))
        );
    }

    #[test]
    fn invalid_utf8_is_refused() {
        assert_eq!(parse(b"data: \xFF\n\n"), Err(SseError::NotUtf8));
        assert_eq!(parse(b": \xC3\n"), Err(SseError::NotUtf8));
        // Truncated multibyte character at a line end (a CR/LF is never a continuation byte).
        assert_eq!(parse(b"data: \xE2\x82\n\n"), Err(SseError::NotUtf8));
        // A multibyte character split across chunks is fine.
        let mut p = SseParser::new(BIG, BIG);
        let mut out = Vec::new();
        p.push(b"data: \xE2", &mut out).unwrap();
        p.push(b"\x82\xAC\n\n", &mut out).unwrap();
        assert_eq!(out, [ev("message", "€", None)]);
        // Events before the bad line were already pushed.
        let mut p = SseParser::new(BIG, BIG);
        let mut out = Vec::new();
        assert_eq!(
            p.push(b"data: ok\n\ndata: \xC0\xAF\n\n", &mut out),
            Err(SseError::NotUtf8)
        );
        assert_eq!(out, [ev("message", "ok", None)]);
    }

    #[test]
    fn a_long_line_fed_one_byte_at_a_time_is_linear() {
        // 1 MiB of data in one line, one byte per push: quadratic rescanning would take
        // minutes here; this finishes in milliseconds.
        const LEN: usize = 1 << 20;
        let mut p = SseParser::new(LEN + 16, LEN + 16);
        let mut out = Vec::new();
        p.push(b"data: ", &mut out).unwrap();
        for i in 0..LEN {
            p.push(&[b'a' + (i % 26) as u8], &mut out).unwrap();
        }
        p.push(b"\r", &mut out).unwrap();
        p.push(b"\n", &mut out).unwrap();
        p.push(b"\n", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), LEN);
        assert!(out[0].data.starts_with("abcdefghijklmnopqrstuvwxyzabc"));
        assert_eq!(p.bytes_seen(), (LEN + 9) as u64);
    }

    #[test]
    fn the_line_buffer_never_exceeds_the_limit() {
        let mut p = SseParser::new(100, BIG);
        let mut out = Vec::new();
        for _ in 0..100 {
            p.push(b"x", &mut out).unwrap();
        }
        assert_eq!(p.line.len(), 100);
        assert_eq!(p.push(b"x", &mut out), Err(SseError::LineTooLong(100)));
        assert!(p.line.len() <= 100);
    }
}
