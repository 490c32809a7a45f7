//! The entries of one kind of the surface, parsed, and the kind's `toolmark/1` digest.
//!
//! A paged list (`prompts/list`, `resources/list`, `resources/templates/list`) is read page by
//! page: each page is a result object holding the kind's array (`prompts`, `resources`,
//! `resourceTemplates`), parsed with the crate's strict reader exactly as `ToolSet::parse`
//! reads a `tools/list` result (BOM skipped, RFC 8259 only, [`crate::json::MAX_DEPTH`] levels, a
//! repeated member's last value, a JSON-RPC response's `result` unwrapped) and with every
//! entry's exact text kept. The app pages are the `contents` of each `resources/read` of a
//! `ui://` URI that was read.
//!
//! The per-kind digest is the full digest's definition (`crate::full`, docs/digests.md) with
//! another key member: entries of any shape, each canonicalised with RFC 8785 (ECMAScript
//! numbers), sorted by the string key ([`key_member`]; entries without one first) in UTF-16
//! order, ties by canonical bytes, and the SRI of the SHA-256 of the sorted array.

use super::{Kind, OK, RawList, RawRead};
use crate::full;
use crate::json::{Json, JsonError};
use crate::model::{self, Listed};
use crate::sri::Sri;

/// The member entries of `kind` are matched and sorted by: `name` for prompts, `uri` for
/// resources and app pages, `uriTemplate` for templates; `None` for the card (one document,
/// not a list).
pub fn key_member(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Prompts => Some("name"),
        Kind::Resources | Kind::AppPages => Some("uri"),
        Kind::Templates => Some("uriTemplate"),
        Kind::Card => None,
    }
}

/// The array member of a page of `kind` that holds its entries; `None` for the card.
pub fn list_member(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Prompts => Some("prompts"),
        Kind::Resources => Some("resources"),
        Kind::Templates => Some("resourceTemplates"),
        Kind::AppPages => Some("contents"),
        Kind::Card => None,
    }
}

/// One entry exactly as sent: the parsed view and its source text, byte for byte (as
/// `model::Tool`). It need not be an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The entry, parsed.
    pub value: Json,
    /// The entry's JSON text as it appeared in the page.
    pub raw: Box<str>,
}

impl Item {
    /// A member of the entry, when it is an object.
    pub fn get(&self, member: &str) -> Option<&Json> {
        self.value.get(member)
    }

    /// A member of the entry when it is a string of valid UTF-8.
    pub fn get_str(&self, member: &str) -> Option<&str> {
        self.get(member).and_then(Json::as_str)
    }
}

/// The parsed entries of one kind, in the order they were sent (pages in order).
#[derive(Debug, Clone, PartialEq)]
pub struct Items {
    kind: Kind,
    key: &'static str,
    /// The entries.
    pub items: Vec<Item>,
}

/// Why a kind's pages do not give its entries. `page` is the index of the page in
/// [`RawList::pages`] or of the read in the slice given to [`Items::of_reads`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemsError {
    /// Asked for the entries of a kind that has none (the card).
    #[error("{0:?} is not a list")]
    NotAList(Kind),
    /// A page is not strict JSON.
    #[error("page {page}: {error}")]
    Json {
        /// Which page.
        page: usize,
        /// Why.
        error: JsonError,
    },
    /// A page is JSON but not a result object.
    #[error("page {page}: not a result object")]
    NotAnObject {
        /// Which page.
        page: usize,
    },
    /// A page's result has no array member of the kind's name.
    #[error("page {page}: no \"{member}\" member")]
    Missing {
        /// Which page.
        page: usize,
        /// The member looked for.
        member: &'static str,
    },
    /// A page's result has the member, but it is not an array.
    #[error("page {page}: \"{member}\" is not an array")]
    NotArray {
        /// Which page.
        page: usize,
        /// The member.
        member: &'static str,
    },
    /// A read whose status is [`OK`] holds no result.
    #[error("read {page}: status ok but no result")]
    NoResult {
        /// Which read.
        page: usize,
    },
}

impl Items {
    /// The entries of a paged list of `kind` (prompts, resources or templates): every entry of
    /// every page read, in order (a listing that stopped early gives the pages it read).
    pub fn of_list(kind: Kind, list: &RawList) -> Result<Items, ItemsError> {
        let (Some(member), Some(key)) = (list_member(kind), key_member(kind)) else {
            return Err(ItemsError::NotAList(kind));
        };
        if kind == Kind::AppPages {
            return Err(ItemsError::NotAList(kind));
        }
        let mut items = Vec::new();
        for (page, text) in list.pages.iter().enumerate() {
            read_page(text, member, page, &mut items)?;
        }
        Ok(Items { kind, key, items })
    }

