//! Data-flow legs per tool: does a tool read private data, take in untrusted text, or send data
//! out? Three legs on one server make a toxic flow (a tool that reads text a third party wrote
//! can steer the model into reading private data with another and sending it out with a third).
//!
//! [`tool_legs`] reads a definition only, deterministically, and bounded (at most
//! [`NAME_MAX_CHARS`] of the name, [`DESCRIPTION_MAX_CHARS`] of the description and
//! [`MAX_PROPERTIES`] property names down to [`SCHEMA_MAX_DEPTH`] levels of the input schema).
//! It weighs four kinds of [`Evidence`]:
//!
//! * `name`: the name split into words (`snake_case`, `camelCase`, `kebab-case`, dots; plural
//!   `s` dropped), a verb of a leg's kind together with a noun of its kind: `read_file`,
//!   `list_emails` (private data), `fetch_url`, `get_issue_comments` (untrusted input),
//!   `send_message`, `create_issue`, `upload_file` (outbound). A verb that only sends
//!   (`send`, `publish`, `upload`, `tweet` …) is enough alone; a noun or verb alone is weaker.
//! * `description`: the same verb-then-noun test within a window of words of the description,
//!   and plain phrases (`from the internet`, `search the web`, `HTTP request`).
//! * `schema`: input property names (`url`, `path`, `to`/`recipient` with `body`/`message`,
//!   `method` with `url`, `sql`) and formats `uri`/`email`.
//! * `annotation`: explicit hints only (the MCP defaults say nothing about a tool: every tool
//!   without annotations is by default open-world and not read-only). An explicit
//!   `openWorldHint: true` says no more than the default, so alone it gives no leg (adding it
//!   to a tool changes no leg); it backs other evidence of untrusted input, and of outbound
//!   when the tool is also not read-only, as evidence of a second kind; an explicit `readOnlyHint: true` caps outbound at `possible` and drops
//!   its weak evidence; an explicit `openWorldHint: false` drops the weak untrusted-input and
//!   outbound evidence. `destructiveHint` says whether a tool destroys, not where data flows: it
//!   is not read.
//!
//! A leg is `confirmed` by one strong piece of evidence (a name's verb and noun, a plain
//! phrase) or by weak evidence of two different kinds; `possible` by weak evidence of one kind.
//!
//! It does not know what a tool actually does, follow `$ref`s or read output schemas: a tool
//! whose definition hides what it does has no legs here.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::ToolSet;
use crate::json::Json;
use crate::model::Tool;

/// At most this many characters of a tool's name are read.
pub const NAME_MAX_CHARS: usize = 256;

/// At most this many characters of a tool's description are read (real descriptions put what
/// a tool does first; 2,000 characters are a long one).
pub const DESCRIPTION_MAX_CHARS: usize = 2_000;

/// At most this many input-schema property names are read.
pub const MAX_PROPERTIES: usize = 100;

/// Property names are read this many schema levels deep (1: the top-level properties).
pub const SCHEMA_MAX_DEPTH: usize = 3;

/// At most this many pieces of evidence are listed per leg.
pub const MAX_EVIDENCE: usize = 6;

/// A data-flow leg.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Leg {
    /// Reads files, mail, messages, databases, credentials …
    PrivateData,
    /// Fetches web pages, issues, mail, search results … (text others wrote).
    UntrustedInput,
    /// Sends, posts, uploads, writes to places others read.
    Outbound,
}

impl Leg {
    /// Every leg, in order.
    pub const ALL: [Leg; 3] = [Leg::PrivateData, Leg::UntrustedInput, Leg::Outbound];

    /// The kebab-case name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Leg::PrivateData => "private-data",
            Leg::UntrustedInput => "untrusted-input",
            Leg::Outbound => "outbound",
        }
    }
}

/// How sure the judgement is. Ordered: `Possible < Confirmed`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Some evidence.
    Possible,
    /// Strong evidence.
    Confirmed,
}

impl Certainty {
    /// The lowercase name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Certainty::Possible => "possible",
            Certainty::Confirmed => "confirmed",
        }
    }
}

/// Why a leg was given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Evidence {
    /// `name`, `description`, `schema` or `annotation`.
    pub kind: String,
    /// What was seen (a word, a property name, `openWorldHint: true` …).
    pub detail: String,
}

