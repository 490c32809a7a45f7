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
//!   `s` dropped) and read around its main verb (the first word that is a verb; a word that is
//!   also a noun, like `post` or `email`, only in a verb's place of a name with no other verb):
//!   a read verb with a private noun (`read_file`, `list-mail-messages`), a read verb with a
//!   web or third-party noun (`search_web`, `get_issue_comments`), a fetch verb (`fetch`,
//!   `navigate`, `scrape`), a send verb (`send_email`, `upload_file`, `slack_post_message`), a
//!   write verb with a shared noun (`create_issue`, `add_issue_comment`); weaker: a read verb
//!   alone, a read verb with a content noun (`get_file_contents`: a file may hold text others
//!   wrote), a browser word with an interaction (`browser_click`), a verb that runs code or
//!   commands (`exec_in_pod`: all three legs possible). A name whose last word is a settings
//!   noun (`list_email_templates`) reads no third-party text and sends nothing; a name that
//!   only changes or sends something (`create_entities`, `delete_email_domain`) reads no data
//!   and takes in no text by its description's or schema's say-so; a draft is not sent.
//! * `description`: the same verb-then-noun test within a window of words of the first
//!   sentences, and plain phrases (`from the internet`, `send an email`, `HTTP request`).
//! * `schema`: input property names (`url`: untrusted input and, since the caller picks the
//!   address, outbound, confirmed with a fetch verb; `path` for a reading tool; `to`/`recipient`
//!   with `body`/`message`; `method` with `url`; `sql`) and formats `uri`/`email`.
//! * `annotation`: explicit hints only (the MCP defaults say nothing about a tool: every tool
//!   without annotations is by default open-world and not read-only). An explicit
//!   `openWorldHint: true` says no more than the default, so alone it gives no leg (adding it
//!   to a tool that had no other evidence changes no leg); it backs other evidence of untrusted
//!   input or outbound, and gives outbound as `possible` to a tool that is not read-only and
//!   whose name makes or sends something (`create_refund`: it acts in the open world). An
//!   explicit `readOnlyHint: true` drops the outbound evidence of the name and description (a
//!   URL the tool requests still counts); an explicit `openWorldHint: false` drops the weak
//!   untrusted-input and outbound evidence of the schema. `destructiveHint` says whether a
//!   tool destroys, not where data flows: it is not read.
//!
//! A leg is `confirmed` by one strong piece of evidence (a name's verb and noun, a plain
//! phrase, a fetch verb with a `url` property) or by weak evidence of three different kinds
//! (the labelled set agrees with two kinds less often); `possible` by weak evidence.
//!
//! It does not know what a tool actually does, follow `$ref`s or read output schemas: a tool
//! whose definition hides what it does has no legs here. Its word lists were tuned on the
//! labelled set `tests/fixtures/rules/legs.jsonl` (see `tests/legs_corpus.rs`).

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

/// The legs judge's version: bumped whenever a word list, phrase or limit here changes what a
/// tool is judged to have, so stored legs are judged again (the index re-scans rows made by
/// another version, as it does for another rule set).
pub const LEGS_ID: &str = "toolmark-legs/1";

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
    /// What was seen (a word, a property name, `openWorldHint: true` …), cut to
    /// [`EVIDENCE_MAX_CHARS`].
    pub detail: String,
    /// `name`, `description`, `schema` or `annotation`.
    pub kind: String,
}

/// An evidence's `detail` is cut to this many characters (it can quote a name the server
/// chose). This module's types declare their members in RFC 8785 order, so a `/check` answer
/// holding legs is written canonically.
pub const EVIDENCE_MAX_CHARS: usize = 200;

/// One leg of a tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLeg {
    /// How sure.
    pub certainty: Certainty,
    /// Why.
    pub evidence: Vec<Evidence>,
    /// The leg.
    pub leg: Leg,
}

/// The legs of one named tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolLegs {
    /// Its legs, in [`Leg`] order (only those it has).
    pub legs: Vec<ToolLeg>,
    /// The tool's name (cut to [`crate::diff::NAME_MAX_CHARS`]).
    pub tool: String,
}

// ---------------------------------------------------------------------------------------------
// Word tables (singular, lowercase; plural `s` is dropped before lookup).

