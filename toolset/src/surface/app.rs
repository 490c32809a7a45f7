//! MCP Apps pages: which `ui://` resources a tool set names, and what one page holds.
//!
//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, stable 2026-01-26; the
//! specification is `specification/2026-01-26/apps.mdx` of `modelcontextprotocol/ext-apps`)
//! lets a tool name an HTML page that the host renders in a sandboxed iframe:
//!
//! * the tool names it in `_meta.ui.resourceUri` (`McpUiToolMeta.resourceUri`), or in the
//!   deprecated flat `_meta["ui/resourceUri"]`; the official SDK's `registerAppTool` writes both.
//!   The URI "MUST start with `ui://`", and a server "MAY omit UI-only resources from
//!   `resources/list`": the tools are where they are found ([`ui_uris`]);
//! * `resources/read` of it answers `{"contents":[…]}`, each content entry with `uri`,
//!   `mimeType` (`text/html;profile=mcp-app`, [`APP_MIME_TYPE`]), the HTML in `text` (or
//!   base64 in `blob`), and `_meta.ui` (`UIResourceMeta`): `csp` (`McpUiResourceCsp`:
//!   `connectDomains` → `connect-src`, `resourceDomains` → `img-src`/`script-src`/`style-src`/
//!   `font-src`/`media-src`, `frameDomains` → `frame-src`, `baseUriDomains` → `base-uri`; an
//!   absent `csp` means the host's restrictive default), `permissions` (`camera`, `microphone`,
//!   `geolocation`, `clipboardWrite`), `domain` (a dedicated sandbox origin) and
//!   `prefersBorder`.
//!
//! [`facts`] reads one content entry: the declared `_meta.ui`, and from the HTML (tokenized by
//! `html5gum`, a WHATWG tokenizer; CSS by `cssparser`) its scripts, forms, iframes, the page's
//! own `<meta http-equiv=Content-Security-Policy>`, `<base href>`, and every outside origin it
//! refers to. [`texts`] gives every text a user of the page reads, for the rule set
//! ([`crate::rules::scan_text`]). [`page`] gives both from one pass.
//!
//! Facts, not a judgement: what the changes mean is [`super::diff`]'s. The reading is static:
//! a page that builds a URL at run time (`fetch(base + path)`, `atob(…)`) names no origin here;
//! what the host lets it reach is bounded by the declared CSP, which is recorded whole.
//!
//! Bounded: at most [`HTML_MAX_BYTES`] of HTML are read, every list holds at most
//! [`MAX_LISTED`] entries with its total beside it, every value is cut to
//! [`crate::text::VALUE_MAX_CHARS`], nested `srcdoc` pages are read [`MAX_SRCDOC_DEPTH`]
//! deep, CSS blocks [`MAX_CSS_DEPTH`] deep, and the texts hold at most [`TEXTS_MAX_CHARS`];
//! [`AppFacts::truncated`] and [`PageTexts::truncated`] say when a bound was hit.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use cssparser::{ParseError, Parser, Token as CssToken};
use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Span, Tokenizer};
use serde::{Deserialize, Serialize};

use crate::json::Json;
use crate::model::ToolSet;
use crate::text::{self, VALUE_MAX_CHARS};

/// The MIME type of an MCP App page (the specification: "`mimeType` MUST be
/// `text/html;profile=mcp-app`").
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The scheme every MCP App page's URI starts with.
pub const UI_SCHEME: &str = "ui://";

/// At most this many `ui://` URIs are taken from one tool set; the session reads each with one
/// `resources/read`. The official examples name one page per server and a tool names at most
/// one, so 32 covers a page for every tool of a 30-tool app server, while a hostile set naming
/// thousands costs at most 32 more requests.
pub const MAX_UI_URIS: usize = 32;

/// A named URI longer than this many bytes is not taken (it would be sent back whole in the
/// request): 2,048 is the length browsers and proxies have long been safe with, and a
/// `ui://server/view` URI is a few dozen bytes.
pub const UI_URI_MAX_BYTES: usize = 2_048;

/// At most this many bytes of a page's HTML are read. App pages are single files with their
/// scripts inlined: the official examples' pages run from 218 kB (`server-basic-vanillajs`
/// 2.0.3) to 4.3 MB (`server-pdf` 2.0.4, pdf.js inlined); 8 MiB reads every one of them whole,
/// and tokenizing that much takes tens of milliseconds.
pub const HTML_MAX_BYTES: usize = 8 * 1024 * 1024;

/// At most this many entries in each list of [`AppFacts`] (a total or a count stands beside
/// each). Real pages hold a handful of each (the examples: one to three scripts, no form, a few
/// origins); 200 lists every one of a page many times their size.
pub const MAX_LISTED: usize = 200;

/// Distinct outside origins are counted up to this many (a hostile page may name one per few
/// bytes); past it [`AppFacts::origins_total`] stays at this value.
pub const MAX_ORIGINS_COUNTED: usize = 100_000;

/// `srcdoc` pages inside `srcdoc` pages are read this many levels deep (each level shares the
/// one [`HTML_MAX_BYTES`] budget). Real pages nest none; four catches a page hiding its code a
/// few levels down, and a deeper one is marked truncated.
pub const MAX_SRCDOC_DEPTH: usize = 4;

/// CSS blocks and functions are walked this many levels deep; the contents of deeper ones are
/// skipped (the tokenizer skips them without recursion). Real style sheets nest three or four
/// levels (`@media { a { background: url(…) } }`).
pub const MAX_CSS_DEPTH: usize = 32;

/// At most this many characters of a page's texts are kept for the rule set: what one scan of
/// the rule set reads ([`crate::rules::SET_MAX_CHARS`]).
pub const TEXTS_MAX_CHARS: usize = crate::rules::SET_MAX_CHARS;

/// A string literal in a script is read for an origin up to this many characters (a URL's
/// origin is in its first few hundred).
const LITERAL_MAX_CHARS: usize = 2_048;

/// Tag names in [`Origin::via`] are cut to this many characters.
const TAG_MAX_CHARS: usize = 32;

