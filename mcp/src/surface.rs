//! The surface beyond `tools/list`, read in the session that listed the tools: `prompts/list`,
//! `resources/list` and `resources/templates/list` when the server's handshake declares the
//! capability, and `resources/read` of the `ui://` pages the tools name (MCP Apps, SEP-1865) —
//! never any other resource, never `prompts/get` or `tools/call`.
//!
//! Each listing is kept as it is read in [`Listing::surface`], its status first written as
//! [`UNFINISHED`], so a caller that drops the future at its deadline still has every page read
//! and an honest status for what was not finished. A failure of one kind never ends the others
//! or the session: the tool listing is already complete.

use std::collections::HashSet;

use serde_json::{Value, json};
use toolmark_toolset::json::Json;
use toolmark_toolset::surface::{self, Kind, RawList, RawRead, RawSurface};

use crate::jsonrpc;
use crate::session::{Answer, Failure, Listing, Session};
use crate::transport::Transport;

/// The status a kind carries while it is being read: what stays of it when the caller's
/// deadline ends the surface before the kind is done.
pub const UNFINISHED: &str = "timeout";

/// A `ui://` URI past [`crate::SurfaceLimits::max_reads`]: named, not read.
pub const SKIPPED: &str = "skipped";

/// What the server's handshake declares (its result's `capabilities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    /// `capabilities.prompts` is present.
    pub prompts: bool,
    /// `capabilities.resources` is present.
    pub resources: bool,
}

impl Declared {
    /// Read from the exact text of an `initialize` (or `server/discover`) result: a capability
    /// is declared when its member is present and not `null` (the spec's "presence declares").
    pub fn of(handshake: Option<&str>) -> Declared {
        let Some(caps) = handshake
            .and_then(|h| serde_json::from_str::<Value>(h).ok())
            .and_then(|v| v.get("capabilities").cloned())
        else {
            return Declared::default();
        };
        let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
        Declared {
            prompts: has("prompts"),
            resources: has("resources"),
        }
    }
}

/// The method, the result's array member and the slot in [`RawSurface`] of a paged kind.
fn paged(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Prompts => ("prompts/list", "prompts"),
        Kind::Resources => ("resources/list", "resources"),
        Kind::Templates => ("resources/templates/list", "resourceTemplates"),
        Kind::AppPages | Kind::Card => unreachable!("not a paged kind"),
    }
}

fn slot(surface: &mut RawSurface, kind: Kind) -> &mut Option<RawList> {
    match kind {
        Kind::Prompts => &mut surface.prompts,
        Kind::Resources => &mut surface.resources,
        Kind::Templates => &mut surface.resource_templates,
        Kind::AppPages | Kind::Card => unreachable!("not a paged kind"),
    }
}

fn unfinished() -> RawList {
    RawList {
        status: UNFINISHED.into(),
        detail: "the observation's deadline for the surface passed before this list was read"
            .into(),
        pages: Vec::new(),
    }
}

impl Listing {
    fn surface_mut(&mut self) -> &mut RawSurface {
        self.surface.get_or_insert_with(RawSurface::default)
    }
}

impl<'a> Session<'a> {
    /// After a complete [`Session::list_tools`] over `transport`: list the surface the
    /// handshake declares and read the `ui://` pages in `uris` (the tools' own, in the order
    /// first named; [`crate::SurfaceLimits::max_reads`] of them, the rest recorded as
    /// [`SKIPPED`]). `transport_status` names a transport failure as the caller names its
    /// outcomes (`(status, detail)`). Everything read is in [`Session::listing`]'s `surface`.
    pub async fn list_surface<T: Transport>(
        &mut self,
        transport: &mut T,
        uris: &[String],
        transport_status: impl Fn(&T::Error) -> (String, String),
    ) {
        let declared = Declared::of(self.listing.initialize.as_deref());
        let mut kinds = Vec::new();
        if declared.prompts {
            kinds.push(Kind::Prompts);
        }
        if declared.resources {
            kinds.extend([Kind::Resources, Kind::Templates]);
        }
        // Everything this call will read is marked unfinished first.
        let surface = self.listing.surface_mut();
        for &kind in &kinds {
            *slot(surface, kind) = Some(unfinished());
        }
        surface.app_pages = uris
            .iter()
            .enumerate()
            .map(|(i, uri)| {
                let skipped = i >= self.limits.surface.max_reads;
                RawRead {
                    uri: uri.clone(),
                    status: if skipped { SKIPPED } else { UNFINISHED }.into(),
                    detail: if skipped {
                        format!(
                            "more than {} ui:// pages named",
                            self.limits.surface.max_reads
                        )
                    } else {
                        unfinished().detail
                    },
                    result: None,
                }
            })
            .collect();
        for kind in kinds {
            let outcome = self.list_kind(transport, kind).await;
            let list = slot(self.listing.surface_mut(), kind)
                .as_mut()
                .expect("marked above");
            (list.status, list.detail) = match outcome {
                Ok(()) => (surface::OK.into(), String::new()),
                Err(f) => name(f, &transport_status),
            };
        }
        let reads = uris.len().min(self.limits.surface.max_reads);
        let mut bytes = 0usize;
        for (i, uri) in uris.iter().take(reads).enumerate() {
            let outcome = self.read_page(transport, uri, &mut bytes).await;
            let read = &mut self.listing.surface_mut().app_pages[i];
            match outcome {
                Ok(text) => {
                    read.status = surface::OK.into();
                    read.detail.clear();
                    read.result = Some(text);
                }
                Err(f) => (read.status, read.detail) = name(f, &transport_status),
            }
        }
    }