/// One leg of a tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLeg {
    /// The leg.
    pub leg: Leg,
    /// How sure.
    pub certainty: Certainty,
    /// Why.
    pub evidence: Vec<Evidence>,
}

/// The legs of one named tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLegs {
    /// The tool's name.
    pub tool: String,
    /// Its legs, in [`Leg`] order (only those it has).
    pub legs: Vec<ToolLeg>,
}

// ---------------------------------------------------------------------------------------------
// Word tables (singular, lowercase; plural `s` is dropped before lookup).

/// Verbs that read or look up.
const READ_VERBS: &[&str] = &[
    "read", "get", "list", "search", "find", "query", "fetch", "retrieve", "view", "show",
    "download", "export", "lookup", "describe", "browse", "cat", "load", "recall", "grep",
    "tail", "inspect", "scan", "explore", "dump", "open", "look", "count", "check",
    "summarize", "analyze", "extract", "watch", "poll", "receive", "see", "access", "obtain",
];

/// Nouns of data that belong to a user or their organisation.
const PRIVATE_NOUNS: &[&str] = &[
    "file", "dir", "directory", "folder", "document", "doc", "note", "mail", "email", "inbox",
    "message", "chat", "conversation", "thread", "dm", "calendar", "event", "meeting",
    "contact", "memory", "entity", "graph", "observation", "relation", "secret", "credential",
    "password", "token", "key", "vault", "clipboard", "cookie", "history", "bookmark",
    "database", "db", "table", "row", "record", "sql", "collection", "repo", "repository",
    "commit", "branch", "code", "source", "log", "user", "profile", "account", "customer",
    "order", "invoice", "payment", "transaction", "charge", "subscription", "balance", "drive",
    "sheet", "spreadsheet", "workbook", "bucket", "blob", "env", "environment", "variable",
    "config", "configuration", "screenshot", "photo", "recording", "project", "task",
    "ticket", "issue", "pr", "pull", "workspace", "team", "member", "employee", "lead", "deal",
    "contract", "diff", "attachment", "draft", "label", "channel", "group", "application",
    "app", "policy", "setting", "node", "page", "space", "board", "card", "comment",
    "notebook", "cell", "container", "pod", "schema", "deployment", "instance", "cluster",
    "organization", "org", "person", "people", "dataset", "storage", "backup", "audit",
    "session",
];

/// Nouns of public data (their tools read nothing of the user's).
const PUBLIC_NOUNS: &[&str] = &[
    "weather", "forecast", "time", "timezone", "documentation", "docs", "library", "package",
    "crate", "npm", "pypi", "wikipedia", "news", "stock", "price", "map", "place",
    "direction", "route", "geocode", "currency", "exchange", "rate", "holiday", "web", "url",
    "website", "internet", "guide", "tutorial", "example", "model", "version", "help",
    "capability", "tool", "prompt", "thinking", "thought", "joke", "quote", "definition",
];

/// Words of the open web and other places anyone can write.
const WEB_NOUNS: &[&str] = &[
    "url", "uri", "web", "webpage", "website", "site", "html", "link", "internet", "online",
    "google", "bing", "brave", "duckduckgo", "tavily", "exa", "serp", "perplexity", "http",
    "https",
];

/// Words of a browser a tool drives (the pages it shows were written by others).
const BROWSER_NOUNS: &[&str] = &[
    "browser", "puppeteer", "playwright", "tab", "snapshot", "screenshot", "console", "dom",
];

/// Verbs that bring in text from the web.
const FETCH_VERBS: &[&str] = &[
    "fetch", "scrape", "crawl", "browse", "navigate", "visit", "goto", "download", "search",
    "extract", "read", "get", "open", "load", "query", "lookup", "find",
];

/// Nouns of text others wrote (issues, comments, mail, chat, posts, tickets …).
const THIRD_PARTY_NOUNS: &[&str] = &[
    "issue", "comment", "pr", "pull", "review", "mail", "email", "inbox", "message", "chat",
    "thread", "post", "tweet", "ticket", "discussion", "feed", "news", "article", "rss",
    "notification", "conversation", "transcript", "reply", "mention", "dm", "reddit",
    "hackernews", "youtube", "forum", "story", "wiki",
];

/// Verbs that only send something out.
const SEND_VERBS: &[&str] = &[
    "send", "post", "publish", "upload", "share", "tweet", "reply", "forward", "notify",
    "broadcast", "email", "dm", "invite", "submit", "comment", "retweet", "mail", "sms",
    "announce", "respond", "message", "push", "react", "webhook", "request", "curl", "http",
];