/// The `ui://` URIs the tools of `set` name (`_meta.ui.resourceUri`, then the legacy
/// `_meta["ui/resourceUri"]`, tool by tool), in the order first named, each once, exactly as
/// named: at most [`MAX_UI_URIS`], each a string starting with [`UI_SCHEME`] of at most
/// [`UI_URI_MAX_BYTES`] bytes (others are not pages and are never read).
pub fn ui_uris(set: &ToolSet) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for tool in &set.tools {
        let Some(meta) = tool.get("_meta") else {
            continue;
        };
        let named = [
            meta.get("ui").and_then(|ui| ui.get("resourceUri")),
            meta.get("ui/resourceUri"),
        ];
        for uri in named.into_iter().flatten().filter_map(Json::as_str) {
            if uri.starts_with(UI_SCHEME) && uri.len() <= UI_URI_MAX_BYTES && seen.insert(uri) {
                if out.len() == MAX_UI_URIS {
                    return out;
                }
                out.push(uri.to_owned());
            }
        }
    }
    out
}

/// Where a content entry's HTML came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// The `text` member (a string).
    Text,
    /// The `blob` member, base64-decoded (invalid UTF-8 read as U+FFFD).
    Blob,
    /// A `blob` that is not base64: no HTML was read.
    BadBlob,
    /// Neither: no HTML.
    #[default]
    None,
}

/// What one page holds. Every URL and value is as written in the page (after HTML character
/// references are decoded), cut to [`VALUE_MAX_CHARS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppFacts {
    /// The entry's `uri`, when a string.
    pub uri: Option<String>,
    /// The entry's `mimeType`, when a string.
    pub mime_type: Option<String>,
    /// Where the HTML came from.
    pub source: Source,
    /// The HTML's length in bytes, all of it (only the first [`HTML_MAX_BYTES`] are read).
    pub html_bytes: usize,
    /// The page's scripts.
    pub scripts: Scripts,
    /// `<form>` elements, in document order, at most [`MAX_LISTED`].
    pub forms: Vec<Form>,
    /// How many `<form>` elements there are.
    pub forms_total: usize,
    /// `<iframe>` and `<frame>` elements, in document order, at most [`MAX_LISTED`].
    pub frames: Vec<Frame>,
    /// How many frames there are.
    pub frames_total: usize,
    /// Every outside origin the page refers to, in origin order (each with where it was first
    /// seen), at most [`MAX_LISTED`]: the first ones met in document order.
    pub origins: Vec<Origin>,
    /// How many distinct outside origins there are (counted up to [`MAX_ORIGINS_COUNTED`]).
    pub origins_total: usize,
    /// Outside origins of the other absolute URLs written as string literals in scripts
    /// (`const api = "https://api.example.com/v1"`, the part of a template literal before its
    /// first `${`) that are not in [`AppFacts::origins`], in origin order, at most
    /// [`MAX_LISTED`]: what a script may reach through a URL it builds at run time.
    pub script_literal_origins: Vec<String>,
    /// The `content` of each `<meta http-equiv="Content-Security-Policy">`, in order, at most
    /// [`MAX_LISTED`].
    pub meta_csp: Vec<String>,
    /// The first `<base href>` (the one a browser uses).
    pub base_href: Option<String>,
    /// What the entry's `_meta.ui` declares.
    pub declared: Declared,
    /// Whether a bound was hit: HTML past [`HTML_MAX_BYTES`], a list past [`MAX_LISTED`], a
    /// `srcdoc` past [`MAX_SRCDOC_DEPTH`] or CSS past [`MAX_CSS_DEPTH`].
    pub truncated: bool,
}

/// A page's scripts: `<script>` elements, event-handler attributes and `javascript:` URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scripts {
    /// `<script>` elements without `src` whose `type` runs them (absent, empty, a JavaScript
    /// MIME type, or `module`).
    pub inline: usize,
    /// Their bytes, all together.
    pub inline_bytes: usize,
    /// `on…` event-handler attributes, and `javascript:` URLs in `href`, `src`, `action` and
    /// `formaction`.
    pub handlers: usize,
    /// Inline `<script>` elements of any other `type` (data blocks, `importmap`, templates).
    pub data_blocks: usize,
    /// The `src` of each `<script src>`, in document order, at most [`MAX_LISTED`].
    pub external: Vec<String>,
    /// How many `<script src>` elements there are.
    pub external_total: usize,
}

/// A `<form>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Form {
    /// Its `action`, when it has one.
    pub action: Option<String>,
    /// Its `method`, lowercased (`get` when absent, as a browser reads it).
    pub method: String,
}

/// An `<iframe>` or `<frame>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Frame {
    /// Its `src`, when it has one.
    pub src: Option<String>,
    /// Whether it has a `srcdoc` (whose page is read as part of this one).
    pub srcdoc: bool,
}

/// An outside origin a page refers to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Origin {
    /// The origin as a browser serialises it (`https://cdn.example.com`, the default port
    /// dropped, the host in ASCII).
    pub origin: String,
    /// Where it was first seen: an element and attribute (`script src`, `a href`,
    /// `form action`, `img srcset`), `style url()`, `style @import`, `meta refresh`,
    /// `importmap`, or a script's call (`fetch()`, `WebSocket()`, `open()`, `.src=`, …).
    pub via: String,
}

/// What a content entry's `_meta.ui` declares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Declared {
    /// `_meta.ui.csp`, when it is an object (absent: the host's restrictive default).
    pub csp: Option<Csp>,
    /// The member names of `_meta.ui.permissions` (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`, or others), in UTF-16 order, at most [`MAX_LISTED`].
    pub permissions: Vec<String>,
    /// `_meta.ui.domain`, when a string.
    pub domain: Option<String>,
    /// `_meta.ui.prefersBorder`, when a boolean.
    pub prefers_border: Option<bool>,
}

/// `_meta.ui.csp` (`McpUiResourceCsp`): each list's strings in order, at most [`MAX_LISTED`]
/// each; an absent list reads as empty (the specification: "Empty or omitted = no external
/// connections").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Csp {
    /// `connectDomains` (`connect-src`: fetch, XHR, WebSocket).
    pub connect_domains: Vec<String>,
    /// `resourceDomains` (scripts, images, styles, fonts, media).
    pub resource_domains: Vec<String>,
    /// `frameDomains` (`frame-src`).
    pub frame_domains: Vec<String>,
    /// `baseUriDomains` (`base-uri`).
    pub base_uri_domains: Vec<String>,
    /// Entries that are not strings, and lists that are not arrays (ignored).
    pub ignored: usize,
}

