//! Random MCP tool sets written as JSON *text*, for `histor_differential.rs`.
//!
//! Every lexical choice is the generator's: how each character of each string is spelled
//! (literally, `\uXXXX` in either case, a surrogate-pair escape, a short escape), which number
//! token is written (`-0`, `1.0`, `1E-3`, `9007199254740992`, …), whitespace between tokens,
//! member order, repeated member names. The values are tool-set shaped: most cases are sets MTL/1
//! digests, and a minority carries one of the faults MTL/1 refuses, so that both digests and error
//! codes get compared.
//!
//! Deterministic for a seed: [`Rng`] is SplitMix64.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, and good enough to drive a generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (the modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    pub fn permille(&mut self, p: u64) -> bool {
        self.below(1000) < p
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            xs.swap(i, j);
        }
    }
}

/// One generated tool-set document.
pub fn case(rng: &mut Rng) -> String {
    let mut g = Gen::new(rng);
    g.document()
}

/// Integer tokens MTL/1 accepts.
const SAFE_INTS: &[&str] = &[
    "0",
    "-0",
    "1",
    "12",
    "-7",
    "100",
    "-1",
    "65535",
    "4294967296",
    "9007199254740991",
    "-9007199254740991",
];

/// Tokens MTL/1 refuses (fraction, exponent, or an integer beyond ±(2^53−1)), all valid JSON.
const UNSAFE_NUMBERS: &[&str] = &[
    "1.0",
    "1e2",
    "0.5",
    "1E-3",
    "-0.0",
    "1e+2",
    "2E5",
    "0e0",
    "-1.25e-7",
    "0.1e1",
    "3.141592653589793",
    "1e-400",
    "9007199254740992",
    "-9007199254740992",
    "9007199254740993",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "-99999999999999999999",
    "123456789012345678901234567890",
];

/// Valid JSON tokens that overflow an IEEE 754 double (Python reads them as ±inf).
const OVERFLOWING_NUMBERS: &[&str] = &["1e400", "-1E400", "2e308"];

const WHITESPACE: &[&str] = &[" ", "  ", "\n", "\t", "\r\n", " \n  ", "\n\t"];

const NON_OBJECT_ENTRIES: &[&str] = &[
    "null",
    "42",
    "\"get_weather\"",
    "[]",
    "[{\"name\":\"a\"}]",
    "true",
    "1.5",
];

const NAME_PREFIXES: &[&str] = &[
    "",
    "",
    "",
    "get_",
    "list_",
    "a",
    "\u{E000}",
    "\u{FFFF}",
    "😀",
    "\u{10000}",
    "é",
    "中",
    "Z",
];

const PROPERTY_KEYS: &[&str] = &[
    "city",
    "id",
    "limit",
    "query",
    "page",
    "type",
    "a",
    "b",
    "A",
    "Z",
    "_x",
    "$ref",
    "é",
    "😀",
    "\u{FFFF}",
    "\u{E000}",
    "\u{F8FF}",
    "中文",
    "x y",
    "",
    "name",
    "\u{10FFFF}",
];

const WORDS: &[&str] = &[
    "Return",
    "the",
    "current",
    "weather",
    "for",
    "a",
    "city",
    "List",
    "all",
    "users",
    "in",
    "organization",
    "page",
    "cursor",
    "ID",
    "of",
    "resource",
    "Use",
    "this",
    "to",
    "fetch",
    "results",
    "—",
    "naïve",
    "café",
    "東京",
    "🚀",
    "\u{FFFD}",
    "\u{E001}",
    "(min",
    "20)",
];

const SCHEMA_TYPES: &[&str] = &[
    "object", "string", "integer", "number", "boolean", "array", "null",
];

struct Gen<'r> {
    rng: &'r mut Rng,
    /// Non-integer and out-of-range numbers may appear in digested members.
    mixed_numbers: bool,
    /// Permille of strings that get an unpaired surrogate.
    lone_rate: u64,
    /// Some entries are not objects or lack a usable name.
    bad_entries: bool,
    /// Some names repeat.
    dup_names: bool,
    /// One schema nests deep.
    deep: bool,
    /// Percent of characters escaped, as a baseline for this case.
    escape_rate: u64,
    names: Vec<Vec<u16>>,
}

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

