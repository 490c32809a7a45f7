//! A strict JSON reader for untrusted tool sets that keeps what the canon needs.
//!
//! Why not `serde_json::Value`: both digests are decided on details serde_json throws away.
//! MTL/1 refuses a number by its *lexical* token (`1.0` and `1e2` are refused, `1` is not), which
//! serde_json only exposes through the workspace-wide `arbitrary_precision` feature (that feature
//! changes every other crate's deserialisation too). And a server may send an unpaired UTF-16
//! surrogate escape (`"\ud800"`): HISTOR parses it and reports `MTL-SUBJ-001`, JavaScript parses
//! it, and our full digest must still be computable, whereas serde_json refuses the whole
//! document. So this reader keeps every number as its token and every string as what it decodes
//! to, unpaired surrogates included, and is otherwise RFC 8259 to the letter: no comments, no
//! trailing commas, no `NaN`, no control characters inside strings, one value per document.
//!
//! Duplicate member names keep the *last* value at the *first* position, as Python's `json` and
//! ECMAScript's `JSON.parse` do, so the canon sees the object every mainstream client sees.

use std::cmp::Ordering;
use std::fmt;

/// Deepest nesting accepted. The deepest tool set in HISTOR's production crawl nested 36 levels
/// (p99.9: 24) and HISTOR's `/check` refuses bodies deeper than 128; 128 refuses nothing real and
/// keeps every recursive walk in this crate far from the stack's end.
pub const MAX_DEPTH: usize = 128;

/// A JSON value as it was sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// The number's token exactly as written (already checked against the JSON grammar).
    Number(Box<str>),
    /// A string.
    String(Str),
    /// An array, in order.
    Array(Vec<Json>),
    /// Members in the order first sent; a repeated name keeps its last value.
    Object(Vec<(Str, Json)>),
}

/// A JSON string: UTF-8 text, or, only when it holds an unpaired surrogate, UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Str {
    /// Valid UTF-8 text.
    Text(Box<str>),
    /// Holds at least one unpaired surrogate, so it cannot be UTF-8.
    Units(Box<[u16]>),
}

impl Str {
    /// The text, unless the string holds an unpaired surrogate.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Str::Text(s) => Some(s),
            Str::Units(_) => None,
        }
    }

    /// The text with every unpaired surrogate replaced by U+FFFD (for display and text rules).
    pub fn lossy(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Str::Text(s) => std::borrow::Cow::Borrowed(s),
            Str::Units(u) => std::borrow::Cow::Owned(String::from_utf16_lossy(u)),
        }
    }

    /// RFC 8785 §3.2.3 order: UTF-16 code units compared as unsigned integers.
    pub fn utf16_cmp(&self, other: &Str) -> Ordering {
        match (self, other) {
            (Str::Text(a), Str::Text(b)) => utf16_cmp(a, b),
            _ => self.units().cmp(other.units()),
        }
    }

    fn units(&self) -> Box<dyn Iterator<Item = u16> + '_> {
        match self {
            Str::Text(s) => Box::new(s.encode_utf16()),
            Str::Units(u) => Box::new(u.iter().copied()),
        }
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        Str::Text(s.into())
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lossy())
    }
}

/// Compare two strings by UTF-16 code units (RFC 8785 §3.2.3), not by code points or bytes.
///
/// UTF-8 byte order is code-point order, and the first differing byte of two UTF-8 strings lies
/// in characters that start at the same offset. The two orders disagree only when one of those
/// characters is at or above U+10000 (lead byte `F0`..`F4`, a surrogate pair in UTF-16, so
/// *smaller* there) and the other is in U+E000..U+FFFF (lead byte `EE` or `EF`).
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let i = mismatch(ab, bb);
    match (ab.get(i), bb.get(i)) {
        (Some(&x), Some(&y)) if x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0) => y.cmp(&x),
        (Some(x), Some(y)) => x.cmp(y),
        _ => ab.len().cmp(&bb.len()),
    }
}

/// The length of the common prefix of `a` and `b`, eight bytes at a time where it can.
fn mismatch(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

impl Json {
    /// The member `key` of an object (`None` for other values).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a string value that is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// The members of an object value.
    pub fn as_object(&self) -> Option<&[(Str, Json)]> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The elements of an array value.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A short name of the value's JSON type, for messages and diffs.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

/// Why a document is not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at byte {offset}: {reason}")]
pub struct JsonError {
    /// Byte offset of the error in the input.
    pub offset: usize,
    /// What was expected or refused there.
    pub reason: &'static str,
}

/// Parse one JSON document (surrounding whitespace allowed, a UTF-8 BOM is *not*: strip it first).
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing characters after the JSON value"));
    }
    Ok(v)
}

