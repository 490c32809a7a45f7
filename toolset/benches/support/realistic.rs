//! A deterministic, realistic large tool set for the digest benchmark (`benches/digest.rs`,
//! `examples/gen_toolset.rs`, `bench/run.sh`).
//!
//! Tools look like the ones MCP servers publish: `verb_noun` names, descriptions of a few hundred
//! characters (mostly ASCII, an occasional `é`, `—` or emoji, an occasional escaped quote or
//! newline), input schemas with several properties of every JSON Schema type, enums, defaults,
//! formats, patterns and nested objects and arrays, output schemas on some tools and annotations
//! on half. Every number is a small integer, so MTL/1 digests the set. Members come in the order
//! servers write them (`name`, `title`, `description`, `inputSchema`, …; `type` before
//! `properties`), not sorted, so canonicalisation has real sorting to do. The text is compact
//! JSON, `{"tools":[…]}`, as a `tools/list` result is sent.

/// SplitMix64, fixed seed: the same bytes on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

const SEED: u64 = 0x746f_6f6c_6d61_726b; // "toolmark"

const VERBS: &[&str] = &[
    "list", "get", "create", "update", "delete", "search", "describe", "sync", "export", "import",
    "archive", "restore", "assign", "revoke", "approve", "preview", "validate", "schedule",
    "cancel", "retry",
];
const NOUNS: &[&str] = &[
    "issue",
    "pull_request",
    "repository",
    "user",
    "group",
    "application",
    "policy",
    "invoice",
    "customer",
    "subscription",
    "calendar_event",
    "document",
    "folder",
    "ticket",
    "dashboard",
    "metric",
    "alert",
    "deployment",
    "pipeline",
    "secret",
    "bucket",
    "table",
    "query",
    "report",
    "webhook",
    "email_template",
    "device",
    "session",
    "role",
    "audit_log",
];
const WORDS: &[&str] = &[
    "the",
    "a",
    "of",
    "for",
    "in",
    "to",
    "and",
    "with",
    "from",
    "by",
    "when",
    "is",
    "are",
    "returns",
    "matching",
    "current",
    "organization",
    "workspace",
    "resource",
    "identifier",
    "results",
    "page",
    "cursor",
    "filter",
    "status",
    "owner",
    "optional",
    "required",
    "default",
    "value",
    "field",
    "list",
    "object",
    "created",
    "updated",
    "before",
    "after",
    "pagination",
    "token",
    "scope",
    "permission",
    "account",
    "project",
    "request",
    "response",
    "limit",
    "maximum",
    "minimum",
    "number",
    "string",
    "timestamp",
    "ISO-8601",
    "UTC",
    "user's",
    "API",
    "endpoint",
    "Use",
    "this",
    "tool",
    "only",
    "if",
    "you",
    "need",
    "all",
    "fields",
];
const RARE: &[&str] = &[
    "café",
    "naïve",
    "—",
    "→",
    "“quoted”",
    "🚀",
    "東京",
    "Zürich",
    "\"quoted\"",
    "C:\\path",
];
const PROPERTY_NAMES: &[&str] = &[
    "id",
    "name",
    "query",
    "limit",
    "after",
    "before",
    "cursor",
    "page",
    "per_page",
    "sort",
    "order",
    "filter",
    "status",
    "owner",
    "repo",
    "title",
    "body",
    "labels",
    "assignees",
    "state",
    "since",
    "until",
    "email",
    "first_name",
    "last_name",
    "group_id",
    "role",
    "include_deleted",
    "fetch_all",
    "expand",
    "fields",
    "timezone",
    "start",
    "end",
    "priority",
    "tags",
    "metadata",
    "dry_run",
    "force",
    "reason",
    "region",
    "project_id",
    "format",
];
const FORMATS: &[&str] = &["date-time", "email", "uri", "uuid", "date"];
const ENUM_VALUES: &[&str] = &[
    "open",
    "closed",
    "all",
    "asc",
    "desc",
    "created",
    "updated",
    "ACTIVE",
    "SUSPENDED",
    "DEPROVISIONED",
    "low",
    "medium",
    "high",
    "critical",
    "json",
    "csv",
    "markdown",
];

