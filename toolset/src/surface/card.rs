//! The Server Card (SEP-2127, draft): its digest, the tools it lists, and how they compare with
//! the tools the endpoint served.
//!
//! What a card says about tools depends on the draft it follows:
//!
//! * SEP-2127's card (modelcontextprotocol/modelcontextprotocol PR 2127, the `v1` schema,
//!   "card-only" since PR 3109) deliberately lists no primitives: a card has identity and how
//!   to connect, and `tools/list` is the only source of tool definitions, which "can vary by
//!   authenticated user, session, configuration". Such a card gives nothing to compare:
//!   [`CardTools::NotListed`].
//! * The earlier SEP-1649 draft (issue 1649), which many deployed cards still follow, has a
//!   top-level `tools` array holding tool definitions (the MCP `Tool` shape), or `["dynamic"]`
//!   for a server whose tools are known only at runtime; deployed cards also list bare names,
//!   say `"tools": "dynamic"`, or set `capabilities.tools.dynamic: true`.
//!
//! [`tools`] reads all of these; [`compare`] tells what the card claims that the endpoint did
//! not serve: the `card-mismatch` signal is a [`CardComparison`] that is not empty.

use crate::diff::{self, NAME_MAX_CHARS, same_opt};
use crate::full;
use crate::json::{self, Json};
use crate::model::{self, ParseError, ToolSet};
use crate::sri::Sri;
use crate::text;

/// The card's digest: the SRI of the SHA-256 of the RFC 8785 bytes (ECMAScript numbers:
/// [`full::entry_bytes`], as every entry of the full digest) of the card document, whatever JSON
/// value it is. A byte order mark is skipped; the text must be strict JSON nested at most
/// [`json::MAX_DEPTH`] levels.
pub fn digest(body: &str) -> Result<Sri, ParseError> {
    Ok(Sri::of(&full::entry_bytes(&document(body)?)))
}

/// The card document parsed as [`digest`] reads it (a byte order mark skipped, strict JSON).
pub fn document(body: &str) -> Result<Json, ParseError> {
    Ok(json::parse(model::text_of(body.as_bytes())?)?)
}

/// At most this many tools of a card are kept, and at most this many names are listed in each
/// list of a [`CardComparison`]: [`diff::MAX_LISTED_NAMES`], the tool diff's cap on names,
/// since a card lists the same tools a `tools/list` does.
pub const MAX_CARD_TOOLS: usize = diff::MAX_LISTED_NAMES;

/// The members of an MCP `Tool` (schema 2026-07-28) other than `name`: the members of a card's
/// tool entry that are compared with the served tool's. A card may carry members of its own
/// vocabulary (`input_schema` in some deployed cards, vendor keys); those say nothing about
/// what `tools/list` serves and are not compared.
pub const TOOL_MEMBERS: [&str; 8] = [
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "execution",
    "_meta",
];

/// The marker SEP-1649 puts in place of a primitive list whose entries are known only at
/// runtime (`"tools": ["dynamic"]`).
pub const DYNAMIC: &str = "dynamic";

/// What a card says about its server's tools.
#[derive(Debug, Clone, PartialEq)]
pub enum CardTools {
    /// No tool list: no top-level `tools` member (SEP-2127's card), or one that is neither an
    /// array nor the string `"dynamic"`.
    NotListed,
    /// The tools are known only at runtime and none is listed: `"tools": ["dynamic"]`,
    /// `"tools": "dynamic"`, or `capabilities.tools.dynamic: true` without a tool array.
    Dynamic,
    /// A tool list.
    Listed(Listed),
}

/// A card's tool list.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The tools, in card order, at most [`MAX_CARD_TOOLS`].
    pub tools: Vec<CardTool>,
    /// How many tool entries the card has (the `"dynamic"` marker and unreadable entries
    /// aside).
    pub total: usize,
    /// Entries that are neither a name nor an object with a string `name`.
    pub unreadable: usize,
    /// Whether the card also says more tools may exist at runtime (`"dynamic"` among the
    /// entries, or `capabilities.tools.dynamic: true`): then a served tool the card does not
    /// list is no mismatch.
    pub dynamic: bool,
}

/// One tool a card lists.
#[derive(Debug, Clone, PartialEq)]
pub struct CardTool {
    /// Its name (lossy UTF-8: an unpaired surrogate reads as U+FFFD).
    pub name: String,
    /// The entry when it is an object (a definition); `None` for a bare name.
    pub definition: Option<Json>,
}