/// Parse a JSON array and also return the exact source text of each element, so a caller can
/// keep every byte a server sent next to the parsed view.
pub fn parse_array_with_raw(text: &str) -> Result<Vec<(Json, &str)>, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let out = p.array_with_raw(1)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing characters after the JSON value"));
    }
    Ok(out)
}

/// A member of a top-level object, with the byte range of its value's source text.
#[derive(Debug)]
pub struct Member<'a> {
    /// The member name.
    pub name: Str,
    /// The parsed value.
    pub value: Json,
    /// The byte range of the value's source text.
    pub span: std::ops::Range<usize>,
    /// When the member is the one asked to capture and is an array: the source text of each
    /// element, in order (empty otherwise).
    pub raw_elements: Vec<&'a str>,
}

/// Parse a document that must be an object and return its members (repeated names all kept, in
/// order; the caller applies last-wins). The elements of an array member named `capture` also
/// keep their source text, so a caller gets a tool array's raw entries in the same single pass.
pub fn parse_members<'a>(text: &'a str, capture: &str) -> Result<Vec<Member<'a>>, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    if p.peek() != Some(b'{') {
        return Err(p.err("expected an object"));
    }
    let mut members = Vec::new();
    p.members(|p, name| {
        let start = p.i;
        let (value, raw_elements) = if name.as_str() == Some(capture) && p.peek() == Some(b'[') {
            let (values, raw): (Vec<Json>, Vec<&str>) = p.array_with_raw(2)?.into_iter().unzip();
            (Json::Array(values), raw)
        } else {
            (p.value(1)?, Vec::new())
        };
        members.push(Member {
            name,
            value,
            span: start..p.i,
            raw_elements,
        });
        Ok(())
    })?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing characters after the JSON value"));
    }
    Ok(members)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, reason: &'static str) -> JsonError {
        JsonError {
            offset: self.i,
            reason,
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json, JsonError> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            Err(self.err("nested deeper than MAX_DEPTH (128)"))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.enter(depth)?;
        let mut items = Vec::new();
        self.elements(|p| {
            items.push(p.value(depth)?);
            Ok(())
        })?;
        Ok(Json::Array(items))
    }

    /// An array at nesting level `depth` (1 for a document's root), keeping each element's text.
    fn array_with_raw(&mut self, depth: usize) -> Result<Vec<(Json, &'a str)>, JsonError> {
        if self.peek() != Some(b'[') {
            return Err(self.err("expected an array"));
        }
        self.enter(depth)?;
        let mut items = Vec::new();
        let text = self.text;
        self.elements(|p| {
            let start = p.i;
            let v = p.value(depth)?;
            items.push((v, &text[start..p.i]));
            Ok(())
        })?;
        Ok(items)
    }

    /// `[` element (`,` element)* `]`, with the cursor on `[`.
    fn elements(
        &mut self,
        mut each: impl FnMut(&mut Self) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        self.i += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            each(self)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or ']' in array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.enter(depth)?;
        let mut members: Vec<(Str, Json)> = Vec::new();
        self.members(|p, key| {
            members.push((key, p.value(depth)?));
            Ok(())
        })?;
        dedupe_last_wins(&mut members);
        Ok(Json::Object(members))
    }

    /// `{` (name `:` value (`,` name `:` value)*)? `}`, with the cursor on `{`; `each` gets the
    /// decoded name with the cursor on the value and must consume it.
    fn members(
        &mut self,
        mut each: impl FnMut(&mut Self, Str) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a member name"));
            }
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':' after a member name"));
            }
            self.i += 1;
            self.ws();
            each(self, key)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or '}' in object")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: no digit after '.'"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number: no digit in exponent"));
            }
            self.digits();
        }
        // A token beyond the range of a double (`1e400`) is kept as it is: Python and JavaScript
        // both read it (as infinity), HISTOR digests a set that holds one in a member MTL/1 drops,
        // and the canon decides what it means (see `canon`).
        Ok(Json::Number(self.text[start..self.i].into()))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let Some(h) = self.s.get(self.i..self.i + 4) else {
            return Err(self.err("truncated \\u escape"));
        };
        let mut v: u16 = 0;
        for &c in h {
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.err("invalid \\u escape"))?;
            v = v * 16 + d as u16;
        }
        self.i += 4;
        Ok(v)
    }

    /// Advance over bytes that need no attention inside a string.
    fn plain_run(&mut self) {
        while let Some(&c) = self.s.get(self.i) {
            if SPECIAL[c as usize] {
                break;
            }
            self.i += 1;
        }
    }

    /// The escape after a backslash (cursor on the letter); `\u` yields a UTF-16 code unit.
    fn escape(&mut self) -> Result<u16, JsonError> {
        let e = self.peek().ok_or_else(|| self.err("unterminated string"))?;
        self.i += 1;
        Ok(match e {
            b'"' => 0x22,
            b'\\' => 0x5c,
            b'/' => 0x2f,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => 0x0a,
            b'r' => 0x0d,
            b't' => 0x09,
            b'u' => self.hex4()?,
            _ => {
                self.i -= 1;
                return Err(self.err("invalid escape"));
            }
        })
    }

    /// A string, with the cursor on the opening quote.
    fn string(&mut self) -> Result<Str, JsonError> {
        self.i += 1;
        let start = self.i;
        self.plain_run();
        match self.peek() {
            Some(b'"') => {
                let s = &self.text[start..self.i];
                self.i += 1;
                return Ok(Str::Text(s.into()));
            }
            None => return Err(self.err("unterminated string")),
            Some(b'\\') => {}
            Some(_) => return Err(self.err("control character in string")),
        }
        // Escapes: decode into UTF-8, pairing surrogate escapes; an unpaired one sends the
        // string down the code-unit path.
        let mut out = String::with_capacity(self.i - start + 16);
        out.push_str(&self.text[start..self.i]);
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Str::Text(out.into()));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let at = self.i - 1;
                    let u = self.escape()?;
                    let c = match u {
                        0xD800..=0xDBFF if self.s[self.i..].starts_with(b"\\u") => {
                            let back = self.i;
                            self.i += 2;
                            let lo = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&lo) {
                                char::from_u32(
                                    0x10000 + ((u as u32 - 0xD800) << 10) + (lo as u32 - 0xDC00),
                                )
                            } else {
                                self.i = back;
                                None
                            }
                        }
                        _ => char::from_u32(u as u32),
                    };
                    match c {
                        Some(c) => out.push(c),
                        None => {
                            self.i = at;
                            return self.string_units(out);
                        }
                    }
                }
                Some(c) if c < 0x20 => return Err(self.err("control character in string")),
                Some(_) => {
                    let run = self.i;
                    self.plain_run();
                    out.push_str(&self.text[run..self.i]);
                }
            }
        }
    }

    /// The rest of a string that holds an unpaired surrogate, as UTF-16 code units; `decoded` is
    /// what came before it, the cursor is on the backslash of the first unpaired escape.
    fn string_units(&mut self, decoded: String) -> Result<Str, JsonError> {
        let mut units: Vec<u16> = decoded.encode_utf16().collect();
        loop {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    self.i += 1;
                    units.push(self.escape()?);
                }
                Some(c) if c < 0x20 => return Err(self.err("control character in string")),
                Some(_) => {
                    let run = self.i;
                    self.plain_run();
                    units.extend(self.text[run..self.i].encode_utf16());
                }
            }
        }
        // Escaped surrogates pair up here; the string is text after all if every one paired.
        match String::from_utf16(&units) {
            Ok(t) => Ok(Str::Text(t.into())),
            Err(_) => Ok(Str::Units(units.into())),
        }
    }
}