/// Verbs that read or look up.
const READ_VERBS: &[&str] = &[
    "read",
    "get",
    "list",
    "search",
    "find",
    "query",
    "retrieve",
    "view",
    "show",
    "download",
    "export",
    "lookup",
    "describe",
    "cat",
    "load",
    "recall",
    "grep",
    "tail",
    "inspect",
    "scan",
    "explore",
    "dump",
    "open",
    "look",
    "count",
    "check",
    "summarize",
    "analyze",
    "extract",
    "watch",
    "poll",
    "receive",
    "see",
    "access",
    "obtain",
    "capture",
    "observe",
    "take",
];

/// Verbs that bring in a page from the web (and so also request an address the caller picks).
const FETCH_VERBS: &[&str] = &[
    "fetch", "scrape", "crawl", "browse", "navigate", "visit", "goto", "curl", "wget",
];

/// Verbs that only send something out.
const SEND_VERBS: &[&str] = &[
    "send",
    "post",
    "publish",
    "upload",
    "share",
    "tweet",
    "reply",
    "forward",
    "notify",
    "broadcast",
    "email",
    "dm",
    "invite",
    "submit",
    "comment",
    "retweet",
    "mail",
    "sms",
    "announce",
    "respond",
    "message",
    "push",
    "react",
    "webhook",
    "request",
    "http",
];

/// Send verbs that are also nouns (`get_post`, `list_comments`, `port_forward`): they are the
/// verb only in a verb's place (first or second word) of a name with no other verb.
const AMBIGUOUS_SEND: &[&str] = &[
    "post", "comment", "email", "mail", "message", "share", "invite", "reply", "tweet", "dm",
    "request", "http", "webhook", "push", "sms", "forward", "react",
];

/// Verbs that make or change something.
const WRITE_VERBS: &[&str] = &[
    "create",
    "add",
    "update",
    "edit",
    "write",
    "put",
    "set",
    "make",
    "close",
    "merge",
    "reopen",
    "assign",
    "modify",
    "patch",
    "append",
    "insert",
    "upsert",
    "replace",
    "commit",
    "fork",
    "star",
    "save",
    "draft",
    "schedule",
    "book",
    "approve",
    "resolve",
    "transition",
    "finalize",
    "cancel",
    "refund",
    "apply",
    "install",
    "upgrade",
    "deploy",
    "new",
];

/// Verbs that run code or commands (what comes back and what goes out is anyone's guess).
const EXEC_VERBS: &[&str] = &[
    "exec", "execute", "run", "start", "interact", "evaluate", "eval",
];

/// What an exec verb must run to count (`run_query` is a read, `start_session` nothing).
const EXEC_NOUNS: &[&str] = &[
    "command",
    "process",
    "code",
    "script",
    "shell",
    "terminal",
    "pod",
    "javascript",
    "js",
    "python",
    "snippet",
    "cmd",
    "bash",
    "program",
    "generic",
    "unsafe",
];

/// Verbs that act on a page in a browser.
const INTERACT_VERBS: &[&str] = &[
    "click", "fill", "type", "press", "select", "drag", "drop", "act", "tab", "evaluate",
];

/// Other verbs: with one of them first, a name is about something else (`delete_email_domain`,
/// `stop_port_forward`).
const OTHER_VERBS: &[&str] = &[
    "delete",
    "remove",
    "archive",
    "move",
    "copy",
    "rename",
    "trigger",
    "stop",
    "invoke",
    "call",
    "verify",
    "validate",
    "activate",
    "deactivate",
    "enable",
    "disable",
    "confirm",
    "preview",
    "render",
    "convert",
    "parse",
    "format",
    "generate",
    "test",
    "mark",
    "clear",
    "reset",
    "sync",
    "import",
    "uninstall",
    "kill",
    "terminate",
    "cleanup",
    "toggle",
    "resize",
    "hover",
    "emulate",
    "checkout",
    "login",
    "logout",
    "resolve",
    "scale",
    "ping",
    "wait",
    "calculate",
    "simulate",
    "echo",
    "give",
    "handle",
    "explain",
    "gzip",
    "compress",
    "trash",
    "untrash",
    "run",
];