/// Send verbs that are also nouns (`get_post`, `list_comments`): they count only when no read
/// verb is in the name.
const AMBIGUOUS_SEND: &[&str] = &[
    "post", "comment", "email", "mail", "message", "share", "invite", "reply", "tweet", "dm",
    "request", "http", "webhook", "push", "sms",
];

/// Verbs that make or change something.
const WRITE_VERBS: &[&str] = &[
    "create", "add", "update", "edit", "write", "put", "set", "make", "close", "merge",
    "reopen", "assign", "modify", "patch", "append", "insert", "upsert", "replace", "commit",
    "fork", "star", "new", "save", "draft", "schedule", "book", "approve", "resolve",
    "transition", "open",
];

/// Nouns of things others read once made (issues, comments, posts, pages, releases …).
const OUTBOUND_NOUNS: &[&str] = &[
    "issue", "pr", "pull", "comment", "message", "page", "post", "tweet", "release", "gist",
    "repository", "repo", "discussion", "review", "wiki", "email", "mail", "invitation",
    "invite", "event", "meeting", "reply", "reaction", "status", "story", "article", "sms",
    "notification", "webhook", "channel", "card", "ticket", "answer", "thread", "blog",
    "request", "tag",
];

/// Other verbs: with one of them in a name, a send word that is also a noun is the noun
/// (`delete_email_domain`).
const OTHER_VERBS: &[&str] = &[
    "delete", "remove", "archive", "move", "copy", "rename", "run", "execute", "trigger",
    "start", "stop", "invoke", "call", "verify", "validate", "activate", "deactivate",
    "enable", "disable", "confirm", "preview", "render", "convert", "parse", "format",
    "generate", "test", "mark", "cancel", "clear", "reset", "sync", "import", "install",
];

/// Nouns that, last in a name, make it about the settings of a thing rather than the thing
/// (`list_email_templates`, `update_issue_label`).
const CONFIG_NOUNS: &[&str] = &[
    "template", "setting", "config", "configuration", "domain", "customization", "preference",
    "signature", "filter", "rule", "theme", "policy", "label", "schema", "type", "field",
    "format", "permission", "role", "quota", "limit", "count", "preview", "status", "stat",
    "metric", "version", "widget", "tag",
];

/// Words whose tools read private data whatever their verb (`execute_sql`, `clipboard`).
const PRIVATE_STRONG: &[&str] = &[
    "sql", "clipboard", "cookie", "credential", "password", "secret", "inbox", "vault",
];

// ---------------------------------------------------------------------------------------------

/// Split an identifier or a text into lowercase words (`getUserEmails` → `get user email`,
/// plural `s` dropped), at most `max` words.
fn words(s: &str, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(singular(&cur.to_lowercase()));
            cur.clear();
        }
    };
    for c in s.chars() {
        if out.len() >= max {
            break;
        }
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower {
                flush(&mut cur, &mut out);
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.push(c);
        } else if c == '\'' || c == '’' {
            // "user's" reads as "user".
            flush(&mut cur, &mut out);
            prev_lower = false;
        } else {
            flush(&mut cur, &mut out);
            prev_lower = false;
        }
    }
    if out.len() < max {
        flush(&mut cur, &mut out);
    }
    out.retain(|w| w != "s");
    out
}

/// A crude singular: `entities` → `entity`, `files` → `file`, `address` stays.
fn singular(w: &str) -> String {
    if w.len() > 4
        && let Some(stem) = w.strip_suffix("ies")
    {
        return format!("{stem}y");
    }
    let keep = ["ss", "us", "is", "ws", "ps"];
    if w.len() > 3 && w.ends_with('s') && !keep.iter().any(|k| w.ends_with(k)) {
        if let Some(stem) = w.strip_suffix("es")
            && (stem.ends_with("sh") || stem.ends_with("ch") || stem.ends_with('x'))
        {
            return stem.to_owned();
        }
        return w[..w.len() - 1].to_owned();
    }
    w.to_owned()
}

fn first_in<'a>(ws: &'a [String], table: &[&str]) -> Option<&'a str> {
    ws.iter().map(String::as_str).find(|w| table.contains(w))
}

/// Evidence being gathered for one leg.
#[derive(Default)]
struct Acc {
    strong: Vec<Evidence>,
    weak: Vec<Evidence>,
}