impl Csp {
    /// The four lists by their member names, in the specification's order.
    pub fn lists(&self) -> [(&'static str, &[String]); 4] {
        [
            ("connectDomains", &self.connect_domains),
            ("resourceDomains", &self.resource_domains),
            ("frameDomains", &self.frame_domains),
            ("baseUriDomains", &self.base_uri_domains),
        ]
    }
}

/// Where a page text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextAt {
    /// Text content: a run of text between block-level elements (text inside phrasing
    /// elements such as `<b>` or `<a>` joins its neighbours, as a browser shows it).
    Text,
    /// The `<title>` element.
    DocumentTitle,
    /// A `title` attribute (a tooltip).
    Title,
    /// An `alt` attribute.
    Alt,
    /// An `aria-label` attribute.
    AriaLabel,
    /// An `aria-description` attribute.
    AriaDescription,
    /// A `placeholder` attribute.
    Placeholder,
}

impl TextAt {
    /// The name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            TextAt::Text => "text",
            TextAt::DocumentTitle => "document-title",
            TextAt::Title => "title",
            TextAt::Alt => "alt",
            TextAt::AriaLabel => "aria-label",
            TextAt::AriaDescription => "aria-description",
            TextAt::Placeholder => "placeholder",
        }
    }

    fn of_attribute(name: &[u8]) -> Option<TextAt> {
        Some(match name {
            b"title" => TextAt::Title,
            b"alt" => TextAt::Alt,
            b"aria-label" => TextAt::AriaLabel,
            b"aria-description" => TextAt::AriaDescription,
            b"placeholder" => TextAt::Placeholder,
            _ => return None,
        })
    }
}

/// One text of a page.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageText {
    /// Where it is.
    pub at: TextAt,
    /// The text (character references decoded, whitespace runs as one space, trimmed).
    pub text: String,
}

/// Every text a user of a page reads: text content outside `<script>`, `<style>` and other
/// raw-text elements, `<title>`, and the `title`, `alt`, `aria-label`, `aria-description` and
/// `placeholder` attributes, in document order (nested `srcdoc` pages in place).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageTexts {
    /// The texts, at most [`TEXTS_MAX_CHARS`] characters in all.
    pub texts: Vec<PageText>,
    /// Whether texts were left out (the budget, or HTML past [`HTML_MAX_BYTES`]).
    pub truncated: bool,
}

/// A page read once: its facts and its texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// What it holds.
    pub facts: AppFacts,
    /// What a user reads.
    pub texts: PageTexts,
}

/// The facts of one `resources/read` content entry (see [`AppFacts`]).
pub fn facts(content: &Json) -> AppFacts {
    page(content).facts
}

/// The texts of one content entry's page (see [`PageTexts`]).
pub fn texts(content: &Json) -> PageTexts {
    page(content).texts
}