/// Nouns of data that belong to a user or their organisation.
const PRIVATE_NOUNS: &[&str] = &[
    "file",
    "dir",
    "directory",
    "folder",
    "document",
    "note",
    "mail",
    "email",
    "inbox",
    "message",
    "chat",
    "conversation",
    "thread",
    "dm",
    "calendar",
    "event",
    "meeting",
    "contact",
    "memory",
    "entity",
    "graph",
    "observation",
    "relation",
    "secret",
    "credential",
    "password",
    "token",
    "key",
    "vault",
    "clipboard",
    "cookie",
    "history",
    "bookmark",
    "database",
    "db",
    "table",
    "row",
    "record",
    "sql",
    "collection",
    "repo",
    "repository",
    "commit",
    "branch",
    "code",
    "source",
    "log",
    "user",
    "profile",
    "account",
    "customer",
    "order",
    "invoice",
    "payment",
    "transaction",
    "charge",
    "subscription",
    "balance",
    "drive",
    "sheet",
    "spreadsheet",
    "workbook",
    "bucket",
    "blob",
    "env",
    "environment",
    "variable",
    "config",
    "configuration",
    "screenshot",
    "photo",
    "recording",
    "project",
    "task",
    "ticket",
    "issue",
    "pr",
    "pull",
    "workspace",
    "team",
    "member",
    "employee",
    "lead",
    "deal",
    "contract",
    "diff",
    "attachment",
    "draft",
    "label",
    "channel",
    "group",
    "application",
    "app",
    "policy",
    "setting",
    "node",
    "page",
    "space",
    "board",
    "card",
    "comment",
    "notebook",
    "cell",
    "container",
    "pod",
    "schema",
    "deployment",
    "instance",
    "cluster",
    "organization",
    "org",
    "person",
    "people",
    "dataset",
    "storage",
    "backup",
    "audit",
    "block",
    "dispute",
    "price",
    "product",
    "coupon",
    "call",
    "onedrive",
    "outlook",
    "gmail",
    "slack",
    "notion",
    "kb",
    "knowledge",
    "process",
];

/// Nouns of public data (their tools read nothing of the user's).
const PUBLIC_NOUNS: &[&str] = &[
    "weather",
    "forecast",
    "time",
    "timezone",
    "documentation",
    "doc",
    "library",
    "package",
    "crate",
    "npm",
    "pypi",
    "wikipedia",
    "news",
    "stock",
    "map",
    "place",
    "direction",
    "route",
    "geocode",
    "currency",
    "exchange",
    "rate",
    "holiday",
    "web",
    "url",
    "website",
    "internet",
    "guide",
    "tutorial",
    "example",
    "model",
    "version",
    "help",
    "capability",
    "prompt",
    "thinking",
    "thought",
    "joke",
    "quote",
    "definition",
    "sum",
    "image",
    "paper",
    "monitor",
    "crawl",
    "search",
    "feedback",
    "usage",
    "stat",
];

/// Words of the open web and other places anyone can write.
const WEB_NOUNS: &[&str] = &[
    "url",
    "uri",
    "web",
    "webpage",
    "website",
    "site",
    "html",
    "internet",
    "online",
    "google",
    "bing",
    "brave",
    "duckduckgo",
    "tavily",
    "exa",
    "serp",
    "perplexity",
    "https",
    "github",
    "gitlab",
    "arxiv",
    "stackoverflow",
];

/// Words of a browser a tool drives (the pages it shows were written by others).
const BROWSER_NOUNS: &[&str] = &[
    "browser",
    "puppeteer",
    "playwright",
    "stagehand",
    "browserbase",
    "selenium",
    "chrome",
];

/// Browsers on the user's machine (their pages may show the user's own sessions).
const LOCAL_BROWSERS: &[&str] = &["browser", "puppeteer", "playwright", "selenium", "chrome"];

/// Browser words that only take in a page's text, with no capture word: they still show
/// what the page says (`browser_click` returns the page after the click).
const BROWSER_SEES: &[&str] = &["click", "tab", "dialog", "wait", "act", "back"];

/// Browser words that read the page.
const CAPTURE_WORDS: &[&str] = &[
    "screenshot",
    "snapshot",
    "console",
    "network",
    "observe",
    "extract",
    "find",
    "get",
    "read",
    "text",
    "content",
    "html",
    "markdown",
    "evaluate",
    "navigate",
    "agent",
];

/// Nouns of text others wrote (issues, comments, mail, chat, posts, tickets …).
const THIRD_PARTY_NOUNS: &[&str] = &[
    "issue",
    "comment",
    "pr",
    "pull",
    "review",
    "mail",
    "email",
    "inbox",
    "message",
    "chat",
    "thread",
    "post",
    "tweet",
    "ticket",
    "discussion",
    "feed",
    "news",
    "article",
    "rss",
    "notification",
    "conversation",
    "transcript",
    "reply",
    "mention",
    "dm",
    "reddit",
    "hackernews",
    "youtube",
    "forum",
    "story",
    "wiki",
    "paper",
    "repository",
    "code",
];