impl<'r> Gen<'r> {
    fn new(rng: &'r mut Rng) -> Gen<'r> {
        let mixed_numbers = rng.percent(20);
        let lone_rate = if rng.percent(5) { 60 } else { 0 };
        let bad_entries = rng.percent(10);
        let dup_names = rng.percent(8);
        let deep = rng.percent(8);
        let escape_rate = match rng.below(100) {
            0..=59 => 0,
            60..=84 => 10,
            85..=94 => 40,
            _ => 100,
        };
        Gen {
            rng,
            mixed_numbers,
            lone_rate,
            bad_entries,
            dup_names,
            deep,
            escape_rate,
            names: Vec::new(),
        }
    }

    fn ws(&mut self) -> &'static str {
        if self.rng.percent(85) {
            ""
        } else {
            self.rng.pick(WHITESPACE)
        }
    }

    // ---- strings -------------------------------------------------------------------------

    /// A JSON string literal for these UTF-16 code units, spelled at random; an unpaired
    /// surrogate may be spliced in (per the case's rate).
    fn string(&mut self, text: &[u16]) -> String {
        let mut text = text.to_vec();
        if self.lone_rate > 0 && self.rng.permille(self.lone_rate) {
            let unit = if self.rng.percent(50) {
                self.rng.range(0xD800, 0xDBFF)
            } else {
                self.rng.range(0xDC00, 0xDFFF)
            } as u16;
            let at = self.rng.below(text.len() as u64 + 1) as usize;
            text.insert(at, unit);
        }
        self.string_exact(&text)
    }

    /// A JSON string literal for exactly these code units.
    fn string_exact(&mut self, text: &[u16]) -> String {
        let rate = match self.rng.below(100) {
            0..=79 => self.escape_rate,
            80..=89 => 0,
            90..=94 => 30,
            _ => 100,
        };
        let mut out = String::from("\"");
        for r in char::decode_utf16(text.iter().copied()) {
            match r {
                Ok(c) => self.char_lexical(c, rate, &mut out),
                Err(e) => self.escape_unit(e.unpaired_surrogate(), &mut out),
            }
        }
        out.push('"');
        out
    }

