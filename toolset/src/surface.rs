//! A server's surface beyond `tools/list`: what a model (or its user) also reads — prompts,
//! resources, resource templates, the `ui://` pages of MCP Apps (SEP-1865) that tools name, and
//! the Server Card (SEP-2127) its endpoint's origin publishes.
//!
//! [`RawSurface`] is the surface as observed: raw result texts exactly as received, per kind,
//! with the outcome of each listing. It is the one type the session core (`toolmark-mcp`, which
//! fills it), the crawler and the sandbox (which add the card) and the observation document
//! (`toolmark-observation`, which stores it) share; what it means is computed from it here.
//!
//! Pure, as the rest of the crate: nothing here fetches, stores or decides what to tell a client.

use serde::{Deserialize, Serialize};

pub mod app;
pub mod cache;
pub mod card;
pub mod diff;
pub mod items;

/// A listing status: the list was read completely.
pub const OK: &str = "ok";

/// A kind of the surface other than tools, by the name it has in documents, entries and
/// `/check` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `prompts/list` (`prompts`).
    Prompts,
    /// `resources/list` (`resources`).
    Resources,
    /// `resources/templates/list` (`resourceTemplates`).
    Templates,
    /// `resources/read` of each `ui://` resource the tools name (`appPages`).
    AppPages,
    /// The Server Card (`card`).
    Card,
}

impl Kind {
    /// Every kind, in the order they are observed and written.
    pub const ALL: [Kind; 5] = [
        Kind::Prompts,
        Kind::Resources,
        Kind::Templates,
        Kind::AppPages,
        Kind::Card,
    ];

    /// The kind's name in documents, entries and requests.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::Templates => "resourceTemplates",
            Kind::AppPages => "appPages",
            Kind::Card => "card",
        }
    }

    /// The kind named `name` ([`Kind::as_str`]).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// One paged list (`prompts/list`, `resources/list`, `resources/templates/list`) as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawList {
    /// [`OK`] when every page was read; otherwise the named reason the listing stopped
    /// (`error` for a JSON-RPC error answer, `protocol`, `partial`, `too-large`, or the
    /// transport's own status: `timeout`, `http-500`, …).
    pub status: String,
    /// Why, for any status but [`OK`] (`""` for it).
    pub detail: String,
    /// The exact text of each result read, in order (kept when the listing stopped too).
    pub pages: Vec<String>,
}

/// One `resources/read` of a `ui://` resource a tool names (`_meta.ui.resourceUri`, or the
/// legacy flat `_meta["ui/resourceUri"]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawRead {
    /// The URI read, exactly as the tool named it.
    pub uri: String,
    /// [`OK`], or why there is no result (as [`RawList::status`]; `skipped` for a URI past a
    /// limit, not read).
    pub status: String,
    /// Why, for any status but [`OK`].
    pub detail: String,
    /// The exact text of the `resources/read` result, when one was read.
    pub result: Option<String>,
}

/// The Server Card as fetched from the endpoint's origin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawCard {
    /// The URL that answered with the card, or the last one asked.
    pub url: String,
    /// [`OK`] when a card was read; `absent` when no location served one (404, 405, 410);
    /// otherwise the named reason (`http-500`, `not-json`, `too-large`, `timeout`, …).
    pub status: String,
    /// Why, for any status but [`OK`].
    pub detail: String,
    /// The card's exact text, when it was read.
    pub body: Option<String>,
}

/// A server's surface as observed. A kind that is `None` was not listed because the server
/// does not declare the capability (`prompts`, `resources`) in its handshake; an observation
/// made without the surface has no `RawSurface` at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawSurface {
    /// `prompts/list`.
    pub prompts: Option<RawList>,
    /// `resources/list`.
    pub resources: Option<RawList>,
    /// `resources/templates/list`.
    pub resource_templates: Option<RawList>,
    /// `resources/read` of every `ui://` URI the tools name, in the order first named
    /// (each once).
    pub app_pages: Vec<RawRead>,
    /// The Server Card, when one was asked for (remotes only).
    pub card: Option<RawCard>,
}

impl RawSurface {
    /// The list of kind `kind`, for the three paged kinds.
    pub fn list(&self, kind: Kind) -> Option<&RawList> {
        match kind {
            Kind::Prompts => self.prompts.as_ref(),
            Kind::Resources => self.resources.as_ref(),
            Kind::Templates => self.resource_templates.as_ref(),
            Kind::AppPages | Kind::Card => None,
        }
    }

    /// Heap bytes held of what servers sent (for memory budgets), by capacity.
    pub fn held_bytes(&self) -> usize {
        let list = |l: &Option<RawList>| {
            l.as_ref().map_or(0, |l| {
                l.pages.iter().map(String::capacity).sum::<usize>() + l.detail.capacity()
            })
        };
        list(&self.prompts)
            + list(&self.resources)
            + list(&self.resource_templates)
            + self
                .app_pages
                .iter()
                .map(|r| r.uri.capacity() + r.result.as_ref().map_or(0, String::capacity))
                .sum::<usize>()
            + self.card.as_ref().map_or(0, |c| {
                c.url.capacity() + c.body.as_ref().map_or(0, String::capacity)
            })
    }
}