/// Nouns of stored content that may hold text others wrote (a file, a page, a log).
const CONTENT_NOUNS: &[&str] = &[
    "file",
    "content",
    "document",
    "page",
    "block",
    "markdown",
    "diff",
    "log",
    "commit",
    "output",
    "kb",
    "knowledge",
    "show",
    "query",
    "dispute",
    "calendar",
    "profile",
    "channel",
];

/// Read verbs that list or find things rather than show their content.
const LISTING_VERBS: &[&str] = &[
    "list", "search", "find", "count", "check", "scan", "look", "explore", "describe",
];

/// Nouns of things others read once made (issues, comments, posts, pages, releases …).
const OUTBOUND_NOUNS: &[&str] = &[
    "issue",
    "pr",
    "pull",
    "comment",
    "message",
    "page",
    "post",
    "tweet",
    "release",
    "gist",
    "repository",
    "repo",
    "discussion",
    "review",
    "wiki",
    "email",
    "mail",
    "invitation",
    "invite",
    "event",
    "meeting",
    "reply",
    "reaction",
    "status",
    "story",
    "article",
    "sms",
    "notification",
    "webhook",
    "channel",
    "card",
    "ticket",
    "answer",
    "thread",
    "blog",
    "share",
    "link",
    "subscription",
    "dispute",
    "block",
    "source",
    "forwarding",
    "delegate",
    "vacation",
    "autoreply",
];

/// Nouns that, last in a name, make it about the settings of a thing rather than the thing
/// (`list_email_templates`, `update_issue_label`, `get_pull_request_status`).
const CONFIG_NOUNS: &[&str] = &[
    "template",
    "setting",
    "config",
    "configuration",
    "domain",
    "customization",
    "preference",
    "signature",
    "filter",
    "rule",
    "theme",
    "policy",
    "label",
    "schema",
    "type",
    "field",
    "format",
    "permission",
    "role",
    "quota",
    "limit",
    "count",
    "preview",
    "status",
    "stat",
    "metric",
    "version",
    "widget",
    "tag",
    "info",
    "metadata",
    "size",
    "tree",
];

/// Words whose tools read private data whatever else the name says (`execute_sql`, `git_log`).
const PRIVATE_STRONG: &[&str] = &[
    "sql",
    "clipboard",
    "cookie",
    "credential",
    "password",
    "secret",
    "inbox",
    "vault",
    "git",
    "env",
];

/// Nouns that are sent (`give_feedback`).
const SEND_NOUNS: &[&str] = &["feedback"];

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
    let keep = ["ss", "us", "is"];
    let words = [
        "news", "always", "series", "perhaps", "https", "alias", "canvas", "whereas",
    ];
    if w.len() > 3
        && w.ends_with('s')
        && !keep.iter().any(|k| w.ends_with(k))
        && !words.contains(&w)
    {
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
        let detail = crate::text::cap(&detail, EVIDENCE_MAX_CHARS);
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

    fn result(self, leg: Leg) -> Option<ToolLeg> {
        let kinds: BTreeSet<&str> = self.weak.iter().map(|e| e.kind.as_str()).collect();
        let certainty = if !self.strong.is_empty() || kinds.len() >= 3 {
            Certainty::Confirmed
        } else if !self.weak.is_empty() {
            Certainty::Possible
        } else {
            return None;
        };
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

/// The kind of a name's main verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Read,
    Fetch,
    Send,
    Write,
    Exec,
    Interact,
    Other,
}

/// What a name says: its words, its main verb and the nouns after it.
struct Name {
    words: Vec<String>,
    /// The first verb of the name (a send word that is also a noun only in a verb's place).
    verb: Option<(Verb, String)>,
    /// The main verb's index.
    at: Option<usize>,
    /// The last word is a settings noun (`…_template`).
    config: bool,
}

fn verb_kind(w: &str, i: usize, ws: &[String]) -> Option<Verb> {
    if SEND_VERBS.contains(&w) && !AMBIGUOUS_SEND.contains(&w) {
        Some(Verb::Send)
    } else if FETCH_VERBS.contains(&w) {
        Some(Verb::Fetch)
    } else if EXEC_VERBS.contains(&w)
        && ws[i + 1..].iter().any(|n| EXEC_NOUNS.contains(&n.as_str()))
    {
        Some(Verb::Exec)
    } else if WRITE_VERBS.contains(&w) {
        Some(Verb::Write)
    } else if INTERACT_VERBS.contains(&w) {
        Some(Verb::Interact)
    } else if OTHER_VERBS.contains(&w) {
        Some(Verb::Other)
    } else if READ_VERBS.contains(&w) {
        Some(Verb::Read)
    } else {
        None
    }
}

impl Name {
    fn of(name: &str) -> Name {
        let cut: String = name.chars().take(NAME_MAX_CHARS).collect();
        let words = words(&cut, 32);
        let mut verb = None;
        let mut at = None;
        for (i, w) in words.iter().enumerate() {
            if let Some(k) = verb_kind(w, i, &words) {
                verb = Some((k, w.clone()));
                at = Some(i);
                break;
            }
        }
        if verb.is_none()
            && let Some(i) = words
                .iter()
                .take(2)
                .position(|w| AMBIGUOUS_SEND.contains(&w.as_str()))
        {
            verb = Some((Verb::Send, words[i].clone()));
            at = Some(i);
        }
        let config = words.len() > 1
            && words
                .last()
                .is_some_and(|w| CONFIG_NOUNS.contains(&w.as_str()));
        Name {
            words,
            verb,
            at,
            config,
        }
    }

    fn kind(&self) -> Option<Verb> {
        self.verb.as_ref().map(|v| v.0)
    }

    fn verb(&self) -> &str {
        self.verb.as_ref().map_or("", |v| v.1.as_str())
    }

    /// The first word other than the main verb that is in `table`.
    fn noun(&self, table: &[&str]) -> Option<&str> {
        self.words
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.at)
            .map(|(_, w)| w.as_str())
            .find(|w| table.contains(w))
    }

    fn has(&self, w: &str) -> bool {
        self.words.iter().any(|x| x == w)
    }

    /// The name says the tool changes or sends something (no read in it).
    fn acts(&self) -> bool {
        (matches!(
            self.kind(),
            Some(Verb::Write | Verb::Send | Verb::Other | Verb::Interact)
        ) && self.verb() != "edit")
            || self.noun(SEND_NOUNS).is_some()
    }
}