impl Acc {
    fn add(&mut self, strong: bool, kind: &str, detail: String) {
        let list = if strong {
            &mut self.strong
        } else {
            &mut self.weak
        };
        if list.len() < MAX_EVIDENCE && !list.iter().any(|e| e.kind == kind && e.detail == detail) {
            list.push(Evidence {
                kind: kind.to_owned(),
                detail,
            });
        }
    }

    fn any(&self) -> bool {
        !self.strong.is_empty() || !self.weak.is_empty()
    }

    fn drop_weak(&mut self, kinds: &[&str]) {
        self.weak.retain(|e| !kinds.contains(&e.kind.as_str()));
    }

    fn result(self, leg: Leg, cap: Option<Certainty>) -> Option<ToolLeg> {
        let kinds: BTreeSet<&str> = self.weak.iter().map(|e| e.kind.as_str()).collect();
        let certainty = if !self.strong.is_empty() || kinds.len() >= 2 {
            Certainty::Confirmed
        } else if !self.weak.is_empty() {
            Certainty::Possible
        } else {
            return None;
        };
        let certainty = cap.map_or(certainty, |c| certainty.min(c));
        let mut evidence = self.strong;
        evidence.extend(self.weak);
        evidence.truncate(MAX_EVIDENCE);
        Some(ToolLeg {
            leg,
            certainty,
            evidence,
        })
    }
}

/// The three legs' evidence.
#[derive(Default)]
struct Judge {
    private: Acc,
    untrusted: Acc,
    outbound: Acc,
}

/// What a word list (a name, or a window of a description) says.
struct Reading<'a> {
    read: Option<&'a str>,
    write: Option<&'a str>,
    send: Option<&'a str>,
    fetch: Option<&'a str>,
    private: Option<&'a str>,
    private_strong: Option<&'a str>,
    public: Option<&'a str>,
    web: Option<&'a str>,
    browser: Option<&'a str>,
    third: Option<&'a str>,
    out_noun: Option<&'a str>,
}

fn reading(ws: &[String]) -> Reading<'_> {
    let read = first_in(ws, READ_VERBS);
    let write = first_in(ws, WRITE_VERBS);
    let other = first_in(ws, OTHER_VERBS);
    // `list_email_templates` is about templates: no third-party text, nothing sent.
    let config = ws.len() > 1 && ws.last().is_some_and(|w| CONFIG_NOUNS.contains(&w.as_str()));
    // A word that is also a noun (`post`, `email`) is a verb only in a verb's place: first or
    // second word, with no other verb in the name.
    let send = ws.iter().enumerate().map(|(i, w)| (i, w.as_str())).find_map(|(i, w)| {
        let verb = SEND_VERBS.contains(&w)
            && (!AMBIGUOUS_SEND.contains(&w)
                || (i < 2 && read.is_none() && write.is_none() && other.is_none()));
        verb.then_some(w)
    });
    Reading {
        read,
        write,
        send,
        fetch: first_in(ws, FETCH_VERBS),
        private: ws
            .iter()
            .map(String::as_str)
            .find(|w| PRIVATE_NOUNS.contains(w) && Some(*w) != send),
        private_strong: first_in(ws, PRIVATE_STRONG),
        public: first_in(ws, PUBLIC_NOUNS),
        web: first_in(ws, WEB_NOUNS),
        browser: first_in(ws, BROWSER_NOUNS),
        third: ws
            .iter()
            .map(String::as_str)
            .find(|w| THIRD_PARTY_NOUNS.contains(w) && Some(*w) != send)
            .filter(|_| !config),
        out_noun: ws
            .iter()
            .map(String::as_str)
            .find(|w| OUTBOUND_NOUNS.contains(w) && Some(*w) != read)
            .filter(|_| !config),
    }
}

