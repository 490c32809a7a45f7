//! The rule-set scan as the desk shows it: a target's matches with the matched text in its
//! context, its data-flow legs, and a change's matches (no text: a change stores only where).
//!
//! A match names its text by an RFC 9535 normalized path relative to its tool
//! (`$['inputSchema']['properties']['path']['description']`) or `$['instructions']`, and a
//! span `[start, end)` in Unicode scalar values of the string there, or, when the value at the
//! path is not a string (a property name matched), of the path's last key. [`parse_path`]
//! reads the path strictly (the normalized form only), [`resolve`] walks a tool's JSON with it,
//! and [`context`] cuts [`CONTEXT_CHARS`] characters either side of the span and marks the span
//! (`<mark>`), each invisible or format character in view shown as a `U+XXXX` chip instead
//! ([`is_invisible`]).

use std::cell::RefCell;
use std::collections::HashMap;

use maud::{Markup, html};
use toolmark_index::TargetScan;
use toolmark_toolset::json::{self, Json};
use toolmark_toolset::legs::{Certainty, ToolLegs};
use toolmark_toolset::rules::{Match, Tier};

use super::layout::{fact, listing};
use crate::documents::CurrentTools;

/// Characters of context shown on each side of a matched span.
pub const CONTEXT_CHARS: usize = 100;

/// The field of a match in the server's instructions.
pub const INSTRUCTIONS_FIELD: &str = "$['instructions']";

/// One segment of a normalized path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `['name']`: an object member.
    Key(String),
    /// `[n]`: an array element.
    Index(usize),
}

/// An RFC 9535 normalized path (`$` then `['name']` and `[n]` segments; in a name only `\b`,
/// `\f`, `\n`, `\r`, `\t`, `\'`, `\\` and `\u00XX` for the other control characters are
/// escapes, and those characters appear only escaped; an index has no leading zero), or `None`
/// when `path` is anything else.
pub fn parse_path(path: &str) -> Option<Vec<Segment>> {
    let mut rest = path.strip_prefix('$')?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        rest = rest.strip_prefix('[')?;
        if let Some(r) = rest.strip_prefix('\'') {
            let mut name = String::new();
            let mut chars = r.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '\'' => break i,
                    '\\' => {
                        let (_, e) = chars.next()?;
                        name.push(match e {
                            'b' => '\u{8}',
                            'f' => '\u{c}',
                            'n' => '\n',
                            'r' => '\r',
                            't' => '\t',
                            '\'' => '\'',
                            '\\' => '\\',
                            'u' => {
                                let hex: String = (0..4)
                                    .map(|_| chars.next().map(|(_, h)| h))
                                    .collect::<Option<_>>()?;
                                normal_hex_char(&hex)?
                            }
                            _ => return None,
                        });
                    }
                    c if (c as u32) < 0x20 => return None,
                    c => name.push(c),
                }
            };
            rest = r[end + 1..].strip_prefix(']')?;
            out.push(Segment::Key(name));
        } else {
            let end = rest.find(']')?;
            let digits = &rest[..end];
            let valid = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'));
            if !valid {
                return None;
            }
            out.push(Segment::Index(digits.parse().ok()?));
            rest = &rest[end + 1..];
        }
    }
    Some(out)
}

/// The control character a normalized path's `\uXXXX` may spell: `00` then lowercase hex of
/// U+0000–U+001F other than the five with a short escape.
fn normal_hex_char(hex: &str) -> Option<char> {
    let valid = hex.len() == 4
        && hex.starts_with("00")
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !valid {
        return None;
    }
    let n = u32::from_str_radix(hex, 16).ok()?;
    if n >= 0x20 || matches!(n, 0x8 | 0x9 | 0xa | 0xc | 0xd) {
        return None;
    }
    char::from_u32(n)
}