/// What an observation says of one kind: read completely (its digest and how many entries),
/// or the status it was not read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindDigest {
    /// Read completely.
    Read {
        /// The kind's `toolmark/1` digest ([`items::Items::digest`]; the card's
        /// [`card::digest`]).
        digest: crate::Sri,
        /// Entries (prompts, resources, templates, page contents; 1 for a card).
        count: u64,
    },
    /// Not read completely: the listing's status (or `protocol` when what was read does not
    /// parse).
    Unread(String),
}

/// Each kind observed in `raw`, in [`Kind::ALL`] order: the paged kinds the server declared,
/// the app pages when its tools name any (read only when every page named was read), and the
/// card when one was asked for. The one definition of what an entry's `surface` holds and what
/// `/check` compares.
pub fn digests(raw: &RawSurface) -> Vec<(Kind, KindDigest)> {
    let mut out = Vec::new();
    for kind in [Kind::Prompts, Kind::Resources, Kind::Templates] {
        let Some(list) = raw.list(kind) else { continue };
        let d = if list.status != OK {
            KindDigest::Unread(list.status.clone())
        } else {
            match items::Items::of_list(kind, list) {
                Ok(items) => KindDigest::Read {
                    digest: items.digest(),
                    count: items.len() as u64,
                },
                Err(_) => KindDigest::Unread("protocol".into()),
            }
        };
        out.push((kind, d));
    }
    if !raw.app_pages.is_empty() {
        let d = match raw.app_pages.iter().find(|r| r.status != OK) {
            Some(unread) => KindDigest::Unread(unread.status.clone()),
            None => match items::Items::of_reads(&raw.app_pages) {
                Ok(items) => KindDigest::Read {
                    digest: items.digest(),
                    count: items.len() as u64,
                },
                Err(_) => KindDigest::Unread("protocol".into()),
            },
        };
        out.push((Kind::AppPages, d));
    }
    if let Some(c) = &raw.card {
        let d = match (&c.body, c.status == OK) {
            (Some(body), true) => match card::digest(body) {
                Ok(digest) => KindDigest::Read { digest, count: 1 },
                Err(_) => KindDigest::Unread("not-json".into()),
            },
            _ => KindDigest::Unread(c.status.clone()),
        };
        out.push((Kind::Card, d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(status: &str, pages: &[&str]) -> Option<RawList> {
        Some(RawList {
            status: status.into(),
            detail: String::new(),
            pages: pages.iter().map(|p| (*p).to_owned()).collect(),
        })
    }

    #[test]
    fn each_kind_read_is_digested_and_each_unread_keeps_its_status() {
        let raw = RawSurface {
            prompts: list(OK, &[r#"{"prompts":[{"name":"b"},{"name":"a"}]}"#]),
            resources: list("partial", &[r#"{"resources":[]}"#]),
            resource_templates: list(OK, &[r#"{"resourceTemplates":7}"#]),
            app_pages: vec![RawRead {
                uri: "ui://x".into(),
                status: OK.into(),
                detail: String::new(),
                result: Some(r#"{"contents":[{"uri":"ui://x","text":"<p>"}]}"#.into()),
            }],
            card: Some(RawCard {
                url: "https://x/.well-known/mcp/server-card.json".into(),
                status: "absent".into(),
                detail: "HTTP 404".into(),
                body: None,
            }),
        };
        let d = digests(&raw);
        let kinds: Vec<Kind> = d.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kinds,
            [
                Kind::Prompts,
                Kind::Resources,
                Kind::Templates,
                Kind::AppPages,
                Kind::Card
            ]
        );
        let prompts = items::Items::of_list(Kind::Prompts, raw.prompts.as_ref().unwrap()).unwrap();
        assert_eq!(
            d[0].1,
            KindDigest::Read {
                digest: prompts.digest(),
                count: 2
            }
        );
        assert_eq!(d[1].1, KindDigest::Unread("partial".into()));
        assert_eq!(d[2].1, KindDigest::Unread("protocol".into()));
        assert!(matches!(d[3].1, KindDigest::Read { count: 1, .. }));
        assert_eq!(d[4].1, KindDigest::Unread("absent".into()));
        assert!(digests(&RawSurface::default()).is_empty());
    }

    #[test]
    fn app_pages_are_unread_when_any_named_page_was_not_read() {
        let raw = RawSurface {
            app_pages: vec![
                RawRead {
                    uri: "ui://a".into(),
                    status: OK.into(),
                    detail: String::new(),
                    result: Some(r#"{"contents":[]}"#.into()),
                },
                RawRead {
                    uri: "ui://b".into(),
                    status: "skipped".into(),
                    detail: String::new(),
                    result: None,
                },
            ],
            ..RawSurface::default()
        };
        assert_eq!(
            digests(&raw),
            [(Kind::AppPages, KindDigest::Unread("skipped".into()))]
        );
    }

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.as_str()), Some(k));
        }
        assert_eq!(Kind::from_name("tools"), None);
    }
}