impl Judge {
    fn name(&mut self, name: &str) {
        let cut: String = name.chars().take(NAME_MAX_CHARS).collect();
        let ws = words(&cut, 32);
        let r = reading(&ws);
        const K: &str = "name";
        // Private data.
        if let (Some(v), Some(n)) = (r.read, r.private) {
            if r.web.is_none() || r.private_strong.is_some() {
                self.private
                    .add(true, K, format!("read verb `{v}` + private noun `{n}`"));
            }
        } else if let Some(n) = r.private_strong {
            self.private.add(true, K, format!("private noun `{n}`"));
        } else if let Some(v) = r.read
            && r.public.is_none()
            && r.web.is_none()
            && r.send.is_none()
        {
            self.private.add(false, K, format!("read verb `{v}`"));
        }
        // Untrusted input.
        if let (Some(v), Some(n)) = (r.fetch, r.web) {
            self.untrusted
                .add(true, K, format!("fetch verb `{v}` + web noun `{n}`"));
        } else if let (Some(v), Some(n)) = (r.read, r.third) {
            self.untrusted
                .add(true, K, format!("read verb `{v}` + third-party noun `{n}`"));
        } else if let Some(n) = r
            .web
            .or(r.browser)
            .filter(|_| r.write.is_none() && r.send.is_none())
        {
            self.untrusted.add(false, K, format!("web noun `{n}`"));
        } else if let Some(v) = r
            .fetch
            .filter(|v| matches!(*v, "fetch" | "scrape" | "crawl" | "browse" | "navigate"))
        {
            self.untrusted.add(false, K, format!("fetch verb `{v}`"));
        }
        // Outbound.
        if let Some(v) = r.send {
            self.outbound.add(true, K, format!("send verb `{v}`"));
        } else if let (Some(v), Some(n)) = (r.write, r.out_noun) {
            self.outbound
                .add(true, K, format!("write verb `{v}` + shared noun `{n}`"));
        }
    }

    fn description(&mut self, text: &str) {
        let cut: String = text.chars().take(DESCRIPTION_MAX_CHARS).collect();
        let lower = cut.to_lowercase();
        const K: &str = "description";
        for (leg, strong, re) in PHRASES.iter() {
            if let Some(m) = re.find(&lower) {
                let acc = match leg {
                    Leg::PrivateData => &mut self.private,
                    Leg::UntrustedInput => &mut self.untrusted,
                    Leg::Outbound => &mut self.outbound,
                };
                acc.add(*strong, K, format!("`{}`", m.as_str()));
            }
        }
        // Verb then noun within a short window, sentence by sentence, in the first sentences.
        for sentence in lower.split(['.', '!', '?', '\n']).take(4) {
            let ws = words(sentence, 64);
            for (i, w) in ws.iter().enumerate() {
                let window = &ws[i + 1..(i + 6).min(ws.len())];
                let w = w.as_str();
                if READ_VERBS.contains(&w) {
                    if let Some(n) = first_in(window, PRIVATE_NOUNS)
                        && first_in(window, PUBLIC_NOUNS).is_none()
                    {
                        self.private
                            .add(false, K, format!("`{w}` … `{n}`"));
                    }
                    if let Some(n) = first_in(window, THIRD_PARTY_NOUNS) {
                        self.untrusted
                            .add(false, K, format!("`{w}` … `{n}`"));
                    }
                }
                if FETCH_VERBS.contains(&w)
                    && let Some(n) = first_in(window, WEB_NOUNS)
                {
                    self.untrusted
                        .add(false, K, format!("`{w}` … `{n}`"));
                }
                if (WRITE_VERBS.contains(&w) || SEND_VERBS.contains(&w))
                    && let Some(n) = first_in(window, OUTBOUND_NOUNS)
                {
                    self.outbound
                        .add(false, K, format!("`{w}` … `{n}`"));
                }
            }
        }
    }