/// What a card lists about tools.
pub fn tools(card: &Json) -> CardTools {
    let capability_dynamic = card
        .get("capabilities")
        .and_then(|c| c.get("tools"))
        .and_then(|t| t.get("dynamic"))
        == Some(&Json::Bool(true));
    let entries = match card.get("tools") {
        Some(Json::Array(entries)) => entries,
        Some(Json::String(s)) if s.as_str() == Some(DYNAMIC) => return CardTools::Dynamic,
        _ if capability_dynamic => return CardTools::Dynamic,
        _ => return CardTools::NotListed,
    };
    let mut listed = Listed {
        tools: Vec::new(),
        total: 0,
        unreadable: 0,
        dynamic: capability_dynamic,
    };
    for entry in entries {
        let (name, definition) = match entry {
            Json::String(s) if s.as_str() == Some(DYNAMIC) => {
                listed.dynamic = true;
                continue;
            }
            Json::String(s) => (s.lossy(), None),
            Json::Object(_) => match entry.get("name") {
                Some(Json::String(s)) => (s.lossy(), Some(entry)),
                _ => {
                    listed.unreadable += 1;
                    continue;
                }
            },
            _ => {
                listed.unreadable += 1;
                continue;
            }
        };
        listed.total += 1;
        if listed.tools.len() < MAX_CARD_TOOLS {
            listed.tools.push(CardTool {
                name: name.into_owned(),
                definition: definition.cloned(),
            });
        }
    }
    if listed.total == 0 && listed.dynamic {
        return CardTools::Dynamic;
    }
    CardTools::Listed(listed)
}

/// How a card's tools compare with the tools served. Names are in UTF-16 order, cut to
/// [`NAME_MAX_CHARS`], at most [`MAX_CARD_TOOLS`] per list, with the totals beside them.
/// Written as JSON (camelCase members) where a `card-mismatch` change stores it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardComparison {
    /// Tools the card lists that were not served.
    pub only_card: Vec<String>,
    /// How many.
    pub only_card_total: usize,
    /// Tools served that the card does not list (always empty for a card that says its tools
    /// are dynamic, or lists more than [`MAX_CARD_TOOLS`]).
    pub only_served: Vec<String>,
    /// How many.
    pub only_served_total: usize,
    /// Tools in both whose members the card gives ([`TOOL_MEMBERS`]) differ from the served
    /// ones, compared canonically (RFC 8785, so member order and number spelling do not count).
    pub differing: Vec<CardDifference>,
    /// How many.
    pub differing_total: usize,
}

/// A tool the card and the endpoint both have, with different definitions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CardDifference {
    /// The tool's name.
    pub tool: String,
    /// The members that differ, in [`TOOL_MEMBERS`] order.
    pub members: Vec<&'static str>,
}

impl CardComparison {
    /// Whether the card and the served tools agree (no `card-mismatch`).
    pub fn is_empty(&self) -> bool {
        self.only_card_total == 0 && self.only_served_total == 0 && self.differing_total == 0
    }
}

/// Compare what a card lists with the tools the endpoint served. A card that lists no tools
/// (or only says they are dynamic) agrees with any set. Tools are matched by name; when a name
/// repeats, on the card or in the set, the first is compared. Only the card's first
/// [`MAX_CARD_TOOLS`] tools are compared.
pub fn compare(card: &CardTools, served: &ToolSet) -> CardComparison {
    let CardTools::Listed(listed) = card else {
        return CardComparison::default();
    };
    let mut out = CardComparison::default();
    // Name order; a stable sort keeps the first of a repeated name first, and dedup keeps it.
    let mut on_card: Vec<&CardTool> = listed.tools.iter().collect();
    on_card.sort_by(|a, b| json::utf16_cmp(&a.name, &b.name));
    on_card.dedup_by(|later, first| later.name == first.name);
    for t in &on_card {
        let Some(tool) = served.get(&t.name) else {
            push_capped(&mut out.only_card, &mut out.only_card_total, &t.name);
            continue;
        };
        let Some(definition) = &t.definition else {
            continue;
        };
        let members: Vec<&'static str> = TOOL_MEMBERS
            .into_iter()
            .filter(|m| {
                definition
                    .get(m)
                    .is_some_and(|given| !same_opt(Some(given), tool.get(m)))
            })
            .collect();
        if !members.is_empty() {
            out.differing_total += 1;
            if out.differing.len() < MAX_CARD_TOOLS {
                out.differing.push(CardDifference {
                    tool: text::cap(&t.name, NAME_MAX_CHARS),
                    members,
                });
            }
        }
    }
    // A served tool may be one of the card's tools past the cap: only a whole list is checked.
    if !listed.dynamic && listed.tools.len() == listed.total {
        let mut names: Vec<&str> = served.tools.iter().filter_map(|t| t.name()).collect();
        names.sort_by(|a, b| json::utf16_cmp(a, b));
        names.dedup();
        for n in names {
            if on_card
                .binary_search_by(|c| json::utf16_cmp(&c.name, n))
                .is_err()
            {
                push_capped(&mut out.only_served, &mut out.only_served_total, n);
            }
        }
    }
    out
}

/// Count `name` and list it, cut to [`NAME_MAX_CHARS`], while the list is under
/// [`MAX_CARD_TOOLS`].
fn push_capped(list: &mut Vec<String>, total: &mut usize, name: &str) {
    *total += 1;
    if list.len() < MAX_CARD_TOOLS {
        list.push(text::cap(name, NAME_MAX_CHARS));
    }
}
