//! Finding a run's canary in what left the sandbox — as written, or in the encodings a package
//! uses to get a value past a plain search: hex, base64 (standard or URL-safe, any alignment,
//! padded or not, with line breaks anywhere, as in a MIME part), base32, URL (percent)
//! encoding, JSON or C-style string escapes, and split across the labels of a DNS name.
//!
//! How: every encoding of the canary is a fixed string once its alignment is fixed, so each is
//! searched for as a literal (the characters of a base64 or base32 encoding that depend on the
//! canary's bytes alone, for each of the 3 or 5 alignments the canary can start at), all at
//! once and ASCII case-insensitively (hex in any case; a DNS name the sink lowercased), in a few
//! views of the bytes: as they are; JSON/C escapes decoded; percent-encoding decoded; and each of
//! these with whitespace and dots removed (a base64 body broken into lines, a canary spread over
//! a name's labels). Nothing is guessed: a match is the canary's own bytes, 32 of them, in one
//! of these forms. The search is bounded: at most [`MAX_SEARCH_BYTES`] of one payload, and
//! [`MAX_RUN_SEARCH_BYTES`] in one run ([`Search::cuts`] counts the searches either cut).
//!
//! Not searched: compressed or encrypted bytes (a gzip body, TLS to an address outside the
//! sandbox), other encodings (base32hex, quoted-printable, …), and a DNS name in wire format
//! inside a payload (length bytes between its labels).

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;

/// Most bytes of one payload searched (the rest is not, and the search is cut).
pub const MAX_SEARCH_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes searched in one run, over every payload (then nothing more is, and the search is
/// cut).
pub const MAX_RUN_SEARCH_BYTES: u64 = 256 * 1024 * 1024;

/// How the canary was written where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Its own characters.
    Plain,
    /// Hex, upper or lower case.
    Hex,
    /// Base64, standard or URL-safe alphabet.
    Base64,
    /// Base32 (RFC 4648's alphabet), upper or lower case.
    Base32,
}

impl Encoding {
    /// `plain`, `hex`, `base64` or `base32`.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Plain => "plain",
            Encoding::Hex => "hex",
            Encoding::Base64 => "base64",
            Encoding::Base32 => "base32",
        }
    }
}

/// Where and how the canary was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// Its encoding.
    pub encoding: Encoding,
    /// Behind JSON or C string escapes (`\u0074`, `\x74`, `\n`, …).
    pub escaped: bool,
    /// Behind percent-encoding (`%74`, `%2B`).
    pub url: bool,
    /// Split across the labels of a name (dots between its characters).
    pub labels: bool,
    /// Broken by whitespace (line breaks in a MIME part).
    pub lines: bool,
}

impl Match {
    /// The form in a word or a few joined by `+`: `plain`, `hex`, `base64+lines`, `url`,
    /// `dns-labels`, `hex+dns-labels`, `escaped`, …
    pub fn form(&self) -> String {
        let mut parts = Vec::new();
        if self.encoding != Encoding::Plain {
            parts.push(self.encoding.as_str());
        }
        for (on, name) in [
            (self.escaped, "escaped"),
            (self.url, "url"),
            (self.labels, "dns-labels"),
            (self.lines, "lines"),
        ] {
            if on {
                parts.push(name);
            }
        }
        if parts.is_empty() {
            "plain".to_owned()
        } else {
            parts.join("+")
        }
    }

    /// `what` as evidence: as it is for a canary found as written, else with its form
    /// (`smtp://mail.example to x@y (base64+lines)`).
    pub fn evidence(&self, what: &str) -> String {
        match self.form().as_str() {
            "plain" => what.to_owned(),
            form => format!("{what} ({form})"),
        }
    }
}

/// The search for one canary, with the run's budget.
#[derive(Debug)]
pub struct Search {
    /// Each encoding's literal, lowercase, with its encoding.
    literals: Vec<(Vec<u8>, Encoding)>,
    /// All of them at once, ASCII case-insensitive.
    any: regex::bytes::Regex,
    /// Bytes the run may still search.
    left: AtomicU64,
    /// Searches cut by a limit.
    cut: AtomicU64,
}

impl Search {
    /// The search for `canary`, with a fresh [`MAX_RUN_SEARCH_BYTES`] budget.
    pub fn new(canary: &str) -> Search {
        Search::with_budget(canary, MAX_RUN_SEARCH_BYTES)
    }

    /// The same with a budget of `bytes`.
    pub fn with_budget(canary: &str, bytes: u64) -> Search {
        let literals = literals(canary.as_bytes());
        let pattern = literals
            .iter()
            .map(|(l, _)| literal_pattern(l))
            .collect::<Vec<_>>()
            .join("|");
        let any = regex::bytes::RegexBuilder::new(&format!("(?i-u:{pattern})"))
            .unicode(false)
            .build()
            .expect("escaped ASCII literals always compile");
        Search {
            literals,
            any,
            left: AtomicU64::new(bytes),
            cut: AtomicU64::new(0),
        }
    }