    /// The app pages: every content entry of every [`OK`] read's `{"contents":[…]}` result, in
    /// the order of the reads (reads that failed or were skipped give none).
    pub fn of_reads(reads: &[RawRead]) -> Result<Items, ItemsError> {
        let mut items = Vec::new();
        for (page, read) in reads.iter().enumerate() {
            if read.status != OK {
                continue;
            }
            let Some(text) = &read.result else {
                return Err(ItemsError::NoResult { page });
            };
            read_page(text, "contents", page, &mut items)?;
        }
        Ok(Items {
            kind: Kind::AppPages,
            key: "uri",
            items,
        })
    }

    /// The card as one entry (its whole document), for [`super::diff::diff`] and
    /// [`super::diff::classify_kind`] of a card that changed: the card has no key, so the entry
    /// is unmatched, and the rule set reads its texts as it reads a new entry's. The digest of
    /// these entries ([`Items::digest`]) is not the card's ([`super::card::digest`]).
    pub fn of_card(body: &str) -> Result<Items, ItemsError> {
        let text =
            model::text_of(body.as_bytes()).map_err(|_| ItemsError::NotAnObject { page: 0 })?;
        let value =
            crate::json::parse(text).map_err(|error| ItemsError::Json { page: 0, error })?;
        Ok(Items {
            kind: Kind::Card,
            key: "",
            items: vec![Item {
                value,
                raw: text.into(),
            }],
        })
    }

    /// The kind these entries are of.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The member entries are keyed by ([`key_member`] of the kind).
    pub fn key_member(&self) -> &'static str {
        self.key
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The canonical bytes the kind's digest hashes.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        full::canonical_bytes_by(self.items.iter().map(|i| &i.value), self.key)
    }

    /// The kind's `toolmark/1` digest ([`full::PROFILE`]).
    pub fn digest(&self) -> Sri {
        full::digest_by(self.items.iter().map(|i| &i.value), self.key)
    }
}

/// Append the entries of the array `member` of the result object `text` to `items`.
fn read_page(
    text: &str,
    member: &'static str,
    page: usize,
    items: &mut Vec<Item>,
) -> Result<(), ItemsError> {
    // Skips a byte order mark; cannot fail otherwise, the text being UTF-8 already.
    let text = model::text_of(text.as_bytes()).map_err(|_| ItemsError::NotAnObject { page })?;
    match model::listed(text, member).map_err(|error| ItemsError::Json { page, error })? {
        Listed::Entries { entries, .. } => {
            items.extend(entries.into_iter().map(|(value, raw)| Item {
                value,
                raw: raw.into(),
            }));
            Ok(())
        }
        Listed::NotAnObject => Err(ItemsError::NotAnObject { page }),
        Listed::Missing => Err(ItemsError::Missing { page, member }),
        Listed::NotArray => Err(ItemsError::NotArray { page, member }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pages: &[&str]) -> RawList {
        RawList {
            status: OK.into(),
            detail: String::new(),
            pages: pages.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn the_card_has_no_entries() {
        assert_eq!(
            Items::of_list(Kind::Card, &list(&[])),
            Err(ItemsError::NotAList(Kind::Card))
        );
        assert_eq!(
            Items::of_list(Kind::AppPages, &list(&[])),
            Err(ItemsError::NotAList(Kind::AppPages))
        );
    }

    /// The card is one entry, its whole document, without a key: a changed card is one
    /// unmatched entry on each side.
    #[test]
    fn the_card_is_one_unkeyed_entry_of_its_whole_document() {
        let body = "\u{feff}{\"name\":\"io.example/a\",\"tools\":[\"x\"]}";
        let card = Items::of_card(body).unwrap();
        assert_eq!(card.kind(), Kind::Card);
        assert_eq!(card.len(), 1);
        assert_eq!(&*card.items[0].raw, &body[3..]);
        assert_eq!(card.items[0].get_str("name"), Some("io.example/a"));
        assert!(matches!(
            Items::of_card("{\"name\":1,}"),
            Err(ItemsError::Json { page: 0, .. })
        ));
    }

    #[test]
    fn every_kind_but_the_card_has_a_key_and_a_list_member() {
        for k in Kind::ALL {
            assert_eq!(key_member(k).is_some(), k != Kind::Card);
            assert_eq!(list_member(k).is_some(), k != Kind::Card);
        }
    }
}