    fn escape_unit(&mut self, unit: u16, out: &mut String) {
        let hex = match self.rng.below(4) {
            0 => format!("{unit:04X}"),
            1 => {
                // Mixed case, e.g. `\uD83d`.
                let lower = format!("{unit:04x}");
                lower
                    .chars()
                    .map(|c| {
                        if self.rng.percent(50) {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect()
            }
            _ => format!("{unit:04x}"),
        };
        out.push_str("\\u");
        out.push_str(&hex);
    }

    fn char_lexical(&mut self, c: char, rate: u64, out: &mut String) {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '/' => Some("\\/"),
            _ => None,
        };
        let must = (c as u32) < 0x20 || c == '"' || c == '\\';
        if !must && !self.rng.percent(rate) {
            out.push(c);
            return;
        }
        if let Some(s) = short {
            if self.rng.percent(70) {
                out.push_str(s);
                return;
            }
        }
        let mut buf = [0u16; 2];
        for &u in c.encode_utf16(&mut buf).iter() {
            self.escape_unit(u, out);
        }
    }

    fn random_char(&mut self) -> char {
        let cp = match self.rng.below(100) {
            0..=49 => {
                let ascii = b"abcdefghijklmnopqrstuvwxyz0123456789_-.ABCXYZ";
                return self.rng.pick(ascii) as char;
            }
            50..=57 => self.rng.range(0xC0, 0x17F),
            58..=65 => self.rng.range(0x4E00, 0x9FFF),
            66..=72 => self.rng.range(0xE000, 0xF8FF),
            73..=76 => self.rng.range(0xFF00, 0xFFFF),
            77..=85 => self.rng.range(0x1F300, 0x1FAFF),
            86..=89 => self.rng.range(0x20000, 0x2A6DF),
            90..=92 => {
                if self.rng.percent(20) {
                    0x10FFFF
                } else {
                    self.rng.range(0xF0000, 0xFFFFD)
                }
            }
            93..=95 => {
                if self.rng.percent(15) {
                    0x7F
                } else {
                    self.rng.range(0, 0x1F)
                }
            }
            _ => self
                .rng
                .pick(&[0x22, 0x5C, 0x2F, 0x20, 0x2028, 0xFEFF, 0xE9, 0x0A]),
        };
        char::from_u32(cp as u32).expect("no surrogate ranges above")
    }

    fn name_units(&mut self) -> Vec<u16> {
        let mut s = String::from(self.rng.pick(NAME_PREFIXES));
        for _ in 0..self.rng.range(1, 7) {
            s.push(self.random_char());
        }
        units(&s)
    }

    fn key_units(&mut self) -> Vec<u16> {
        if self.rng.percent(70) {
            units(self.rng.pick(PROPERTY_KEYS))
        } else {
            self.name_units()
        }
    }

    fn text_units(&mut self) -> Vec<u16> {
        if self.rng.percent(5) {
            return Vec::new();
        }
        let mut s = String::new();
        for i in 0..self.rng.range(1, 25) {
            if i > 0 {
                s.push(if self.rng.percent(95) { ' ' } else { '\n' });
            }
            if self.rng.percent(90) {
                s.push_str(self.rng.pick(WORDS));
            } else {
                s.push(self.random_char());
            }
        }
        units(&s)
    }

    fn text(&mut self) -> String {
        let t = self.text_units();
        self.string(&t)
    }

    fn lit(&mut self, s: &str) -> String {
        self.string(&units(s))
    }

    // ---- numbers -------------------------------------------------------------------------

    fn safe_int(&mut self) -> String {
        if self.rng.percent(50) {
            return self.rng.pick(SAFE_INTS).to_string();
        }
        let digits = self.rng.range(1, 16) as u32;
        let n = self.rng.below(10u64.pow(digits)).min(9_007_199_254_740_991);
        if self.rng.percent(30) {
            format!("-{n}")
        } else {
            n.to_string()
        }
    }

    fn unsafe_number(&mut self) -> String {
        if self.rng.permille(5) {
            return self.rng.pick(OVERFLOWING_NUMBERS).to_string();
        }
        if self.rng.percent(15) {
            // A random decimal with a fraction and/or an exponent.
            let mut s = self.safe_int();
            if self.rng.percent(70) {
                s.push('.');
                s.push_str(&self.rng.below(1000).to_string());
            }
            if self.rng.percent(40) {
                s.push(self.rng.pick(&['e', 'E']));
                s.push_str(self.rng.pick(&["", "+", "-"]));
                s.push_str(&self.rng.below(30).to_string());
            }
            return s;
        }
        self.rng.pick(UNSAFE_NUMBERS).to_string()
    }

    /// A number token; `digested` numbers are integers MTL/1 accepts unless the case mixes.
    fn number(&mut self, digested: bool) -> String {
        if (digested && !self.mixed_numbers) || self.rng.percent(70) {
            self.safe_int()
        } else {
            self.unsafe_number()
        }
    }

    // ---- composite values ----------------------------------------------------------------

    fn array(&mut self, items: Vec<String>) -> String {
        let mut out = String::from("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(self.ws());
            out.push_str(item);
            out.push_str(self.ws());
        }
        if items.is_empty() {
            out.push_str(self.ws());
        }
        out.push(']');
        out
    }

    /// An object from members already rendered as `(key, value text)`, in this order.
    fn object(&mut self, members: Vec<(Vec<u16>, String)>) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(self.ws());
            let key = self.string(k);
            out.push_str(&key);
            out.push_str(self.ws());
            out.push(':');
            out.push_str(self.ws());
            out.push_str(v);
            out.push_str(self.ws());
        }
        if members.is_empty() {
            out.push_str(self.ws());
        }
        out.push('}');
        out
    }