    /// Whether `bytes` carry the canary, and how; the first form found, in the order: as
    /// written, escaped, URL-encoded, both; each as it is, then without whitespace and dots.
    pub fn find(&self, bytes: &[u8]) -> Option<Match> {
        let mut take = bytes.len().min(MAX_SEARCH_BYTES) as u64;
        let mut left = self.left.load(Ordering::SeqCst);
        loop {
            let granted = take.min(left);
            match self.left.compare_exchange(
                left,
                left - granted,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    take = granted;
                    break;
                }
                Err(now) => left = now,
            }
        }
        if (take as usize) < bytes.len() {
            self.cut.fetch_add(1, Ordering::SeqCst);
        }
        self.search(&bytes[..take as usize])
    }

    /// How many searches [`MAX_SEARCH_BYTES`] or the run's budget cut so far (what was not
    /// searched is unknown): a part of a run whose searches grew it was not searched whole.
    pub fn cuts(&self) -> u64 {
        self.cut.load(Ordering::SeqCst)
    }

    fn search(&self, bytes: &[u8]) -> Option<Match> {
        let escapes = bytes.contains(&b'\\');
        let percent = bytes.contains(&b'%');
        let mut views: Vec<(std::borrow::Cow<[u8]>, bool, bool)> =
            vec![(bytes.into(), false, false)];
        if escapes {
            views.push((unescape(bytes).into(), true, false));
        }
        if percent {
            let decoded = percent_decode(bytes);
            let both = escapes.then(|| unescape(&decoded));
            views.push((decoded.into(), false, true));
            if let Some(both) = both {
                views.push((both.into(), true, true));
            }
        }
        for (view, escaped, url) in &views {
            let found = |encoding| Match {
                encoding,
                escaped: *escaped,
                url: *url,
                labels: false,
                lines: false,
            };
            if let Some(m) = self.any.find(view) {
                return Some(found(self.encoding_of(m.as_bytes())));
            }
            let compact: Vec<u8> = view.iter().copied().filter(|b| !separator(*b)).collect();
            if compact.len() == view.len() {
                continue;
            }
            if let Some(m) = self.any.find(&compact) {
                // What was removed inside the match: dots, whitespace or both.
                let (from, to) = original_span(view, m.start(), m.end());
                let span = &view[from..to];
                return Some(Match {
                    labels: span.contains(&b'.'),
                    lines: span.iter().any(|b| *b != b'.' && separator(*b)),
                    ..found(self.encoding_of(m.as_bytes()))
                });
            }
        }
        None
    }

    fn encoding_of(&self, found: &[u8]) -> Encoding {
        self.literals
            .iter()
            .find(|(l, _)| l.eq_ignore_ascii_case(found))
            .map_or(Encoding::Plain, |(_, e)| *e)
    }
}

/// `bytes` as a pattern matching them literally: ASCII as written (escaped), other bytes as
/// `\xHH` (a byte, not a character, under `(?-u)`).
fn literal_pattern(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| match b {
            0x20..=0x7e => regex::escape(&(*b as char).to_string()),
            b => format!("\\x{b:02x}"),
        })
        .collect()
}

/// Bytes a view without separators leaves out: ASCII whitespace and dots.
fn separator(b: u8) -> bool {
    matches!(b, b'.' | b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// The span of `view` whose bytes, without separators, are `compact[start..end]`.
fn original_span(view: &[u8], start: usize, end: usize) -> (usize, usize) {
    let mut kept = 0;
    let mut from = 0;
    for (i, b) in view.iter().enumerate() {
        if separator(*b) {
            continue;
        }
        if kept == start {
            from = i;
        }
        kept += 1;
        if kept == end {
            return (from, i + 1);
        }
    }
    (from, view.len())
}

/// Each encoding of `canary` as a literal (lowercase), with its encoding: the canary itself,
/// its hex, and for each alignment the base64 (both alphabets) and base32 characters that
/// depend on the canary's bytes alone.
pub fn literals(canary: &[u8]) -> Vec<(Vec<u8>, Encoding)> {
    let mut out = vec![(canary.to_ascii_lowercase(), Encoding::Plain)];
    out.push((
        canary
            .iter()
            .flat_map(|b| format!("{b:02x}").into_bytes())
            .collect(),
        Encoding::Hex,
    ));
    for skip in 0..3 {
        let mut shifted = vec![0u8; skip];
        shifted.extend_from_slice(canary);
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&shifted);
        let (from, to) = ((8 * skip).div_ceil(6), (8 * (skip + canary.len())) / 6);
        if from >= to {
            continue;
        }
        let core = &encoded.as_bytes()[from..to];
        for alphabet in [core.to_vec(), url_safe(core)] {
            let lower = alphabet.to_ascii_lowercase();
            if !out.iter().any(|(l, _)| *l == lower) {
                out.push((lower, Encoding::Base64));
            }
        }
    }
    for skip in 0..5 {
        let mut shifted = vec![0u8; skip];
        shifted.extend_from_slice(canary);
        let encoded = base32(&shifted);
        let (from, to) = ((8 * skip).div_ceil(5), (8 * (skip + canary.len())) / 5);
        if from >= to {
            continue;
        }
        let core = &encoded[from..to];
        out.push((core.to_ascii_lowercase(), Encoding::Base32));
    }
    out
}

/// Base64's standard alphabet made URL-safe (`+` → `-`, `/` → `_`).
fn url_safe(b64: &[u8]) -> Vec<u8> {
    b64.iter()
        .map(|b| match b {
            b'+' => b'-',
            b'/' => b'_',
            b => *b,
        })
        .collect()
}

/// RFC 4648 base32 of `bytes`, without padding.
fn base32(bytes: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = Vec::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in bytes {
        acc = (acc << 8) | u32::from(*b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize]);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize]);
    }
    out
}

