//! RFC 8785 (JSON Canonicalization Scheme) over [`Json`], with two number profiles.
//!
//! * [`Numbers::IntegersOnly`] is the AWR/2 profile MTL/1 uses: a number is accepted only if its
//!   token has no fraction and no exponent and its magnitude is at most 2^53−1; it is written in
//!   plain decimal (`-0` as `0`). Anything else is refused, as HISTOR's Python canonicaliser does.
//! * [`Numbers::Ecmascript`] is RFC 8785 proper: the token is read as an IEEE 754 double and
//!   written as ECMAScript's `Number.prototype.toString` would (`1.0` → `1`, `1e2` → `100`,
//!   `0.5` → `0.5`). Integers beyond 2^53 lose precision exactly as they do in JavaScript.
//!
//! Members are sorted by UTF-16 code units; strings get the RFC 8785 escapes (`\b \t \n \f \r`,
//! `\"`, `\\`, other C0 controls as lowercase `\u00xx`) and everything else is written literally
//! as UTF-8, with no Unicode normalisation. The traversal order (array order; sorted members,
//! each name before its value) matches HISTOR's, so the first error found is the same one.

use crate::json::{Json, Str};

/// Largest integer magnitude the integers-only profile accepts (2^53−1, `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// How numbers are canonicalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// AWR/2: integers of at most 2^53−1 only, decided on the token (MTL/1).
    IntegersOnly,
    /// RFC 8785 with ECMAScript number serialisation (toolmark/1 full digest).
    Ecmascript,
}

/// Why a value has no canonical form under the integers-only profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonError {
    /// AWR-CANON-001: a fraction or an exponent.
    #[error("non-integer JSON number {0}")]
    NonInteger(Box<str>),
    /// AWR-CANON-002: an integer beyond ±(2^53−1).
    #[error("integer {0} is outside ±(2^53−1)")]
    IntegerRange(Box<str>),
    /// AWR-CANON-003: a string holding an unpaired surrogate.
    #[error("string holds an unpaired surrogate")]
    LoneSurrogate,
}