    /// Shuffle the members, maybe repeat one name with another value, and render.
    fn object_shuffled(
        &mut self,
        mut members: Vec<(Vec<u16>, String)>,
        digested: bool,
        depth: u32,
    ) -> String {
        if !members.is_empty() && self.rng.percent(4) {
            let i = self.rng.below(members.len() as u64) as usize;
            let key = members[i].0.clone();
            let v = self.any(digested, depth + 1);
            members.push((key, v));
        }
        self.rng.shuffle(&mut members);
        self.object(members)
    }

    /// Any JSON value.
    fn any(&mut self, digested: bool, depth: u32) -> String {
        let top = if depth >= 6 { 5 } else { 8 };
        match self.rng.below(top) {
            0 => "null".into(),
            1 => self.rng.pick(&["true", "false"]).to_string(),
            2 | 3 => self.number(digested),
            4 => self.text(),
            5 => {
                let n = self.rng.below(4);
                let items = (0..n).map(|_| self.any(digested, depth + 1)).collect();
                self.array(items)
            }
            _ => {
                let n = self.rng.below(4);
                let members = (0..n)
                    .map(|_| (self.key_units(), self.any(digested, depth + 1)))
                    .collect();
                self.object_shuffled(members, digested, depth)
            }
        }
    }

    /// A JSON Schema-like object (everything in it is digested when it is an input or output
    /// schema).
    fn schema(&mut self, depth: u32, chain: u32) -> String {
        let mut m: Vec<(Vec<u16>, String)> = Vec::new();
        let max_depth = 4;
        let ty = if self.rng.percent(80) {
            let t = self.rng.pick(SCHEMA_TYPES).to_string();
            if self.rng.percent(10) {
                let a = self.lit(&t);
                let b = self.lit("null");
                m.push((units("type"), self.array(vec![a, b])));
            } else {
                let v = self.lit(&t);
                m.push((units("type"), v));
            }
            t
        } else {
            String::new()
        };
        if self.rng.percent(40) {
            let v = self.text();
            m.push((units("description"), v));
        }
        if self.rng.percent(10) {
            let v = self.text();
            m.push((units("title"), v));
        }
        if chain > 0 {
            // Nest one level further on the way to a deep schema.
            let inner = self.schema(depth + 1, chain - 1);
            if self.rng.percent(50) {
                let k = self.key_units();
                let props = self.object(vec![(k, inner)]);
                m.push((units("properties"), props));
            } else {
                m.push((units("items"), inner));
            }
        } else if (ty == "object" || self.rng.percent(15)) && depth < max_depth {
            // Fewer properties deeper down, so that sets stay a few KB.
            let n = self.rng.below([6, 4, 3, 2][depth.min(3) as usize]);
            let props = (0..n)
                .map(|_| (self.key_units(), self.schema(depth + 1, 0)))
                .collect();
            let v = self.object_shuffled(props, true, depth);
            m.push((units("properties"), v));
            if self.rng.percent(40) {
                let req = (0..self.rng.below(4))
                    .map(|_| {
                        let k = self.key_units();
                        self.string(&k)
                    })
                    .collect();
                let v = self.array(req);
                m.push((units("required"), v));
            }
        }
        if (ty == "array" || self.rng.percent(5)) && depth < max_depth && chain == 0 {
            let v = self.schema(depth + 1, 0);
            m.push((units("items"), v));
        }
        if self.rng.percent(15) {
            let items = (0..self.rng.range(1, 4))
                .map(|_| match self.rng.below(4) {
                    0 => self.number(true),
                    1 => "null".to_string(),
                    _ => {
                        let k = self.name_units();
                        self.string(&k)
                    }
                })
                .collect();
            let v = self.array(items);
            m.push((units("enum"), v));
        }
        for kw in [
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "minItems",
            "multipleOf",
        ] {
            if self.rng.percent(6) {
                let v = self.number(true);
                m.push((units(kw), v));
            }
        }
        if self.rng.percent(10) {
            let v = self.any(true, depth + 1);
            m.push((units("default"), v));
        }
        if self.rng.percent(15) {
            let v = if self.rng.percent(70) || depth >= max_depth {
                self.rng.pick(&["true", "false"]).to_string()
            } else {
                self.schema(depth + 1, 0)
            };
            m.push((units("additionalProperties"), v));
        }
        if self.rng.percent(6) && depth < max_depth {
            let items = (0..self.rng.range(1, 3))
                .map(|_| self.schema(depth + 1, 0))
                .collect();
            let v = self.array(items);
            let k = self.rng.pick(&["anyOf", "oneOf", "allOf"]);
            m.push((units(k), v));
        }
        if self.rng.percent(5) {
            let v = self.lit("http://json-schema.org/draft-07/schema#");
            m.push((units("$schema"), v));
        }
        if self.rng.percent(5) {
            let v = self.lit("^[a-z]+\\d*$");
            m.push((units("pattern"), v));
        }
        if self.rng.percent(5) {
            let k = self.key_units();
            let v = self.any(true, depth + 1);
            m.push((k, v));
        }
        if self.rng.percent(2) {
            // A wide object: past 16 members the parser finds repeated names another way.
            for i in 0..self.rng.range(17, 30) {
                let k = if self.rng.percent(10) {
                    self.key_units()
                } else {
                    units(&format!("x-{i}"))
                };
                let v = self.any(true, depth + 2);
                m.push((k, v));
            }
        }
        self.object_shuffled(m, true, depth)
    }