/// The facts and texts of one content entry, from one reading of its HTML.
pub fn page(content: &Json) -> Page {
    let string = |key: &str| {
        content
            .get(key)
            .and_then(Json::as_str)
            .map(|s| text::cap(s, VALUE_MAX_CHARS))
    };
    let mut reader = Reader::default();
    reader.facts.uri = string("uri");
    reader.facts.mime_type = string("mimeType");
    let ui = content.get("_meta").and_then(|m| m.get("ui"));
    reader.facts.declared = declared(ui);
    reader.facts.truncated = declared_cut(ui);
    let html: Option<(Source, std::borrow::Cow<'_, str>)> =
        match (content.get("text"), content.get("blob")) {
            (Some(Json::String(s)), _) => Some((Source::Text, s.lossy())),
            (_, Some(Json::String(b))) => Some(match decode_blob(&b.lossy()) {
                Some(bytes) => (
                    Source::Blob,
                    String::from_utf8_lossy(&bytes).into_owned().into(),
                ),
                None => (Source::BadBlob, "".into()),
            }),
            _ => None,
        };
    if let Some((source, html)) = html {
        reader.facts.source = source;
        reader.facts.html_bytes = html.len();
        let end = floor_char_boundary(&html, HTML_MAX_BYTES);
        if end < html.len() {
            reader.facts.truncated = true;
            reader.texts.truncated = true;
        }
        reader.budget = HTML_MAX_BYTES;
        reader.read(&html[..end], 0);
    }
    reader.finish()
}

/// The base64 of a `blob`, decoded: the first [`HTML_MAX_BYTES`] (and a few) bytes' worth of
/// it, so that a huge blob is not decoded whole. `None` when it is not base64.
fn decode_blob(b64: &str) -> Option<Vec<u8>> {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    let clean: String = b64
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .take((HTML_MAX_BYTES / 3 + 1) * 4)
        .collect();
    let whole = clean.len() / 4 * 4;
    let part = if clean.len() > (HTML_MAX_BYTES / 3) * 4 {
        &clean[..whole]
    } else {
        &clean[..]
    };
    engine.decode(part).ok()
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

/// What `_meta.ui` declares.
fn declared(ui: Option<&Json>) -> Declared {
    let Some(ui) = ui else {
        return Declared::default();
    };
    let csp = ui.get("csp").and_then(Json::as_object).map(|_| {
        let csp = ui.get("csp");
        let mut ignored = 0;
        let mut list = |name: &str| -> Vec<String> {
            match csp.and_then(|c| c.get(name)) {
                None => Vec::new(),
                Some(Json::Array(items)) => {
                    let mut out = Vec::new();
                    for item in items {
                        match item.as_str() {
                            Some(s) if out.len() < MAX_LISTED => {
                                out.push(text::cap(s, VALUE_MAX_CHARS))
                            }
                            Some(_) => {}
                            None => ignored += 1,
                        }
                    }
                    out
                }
                Some(_) => {
                    ignored += 1;
                    Vec::new()
                }
            }
        };
        Csp {
            connect_domains: list("connectDomains"),
            resource_domains: list("resourceDomains"),
            frame_domains: list("frameDomains"),
            base_uri_domains: list("baseUriDomains"),
            ignored,
        }
    });
    let mut permissions: Vec<&crate::json::Str> = ui
        .get("permissions")
        .and_then(Json::as_object)
        .map(|m| m.iter().map(|(k, _)| k).collect())
        .unwrap_or_default();
    permissions.sort_by(|a, b| a.utf16_cmp(b));
    Declared {
        csp,
        permissions: permissions
            .into_iter()
            .take(MAX_LISTED)
            .map(|k| text::cap(&k.lossy(), VALUE_MAX_CHARS))
            .collect(),
        domain: ui
            .get("domain")
            .and_then(Json::as_str)
            .map(|s| text::cap(s, VALUE_MAX_CHARS)),
        prefers_border: match ui.get("prefersBorder") {
            Some(Json::Bool(b)) => Some(*b),
            _ => None,
        },
    }
}

/// Whether a list or a declared CSP past [`MAX_LISTED`] was cut (for [`AppFacts::truncated`]).
fn declared_cut(ui: Option<&Json>) -> bool {
    let long = |v: Option<&Json>| {
        v.and_then(Json::as_array)
            .is_some_and(|a| a.len() > MAX_LISTED)
    };
    let Some(ui) = ui else { return false };
    let csp = ui.get("csp");
    [
        "connectDomains",
        "resourceDomains",
        "frameDomains",
        "baseUriDomains",
    ]
    .iter()
    .any(|n| long(csp.and_then(|c| c.get(n))))
        || ui
            .get("permissions")
            .and_then(Json::as_object)
            .is_some_and(|m| m.len() > MAX_LISTED)
}

/// Elements whose content the tokenizer reads as raw text (switched to by
/// `naively_switch_states`) and that no user reads as text.
fn hides_text(tag: &[u8]) -> bool {
    matches!(
        tag,
        b"script" | b"style" | b"noscript" | b"iframe" | b"xmp" | b"noembed" | b"noframes"
    )
}

/// Phrasing elements: text on either side of one is shown as one run.
fn is_phrasing(tag: &[u8]) -> bool {
    matches!(
        tag,
        b"a" | b"abbr"
            | b"b"
            | b"bdi"
            | b"bdo"
            | b"cite"
            | b"code"
            | b"data"
            | b"del"
            | b"dfn"
            | b"em"
            | b"font"
            | b"i"
            | b"ins"
            | b"kbd"
            | b"label"
            | b"mark"
            | b"q"
            | b"s"
            | b"samp"
            | b"small"
            | b"span"
            | b"strong"
            | b"sub"
            | b"sup"
            | b"time"
            | b"tt"
            | b"u"
            | b"var"
            | b"wbr"
            | b"img"
            | b"button"
            | b"input"
            | b"select"
            | b"textarea"
            | b"picture"
            | b"ruby"
            | b"rt"
            | b"rp"
            | b"nobr"
    )
}

/// Attributes holding one URL.
fn is_url_attribute(name: &[u8]) -> bool {
    matches!(
        name,
        b"src"
            | b"href"
            | b"xlink:href"
            | b"action"
            | b"formaction"
            | b"poster"
            | b"data"
            | b"background"
            | b"manifest"
            | b"cite"
            | b"longdesc"
            | b"codebase"
            | b"icon"
    )
}

/// Attributes holding a space-separated list of URLs.
fn is_url_list_attribute(name: &[u8]) -> bool {
    name == b"ping"
}

/// Attributes holding a `srcset`.
fn is_srcset_attribute(name: &[u8]) -> bool {
    matches!(name, b"srcset" | b"imagesrcset")
}

/// Whether a `<script type>` runs the script (HTML: absent, empty, a JavaScript MIME type
/// essence, or `module`).
fn runs(script_type: Option<&str>) -> bool {
    let Some(t) = script_type else { return true };
    let t = t.trim().to_ascii_lowercase();
    let essence = t.split(';').next().unwrap_or("").trim();
    matches!(
        essence,
        "" | "module"
            | "application/ecmascript"
            | "application/javascript"
            | "application/x-ecmascript"
            | "application/x-javascript"
            | "text/ecmascript"
            | "text/javascript"
            | "text/javascript1.0"
            | "text/javascript1.1"
            | "text/javascript1.2"
            | "text/javascript1.3"
            | "text/javascript1.4"
            | "text/javascript1.5"
            | "text/jscript"
            | "text/livescript"
            | "text/x-ecmascript"
            | "text/x-javascript"
    )
}

/// What the reader keeps of the tokenizer's events (attribute values only of kept attributes
/// are copied; comments, doctypes and parse errors are dropped).
enum Event {
    /// `<name` of a start tag.
    Open(Vec<u8>),
    /// An attribute name of the tag being read.
    AttrName(Vec<u8>),
    /// The value of the attribute just named.
    AttrValue(Vec<u8>),
    /// The end of a start tag.
    Close,
    /// An end tag.
    End(Vec<u8>),
    /// Text (in raw-text elements: their whole content).
    Text(Vec<u8>),
}

impl Event {
    fn of(event: CallbackEvent<'_>) -> Option<Event> {
        Some(match event {
            CallbackEvent::OpenStartTag { name } => Event::Open(name.to_vec()),
            CallbackEvent::AttributeName { name } => Event::AttrName(name.to_vec()),
            CallbackEvent::AttributeValue { value } => Event::AttrValue(value.to_vec()),
            CallbackEvent::CloseStartTag { .. } => Event::Close,
            CallbackEvent::EndTag { name } => Event::End(name.to_vec()),
            CallbackEvent::String { value } => Event::Text(value.to_vec()),
            CallbackEvent::Comment { .. }
            | CallbackEvent::Doctype { .. }
            | CallbackEvent::Error(_) => return None,
        })
    }
}

/// Where the value of the attribute being read goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Into the kept attribute at this index.
    Kept(usize),
    /// It is an event handler's script.
    Handler,
    /// Nowhere.
    Dropped,
}

/// The start tag being read: its name and the attributes the reader uses (the first of each
/// name, as a browser keeps it).
struct Tag {
    name: Vec<u8>,
    attrs: Vec<(Vec<u8>, String)>,
    value: Value,
    /// Names of the `on…` handler attributes seen (each counted once).
    handlers: Vec<Vec<u8>>,
}

impl Tag {
    fn new(name: Vec<u8>) -> Tag {
        Tag {
            name,
            attrs: Vec::new(),
            value: Value::Dropped,
            handlers: Vec::new(),
        }
    }

    fn get(&self, name: &[u8]) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Whether the reader keeps an attribute's value.
fn kept(name: &[u8]) -> bool {
    is_url_attribute(name)
        || is_url_list_attribute(name)
        || is_srcset_attribute(name)
        || TextAt::of_attribute(name).is_some()
        || matches!(
            name,
            b"style" | b"type" | b"method" | b"http-equiv" | b"content" | b"srcdoc"
        )
}

/// What the content of the raw-text element just opened is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Raw {
    /// A script that runs.
    Script,
    /// An import map (JSON whose strings are module URLs).
    ImportMap,
    /// A style sheet.
    Style,
    /// Anything else no user reads (a data block, `<noscript>`, an iframe's fallback, a
    /// `<script src>`'s ignored content).
    Hidden,
}

/// Reads a page (and its nested `srcdoc` pages) into facts and texts.
#[derive(Default)]
struct Reader {
    facts: AppFacts,
    texts: PageTexts,
    /// Characters of text kept so far.
    text_chars: usize,
    /// Whether the texts' budget is spent (later texts are not kept, so the texts are a
    /// prefix of the page's).
    texts_full: bool,
    /// HTML bytes left to read (shared by nested `srcdoc` pages).
    budget: usize,
    /// The origins listed, with where each was first seen.
    origins: BTreeMap<String, String>,
    /// Hashes of the distinct origins not listed (for the total).
    unlisted: HashSet<u64>,
    /// Origins of other URL literals in scripts.
    literals: BTreeSet<String>,
}

impl Reader {
    fn finish(mut self) -> Page {
        self.facts.origins = self
            .origins
            .into_iter()
            .map(|(origin, via)| Origin { origin, via })
            .collect();
        self.facts.origins_total = self.facts.origins.len() + self.unlisted.len();
        let listed: BTreeSet<&str> = self
            .facts
            .origins
            .iter()
            .map(|o| o.origin.as_str())
            .collect();
        self.facts.script_literal_origins = self
            .literals
            .into_iter()
            .filter(|o| !listed.contains(o.as_str()))
            .collect();
        Page {
            facts: self.facts,
            texts: self.texts,
        }
    }

    /// Read `html` (a page, or a `srcdoc` `depth` levels down) within the byte budget.
    fn read(&mut self, html: &str, depth: usize) {
        if depth > MAX_SRCDOC_DEPTH {
            self.cut();
            return;
        }
        let end = floor_char_boundary(html, self.budget);
        if end < html.len() {
            self.cut();
        }
        let html = &html[..end];
        self.budget -= html.len();
        let mut emitter =
            CallbackEmitter::new(|event: CallbackEvent<'_>, _: Span<()>| Event::of(event));
        emitter.naively_switch_states(true);
        let mut block = String::new();
        let mut tag: Option<Tag> = None;
        let mut raw: Option<Raw> = None;
        let mut in_title = false;
        for event in Tokenizer::new_with_emitter(html, emitter).flatten() {
            match event {
                Event::Open(name) => tag = Some(Tag::new(name)),
                // Attributes of an end tag (a parse error) come with no open start tag.
                Event::AttrName(name) => {
                    if let Some(tag) = tag.as_mut() {
                        self.attribute_name(tag, name);
                    }
                }
                Event::AttrValue(value) => {
                    if let Some(tag) = tag.as_mut() {
                        self.attribute_value(tag, &value);
                    }
                }
                Event::Close => {
                    let Some(tag) = tag.take() else { continue };
                    if !is_phrasing(&tag.name) {
                        self.flush(&mut block, in_title);
                    }
                    raw = self.start_tag(&tag, depth);
                    in_title = tag.name == b"title";
                }
                Event::End(name) => {
                    tag = None;
                    if !is_phrasing(&name) {
                        self.flush(&mut block, in_title);
                    }
                    in_title = false;
                    raw = None;
                }
                Event::Text(value) => {
                    let s = String::from_utf8_lossy(&value);
                    match raw {
                        Some(Raw::Script) => {
                            self.facts.scripts.inline_bytes += value.len();
                            self.script_origins(&s);
                        }
                        Some(Raw::ImportMap) => self.import_map(&s),
                        Some(Raw::Style) => self.css(&s),
                        Some(Raw::Hidden) => {}
                        None => block.push_str(&s),
                    }
                }
            }
        }
        self.flush(&mut block, in_title);
    }

    /// A bound was hit.
    fn cut(&mut self) {
        self.facts.truncated = true;
        self.texts.truncated = true;
    }

    fn attribute_name(&mut self, tag: &mut Tag, name: Vec<u8>) {
        tag.value = Value::Dropped;
        if name.len() > 2 && name.starts_with(b"on") {
            if tag.handlers.contains(&name) {
                return;
            }
            if tag.handlers.len() == MAX_LISTED {
                self.facts.truncated = true;
                return;
            }
            tag.handlers.push(name);
            tag.value = Value::Handler;
            self.facts.scripts.handlers += 1;
        } else if kept(&name) && tag.get(&name).is_none() {
            tag.attrs.push((name, String::new()));
            tag.value = Value::Kept(tag.attrs.len() - 1);
        }
    }

    fn attribute_value(&mut self, tag: &mut Tag, value: &[u8]) {
        match tag.value {
            Value::Kept(i) => tag.attrs[i].1.push_str(&String::from_utf8_lossy(value)),
            Value::Handler => self.script_origins(&String::from_utf8_lossy(value)),
            Value::Dropped => {}
        }
    }

    /// A start tag with the attributes kept of it; returns what its content is when it is a
    /// raw-text element.
    fn start_tag(&mut self, tag: &Tag, depth: usize) -> Option<Raw> {
        let name = tag.name.as_slice();
        for (attr, value) in &tag.attrs {
            let via = || format!("{} {}", shown_name(name), shown_name(attr));
            if let Some(at) = TextAt::of_attribute(attr) {
                self.text(at, value);
            }
            if is_url_attribute(attr) {
                self.url(value, &via());
            } else if is_url_list_attribute(attr) {
                for u in value.split_ascii_whitespace() {
                    self.url(u, &via());
                }
            } else if is_srcset_attribute(attr) {
                for u in srcset_urls(value) {
                    self.url(u, &via());
                }
            } else if attr == b"style" {
                self.css(value);
            }
        }
        let mut raw = hides_text(name).then_some(Raw::Hidden);
        match name {
            b"script" => match (tag.get(b"src"), tag.get(b"type")) {
                (Some(src), _) => {
                    self.facts.scripts.external_total += 1;
                    let src = text::cap(src, VALUE_MAX_CHARS);
                    push_capped(
                        &mut self.facts.scripts.external,
                        src,
                        &mut self.facts.truncated,
                    );
                }
                (None, t) if runs(t) => {
                    self.facts.scripts.inline += 1;
                    raw = Some(Raw::Script);
                }
                (None, t) => {
                    self.facts.scripts.data_blocks += 1;
                    if t.is_some_and(|t| t.trim().eq_ignore_ascii_case("importmap")) {
                        raw = Some(Raw::ImportMap);
                    }
                }
            },
            b"style" => raw = Some(Raw::Style),
            b"form" => {
                self.facts.forms_total += 1;
                let form = Form {
                    action: tag.get(b"action").map(|a| text::cap(a, VALUE_MAX_CHARS)),
                    method: tag.get(b"method").map_or_else(
                        || "get".to_owned(),
                        |m| text::cap(&m.trim().to_ascii_lowercase(), VALUE_MAX_CHARS),
                    ),
                };
                push_capped(&mut self.facts.forms, form, &mut self.facts.truncated);
            }
            b"iframe" | b"frame" => {
                self.facts.frames_total += 1;
                let frame = Frame {
                    src: tag.get(b"src").map(|s| text::cap(s, VALUE_MAX_CHARS)),
                    srcdoc: tag.get(b"srcdoc").is_some(),
                };
                push_capped(&mut self.facts.frames, frame, &mut self.facts.truncated);
                if let Some(doc) = tag.get(b"srcdoc") {
                    self.read(doc, depth + 1);
                }
            }
            b"meta" => {
                let equiv = tag.get(b"http-equiv").map(str::trim);
                let content = tag.get(b"content").unwrap_or("");
                if equiv.is_some_and(|e| e.eq_ignore_ascii_case("content-security-policy")) {
                    let csp = text::cap(content, VALUE_MAX_CHARS);
                    push_capped(&mut self.facts.meta_csp, csp, &mut self.facts.truncated);
                } else if equiv.is_some_and(|e| e.eq_ignore_ascii_case("refresh")) {
                    if let Some(u) = refresh_url(content) {
                        self.url(u, "meta refresh");
                    }
                }
            }
            b"base" if self.facts.base_href.is_none() => {
                self.facts.base_href = tag.get(b"href").map(|h| text::cap(h, VALUE_MAX_CHARS));
            }
            _ => {}
        }
        raw
    }

    /// The text gathered since the last block boundary, as one text.
    fn flush(&mut self, block: &mut String, in_title: bool) {
        let at = if in_title {
            TextAt::DocumentTitle
        } else {
            TextAt::Text
        };
        self.text(at, block);
        block.clear();
    }

    /// Keep a text (whitespace runs as one space, trimmed; nothing when empty) within
    /// [`TEXTS_MAX_CHARS`].
    fn text(&mut self, at: TextAt, s: &str) {
        if self.texts_full {
            return;
        }
        let mut out = String::new();
        let mut n = 0;
        for word in s.split_whitespace() {
            let len = word.chars().count() + usize::from(n > 0);
            if self.text_chars + n + len > TEXTS_MAX_CHARS {
                self.texts.truncated = true;
                self.texts_full = true;
                break;
            }
            if n > 0 {
                out.push(' ');
            }
            out.push_str(word);
            n += len;
        }
        if !out.is_empty() {
            self.text_chars += n;
            self.texts.texts.push(PageText { at, text: out });
        }
    }

    /// A URL the page refers to: its origin when it is outside, its script when it is a
    /// `javascript:` URL.
    fn url(&mut self, raw: &str, via: &str) {
        match resolve(raw) {
            Resolved::Outside(origin) => self.origin(origin, via),
            Resolved::Script(js) => {
                self.facts.scripts.handlers += 1;
                self.script_origins(&js);
            }
            Resolved::Local => {}
        }
    }

    /// Record an outside origin (listed while the list has room, counted either way).
    fn origin(&mut self, origin: String, via: &str) {
        if self.origins.contains_key(&origin) {
            return;
        }
        if self.origins.len() < MAX_LISTED {
            self.origins.insert(origin, text::cap(via, VALUE_MAX_CHARS));
            return;
        }
        self.facts.truncated = true;
        if self.origins.len() + self.unlisted.len() < MAX_ORIGINS_COUNTED {
            let mut h = DefaultHasher::new();
            origin.hash(&mut h);
            self.unlisted.insert(h.finish());
        }
    }

    /// The outside origins named by string literals at a script's fetching and navigating
    /// calls and assignments ([`SCRIPT_SINKS`]).
    fn script_origins(&mut self, js: &str) {
        for (url, via) in script_urls(js) {
            self.url(&url, &via);
        }
        for url in url_literals(js) {
            if let Resolved::Outside(origin) = resolve(&url) {
                if self.literals.len() < MAX_LISTED {
                    self.literals.insert(origin);
                } else if !self.literals.contains(&origin) {
                    self.facts.truncated = true;
                }
            }
        }
    }

    /// The module URLs of an import map (every string in its JSON).
    fn import_map(&mut self, json: &str) {
        let Ok(map) = crate::json::parse(json) else {
            return;
        };
        let mut urls: Vec<String> = Vec::new();
        let mut path = String::new();
        crate::diff::each_string(&map, &mut path, false, &mut |_, s, _| {
            if urls.len() < MAX_LISTED {
                urls.push(s.lossy().into_owned());
            }
        });
        for u in urls {
            self.url(&u, "importmap");
        }
    }

    /// The URLs of a style sheet or a `style` attribute.
    fn css(&mut self, css: &str) {
        let mut parser = Parser::new(css);
        let mut urls: Vec<(String, &'static str)> = Vec::new();
        let mut deep = false;
        css_walk(&mut parser, 0, false, &mut urls, &mut deep);
        if deep {
            self.facts.truncated = true;
        }
        for (u, via) in urls {
            self.url(&u, via);
        }
    }
}

/// A URL as the page would use it.
enum Resolved {
    /// An `http`, `https`, `ws` or `wss` URL of another origin: its origin.
    Outside(String),
    /// A `javascript:` URL: its script.
    Script(String),
    /// The page's own origin, another scheme (`data:`, `blob:`, `mailto:`…), or not a URL.
    Local,
}

/// The origin a page's relative URLs resolve to here: a name that cannot be anyone's
/// (RFC 2606 `.invalid`), over https as the hosts serve pages.
const PAGE_BASE: &str = "https://page.invalid/";

/// Resolve `raw` as a browser resolves a URL in the page (WHATWG URL parsing by the `url`
/// crate: leading and trailing spaces and controls dropped, tabs and newlines removed,
/// `//host` and `\\host` scheme-relative) against [`PAGE_BASE`].
fn resolve(raw: &str) -> Resolved {
    static BASE: LazyLock<url::Url> =
        LazyLock::new(|| url::Url::parse(PAGE_BASE).expect("the page base is a URL"));
    let Ok(u) = BASE.join(raw) else {
        return Resolved::Local;
    };
    match u.scheme() {
        "http" | "https" | "ws" | "wss" if u.host_str() != BASE.host_str() => {
            Resolved::Outside(u.origin().ascii_serialization())
        }
        "javascript" => {
            let js = raw.trim_start_matches(|c: char| c <= ' ');
            Resolved::Script(js.get("javascript:".len()..).unwrap_or("").to_owned())
        }
        _ => Resolved::Local,
    }
}

/// Walk CSS tokens `depth` blocks deep, collecting the URLs of `url(…)` (quoted or not),
/// `src(…)`, `image-set(…)` and `@import "…"`; `strings_are_urls` says the block is the
/// argument list of one of those functions.
fn css_walk<'i>(
    p: &mut Parser<'i>,
    depth: usize,
    strings_are_urls: bool,
    urls: &mut Vec<(String, &'static str)>,
    deep: &mut bool,
) {
    let mut import = false;
    while let Ok(token) = p.next() {
        if urls.len() >= MAX_LISTED {
            *deep = true;
            return;
        }
        let token = token.clone();
        let nested = match &token {
            CssToken::UnquotedUrl(u) => {
                urls.push((u.to_string(), "style url()"));
                None
            }
            CssToken::QuotedString(s) if strings_are_urls => {
                urls.push((s.to_string(), "style url()"));
                None
            }
            CssToken::QuotedString(s) if import => {
                urls.push((s.to_string(), "style @import"));
                None
            }
            CssToken::AtKeyword(k) => {
                import = k.eq_ignore_ascii_case("import");
                None
            }
            CssToken::Function(name) => Some(
                ["url", "src", "image-set", "-webkit-image-set"]
                    .iter()
                    .any(|f| name.eq_ignore_ascii_case(f)),
            ),
            CssToken::ParenthesisBlock
            | CssToken::SquareBracketBlock
            | CssToken::CurlyBracketBlock => Some(false),
            _ => None,
        };
        if !matches!(token, CssToken::AtKeyword(_) | CssToken::Function(_)) {
            import &= matches!(token, CssToken::WhiteSpace(_) | CssToken::Comment(_));
        }
        let Some(url_args) = nested else { continue };
        if depth >= MAX_CSS_DEPTH {
            // Not descended into: the next token skips the block whole.
            *deep = true;
            continue;
        }
        let _ = p.parse_nested_block(|p| -> Result<(), ParseError<()>> {
            css_walk(p, depth + 1, url_args, urls, deep);
            Ok(())
        });
    }
}

/// The URLs of a `srcset` (HTML's "parse a srcset attribute": candidates separated by commas,
/// each a URL and descriptors that may hold parenthesised commas).
fn srcset_urls(srcset: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            return out;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        let trimmed = url.trim_end_matches(',');
        out.push(trimmed);
        if trimmed.len() < url.len() {
            rest = after;
            continue;
        }
        // Descriptors: up to a comma outside parentheses.
        let mut depth = 0usize;
        let mut cut = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    cut = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[cut..];
    }
}

/// The URL of a `<meta http-equiv=refresh>` content (HTML's "shared declarative refresh
/// steps": a time, then `;` or `,`, then optionally `url=`, the URL possibly quoted).
fn refresh_url(content: &str) -> Option<&str> {
    let s = content.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let s = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let s = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let s = s.strip_prefix([';', ',']).unwrap_or(s);
    let s = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let s = match s.get(..3) {
        Some(u) if u.eq_ignore_ascii_case("url") => {
            let t = s[3..].trim_start_matches(|c: char| c.is_ascii_whitespace());
            match t.strip_prefix('=') {
                Some(t) => t.trim_start_matches(|c: char| c.is_ascii_whitespace()),
                None => s,
            }
        }
        _ => s,
    };
    let s = match s.chars().next() {
        Some(q @ ('"' | '\'')) => s[1..].split(q).next().unwrap_or(""),
        _ => s.trim_end(),
    };
    (!s.is_empty()).then_some(s)
}

/// How a script hands a URL to the browser.
#[derive(Clone, Copy)]
enum SinkForm {
    /// A call: the string literals among its first `n` arguments.
    Call(usize),
    /// An assignment (`x = "…"`).
    Assign,
    /// An assignment to a property (`.src = "…"`).
    Property,
}

/// The script calls and assignments whose string-literal arguments are URLs the page fetches,
/// connects to or navigates to: `fetch`, `WebSocket`, `EventSource`, `navigator.sendBeacon`,
/// `open` (`XMLHttpRequest.open(method, url)` and `window.open(url)`), dynamic `import`,
/// `importScripts`, `Worker`, `SharedWorker`, `location.assign`/`replace`, and
/// assignments to `location` and to a `.href`, `.src` or `.action`.
const SCRIPT_SINKS: &[(&str, SinkForm)] = &[
    ("fetch", SinkForm::Call(1)),
    ("WebSocket", SinkForm::Call(1)),
    ("EventSource", SinkForm::Call(1)),
    ("sendBeacon", SinkForm::Call(1)),
    ("open", SinkForm::Call(2)),
    ("import", SinkForm::Call(1)),
    ("importScripts", SinkForm::Call(1)),
    ("Worker", SinkForm::Call(1)),
    ("SharedWorker", SinkForm::Call(1)),
    ("location.assign", SinkForm::Call(1)),
    ("location.replace", SinkForm::Call(1)),
    ("location", SinkForm::Assign),
    ("href", SinkForm::Property),
    ("src", SinkForm::Property),
    ("action", SinkForm::Property),
];

/// The URLs given as string literals to [`SCRIPT_SINKS`] in `js`, with where (`fetch()`,
/// `.src=`): a lexical reading, not a parser (a URL built at run time is not seen), at most
/// [`MAX_LISTED`].
fn script_urls(js: &str) -> Vec<(String, String)> {
    static FINDER: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(SCRIPT_SINKS.iter().map(|(n, _)| n))
            .expect("the script sinks are plain words")
    });
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let bytes = js.as_bytes();
    let mut out = Vec::new();
    for m in FINDER.find_iter(js) {
        if out.len() >= MAX_LISTED {
            break;
        }
        let (name, form) = SCRIPT_SINKS[m.pattern().as_usize()];
        let before = m.start().checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(ident) || bytes.get(m.end()).copied().is_some_and(ident) {
            continue;
        }
        if matches!(form, SinkForm::Property) && before != Some(b'.') {
            continue;
        }
        let rest = skip_space(&js[m.end()..]);
        match form {
            SinkForm::Call(n) => {
                let Some(mut args) = rest.strip_prefix('(') else {
                    continue;
                };
                for _ in 0..n {
                    let Some((lit, after)) = literal(skip_space(args)) else {
                        break;
                    };
                    out.push((lit, format!("{name}()")));
                    match skip_space(after).strip_prefix(',') {
                        Some(next) => args = next,
                        None => break,
                    }
                }
            }
            SinkForm::Assign | SinkForm::Property => {
                let Some(value) = rest.strip_prefix('=') else {
                    continue;
                };
                if value.starts_with(['=', '>']) {
                    continue;
                }
                if let Some((lit, _)) = literal(skip_space(value)) {
                    let via = match form {
                        SinkForm::Property => format!(".{name}="),
                        _ => format!("{name}="),
                    };
                    out.push((lit, via));
                }
            }
        }
    }
    out
}