/// The text a path names in `value`: the string at the path, or, when the value there is not
/// a string, the path's last key (a property name). `None` when the path does not resolve.
pub fn resolve(value: &Json, path: &[Segment]) -> Option<String> {
    let mut v = value;
    for seg in path {
        v = match (seg, v) {
            (Segment::Key(k), Json::Object(members)) => members
                .iter()
                .rev()
                .find(|(name, _)| name.lossy() == k.as_str())
                .map(|(_, v)| v)?,
            (Segment::Index(i), Json::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    match (v, path.last()) {
        (Json::String(s), _) => Some(s.lossy().into_owned()),
        (_, Some(Segment::Key(k))) => Some(k.clone()),
        _ => None,
    }
}

/// Whether a character is invisible or formatting when rendered, and shown as a chip: general
/// category Cf (zero-width characters, bidi controls, tag characters …), control characters
/// other than tab and line feed, variation selectors, and the blank fillers (U+034F, U+115F,
/// U+1160, U+3164, U+FFA0, U+2800).
pub fn is_invisible(c: char) -> bool {
    toolmark_toolset::text::is_format_char(c)
        || (c.is_control() && c != '\n' && c != '\t')
        || matches!(c,
            '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
            | '\u{180B}'..='\u{180F}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Characters as text, each invisible one as a `U+XXXX` chip.
fn visible(chars: &[char]) -> Markup {
    let mut runs: Vec<(bool, String)> = Vec::new();
    for &c in chars {
        let inv = is_invisible(c);
        match runs.last_mut() {
            Some((false, s)) if !inv => s.push(c),
            _ => runs.push((inv, c.to_string())),
        }
    }
    html! {
        @for (inv, s) in &runs {
            @if *inv {
                @let cp = format!("U+{:04X}", s.chars().next().map_or(0, u32::from));
                span class="invisible-char" title={ "invisible character " (cp) } { (cp) }
            } @else {
                (s)
            }
        }
    }
}

/// The span `[start, end)` of `text` marked in up to [`CONTEXT_CHARS`] characters either side
/// (an ellipsis where the text goes on); `None` when the span is not within the text.
pub fn context(text: &str, [start, end]: [usize; 2]) -> Option<Markup> {
    let chars: Vec<char> = text.chars().collect();
    if start > end || end > chars.len() {
        return None;
    }
    let from = start.saturating_sub(CONTEXT_CHARS);
    let to = end.saturating_add(CONTEXT_CHARS).min(chars.len());
    Some(html! {
        span class="match-context" {
            @if from > 0 { span class="ellipsis" { "…" } }
            (visible(&chars[from..start]))
            mark { (visible(&chars[start..end])) }
            (visible(&chars[end..to]))
            @if to < chars.len() { span class="ellipsis" { "…" } }
        }
    })
}

/// Where the desk finds the texts a target's matches index into.
pub struct Texts<'a> {
    /// The current tools shown inline, by name (the first of a name), as the server sent them;
    /// `None` when the scan is not of the current tool set. A tool is parsed only when a match
    /// names it, one at a time ([`Texts::parsed`]): a page holds at most one parsed tool.
    tools: Option<HashMap<&'a str, &'a str>>,
    /// The last tool parsed, by name (matches come tool by tool).
    parsed: RefCell<Option<(&'a str, Json)>>,
    /// The instructions the scan read.
    instructions: Option<&'a str>,
}

impl<'a> Texts<'a> {
    /// The texts of `scan`'s matches: the current tools when they are the set it scanned
    /// (only the tools its matches name), its instructions.
    pub fn new(scan: &'a TargetScan, current: Option<&'a CurrentTools>) -> Texts<'a> {
        let tools = current.filter(|c| c.full == scan.full).map(|c| {
            let named: std::collections::HashSet<&str> = scan
                .scan
                .iter()
                .flat_map(|s| &s.matches)
                .filter_map(|m| m.tool.as_deref())
                .collect();
            let mut out = HashMap::new();
            for t in &c.inline {
                if let Some(name) = t.name.as_deref().filter(|n| named.contains(n)) {
                    out.entry(name).or_insert(&*t.raw);
                }
            }
            out
        });
        Texts {
            tools,
            parsed: RefCell::new(None),
            instructions: scan.instructions.as_deref(),
        }
    }

    /// The match's text in context, or why it is not available.
    pub fn show(&self, m: &Match) -> Markup {
        match self.text(m) {
            Ok(text) => match context(&text, m.span) {
                Some(c) => c,
                None => unavailable("the span is outside the text"),
            },
            Err(why) => unavailable(why),
        }
    }

    fn text(&self, m: &Match) -> Result<String, &'static str> {
        if m.tool.is_none() && m.field == INSTRUCTIONS_FIELD {
            return self
                .instructions
                .map(str::to_owned)
                .ok_or("the instructions are not stored");
        }
        let path = parse_path(&m.field).ok_or("the field is not a normalized path")?;
        let tools = self
            .tools
            .as_ref()
            .ok_or("the scan is of another tool set than the current one")?;
        let name = m.tool.as_deref().ok_or("the tool has no name")?;
        let (&name, &raw) = tools
            .get_key_value(name)
            .ok_or("the tool is not among the tools shown on this page")?;
        let mut parsed = self.parsed.borrow_mut();
        if parsed.as_ref().is_none_or(|(n, _)| *n != name) {
            let v = json::parse(raw).map_err(|_| "the tool does not parse")?;
            *parsed = Some((name, v));
        }
        let (_, tool) = parsed.as_ref().expect("parsed above");
        resolve(tool, &path).ok_or("the path does not resolve in the tool")
    }
}

fn unavailable(why: &str) -> Markup {
    html! { span class="muted text-unavailable" { "text not available (" (why) ")" } }
}

/// A tier as a badge: `block` bad, `advise` a warning.
pub fn tier_badge(t: Tier) -> Markup {
    match t {
        Tier::Block => html! { span class="badge bad tier-block" { "block" } },
        Tier::Advise => html! { span class="badge warn tier-advise" { "advise" } },
    }
}

/// The matches as a table `id`: tier, code, class, tool, field, and either the text in
/// context (`texts`) or the span.
pub fn matches_table(id: &str, matches: &[Match], texts: Option<&Texts>) -> Markup {
    let last = if texts.is_some() { "Text" } else { "Span" };
    html! {
        (listing(id, "Rule-set matches", &["Tier", "Code", "Class", "Tool", "Field", last], &[], html! {
            @for m in matches {
                tr class={ "match tier-" (tier_name(m.tier)) } {
                    td { (tier_badge(m.tier)) }
                    th scope="row" { code { (m.code) } }
                    td { (m.class.as_str()) }
                    td { @match &m.tool { Some(t) => code { (t) }, None => span class="muted" { "(instructions)" } } }
                    td { code class="path" { (m.field) } }
                    td {
                        @match texts {
                            Some(t) => (t.show(m)),
                            None => code { "[" (m.span[0]) ", " (m.span[1]) ")" },
                        }
                    }
                }
            }
        }))
    }
}

fn tier_name(t: Tier) -> &'static str {
    match t {
        Tier::Block => "block",
        Tier::Advise => "advise",
    }
}

/// A leg's or certainty's wire name.
fn wire(v: impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}

/// The "Rule-set scan" section of a target page: the rule set it was made with, the counts,
/// every match with its text, the data-flow legs and the toxic-flow note.
pub fn section(scan: Option<&TargetScan>, current: Option<&CurrentTools>) -> Markup {
    html! {
        section aria-labelledby="scan-h" id="scan" {
            h2 id="scan-h" { "Rule-set scan" }
            @match scan {
                None => p { "Not scanned: no tool set has been read from this target." },
                Some(s) => (scan_body(s, current)),
            }
        }
    }
}

fn scan_body(s: &TargetScan, current: Option<&CurrentTools>) -> Markup {
    let current_rules = s.rules_digest == crate::rules::digest();
    html! {
        dl class="facts" id="scan-facts" {
            (fact("Rule set", html! {
                a href="/api/v1/rules" { code { (s.rules) } } " " code class="digest" { (s.rules_digest) }
                @if !current_rules {
                    " " strong id="scan-stale" { "an earlier rule set; a re-scan is pending" }
                }
            }))
            (fact("Scanned", html! {
                "the tool set " code class="digest" { (s.full) } " of entry " (super::layout::entry_link(s.entry))
                @if s.instructions.is_some() { " and the server's instructions" }
            }))
            @if let Some(x) = &s.scan {
                (fact("Matches", html! {
                    span id="scan-counts" { (x.block) " block, " (x.advise) " advise" }
                }))
            }
        }
        @match &s.scan {
            None => p { "Not scanned: the stored document could not be read." },
            Some(x) if x.matches.is_empty() => p id="scan-clean" { "No rule matched." },
            Some(x) => {
                // Texts not read (cut at a limit) are one line, not a row each: a huge set
                // lists hundreds of them, and their place says nothing a count does not.
                @let (cut, found): (Vec<&Match>, Vec<&Match>) = x.matches.iter().partition(|m| m.code == toolmark_toolset::rules::SCAN_TRUNCATED);
                @let found: Vec<Match> = found.into_iter().cloned().collect();
                @let texts = Texts::new(s, current);
                @if !found.is_empty() {
                    (matches_table("scan-matches", &found, Some(&texts)))
                }
                @if !cut.is_empty() {
                    p class="muted" id="scan-cut" {
                        (cut.len()) " texts were not read whole (" code { "scan-truncated" } ": a "
                        "text over the per-text limit, or the scan's budget spent); what was not "
                        "read may hide anything."
                    }
                }
                @if x.truncated > 0 {
                    p class="muted" { (x.truncated) " more matches not listed." }
                }
            }
        }
        (data_flow(&s.legs, s.legs_total, s.toxic_flow))
    }
}

/// Per tool its legs, and the toxic-flow note when the set holds all three.
fn data_flow(legs: &[ToolLegs], total: u64, toxic: Option<Certainty>) -> Markup {
    html! {
        h3 id="legs-h" { "Data flow" }
        @if let Some(c) = toxic {
            p class="toxic-flow" id="toxic-flow" role="note" {
                strong { "Toxic flow (" (wire(c)) "): " }
                "this server's tools together read private data, take in text others wrote and "
                "send data out. Text from one tool can lead the model to send private data "
                "through another."
            }
        }
        @if legs.is_empty() {
            p { "No tool has a data-flow leg." }
        } @else {
            (listing("legs", "Data-flow legs per tool", &["Tool", "Leg", "Certainty", "Evidence"], &[], html! {
                @for t in legs.iter().take(crate::servers::MAX_DETAIL_LEG_TOOLS) {
                    @for (i, l) in t.legs.iter().enumerate() {
                        tr {
                            @if i == 0 { th scope="row" rowspan=(t.legs.len()) { code { (t.tool) } } }
                            td { (wire(l.leg)) }
                            td { (wire(l.certainty)) }
                            td {
                                @for (j, e) in l.evidence.iter().enumerate() {
                                    @if j > 0 { ", " }
                                    span class="muted" { (e.kind) } " " code { (e.detail) }
                                }
                            }
                        }
                    }
                }
            }))
            @if total > legs.len().min(crate::servers::MAX_DETAIL_LEG_TOOLS) as u64 {
                p class="muted" id="legs-more" {
                    (total - legs.len().min(crate::servers::MAX_DETAIL_LEG_TOOLS) as u64)
                    " more tools with a leg are not listed (the server's JSON lists the same first "
                    (crate::servers::MAX_DETAIL_LEG_TOOLS) ")."
                }
            }
        }
    }
}

/// The summary's line for the scan: flagged with its classes, no match, or not scanned.
pub fn summary(scan: Option<&TargetScan>) -> Markup {
    let Some(s) = scan else {
        return html! { "not scanned" };
    };
    let Some(x) = &s.scan else {
        return html! { "not scanned (the document could not be read)" };
    };
    let mut classes: Vec<&str> = x.matches.iter().map(|m| m.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    html! {
        @if x.flagged() {
            span class="badge bad" id="flagged" { "flagged" } " "
            @for (i, c) in classes.iter().enumerate() { @if i > 0 { ", " } code { (c) } }
            " (" (x.block) " block, " (x.advise) " advise) · " a href="#scan" { "the matches" }
        } @else {
            "no match"
        }
        @if let Some(c) = s.toxic_flow { " · " strong { "toxic flow (" (wire(c)) ")" } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Segment {
        Segment::Key(s.to_owned())
    }

    #[test]
    fn normalized_paths_parse() {
        assert_eq!(parse_path("$"), Some(vec![]));
        assert_eq!(
            parse_path("$['description']"),
            Some(vec![key("description")])
        );
        assert_eq!(
            parse_path("$['inputSchema']['properties']['path']['description']"),
            Some(vec![
                key("inputSchema"),
                key("properties"),
                key("path"),
                key("description")
            ])
        );
        assert_eq!(
            parse_path("$['enum'][0][12]"),
            Some(vec![key("enum"), Segment::Index(0), Segment::Index(12)])
        );
        assert_eq!(
            parse_path(r"$['it\'s \\ \b\f\n\r\t\u0000\u001f\u000b']"),
            Some(vec![key("it's \\ \u{8}\u{c}\n\r\t\u{0}\u{1f}\u{b}")])
        );
        assert_eq!(parse_path("$['a\"/]b']"), Some(vec![key("a\"/]b")]));
        assert_eq!(parse_path("$['\u{200B}é']"), Some(vec![key("\u{200B}é")]));
    }

    #[test]
    fn other_paths_are_refused() {
        for p in [
            "",
            "description",
            "$.description",
            "$[\"description\"]",
            "$['description'",
            "$['description']x",
            "$[01]",
            "$[-1]",
            "$[]",
            "$[ 1]",
            "$['a\\/']",
            "$['a\\\"']",
            "$['\\u000a']",
            "$['\\u001F']",
            "$['\\u0020']",
            "$['\\u00']",
            "$['a\nb']",
            "$['a\\x']",
            "$['unterminated\\']",
            "$$",
        ] {
            assert_eq!(parse_path(p), None, "{p:?}");
        }
    }

    #[test]
    fn paths_resolve_to_strings_or_the_last_key() {
        let tool = json::parse(
            r#"{"name":"t","description":"d","inputSchema":{"properties":{"path":{"type":"string"},"p2":{"description":"x"}}},"enum":["a",1]}"#,
        )
        .unwrap();
        let r = |p: &str| resolve(&tool, &parse_path(p).unwrap());
        assert_eq!(r("$['description']").as_deref(), Some("d"));
        assert_eq!(
            r("$['inputSchema']['properties']['p2']['description']").as_deref(),
            Some("x")
        );
        assert_eq!(
            r("$['inputSchema']['properties']['path']").as_deref(),
            Some("path")
        );
        assert_eq!(r("$['enum'][0]").as_deref(), Some("a"));
        assert_eq!(r("$['enum'][1]"), None);
        assert_eq!(r("$['enum'][2]"), None);
        assert_eq!(r("$['missing']"), None);
        assert_eq!(r("$['description'][0]"), None);
    }

    #[test]
    fn the_context_marks_the_span_and_shows_invisible_characters() {
        let text = format!("{}ab\u{200B}<c>{}", "x".repeat(150), "y".repeat(150));
        let m = context(&text, [150, 156]).unwrap().into_string();
        assert!(
            m.contains(
                "<mark>ab<span class=\"invisible-char\" title=\"invisible character U+200B\">U+200B</span>&lt;c&gt;</mark>"
            ),
            "{m}"
        );
        // 100 characters either side, then an ellipsis where the text goes on.
        let x100 = "x".repeat(100);
        let y100 = "y".repeat(100);
        assert!(m.contains(&format!("…</span>{x100}<mark>")), "{m}");
        assert!(
            m.contains(&format!("</mark>{y100}<span class=\"ellipsis\">…")),
            "{m}"
        );
        assert!(!m.contains(&format!("x{x100}")) && !m.contains(&format!("y{y100}")));
        assert_eq!(m.matches('…').count(), 2);
        let short = context("abc", [0, 3]).unwrap().into_string();
        assert!(!short.contains('…'), "{short}");
        assert!(short.contains("<mark>abc</mark>"));
        assert!(context("abc", [2, 4]).is_none());
        assert!(context("abc", [2, 1]).is_none());
        // Scalar values, not bytes.
        let m = context("é\u{E0041}z", [1, 2]).unwrap().into_string();
        assert!(m.contains("<mark><span class=\"invisible-char\" title=\"invisible character U+E0041\">U+E0041</span></mark>z"), "{m}");
    }
}