    /// Every page of one paged kind, into its [`RawList`] as read.
    async fn list_kind<T: Transport>(
        &mut self,
        t: &mut T,
        kind: Kind,
    ) -> Result<(), Failure<T::Error>> {
        let (method, member) = paged(kind);
        let limits = self.limits.surface.clone();
        let meta = self.meta.clone();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let (mut items, mut bytes) = (0usize, 0usize);
        loop {
            let params = cursor
                .as_ref()
                .map_or(json!({}), |c| json!({ "cursor": c }));
            let answer = self.call(t, method, params, meta.as_ref()).await?;
            let result = answer_text(method, answer)?;
            let next = {
                let _parse = t.charge(result.as_bytes())?;
                let value = jsonrpc::value(&result)
                    .map_err(|e| Failure::Protocol(format!("{method} result: {e}")))?;
                let count = value
                    .get(member)
                    .and_then(Json::as_array)
                    .ok_or_else(|| {
                        Failure::Protocol(format!("{method} result has no {member} array"))
                    })?
                    .len();
                items += count;
                bytes += result.len();
                next_cursor(&value).map_err(|()| {
                    Failure::Protocol(format!("{method} nextCursor is not a string"))
                })?
            };
            if items > limits.max_items {
                return Err(Failure::TooLarge(format!(
                    "more than {} {member}",
                    limits.max_items
                )));
            }
            if bytes > limits.max_bytes {
                return Err(Failure::TooLarge(format!(
                    "{member} larger than {} bytes",
                    limits.max_bytes
                )));
            }
            let list = slot(self.listing.surface_mut(), kind)
                .as_mut()
                .expect("marked by list_surface");
            list.pages.push(result);
            let pages = list.pages.len();
            let Some(next) = next else {
                return Ok(());
            };
            if !seen.insert(next.clone()) {
                return Err(Failure::Partial(format!(
                    "{method} cursor repeated after {pages} pages"
                )));
            }
            if pages >= limits.max_pages {
                return Err(Failure::Partial(format!(
                    "more than {} {method} pages",
                    limits.max_pages
                )));
            }
            cursor = Some(next);
        }
    }

    /// One `resources/read` of a `ui://` page: its result's exact text, when it is an object
    /// with a `contents` array and within the size limits.
    async fn read_page<T: Transport>(
        &mut self,
        t: &mut T,
        uri: &str,
        total: &mut usize,
    ) -> Result<String, Failure<T::Error>> {
        const METHOD: &str = "resources/read";
        let limits = self.limits.surface.clone();
        let meta = self.meta.clone();
        t.name_next(uri);
        let answer = self
            .call(t, METHOD, json!({ "uri": uri }), meta.as_ref())
            .await?;
        let result = answer_text(METHOD, answer)?;
        if result.len() > limits.max_read_bytes {
            return Err(Failure::TooLarge(format!(
                "resources/read result larger than {} bytes",
                limits.max_read_bytes
            )));
        }
        *total += result.len();
        if *total > limits.max_bytes {
            return Err(Failure::TooLarge(format!(
                "ui:// pages larger than {} bytes together",
                limits.max_bytes
            )));
        }
        {
            let _parse = t.charge(result.as_bytes())?;
            let value = jsonrpc::value(&result)
                .map_err(|e| Failure::Protocol(format!("{METHOD} result: {e}")))?;
            if value.get("contents").and_then(Json::as_array).is_none() {
                return Err(Failure::Protocol(format!(
                    "{METHOD} result has no contents array"
                )));
            }
        }
        Ok(result)
    }
}

/// A result's text, or the JSON-RPC error as a failure of kind `error`.
fn answer_text<E>(method: &str, answer: Answer) -> Result<String, Failure<E>> {
    match answer {
        Answer::Result(r) => Ok(r),
        Answer::Error { code, message } => Err(Failure::NotSpoken(format!(
            "{method}: JSON-RPC error {code}: {message}"
        ))),
    }
}

/// `nextCursor` as [`crate::Continuation`] reads it: absent, `null` or `""` end the list.
fn next_cursor(value: &Json) -> Result<Option<String>, ()> {
    match value.get("nextCursor") {
        None | Some(Json::Null) => Ok(None),
        Some(c) => match c.as_str() {
            Some("") => Ok(None),
            Some(s) => Ok(Some(s.to_owned())),
            None => Err(()),
        },
    }
}

/// A surface failure as `(status, detail)`: a JSON-RPC error answer is `error`; the session's
/// own outcomes keep their names; a transport's are named by the caller.
fn name<E>(f: Failure<E>, transport: impl Fn(&E) -> (String, String)) -> (String, String) {
    match f {
        Failure::Transport(e) => transport(&e),
        Failure::NotSpoken(d) => ("error".into(), d),
        Failure::Protocol(d) => ("protocol".into(), d),
        Failure::TooLarge(d) => ("too-large".into(), d),
        Failure::Partial(d) => ("partial".into(), d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_is_declared_by_its_presence() {
        let d = Declared::of(Some(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{"subscribe":true}}}"#,
        ));
        assert_eq!(
            d,
            Declared {
                prompts: true,
                resources: true
            }
        );
        let none = Declared::of(Some(r#"{"capabilities":{"tools":{},"prompts":null}}"#));
        assert_eq!(none, Declared::default());
        assert_eq!(Declared::of(Some("not json")), Declared::default());
        assert_eq!(Declared::of(None), Declared::default());
    }
}