/// Append the canonical form of `v` to `out`. Only [`Numbers::IntegersOnly`] can fail; on error
/// `out` holds a partial form.
pub fn write(v: &Json, numbers: Numbers, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match v {
        Json::Null => out.extend_from_slice(b"null"),
        Json::Bool(true) => out.extend_from_slice(b"true"),
        Json::Bool(false) => out.extend_from_slice(b"false"),
        Json::Number(token) => write_number(token, numbers, out)?,
        Json::String(s) => write_str(s, numbers, out)?,
        Json::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, numbers, out)?;
            }
            out.push(b']');
        }
        Json::Object(members) => {
            out.push(b'{');
            // Most objects are small: sort their member indices on the stack.
            let mut small = [0u8; SMALL_OBJECT];
            let mut large = Vec::new();
            if members.len() <= SMALL_OBJECT {
                let idx = &mut small[..members.len()];
                for (i, slot) in idx.iter_mut().enumerate() {
                    *slot = i as u8;
                }
                idx.sort_unstable_by(|&a, &b| {
                    members[a as usize].0.utf16_cmp(&members[b as usize].0)
                });
                write_members(members, idx.iter().map(|&i| i as usize), numbers, out)?;
            } else {
                large.extend(0..members.len());
                large.sort_unstable_by(|&a: &usize, &b: &usize| {
                    members[a].0.utf16_cmp(&members[b].0)
                });
                write_members(members, large.iter().copied(), numbers, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Objects with at most this many members sort their member order in a stack array (JSON
/// Schema objects rarely have more); larger ones use a heap vector.
const SMALL_OBJECT: usize = 32;

/// Write `members` in the given order (names are unique: the parser keeps the last of repeats).
fn write_members(
    members: &[(Str, Json)],
    order: impl Iterator<Item = usize>,
    numbers: Numbers,
    out: &mut Vec<u8>,
) -> Result<(), CanonError> {
    for (n, i) in order.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let (k, v) = &members[i];
        write_str(k, numbers, out)?;
        out.push(b':');
        write(v, numbers, out)?;
    }
    Ok(())
}

/// The canonical bytes of `v`.
pub fn to_vec(v: &Json, numbers: Numbers) -> Result<Vec<u8>, CanonError> {
    let mut out = Vec::new();
    write(v, numbers, &mut out)?;
    Ok(out)
}

fn write_number(token: &str, numbers: Numbers, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match numbers {
        Numbers::IntegersOnly => {
            if !crate::json::is_integer_token(token) {
                return Err(CanonError::NonInteger(token.into()));
            }
            let digits = token.trim_start_matches('-');
            // An integer token is already in canonical form (JSON forbids leading zeros), except
            // `-0`; one of at most 15 digits is within 2^53−1 (a 16-digit number may not be).
            if digits.len() <= 15 {
                out.extend_from_slice(if token == "-0" {
                    b"0"
                } else {
                    token.as_bytes()
                });
                return Ok(());
            }
            match digits.parse::<u64>() {
                Ok(n) if n <= MAX_SAFE_INTEGER as u64 => {
                    out.extend_from_slice(token.as_bytes());
                    Ok(())
                }
                _ => Err(CanonError::IntegerRange(token.into())),
            }
        }
        Numbers::Ecmascript => {
            // Rust's float parsing rounds correctly, as ECMAScript's does. A token beyond the
            // range of a double reads as ±infinity, which ECMAScript's JSON.stringify (and so the
            // reference RFC 8785 implementation) writes as `null`.
            match token.parse::<f64>() {
                Ok(f) if f.is_finite() => {
                    let mut buf = ryu_js::Buffer::new();
                    out.extend_from_slice(buf.format_finite(f).as_bytes());
                }
                _ => out.extend_from_slice(b"null"),
            }
            Ok(())
        }
    }
}

/// Whether `text` is known to be its own RFC 8785 form under [`Numbers::Ecmascript`], so that
/// a serialiser's output can be signed as it is instead of parsed and written again. Decided in
/// one pass without allocating, conservatively: `true` only for compact JSON (no whitespace)
/// whose object members are in strictly increasing order of names that are ASCII without
/// escapes, whose numbers are integers of at most 15 digits other than `-0` (written the same
/// as ECMAScript numbers), whose strings use only the RFC 8785 escapes, nested at most
/// [`MAX_CHECKED_DEPTH`] deep. `false` means "not known to be": canonicalise it ([`to_vec`]).
pub fn is_canonical(text: &str) -> bool {
    let mut c = Checker {
        b: text.as_bytes(),
        i: 0,
    };
    c.value(0) && c.i == c.b.len()
}

/// Deepest nesting [`is_canonical`] follows (deeper text is "not known": canonicalised).
pub const MAX_CHECKED_DEPTH: usize = 64;

/// [`is_canonical`]'s cursor.
struct Checker<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Checker<'a> {
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.b.get(self.i) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        if depth >= MAX_CHECKED_DEPTH {
            return false;
        }
        self.i += 1;
        if self.eat(b'}') {
            return true;
        }
        let mut last: Option<&'a [u8]> = None;
        loop {
            let Some(name) = self.string() else {
                return false;
            };
            // ASCII names compare the same by bytes as by UTF-16 code units; others are left
            // to the canonical writer.
            if !name.iter().all(|&c| c.is_ascii() && c != b'\\') {
                return false;
            }
            if last.is_some_and(|l| l >= name) {
                return false;
            }
            last = Some(name);
            if !self.eat(b':') || !self.value(depth + 1) {
                return false;
            }
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        if depth >= MAX_CHECKED_DEPTH {
            return false;
        }
        self.i += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth + 1) {
                return false;
            }
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// The string at the cursor (between its quotes, as written) if it is written as RFC 8785
    /// writes it.
    fn string(&mut self) -> Option<&'a [u8]> {
        let b = self.b;
        if b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let mut i = start;
        loop {
            match *b.get(i)? {
                b'"' => {
                    self.i = i + 1;
                    return Some(&b[start..i]);
                }
                c if c < 0x20 => return None,
                b'\\' => match *b.get(i + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        // Only a C0 control without a short escape, in lowercase hex.
                        let hex = b.get(i + 2..i + 6)?;
                        let low = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
                        if hex[0] != b'0'
                            || hex[1] != b'0'
                            || !matches!(hex[2], b'0' | b'1')
                            || !low(hex[3])
                            || matches!(&hex[2..], b"08" | b"09" | b"0a" | b"0c" | b"0d")
                        {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                },
                _ => i += 1,
            }
        }
    }

    fn number(&mut self) -> bool {
        let b = self.b;
        let negative = self.eat(b'-');
        let start = self.i;
        while b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &b[start..self.i];
        let ok = match digits {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => digits.len() <= 15,
        };
        // A fraction or an exponent: ECMAScript may write it otherwise.
        ok && !matches!(b.get(self.i), Some(b'.' | b'e' | b'E'))
    }
}

fn write_str(s: &Str, numbers: Numbers, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match s {
        Str::Text(t) => {
            write_text(t, out);
            Ok(())
        }
        Str::Units(units) if numbers == Numbers::Ecmascript => {
            // ECMAScript's JSON.stringify (ES2019 "well-formed") escapes an unpaired surrogate as
            // \udxxx; everything else is written as usual.
            out.push(b'"');
            for r in char::decode_utf16(units.iter().copied()) {
                match r {
                    Ok(c) => escape_char(c, out),
                    Err(e) => out
                        .extend_from_slice(format!("\\u{:04x}", e.unpaired_surrogate()).as_bytes()),
                }
            }
            out.push(b'"');
            Ok(())
        }
        Str::Units(_) => Err(CanonError::LoneSurrogate),
    }
}

/// Append `t` as an RFC 8785 string literal (quotes and escapes included).
pub fn write_text(t: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = t.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if crate::json::SPECIAL[b as usize] {
            out.extend_from_slice(&bytes[run..i]);
            escape_char(b as char, out);
            run = i + 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

fn escape_char(c: char, out: &mut Vec<u8>) {
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\t' => out.extend_from_slice(b"\\t"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\r' => out.extend_from_slice(b"\\r"),
        c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
        c => {
            let mut b = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn canon(text: &str, numbers: Numbers) -> Result<String, CanonError> {
        to_vec(&parse(text).unwrap(), numbers).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn sorts_members_by_utf16_and_drops_whitespace() {
        let got = canon(
            "{ \"b\": 1, \"a\": [true, false, null], \"\u{FFFF}\": 0, \"\u{1F600}\": 0 }",
            Numbers::IntegersOnly,
        )
        .unwrap();
        assert_eq!(
            got,
            "{\"a\":[true,false,null],\"b\":1,\"😀\":0,\"\u{FFFF}\":0}"
        );
    }

    /// `is_canonical` says `true` only of text the canonical writer gives back unchanged, and
    /// says it of compact, sorted JSON with integers and RFC 8785's escapes.
    #[test]
    fn is_canonical_only_of_text_that_is_its_own_canonical_form() {
        let known = [
            "{}",
            "[]",
            "null",
            "0",
            "-7",
            "123456789012345",
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            "\"\\u0000\\b\\t\\n\\f\\r\\u001f\\\"\\\\/\u{7f}\u{2028}é\"",
            r#"{"checkedAt":"x","log":{"checkpoint":"a\nb\n","treeSize":13},"match":"same"}"#,
            r#"[{"a":[]},{"a":{}}]"#,
        ];
        for text in known {
            assert!(is_canonical(text), "{text}");
            assert_eq!(canon(text, Numbers::Ecmascript).unwrap(), text, "{text}");
        }
        let not_known = [
            "",
            "{",
            "[1,]",
            r#"{"a":1,}"#,
            r#"{"a" :1}"#,
            "[1, 2]",
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"é":1}"#,
            r#"{"\u0061":1}"#,
            "-0",
            "01",
            "1.0",
            "1.5",
            "1e2",
            "1234567890123456",
            r#""\u0008""#,
            r#""\u001F""#,
            r#""\u0041""#,
            r#""\/""#,
            "\"\u{1}\"",
            "nul",
            "true false",
        ];
        for text in not_known {
            assert!(!is_canonical(text), "{text}");
        }
        // Nesting past the checked depth is left to the writer.
        let deep = "[".repeat(MAX_CHECKED_DEPTH + 1) + &"]".repeat(MAX_CHECKED_DEPTH + 1);
        assert!(!is_canonical(&deep));
        let fits = "[".repeat(MAX_CHECKED_DEPTH) + &"]".repeat(MAX_CHECKED_DEPTH);
        assert!(is_canonical(&fits));
    }

    #[test]
    fn escapes_like_rfc8785() {
        let got = canon(
            r#""\u0000\u0008\u0009\u000a\u000c\u000d\u001f\"\\/\u007f\u2028é""#,
            Numbers::IntegersOnly,
        )
        .unwrap();
        assert_eq!(
            got,
            "\"\\u0000\\b\\t\\n\\f\\r\\u001f\\\"\\\\/\u{7f}\u{2028}é\""
        );
    }

    #[test]
    fn integers_only_profile_decides_on_the_token() {
        assert_eq!(canon("-0", Numbers::IntegersOnly).unwrap(), "0");
        assert_eq!(
            canon("9007199254740991", Numbers::IntegersOnly).unwrap(),
            "9007199254740991"
        );
        assert_eq!(
            canon("-9007199254740991", Numbers::IntegersOnly).unwrap(),
            "-9007199254740991"
        );
        for t in ["1.0", "1e2", "0.5", "-0.0", "1E0"] {
            assert_eq!(
                canon(t, Numbers::IntegersOnly),
                Err(CanonError::NonInteger(t.into()))
            );
        }
        for t in [
            "9007199254740992",
            "-9007199254740992",
            "123456789012345678901234567890",
        ] {
            assert_eq!(
                canon(t, Numbers::IntegersOnly),
                Err(CanonError::IntegerRange(t.into()))
            );
        }
        assert_eq!(
            canon(r#"["\ud800"]"#, Numbers::IntegersOnly),
            Err(CanonError::LoneSurrogate)
        );
    }

    #[test]
    fn ecmascript_profile_serialises_like_javascript() {
        // Expected strings are what `JSON.stringify(JSON.parse(token))` prints in V8.
        for (token, js) in [
            ("1.0", "1"),
            ("1e2", "100"),
            ("0.5", "0.5"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("1e21", "1e+21"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("123456789012345678901234567890", "1.2345678901234568e+29"),
            ("9007199254740993", "9007199254740992"),
            ("4.35", "4.35"),
            ("0.1", "0.1"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("1e400", "null"),
            ("-1E400", "null"),
            ("9".repeat(400).as_str(), "null"),
            ("1e-400", "0"),
        ] {
            assert_eq!(canon(token, Numbers::Ecmascript).unwrap(), js, "{token}");
        }
    }

    #[test]
    fn ecmascript_profile_escapes_unpaired_surrogates() {
        assert_eq!(
            canon(r#""a\uD800b\ud83d\ude00""#, Numbers::Ecmascript).unwrap(),
            "\"a\\ud800b😀\""
        );
    }
}