struct Writer {
    out: String,
    rng: Rng,
}

impl Writer {
    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\t' => self.out.push_str("\\t"),
                c if (c as u32) < 0x20 => self.out.push_str(&format!("\\u{:04x}", c as u32)),
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }

    fn key(&mut self, k: &str) {
        self.string(k);
        self.out.push(':');
    }

    fn sentence(&mut self, min_words: usize, max_words: usize) -> String {
        let n = self.rng.range(min_words, max_words);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            let w = if self.rng.percent(2) {
                self.rng.pick(RARE)
            } else {
                self.rng.pick(WORDS)
            };
            if i == 0 {
                let mut cs = w.chars();
                if let Some(f) = cs.next() {
                    s.extend(f.to_uppercase());
                    s.push_str(cs.as_str());
                }
            } else {
                s.push_str(w);
            }
        }
        s.push('.');
        s
    }

    /// A description string of `min..=max` characters (about), in sentences.
    fn description(&mut self, min: usize, max: usize) {
        let chars = self.rng.range(min, max);
        let mut s = String::new();
        while s.len() < chars {
            if !s.is_empty() {
                s.push_str(if self.rng.percent(10) { "\n\n" } else { " " });
            }
            // Property descriptions are a short sentence or two; tool descriptions run longer.
            let sentence = if max <= 120 {
                self.sentence(3, 9)
            } else {
                self.sentence(6, 18)
            };
            s.push_str(&sentence);
        }
        self.string(&s);
    }

    fn int(&mut self, lo: usize, hi: usize) {
        let v = self.rng.range(lo, hi);
        self.out.push_str(&v.to_string());
    }

    fn property(&mut self, depth: usize) {
        self.out.push('{');
        // Mostly scalars; arrays and nested objects near the top only.
        let kind = match self.rng.below(100) {
            0..=44 => 0,
            45..=64 => 4,
            65..=81 => 6,
            82..=91 if depth < 2 => 7,
            92.. if depth < 2 => 9,
            _ => 0,
        };
        match kind {
            0..=3 => {
                self.key("type");
                self.string("string");
                self.out.push(',');
                self.key("description");
                self.description(20, 100);
                if self.rng.percent(25) {
                    self.out.push(',');
                    self.key("enum");
                    self.out.push('[');
                    for i in 0..self.rng.range(2, 6) {
                        if i > 0 {
                            self.out.push(',');
                        }
                        let v = self.rng.pick(ENUM_VALUES);
                        self.string(v);
                    }
                    self.out.push(']');
                } else if self.rng.percent(20) {
                    self.out.push(',');
                    self.key("format");
                    let f = self.rng.pick(FORMATS);
                    self.string(f);
                } else if self.rng.percent(10) {
                    self.out.push(',');
                    self.key("pattern");
                    self.string("^[A-Za-z0-9_.-]{1,64}$");
                }
                if self.rng.percent(15) {
                    self.out.push(',');
                    self.key("minLength");
                    self.int(0, 3);
                    self.out.push(',');
                    self.key("maxLength");
                    self.int(64, 4096);
                }
            }
            4 | 5 => {
                self.key("type");
                self.string("integer");
                self.out.push(',');
                self.key("description");
                self.description(20, 80);
                self.out.push(',');
                self.key("minimum");
                self.int(0, 1);
                self.out.push(',');
                self.key("maximum");
                self.int(100, 10_000);
                if self.rng.percent(50) {
                    self.out.push(',');
                    self.key("default");
                    self.int(10, 100);
                }
            }
            6 => {
                self.key("type");
                self.string("boolean");
                self.out.push(',');
                self.key("description");
                self.description(20, 70);
                self.out.push(',');
                self.key("default");
                self.out.push_str(if self.rng.percent(50) {
                    "true"
                } else {
                    "false"
                });
            }
            7 | 8 => {
                self.key("type");
                self.string("array");
                self.out.push(',');
                self.key("description");
                self.description(20, 70);
                self.out.push(',');
                self.key("items");
                if self.rng.percent(70) {
                    self.out.push('{');
                    self.key("type");
                    self.string("string");
                    self.out.push('}');
                } else {
                    self.object_schema(depth + 1, 1, 3);
                }
                if self.rng.percent(30) {
                    self.out.push(',');
                    self.key("maxItems");
                    self.int(10, 500);
                }
            }
            _ => {
                self.object_schema_inner(depth + 1, 1, 4, true);
            }
        }
        self.out.push('}');
    }

    fn object_schema(&mut self, depth: usize, min: usize, max: usize) {
        self.out.push('{');
        self.object_schema_inner(depth, min, max, false);
        self.out.push('}');
    }

    /// `"type":"object","properties":{…},"required":[…]` (and a description if asked).
    fn object_schema_inner(&mut self, depth: usize, min: usize, max: usize, described: bool) {
        self.key("type");
        self.string("object");
        if described {
            self.out.push(',');
            self.key("description");
            self.description(20, 70);
        }
        self.out.push(',');
        self.key("properties");
        self.out.push('{');
        let n = self.rng.range(min, max);
        let mut names: Vec<&str> = Vec::new();
        while names.len() < n {
            let p = self.rng.pick(PROPERTY_NAMES);
            if !names.contains(&p) {
                names.push(p);
            }
        }
        for (i, p) in names.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.key(p);
            self.property(depth);
        }
        self.out.push('}');
        let required: Vec<&str> = names
            .iter()
            .copied()
            .filter(|_| self.rng.percent(35))
            .collect();
        if !required.is_empty() {
            self.out.push(',');
            self.key("required");
            self.out.push('[');
            for (i, r) in required.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.string(r);
            }
            self.out.push(']');
        }
        if depth == 0 && self.rng.percent(60) {
            self.out.push(',');
            self.key("additionalProperties");
            self.out.push_str("false");
        }
        if depth == 0 && self.rng.percent(40) {
            self.out.push(',');
            self.key("$schema");
            self.string("http://json-schema.org/draft-07/schema#");
        }
    }

    fn tool(&mut self, index: usize) {
        let verb = self.rng.pick(VERBS);
        let noun = self.rng.pick(NOUNS);
        self.out.push('{');
        self.key("name");
        self.string(&format!("{verb}_{noun}_{index}"));
        if self.rng.percent(40) {
            self.out.push(',');
            self.key("title");
            let t = format!("{} {}", verb, noun.replace('_', " "));
            self.string(&t);
        }
        self.out.push(',');
        self.key("description");
        self.description(120, 450);
        self.out.push(',');
        self.key("inputSchema");
        self.object_schema(0, 1, 6);
        if self.rng.percent(30) {
            self.out.push(',');
            self.key("outputSchema");
            self.object_schema(0, 2, 5);
        }
        if self.rng.percent(50) {
            self.out.push(',');
            self.key("annotations");
            self.out.push('{');
            self.key("readOnlyHint");
            let ro = matches!(verb, "list" | "get" | "search" | "describe" | "preview");
            self.out.push_str(if ro { "true" } else { "false" });
            self.out.push(',');
            self.key("destructiveHint");
            self.out
                .push_str(if verb == "delete" { "true" } else { "false" });
            self.out.push(',');
            self.key("openWorldHint");
            self.out.push_str("true");
            self.out.push('}');
        }
        self.out.push('}');
    }
}

/// `{"tools":[…]}` with `n` tools, the same bytes for the same `n` everywhere.
pub fn tool_set(n: usize) -> String {
    let mut w = Writer {
        out: String::with_capacity(n * 1400),
        rng: Rng(SEED),
    };
    w.out.push_str("{\"tools\":[");
    for i in 0..n {
        if i > 0 {
            w.out.push(',');
        }
        w.tool(i);
    }
    w.out.push_str("]}");
    w.out
}