impl Judge {
    fn name(&mut self, n: &Name) {
        const K: &str = "name";
        let v = n.verb().to_owned();
        let kind = n.kind();
        let browser = n.noun(BROWSER_NOUNS);
        // Private data.
        if let Some(w) = n.noun(PRIVATE_STRONG).filter(|_| !n.acts()) {
            self.private.add(true, K, format!("private word `{w}`"));
        }
        match (kind, n.noun(PRIVATE_NOUNS)) {
            (Some(Verb::Read), Some(p)) if n.noun(WEB_NOUNS).is_none() => {
                self.private
                    .add(true, K, format!("read verb `{v}` + private noun `{p}`"));
            }
            (Some(Verb::Write), Some(p)) if v == "edit" => {
                self.private
                    .add(false, K, format!("edit verb `{v}` + private noun `{p}`"));
                if let Some(c) = n.noun(CONTENT_NOUNS) {
                    self.untrusted
                        .add(false, K, format!("edit verb `{v}` + content noun `{c}`"));
                }
            }
            (None, Some(p)) if browser.is_none() => {
                self.private.add(false, K, format!("private noun `{p}`"));
            }
            (Some(Verb::Read), None)
                if n.noun(PUBLIC_NOUNS).is_none()
                    && n.noun(WEB_NOUNS).is_none()
                    && browser.is_none() =>
            {
                self.private.add(false, K, format!("read verb `{v}`"));
            }
            _ => {}
        }
        // Untrusted input.
        let third = n.noun(THIRD_PARTY_NOUNS).filter(|_| !n.config);
        match kind {
            Some(Verb::Fetch) => {
                self.untrusted.add(true, K, format!("fetch verb `{v}`"));
            }
            Some(Verb::Read) => {
                if let Some(w) = n.noun(WEB_NOUNS) {
                    self.untrusted
                        .add(true, K, format!("read verb `{v}` + web noun `{w}`"));
                } else if let Some(t) = third {
                    self.untrusted.add(
                        true,
                        K,
                        format!("read verb `{v}` + third-party noun `{t}`"),
                    );
                } else if let Some(c) = n
                    .noun(CONTENT_NOUNS)
                    .filter(|_| !n.config && !LISTING_VERBS.contains(&v.as_str()))
                {
                    self.untrusted
                        .add(false, K, format!("read verb `{v}` + content noun `{c}`"));
                }
            }
            None => {
                let content = n.noun(CONTENT_NOUNS).filter(|_| !n.config);
                if let Some(t) = third.or(n.noun(WEB_NOUNS)).or(content) {
                    self.untrusted.add(false, K, format!("noun `{t}`"));
                }
            }
            _ => {}
        }
        // A crawler's results (a job's status, a monitor's checks) are pages of the web.
        if matches!(kind, None | Some(Verb::Read))
            && !n.acts()
            && let Some(w) = n
                .words
                .iter()
                .find(|w| w.contains("crawl") || w.contains("scrape"))
        {
            self.untrusted.add(false, K, format!("crawler word `{w}`"));
        }
        if let Some(b) = browser {
            let capture = n
                .words
                .iter()
                .map(String::as_str)
                .find(|w| CAPTURE_WORDS.contains(w))
                .or((matches!(kind, Some(Verb::Read | Verb::Fetch))).then_some(v.as_str()));
            if let Some(c) = capture {
                self.untrusted
                    .add(true, K, format!("browser `{b}` + `{c}`"));
                if !matches!(c, "navigate" | "agent" | "click" | "act")
                    && LOCAL_BROWSERS.contains(&b)
                {
                    self.private.add(false, K, format!("browser `{b}` + `{c}`"));
                }
            } else if let Some(c) = n
                .noun(BROWSER_SEES)
                .or(BROWSER_SEES.contains(&v.as_str()).then_some(v.as_str()))
            {
                self.untrusted
                    .add(false, K, format!("browser `{b}` + `{c}`"));
            }
            if matches!(kind, Some(Verb::Interact)) {
                self.outbound
                    .add(false, K, format!("browser `{b}` + interaction `{v}`"));
            }
        }
        // Outbound.
        match kind {
            Some(Verb::Send) => {
                self.outbound.add(true, K, format!("send verb `{v}`"));
            }
            Some(Verb::Write) if !n.config && !n.has("draft") => {
                if let Some(o) = n.noun(OUTBOUND_NOUNS) {
                    self.outbound
                        .add(true, K, format!("write verb `{v}` + shared noun `{o}`"));
                } else if matches!(v.as_str(), "apply" | "install" | "upgrade" | "deploy") {
                    self.outbound.add(false, K, format!("deploys (`{v}`)"));
                }
            }
            Some(Verb::Exec) => {
                let d = format!("runs code or commands (`{v}`)");
                self.private.add(false, K, d.clone());
                self.untrusted.add(false, K, d.clone());
                self.outbound.add(false, K, d);
            }
            _ => {}
        }
        // A send word after another verb (`create_send_as`, `verify_send_as`).
        if !matches!(kind, Some(Verb::Send))
            && let Some(w) = n.noun(SEND_VERBS).filter(|w| !AMBIGUOUS_SEND.contains(w))
        {
            self.outbound.add(false, K, format!("send word `{w}`"));
        }
        if let Some(w) = n.noun(SEND_NOUNS) {
            self.outbound.add(false, K, format!("sent noun `{w}`"));
        }
    }