    /// A value of some type other than object, for members MTL/1 normalises by type.
    fn non_object(&mut self) -> String {
        match self.rng.below(6) {
            0 => "null".into(),
            1 => "true".into(),
            2 => self.number(false),
            3 => self.text(),
            4 => "[]".into(),
            _ => {
                let items = (0..self.rng.range(1, 3))
                    .map(|_| self.any(false, 3))
                    .collect();
                self.array(items)
            }
        }
    }

    fn annotations(&mut self) -> String {
        let mut m = Vec::new();
        for k in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            if self.rng.percent(50) {
                m.push((units(k), self.rng.pick(&["true", "false"]).to_string()));
            }
        }
        for k in ["priority", "weight", "cost"] {
            if self.rng.percent(40) {
                // Floats are fine here: MTL/1 drops annotations.
                let v = if self.rng.percent(60) {
                    self.unsafe_number()
                } else {
                    self.safe_int()
                };
                m.push((units(k), v));
            }
        }
        if self.rng.percent(30) {
            let v = self.text();
            m.push((units("title"), v));
        }
        self.object_shuffled(m, false, 2)
    }

    fn name_value(&mut self) -> String {
        let name = if self.dup_names && !self.names.is_empty() && self.rng.percent(35) {
            let i = self.rng.below(self.names.len() as u64) as usize;
            self.names[i].clone()
        } else {
            let n = self.name_units();
            self.names.push(n.clone());
            n
        };
        self.string(&name)
    }

    fn tool(&mut self) -> String {
        let mut fault = 0;
        if self.bad_entries && self.rng.percent(30) {
            fault = self.rng.range(1, 4);
        }
        if fault == 1 {
            return self.rng.pick(NON_OBJECT_ENTRIES).to_string();
        }
        let mut m: Vec<(Vec<u16>, String)> = Vec::new();
        match fault {
            2 => {} // no name
            3 => {
                let v = match self.rng.below(6) {
                    0 => "null".to_string(),
                    1 => "true".to_string(),
                    2 => self.number(false),
                    3 => "[\"a\"]".to_string(),
                    4 => "{\"name\":\"a\"}".to_string(),
                    _ => "1.5".to_string(),
                };
                m.push((units("name"), v));
            }
            4 => m.push((units("name"), "\"\"".to_string())),
            _ => {
                let v = self.name_value();
                m.push((units("name"), v));
            }
        }
        match self.rng.below(100) {
            0..=64 => {
                let v = self.text();
                m.push((units("description"), v));
            }
            65..=74 => {}
            _ => {
                let v = self.non_object();
                m.push((units("description"), v));
            }
        }
        match self.rng.below(100) {
            0..=69 => {
                let chain = if self.deep && self.rng.percent(50) {
                    self.rng.range(5, 10) as u32
                } else {
                    0
                };
                let v = self.schema(0, chain);
                m.push((units("inputSchema"), v));
            }
            70..=77 => {}
            78..=84 => m.push((units("inputSchema"), "{}".into())),
            _ => {
                let v = self.non_object();
                m.push((units("inputSchema"), v));
            }
        }
        match self.rng.below(100) {
            0..=44 => {}
            45..=59 => m.push((units("outputSchema"), "{}".into())),
            60..=84 => {
                let v = self.schema(0, 0);
                m.push((units("outputSchema"), v));
            }
            _ => {
                let v = self.non_object();
                m.push((units("outputSchema"), v));
            }
        }
        if self.rng.percent(25) {
            let v = if self.rng.percent(80) {
                self.text()
            } else {
                self.non_object()
            };
            m.push((units("title"), v));
        }
        if self.rng.percent(30) {
            let v = self.annotations();
            m.push((units("annotations"), v));
        }
        if self.rng.percent(10) {
            let v = self.any(false, 2);
            m.push((units("_meta"), v));
        }
        if self.rng.percent(5) {
            let src = self.lit("https://example.com/icon.png");
            let icon = self.object(vec![(units("src"), src)]);
            let v = self.array(vec![icon]);
            m.push((units("icons"), v));
        }
        if self.rng.percent(10) {
            let k = self.key_units();
            let v = self.any(false, 2);
            m.push((k, v));
        }
        // The same member name twice: JSON readers keep the last value.
        if self.rng.percent(5) {
            let k = self
                .rng
                .pick(&["name", "description", "inputSchema", "outputSchema"]);
            let v = match k {
                "name" => self.name_value(),
                "description" => self.text(),
                _ if self.rng.percent(70) => self.schema(1, 0),
                _ => self.non_object(),
            };
            m.push((units(k), v));
        }
        self.rng.shuffle(&mut m);
        self.object(m)
    }

    fn document(&mut self) -> String {
        let n = if self.rng.percent(1) {
            0
        } else {
            match self.rng.below(100) {
                0..=69 => self.rng.range(1, 5),
                70..=94 => self.rng.range(6, 15),
                _ => self.rng.range(16, 40),
            }
        };
        let tools: Vec<String> = (0..n).map(|_| self.tool()).collect();
        let array = self.array(tools);
        let doc = match self.rng.below(100) {
            0..=79 => array,
            80..=93 => {
                let mut m = vec![(units("tools"), array)];
                if self.rng.percent(30) {
                    let v = self.lit("c2");
                    m.push((units("nextCursor"), v));
                }
                if self.rng.percent(30) {
                    let v = self.any(false, 2);
                    m.push((units("server_info"), v));
                }
                if self.rng.percent(10) {
                    // A repeated `tools` member before the real one: the last one counts.
                    let decoy = self.lit("decoy");
                    m.insert(0, (units("tools"), decoy));
                    let real = m.remove(1);
                    self.rng.shuffle(&mut m);
                    m.push(real);
                } else {
                    self.rng.shuffle(&mut m);
                }
                self.object(m)
            }
            _ => {
                let result = self.object(vec![(units("tools"), array)]);
                let v = self.lit("2.0");
                let mut m = vec![
                    (units("jsonrpc"), v),
                    (units("id"), self.safe_int()),
                    (units("result"), result),
                ];
                self.rng.shuffle(&mut m);
                self.object(m)
            }
        };
        format!("{}{}{}", self.ws(), doc, self.ws())
    }
}