/// `bytes` with JSON and C string escapes decoded: `\uXXXX` (as UTF-8), `\xHH`, `\n`, `\r`,
/// `\t`, `\b`, `\f`, `\/`, `\\`, `\"`, `\'`; anything else kept as written.
fn unescape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 == bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let simple = match bytes[i + 1] {
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'b' => Some(8),
            b'f' => Some(12),
            c @ (b'/' | b'\\' | b'"' | b'\'') => Some(c),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
            continue;
        }
        let hex = |from: usize, n: usize| {
            bytes
                .get(from..from + n)
                .and_then(|h| std::str::from_utf8(h).ok())
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        match bytes[i + 1] {
            b'u' => {
                if let Some(c) = hex(i + 2, 4).and_then(char::from_u32) {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    i += 6;
                    continue;
                }
            }
            b'x' => {
                if let Some(c) = hex(i + 2, 2) {
                    out.push(c as u8);
                    i += 4;
                    continue;
                }
            }
            _ => {}
        }
        out.push(b'\\');
        i += 1;
    }
    out
}

/// `bytes` with `%HH` decoded (either case); a `+` is left as it is (the canary has no space,
/// and a base64 `+` sent unencoded stays one).
fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let digit = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(digit),
                bytes.get(i + 2).copied().and_then(digit),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    const CANARY: &str = "toolmark-canary-0123456789abcdef";

    fn form(bytes: &[u8]) -> Option<String> {
        Search::new(CANARY).find(bytes).map(|m| m.form())
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `prefix` then the canary then `suffix`, base64-encoded by `engine`.
    fn b64(engine: &impl Engine, prefix: &str, suffix: &str) -> String {
        engine.encode(format!("{prefix}{CANARY}{suffix}"))
    }

    #[test]
    fn a_canary_as_written_is_found_plain() {
        assert_eq!(
            form(format!("x={CANARY}&y").as_bytes()),
            Some("plain".into())
        );
        assert_eq!(form(b"toolmark-canary-0123456789abcdee"), None);
        assert_eq!(form(b""), None);
    }

    #[test]
    fn a_canary_behind_json_or_c_escapes_is_found_escaped() {
        let hidden = CANARY.replacen('t', "\\u0074", 1).replacen('m', "\\x6d", 1);
        assert_eq!(
            form(format!(r#"{{"text":"{hidden}"}}"#).as_bytes()),
            Some("escaped".into())
        );
    }

    #[test]
    fn a_canary_in_hex_of_either_case_is_found_hex() {
        let lower = hex(CANARY.as_bytes());
        assert_eq!(form(format!("k={lower}").as_bytes()), Some("hex".into()));
        assert_eq!(form(lower.to_uppercase().as_bytes()), Some("hex".into()));
        // One leading nibble off is another string: not the canary.
        assert_eq!(form(&lower.as_bytes()[1..]), None);
    }

    #[test]
    fn a_canary_in_base64_is_found_at_each_alignment_with_either_alphabet_and_padding() {
        for prefix in ["", "a", "ab", "abc"] {
            for suffix in ["", "z", "zz"] {
                let std = b64(&STANDARD, prefix, suffix);
                assert_eq!(form(std.as_bytes()), Some("base64".into()), "{std}");
                let url = b64(&URL_SAFE_NO_PAD, prefix, suffix);
                assert_eq!(form(url.as_bytes()), Some("base64".into()), "{url}");
            }
        }
    }

    #[test]
    fn a_canary_in_base64_broken_into_mime_lines_is_found_at_every_break() {
        // The canary's characters start at column 66: MIME's break at 76 falls inside them.
        let encoded = b64(&STANDARD, &format!("key: {}", "k".repeat(44)), "\r\n");
        // A break at every position the encoded canary spans (and MIME's 76 columns).
        for at in 1..encoded.len() {
            let broken = format!("{}\r\n{}", &encoded[..at], &encoded[at..]);
            let found = form(broken.as_bytes()).unwrap();
            assert!(
                found == "base64" || found == "base64+lines",
                "{at}: {found}"
            );
        }
        let mime: Vec<&str> = encoded
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        let part = format!(
            "Content-Transfer-Encoding: base64\r\n\r\n{}\r\n",
            mime.join("\r\n")
        );
        assert_eq!(form(part.as_bytes()), Some("base64+lines".into()));
        assert_eq!(
            form(mime.join("\n").as_bytes()),
            Some("base64+lines".into())
        );
    }

    #[test]
    fn a_canary_url_encoded_is_found_url_with_either_case_of_digits() {
        let every: String = CANARY.bytes().map(|b| format!("%{b:02X}")).collect();
        assert_eq!(form(format!("/?k={every}").as_bytes()), Some("url".into()));
        assert_eq!(
            form(every.to_lowercase().as_bytes()),
            Some("url".into()),
            "lower-case digits"
        );
        // Base64 whose `+`, `/` and `=` were percent-encoded in a query.
        let b = b64(&STANDARD, "?", "??");
        let q = b
            .replace('+', "%2B")
            .replace('/', "%2f")
            .replace('=', "%3D");
        let found = form(format!("GET /c?d={q}&x=1+2 HTTP/1.1").as_bytes()).unwrap();
        assert!(found == "base64" || found == "base64+url", "{found}");
    }

    #[test]
    fn a_canary_split_across_dns_labels_is_found_at_each_boundary() {
        for at in 1..CANARY.len() {
            let name = format!("{}.{}.exfil.example", &CANARY[..at], &CANARY[at..]);
            assert_eq!(form(name.as_bytes()), Some("dns-labels".into()), "{name}");
        }
        // Hex in labels of at most 63 bytes, as a DNS tunnel sends it.
        let h = hex(CANARY.as_bytes());
        let name = format!("{}.{}.t.example", &h[..63], &h[63..]);
        assert_eq!(form(name.as_bytes()), Some("hex+dns-labels".into()));
        // Base32 and base64, lowercased as the sink records names.
        let b32 = String::from_utf8(base32(format!("x{CANARY}").as_bytes())).unwrap();
        let name = format!("{}.{}.t.example", &b32[..30], &b32[30..]).to_lowercase();
        assert_eq!(form(name.as_bytes()), Some("base32+dns-labels".into()));
        let b = b64(&URL_SAFE_NO_PAD, "", "").to_lowercase();
        assert_eq!(
            form(format!("{b}.t.example").as_bytes()),
            Some("base64".into())
        );
    }

    #[test]
    fn a_canary_in_base32_is_found_at_each_alignment() {
        for prefix in ["", "a", "ab", "abc", "abcd"] {
            let encoded =
                String::from_utf8(base32(format!("{prefix}{CANARY}!").as_bytes())).unwrap();
            assert_eq!(form(encoded.as_bytes()), Some("base32".into()), "{prefix}");
        }
    }

    #[test]
    fn base32_is_rfc_4648s() {
        assert_eq!(base32(b"foobar"), b"MZXW6YTBOI");
        assert_eq!(base32(b"f"), b"MY");
    }

    #[test]
    fn evidence_names_the_form_unless_the_canary_was_written_as_it_is() {
        let s = Search::new(CANARY);
        let plain = s.find(CANARY.as_bytes()).unwrap();
        assert_eq!(
            plain.evidence("https://collect.example"),
            "https://collect.example"
        );
        let b = s.find(b64(&STANDARD, "", "").as_bytes()).unwrap();
        assert_eq!(b.evidence("tcp://x:4444"), "tcp://x:4444 (base64)");
    }

    #[test]
    fn a_payload_past_the_limit_and_a_run_past_its_budget_are_cut_not_searched() {
        let s = Search::with_budget(CANARY, 100);
        assert!(s.find(CANARY.as_bytes()).is_some());
        assert_eq!(s.cuts(), 0);
        // 68 bytes left: the canary at byte 80 is past them.
        let late = format!("{}{CANARY}", "x".repeat(80));
        assert_eq!(s.find(late.as_bytes()), None);
        assert_eq!(s.cuts(), 1, "what was not searched is said");
        assert_eq!(s.find(CANARY.as_bytes()), None, "nothing left");
        let big = Search::new(CANARY);
        let mut huge = vec![b'x'; MAX_SEARCH_BYTES];
        huge.extend_from_slice(CANARY.as_bytes());
        assert_eq!(big.find(&huge), None);
        assert_eq!(big.cuts(), 1);
    }
}