    fn description(&mut self, text: &str, n: &Name) {
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
        // Verb then noun within a short window, in the first sentences.
        for (k, sentence) in lower.split(['.', '!', '?', '\n']).take(4).enumerate() {
            let ws = words(sentence, 64);
            if k == 0
                && let Some(first) = ws.first().map(String::as_str)
                && SEND_VERBS.contains(&first)
                && !matches!(
                    first,
                    "request" | "http" | "webhook" | "message" | "comment"
                )
            {
                self.outbound
                    .add(false, K, format!("starts with `{first}`"));
            }
            for (i, w) in ws.iter().enumerate() {
                let window = &ws[i + 1..(i + 7).min(ws.len())];
                let w = w.as_str();
                if EXEC_VERBS.contains(&w)
                    && let Some(x) = first_in(window, EXEC_NOUNS)
                {
                    let d = format!("`{w}` … `{x}`");
                    self.private.add(false, K, d.clone());
                    self.untrusted.add(false, K, d.clone());
                    self.outbound.add(false, K, d);
                }
                if matches!(n.kind(), Some(Verb::Write))
                    && k == 0
                    && let Some(g) = first_in(&ws, &["github", "gitlab"])
                {
                    self.outbound
                        .add(false, K, format!("changes something on `{g}`"));
                }
                if READ_VERBS.contains(&w) && first_in(window, &["content"]).is_some() {
                    self.untrusted.add(false, K, format!("`{w}` … `content`"));
                }
                if READ_VERBS.contains(&w) {
                    if let Some(p) = first_in(window, PRIVATE_NOUNS)
                        && first_in(window, PUBLIC_NOUNS).is_none()
                    {
                        self.private.add(false, K, format!("`{w}` … `{p}`"));
                    }
                    if let Some(t) = first_in(window, THIRD_PARTY_NOUNS).filter(|_| !n.config) {
                        self.untrusted.add(false, K, format!("`{w}` … `{t}`"));
                    }
                }
                if (FETCH_VERBS.contains(&w) || READ_VERBS.contains(&w))
                    && let Some(u) = first_in(window, WEB_NOUNS)
                {
                    self.untrusted.add(false, K, format!("`{w}` … `{u}`"));
                }
                let sends = SEND_VERBS.contains(&w) && !AMBIGUOUS_SEND.contains(&w);
                if (sends || (WRITE_VERBS.contains(&w) && w != "new"))
                    && let Some(o) = first_in(window, OUTBOUND_NOUNS)
                    && !n.config
                {
                    self.outbound.add(false, K, format!("`{w}` … `{o}`"));
                }
            }
        }
    }