/// Every string literal of `js` that starts with an absolute `http`, `https`, `ws` or `wss`
/// URL (decoded as [`literal`] decodes it), at most [`MAX_LISTED`] of them.
fn url_literals(js: &str) -> Vec<String> {
    static FINDER: LazyLock<AhoCorasick> = LazyLock::new(|| {
        let starts = ["http:", "https:", "ws:", "wss:"];
        let quoted: Vec<String> = ['"', '\'', '`']
            .iter()
            .flat_map(|q| starts.iter().map(move |s| format!("{q}{s}")))
            .collect();
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(quoted)
            .expect("the URL starts are plain text")
    });
    FINDER
        .find_iter(js)
        .filter_map(|m| literal(&js[m.start()..]).map(|(lit, _)| lit))
        .take(MAX_LISTED)
        .collect()
}

/// `s` without leading whitespace (spaces, tabs, line ends).
fn skip_space(s: &str) -> &str {
    s.trim_start_matches(|c: char| c.is_whitespace())
}

/// The string literal `s` starts with (`"…"`, `'…'`, or a template literal up to its first
/// `${`), escapes decoded, read up to [`LITERAL_MAX_CHARS`]; and what follows it.
fn literal(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    let mut count = 0;
    while let Some((i, c)) = chars.next() {
        let at = 1 + i;
        if count >= LITERAL_MAX_CHARS {
            return Some((out, &s[at..]));
        }
        count += 1;
        match c {
            c if c == quote => return Some((out, &s[at + 1..])),
            '$' if quote == '`' && s[at + 1..].starts_with('{') => return Some((out, &s[at..])),
            '\n' | '\r' if quote != '`' => return None,
            '\\' => match chars.next() {
                Some((_, 'x')) => {
                    let hex: String = (0..2).filter_map(|_| chars.next().map(|x| x.1)).collect();
                    out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
                }
                Some((_, 'u')) => {
                    let rest = &s[at + 2..];
                    let (hex, used) = match rest.strip_prefix('{') {
                        Some(r) => {
                            let end = r.find('}').unwrap_or(r.len());
                            (&r[..end], end + 2)
                        }
                        None => (rest.get(..4).unwrap_or(rest), 4),
                    };
                    out.extend(u32::from_str_radix(hex, 16).ok().and_then(char::from_u32));
                    for _ in 0..used {
                        chars.next();
                    }
                }
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, '\n')) => {}
                Some((_, e)) => out.push(e),
                None => return None,
            },
            c => out.push(c),
        }
    }
    None
}

/// A tag or attribute name for [`Origin::via`], cut to [`TAG_MAX_CHARS`].
fn shown_name(name: &[u8]) -> String {
    text::cap(&String::from_utf8_lossy(name), TAG_MAX_CHARS)
}

/// Push `item` while `list` has fewer than [`MAX_LISTED`] entries; otherwise mark the facts
/// truncated.
fn push_capped<T>(list: &mut Vec<T>, item: T, truncated: &mut bool) {
    if list.len() < MAX_LISTED {
        list.push(item);
    } else {
        *truncated = true;
    }
}