/// Bytes that end a plain run inside a string: the quote, the backslash and C0 controls.
pub(crate) static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Keep the last value of a repeated member name at the position of its first occurrence.
fn dedupe_last_wins(members: &mut Vec<(Str, Json)>) {
    /// Below this many members a quadratic scan is cheaper than sorting an index.
    const LINEAR_SCAN_MAX: usize = 16;
    let n = members.len();
    if n < 2 {
        return;
    }
    let has_dup = if n <= LINEAR_SCAN_MAX {
        (1..n).any(|j| members[..j].iter().any(|(k, _)| *k == members[j].0))
    } else {
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by(|&a, &b| members[a].0.utf16_cmp(&members[b].0));
        idx.windows(2).any(|w| members[w[0]].0 == members[w[1]].0)
    };
    if !has_dup {
        return;
    }
    let mut out: Vec<(Str, Json)> = Vec::with_capacity(n);
    for (k, v) in members.drain(..) {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    *members = out;
}

/// `-?(0|[1-9][0-9]*)` with no fraction and no exponent: a number MTL/1 may accept.
pub fn is_integer_token(token: &str) -> bool {
    !token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_keeps_number_tokens() {
        let v = parse(r#" {"a":[1,1.0,1e2,-0,0.5,12345678901234567890]} "#).unwrap();
        let arr = v.get("a").unwrap().as_array().unwrap();
        let toks: Vec<_> = arr
            .iter()
            .map(|n| match n {
                Json::Number(t) => t.to_string(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(
            toks,
            ["1", "1.0", "1e2", "-0", "0.5", "12345678901234567890"]
        );
    }

    #[test]
    fn refuses_what_rfc8259_refuses() {
        for bad in [
            "",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "NaN",
            "Infinity",
            "[1] [2]",
            "\"a\tb\"",
            "\"\\x\"",
            "\"\\u12\"",
            "{'a':1}",
            "tru",
            "{\"a\" 1}",
        ] {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).is_err());
        // A hostile depth far beyond the limit fails cleanly, without exhausting the stack.
        assert!(parse(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn strings_decode_escapes_and_pair_surrogates() {
        let v = parse(r#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v.as_str(), Some("a\"\\/\u{8}\u{c}\n\r\té😀"));
        let lone = parse(r#""x\ud800y""#).unwrap();
        assert_eq!(
            lone,
            Json::String(Str::Units(vec![0x78, 0xd800, 0x79].into()))
        );
        assert_eq!(lone.as_str(), None);
        // A high surrogate followed by something other than a low one stays unpaired, and what
        // came before it (decoded, non-ASCII included) is kept.
        assert_eq!(
            parse(r#""é\ud83d\u0041\n""#).unwrap(),
            Json::String(Str::Units(vec![0xe9, 0xd83d, 0x41, 0x0a].into()))
        );
        assert_eq!(
            parse(r#""\udc00\ud800""#).unwrap(),
            Json::String(Str::Units(vec![0xdc00, 0xd800].into()))
        );
        assert_eq!(
            parse(r#""\ud83d\ude00\ud83d\ude01""#).unwrap().as_str(),
            Some("😀😁")
        );
        assert!(parse(r#""\ud83d\uzzzz""#).is_err());
    }

    #[test]
    fn duplicate_names_keep_last_value_at_first_position() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(
            v,
            Json::Object(vec![
                ("a".into(), Json::Number("3".into())),
                ("b".into(), Json::Number("2".into())),
            ])
        );
        // The sorted path for wide objects.
        let mut text = String::from("{");
        for i in 0..40 {
            text += &format!("\"k{i}\":{i},");
        }
        text += "\"k7\":\"last\"}";
        let v = parse(&text).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m.len(), 40);
        assert_eq!(m[7].1.as_str(), Some("last"));
    }

    #[test]
    fn utf16_order_differs_from_code_point_order() {
        // U+1F600 is D83D DE00 in UTF-16, below U+FFFF, though its code point is above.
        assert_eq!(utf16_cmp("\u{1F600}", "\u{FFFF}"), Ordering::Less);
        assert_eq!(utf16_cmp("a", "b"), Ordering::Less);
        assert_eq!(utf16_cmp("ab", "a"), Ordering::Greater);
        assert_eq!(utf16_cmp("é", "e"), Ordering::Greater);
        // Agrees with comparing the UTF-16 encodings, over characters from every UTF-8 length
        // and both sides of the surrogate gap, at every position and prefix length.
        let chars = [
            'a',
            'z',
            'é',
            '\u{7ff}',
            '\u{800}',
            '\u{d7ff}',
            '\u{e000}',
            '\u{ffff}',
            '\u{10000}',
            '\u{1F600}',
            '\u{10ffff}',
        ];
        let mut words = vec![String::new()];
        for &c in &chars {
            for &d in &chars {
                words.push(format!("{c}{d}"));
                words.push(format!("xxxxxxxxx{c}{d}"));
            }
            words.push(c.to_string());
        }
        for a in &words {
            for b in &words {
                assert_eq!(
                    utf16_cmp(a, b),
                    a.encode_utf16().cmp(b.encode_utf16()),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn captured_arrays_have_the_same_depth_limit() {
        // A tools array under a root object nests one level deeper than a bare one.
        let inner = |levels: usize| "[".repeat(levels) + &"]".repeat(levels);
        let doc = |levels: usize| format!("{{\"tools\":[{}]}}", inner(levels));
        assert!(parse(&doc(MAX_DEPTH - 2)).is_ok());
        assert!(parse_members(&doc(MAX_DEPTH - 2), "tools").is_ok());
        assert!(parse(&doc(MAX_DEPTH - 1)).is_err());
        assert!(parse_members(&doc(MAX_DEPTH - 1), "tools").is_err());
        let bare = format!("[{}]", inner(MAX_DEPTH - 1));
        assert!(parse(&bare).is_ok() && parse_array_with_raw(&bare).is_ok());
        let bare = format!("[{}]", inner(MAX_DEPTH));
        assert!(parse(&bare).is_err() && parse_array_with_raw(&bare).is_err());
    }

    #[test]
    fn raw_elements_are_kept_byte_for_byte() {
        let text = "[ {\"name\" : \"a\"} ,\n 2 ]";
        let items = parse_array_with_raw(text).unwrap();
        assert_eq!(items[0].1, "{\"name\" : \"a\"}");
        assert_eq!(items[1].1, "2");
    }
}