    fn schema(&mut self, schema: &Json, name_reads: bool, name_writes: bool) {
        let mut props: Vec<(String, Option<String>)> = Vec::new();
        collect_properties(schema, 1, &mut props);
        let names: BTreeSet<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
        let norm = |n: &str| n.to_lowercase().replace(['-', '_'], "");
        let normed: BTreeSet<String> = names.iter().map(|n| norm(n)).collect();
        let has = |list: &[&'static str]| -> Option<&'static str> {
            list.iter().find(|p| normed.contains(**p)).copied()
        };
        const K: &str = "schema";
        let url = has(&[
            "url", "urls", "uri", "link", "href", "website", "webpage", "pageurl", "targeturl",
            "starturl", "sourceurl", "weburl",
        ]);
        if let Some(p) = url
            && !(name_writes && !name_reads)
        {
            self.untrusted.add(false, K, format!("property `{p}`"));
        }
        let recipient = has(&[
            "to", "recipient", "recipients", "cc", "bcc", "toemail", "emailto", "phone",
            "phonenumber", "channel", "channelid", "chatid", "webhook", "webhookurl", "towhom",
            "userid",
        ]);
        let body = has(&["body", "message", "text", "content", "subject", "html", "payload"]);
        match (recipient, body) {
            (Some(r), Some(b)) if r != "userid" => self.outbound.add(
                true,
                K,
                format!("properties `{r}` + `{b}`"),
            ),
            (Some(r), _) if !matches!(r, "userid" | "channel" | "channelid" | "to") => {
                self.outbound.add(false, K, format!("property `{r}`"))
            }
            _ => {}
        }
        if let (Some(m), Some(u)) = (has(&["method", "httpmethod"]), url) {
            self.outbound
                .add(true, K, format!("properties `{m}` + `{u}` (an HTTP request)"));
        }
        if let Some(p) = has(&[
            "path", "paths", "filepath", "filename", "file", "directory", "dir", "folder",
            "folderpath", "sourcepath",
        ]) && (name_reads || !name_writes)
        {
            self.private.add(false, K, format!("property `{p}`"));
        }
        if let Some(p) = has(&["sql", "sqlquery", "statement", "database", "table", "tablename"]) {
            self.private.add(false, K, format!("property `{p}`"));
        }
        for (p, format) in &props {
            match format.as_deref() {
                Some("uri" | "url" | "iri") if !(name_writes && !name_reads) => {
                    self.untrusted
                        .add(false, K, format!("property `{p}` format `uri`"));
                }
                Some("email") => {
                    self.outbound
                        .add(false, K, format!("property `{p}` format `email`"));
                }
                _ => {}
            }
        }
    }

    fn annotations(&mut self, annotations: Option<&Json>) -> Option<Certainty> {
        use crate::diff::hint;
        let (read_only, ro_explicit) = hint(annotations, "readOnlyHint", false);
        let (open, open_explicit) = hint(annotations, "openWorldHint", true);
        const K: &str = "annotation";
        let mut outbound_cap = None;
        // An explicit `openWorldHint: true` says what the default says: it only backs other
        // evidence, so adding it to a tool gives it no leg.
        if open_explicit && open {
            if self.untrusted.any() {
                self.untrusted
                    .add(false, K, "openWorldHint: true".to_owned());
            }
            if !read_only && self.outbound.any() {
                self.outbound
                    .add(false, K, "openWorldHint: true, not read-only".to_owned());
            }
        }
        if open_explicit && !open {
            self.untrusted.drop_weak(&["schema", "annotation"]);
            self.outbound.drop_weak(&["schema", "annotation"]);
        }
        if ro_explicit && read_only {
            self.outbound.weak.clear();
            outbound_cap = Some(Certainty::Possible);
        }
        outbound_cap
    }
}

/// Description phrases that say a leg plainly.
static PHRASES: LazyLock<Vec<(Leg, bool, Regex)>> = LazyLock::new(|| {
    [
        (
            Leg::PrivateData,
            true,
            r"\b(?:read|reads|reading|get|gets|list|lists|search|searches|retrieve|retrieves|access|accesses)\s+(?:the\s+)?(?:complete\s+|full\s+|entire\s+)?(?:contents?\s+of\s+)?(?:a\s+|the\s+|your\s+|user'?s?\s+|local\s+|multiple\s+)*(?:files?|emails?|inbox|messages|calendar|contacts|notes|knowledge\s+graph|database|clipboard|cookies|browser\s+history|secrets?|credentials|passwords?)\b",
        ),
        (
            Leg::PrivateData,
            false,
            r"\b(?:from|in|of)\s+(?:the\s+|your\s+|a\s+)?(?:local\s+)?(?:file\s?system|knowledge\s+graph|database|inbox|mailbox|clipboard)\b",
        ),
        (
            Leg::UntrustedInput,
            true,
            r"\b(?:fetch|fetches|fetching|scrape|scrapes|crawl|crawls|retrieve|retrieves|download|downloads|extract|extracts|read|reads|get|gets)\s+(?:the\s+)?(?:content\s+(?:of|from)\s+)?(?:a|an|any|the|web|given|specified|one\s+or\s+more)?\s*(?:url|urls|web\s?pages?|websites?|pages?\s+from\s+the\s+(?:web|internet))\b",
        ),
        (
            Leg::UntrustedInput,
            true,
            r"\b(?:search(?:es)?\s+the\s+(?:web|internet)|web\s+search|from\s+the\s+(?:internet|web)|navigate\s+(?:the\s+browser\s+)?to\s+(?:a\s+)?url|search\s+results)\b",
        ),
        (
            Leg::Outbound,
            true,
            r"\b(?:send|sends|sending)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:e-?mails?|messages?|sms|text\s+messages?|notifications?|dms?|direct\s+messages?|tweets?|slack\s+messages?)\b",
        ),
        (
            Leg::Outbound,
            true,
            r"\b(?:post|posts|publish|publishes|upload|uploads)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:message|comment|reply|tweet|status|file|content|article|blog|story|release|package)",
        ),
        (
            Leg::Outbound,
            true,
            r"\b(?:make|makes|send|sends|perform|performs|execute|executes)\s+(?:an?\s+)?(?:arbitrary\s+)?(?:http|https|api|web)\s+requests?\b",
        ),
    ]
    .into_iter()
    .map(|(l, strong, r)| (l, strong, Regex::new(r).expect("leg phrase regex")))
    .collect()
});

/// Property names (and their `format`) of an input schema, breadth first, at most
/// [`MAX_PROPERTIES`], down to [`SCHEMA_MAX_DEPTH`] levels (through `properties`, `items`).
fn collect_properties(schema: &Json, depth: usize, out: &mut Vec<(String, Option<String>)>) {
    if depth > SCHEMA_MAX_DEPTH || out.len() >= MAX_PROPERTIES {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Json::as_object) else {
        if let Some(items) = schema.get("items") {
            collect_properties(items, depth, out);
        }
        return;
    };
    for (k, v) in props {
        if out.len() >= MAX_PROPERTIES {
            return;
        }
        let format = v.get("format").and_then(Json::as_str).map(str::to_owned);
        out.push((k.lossy().into_owned(), format));
    }
    for (_, v) in props {
        collect_properties(v, depth + 1, out);
    }
}

/// The legs of one tool.
pub fn tool_legs(tool: &Tool) -> Vec<ToolLeg> {
    let mut j = Judge::default();
    let name = tool.name().unwrap_or_default();
    j.name(name);
    let name_words = words(&name.chars().take(NAME_MAX_CHARS).collect::<String>(), 32);
    let name_reads = first_in(&name_words, READ_VERBS).is_some();
    let name_writes = first_in(&name_words, WRITE_VERBS).is_some()
        || first_in(&name_words, SEND_VERBS).is_some();
    if let Some(d) = tool.description() {
        j.description(d);
    }
    if let Some(s) = tool.get("inputSchema") {
        j.schema(s, name_reads, name_writes);
    }
    let cap = j.annotations(tool.get("annotations"));
    // A tool that fetches from the web reads the web, not the user's data.
    if !j.untrusted.strong.is_empty() && j.private.strong.is_empty() {
        j.private.weak.clear();
    }
    let Judge {
        private,
        untrusted,
        outbound,
    } = j;
    [
        private.result(Leg::PrivateData, None),
        untrusted.result(Leg::UntrustedInput, None),
        outbound.result(Leg::Outbound, cap),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The legs of every named tool of a set, in the set's order (tools without legs left out).
pub fn set_legs(set: &ToolSet) -> Vec<ToolLegs> {
    set.tools
        .iter()
        .filter_map(|t| {
            let name = t.name()?;
            let legs = tool_legs(t);
            (!legs.is_empty()).then(|| ToolLegs {
                tool: name.to_owned(),
                legs,
            })
        })
        .collect()
}

/// Whether the set holds all three legs (a toxic flow), and how sure: `Confirmed` when every
/// leg is confirmed on some tool, `None` when a leg is missing.
pub fn toxic_flow(legs: &[ToolLegs]) -> Option<Certainty> {
    let mut best = [None::<Certainty>; 3];
    for t in legs {
        for l in &t.legs {
            let i = l.leg as usize;
            best[i] = best[i].max(Some(l.certainty));
        }
    }
    best.iter().copied().min().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_style() {
        assert_eq!(words("getUserEmails", 10), ["get", "user", "email"]);
        assert_eq!(words("read-multiple_files", 10), ["read", "multiple", "file"]);
        assert_eq!(words("create_entities", 10), ["create", "entity"]);
        assert_eq!(words("HTTPRequest", 10), ["httprequest"]);
        assert_eq!(words("the user's inbox", 10), ["the", "user", "inbox"]);
        assert_eq!(words("a b c d", 2), ["a", "b"]);
    }
}