    fn schema(&mut self, schema: &Json, n: &Name) {
        let mut props: Vec<(String, Option<String>)> = Vec::new();
        collect_properties(schema, 1, &mut props);
        let normed: BTreeSet<String> = props
            .iter()
            .map(|(p, _)| p.to_lowercase().replace(['-', '_'], ""))
            .collect();
        let has = |list: &[&'static str]| -> Option<&'static str> {
            list.iter().find(|p| normed.contains(**p)).copied()
        };
        const K: &str = "schema";
        let acts = n.acts();
        let url = has(&[
            "url",
            "urls",
            "uri",
            "href",
            "website",
            "webpage",
            "pageurl",
            "targeturl",
            "starturl",
            "sourceurl",
            "weburl",
        ]);
        if let Some(u) = url.filter(|_| !acts) {
            self.untrusted.add(false, K, format!("property `{u}`"));
            // A request to an address the caller picks can carry data out in the address.
            if matches!(n.kind(), Some(Verb::Fetch)) {
                self.outbound.add(
                    true,
                    K,
                    format!("fetch verb + property `{u}` (a request to any URL)"),
                );
            } else {
                self.outbound.add(false, K, format!("property `{u}`"));
            }
        }
        let recipient = has(&[
            "to",
            "recipient",
            "recipients",
            "cc",
            "bcc",
            "toemail",
            "emailto",
            "phone",
            "phonenumber",
            "channel",
            "channelid",
            "chatid",
            "webhook",
            "webhookurl",
            "torecipients",
        ]);
        let body = has(&[
            "body", "message", "text", "content", "subject", "html", "payload",
        ]);
        match (recipient, body) {
            (Some(r), Some(b)) if !matches!(n.kind(), Some(Verb::Read)) => {
                self.outbound
                    .add(true, K, format!("properties `{r}` + `{b}`"));
            }
            (Some(r), None) if !matches!(r, "channel" | "channelid" | "to") => {
                self.outbound.add(false, K, format!("property `{r}`"));
            }
            _ => {}
        }
        if let (Some(m), Some(u)) = (has(&["method", "httpmethod"]), url) {
            self.outbound.add(
                true,
                K,
                format!("properties `{m}` + `{u}` (an HTTP request)"),
            );
        }
        let path = has(&[
            "path",
            "paths",
            "filepath",
            "filename",
            "file",
            "directory",
            "dir",
            "folder",
            "folderpath",
            "sourcepath",
            "filepaths",
        ]);
        if let Some(p) = path {
            if n.has("upload") {
                self.private
                    .add(true, K, format!("uploads property `{p}` (a local file)"));
            } else if !acts && !matches!(n.kind(), Some(Verb::Write)) {
                self.private.add(false, K, format!("property `{p}`"));
            }
        }
        if let Some(p) = has(&["sql", "sqlquery", "statement"]).filter(|_| !acts) {
            self.private.add(false, K, format!("property `{p}`"));
            self.untrusted
                .add(false, K, format!("property `{p}` (rows others wrote)"));
        }
        for (p, format) in &props {
            match format.as_deref() {
                Some("uri" | "url" | "iri") if !acts => {
                    self.untrusted
                        .add(false, K, format!("property `{p}` format `uri`"));
                }
                Some("email") if !matches!(n.kind(), Some(Verb::Read)) => {
                    self.outbound
                        .add(false, K, format!("property `{p}` format `email`"));
                }
                _ => {}
            }
        }
    }

    /// Explicit hints.
    fn annotations(&mut self, annotations: Option<&Json>, n: &Name) {
        use crate::diff::hint;
        let (read_only, ro_explicit) = hint(annotations, "readOnlyHint", false);
        let (open, open_explicit) = hint(annotations, "openWorldHint", true);
        const K: &str = "annotation";
        // An explicit `openWorldHint: true` says what the default says: alone it gives no leg.
        // It backs other evidence, and a name that makes or changes something out there.
        if open_explicit && open {
            if self.untrusted.any() {
                self.untrusted
                    .add(false, K, "openWorldHint: true".to_owned());
            }
            let writes = matches!(n.kind(), Some(Verb::Write | Verb::Send))
                && n.noun(BROWSER_NOUNS).is_none();
            if !read_only && (self.outbound.any() || writes) {
                self.outbound
                    .add(false, K, "openWorldHint: true, not read-only".to_owned());
            }
        }
        if open_explicit && !open {
            self.untrusted.drop_weak(&["schema", "annotation"]);
            self.outbound.drop_weak(&["schema", "annotation"]);
        }
        // A read-only tool sends nothing by its name's or description's say-so; a URL it
        // requests still carries whatever the caller puts in it.
        if ro_explicit && read_only {
            self.outbound
                .weak
                .retain(|e| e.kind == "schema" && e.detail.starts_with("property"));
            self.outbound.strong.retain(|e| e.kind == "schema");
        }
    }
}

/// Description phrases that say a leg plainly (`true`) or hint at it.
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
            r"\b(?:search(?:es)?\s+the\s+(?:web|internet)|web\s+search|from\s+the\s+(?:internet|web)|navigate\s+(?:the\s+browser\s+)?to\s+(?:a\s+)?url)\b",
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
/// [`MAX_PROPERTIES`], down to [`SCHEMA_MAX_DEPTH`] levels (each `properties` or `items` one).
fn collect_properties(schema: &Json, depth: usize, out: &mut Vec<(String, Option<String>)>) {
    if depth > SCHEMA_MAX_DEPTH || out.len() >= MAX_PROPERTIES {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Json::as_object) else {
        if let Some(items) = schema.get("items") {
            collect_properties(items, depth + 1, out);
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
    let n = Name::of(tool.name().unwrap_or_default());
    j.name(&n);
    if let Some(d) = tool.description() {
        j.description(d, &n);
    }
    if let Some(s) = tool.get("inputSchema") {
        j.schema(s, &n);
    }
    // A name that changes or sends something reads and takes in nothing by its description's
    // or schema's say-so (`create_entities` … "in the knowledge graph").
    if n.acts() {
        j.private.drop_weak(&["description", "schema"]);
        j.private.strong.retain(|e| e.kind != "description");
        j.untrusted.drop_weak(&["description", "schema"]);
        j.untrusted.strong.retain(|e| e.kind == "name");
    }
    // Deleting or moving a message sends nothing; a draft is not sent.
    if matches!(n.kind(), Some(Verb::Other)) {
        j.outbound.drop_weak(&["description"]);
    }
    // A tool about public things (documentation, a web search) reads none of the user's data
    // by its description's say-so.
    if n.noun(PUBLIC_NOUNS).is_some() || j.untrusted.strong.iter().any(|e| e.kind == "name") {
        j.private.drop_weak(&["description"]);
    }
    j.annotations(tool.get("annotations"), &n);
    if n.has("draft") && !matches!(n.kind(), Some(Verb::Send)) {
        j.outbound = Acc::default();
    }
    // A tool that fetches from the web reads the web, not the user's data.
    if !j.untrusted.strong.is_empty() && j.private.strong.is_empty() {
        j.private
            .weak
            .retain(|e| e.kind != "name" || !e.detail.starts_with("read verb"));
    }
    let Judge {
        private,
        untrusted,
        outbound,
    } = j;
    [
        private.result(Leg::PrivateData),
        untrusted.result(Leg::UntrustedInput),
        outbound.result(Leg::Outbound),
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
                tool: crate::text::cap(name, crate::diff::NAME_MAX_CHARS),
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
        assert_eq!(
            words("read-multiple_files", 10),
            ["read", "multiple", "file"]
        );
        assert_eq!(words("create_entities", 10), ["create", "entity"]);
        assert_eq!(words("HTTPRequest", 10), ["httprequest"]);
        assert_eq!(words("the user's inbox", 10), ["the", "user", "inbox"]);
        assert_eq!(words("a b c d", 2), ["a", "b"]);
    }
}
