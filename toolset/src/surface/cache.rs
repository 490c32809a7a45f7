//! The caching hints of a listing (MCP 2026-07-28, SEP-2549, "Caching"): `ttlMs` and
//! `cacheScope` on the results of `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` and `resources/read`.
//!
//! Per the specification (`server/utilities/caching`), `ttlMs` is a non-negative integer of
//! milliseconds the client MAY consider the result fresh (0: immediately stale) and
//! `cacheScope` is `"public"` (the same for every caller; shared caches MAY serve it across
//! authorization contexts) or `"private"` (only within one authorization context). A listing of
//! several pages has a hint per page; [`CacheHints::of_pages`] folds them into what holds for the
//! whole listing. `private` matters to a log: it says the server may list differently to other
//! callers.

use crate::json::{self, Json};
use crate::model;

/// The `cacheScope` of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `"public"`: the result is the same for every caller.
    Public,
    /// `"private"`: the result may differ between authorization contexts.
    Private,
}

/// The largest `ttlMs` read as a number of milliseconds: 2^53−1, the largest integer every
/// JSON reader (JavaScript's included) holds exactly. A value above it names no duration a
/// client could have honoured (285,000 years) and is counted as ignored.
pub const MAX_TTL_MS: u64 = 9_007_199_254_740_991;

/// What a listing's pages say about caching.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheHints {
    /// The smallest `ttlMs` over the pages that have a readable one (a listing is fresh only
    /// while every page is).
    pub ttl_ms: Option<u64>,
    /// [`Scope::Private`] if any page says `private`; [`Scope::Public`] if every page that has
    /// a readable scope says `public`; `None` if none has one.
    pub scope: Option<Scope>,
    /// A page was not a JSON object, so its hints, if any, were not read.
    pub unreadable: bool,
    /// How many hints were present but not of the specified type or value (a `ttlMs` that is
    /// not a non-negative integer up to [`MAX_TTL_MS`], a `cacheScope` other than `"public"`
    /// or `"private"`): ignored, and counted here.
    pub ignored: usize,
}

impl CacheHints {
    /// The hints of a listing's result texts (each a result object, or a JSON-RPC response
    /// whose `result` is one; a byte order mark is skipped).
    pub fn of_pages<S: AsRef<str>>(pages: &[S]) -> CacheHints {
        let mut hints = CacheHints::default();
        let mut public = false;
        for page in pages {
            let Some(doc) = object_of(page.as_ref()) else {
                hints.unreadable = true;
                continue;
            };
            let result = match (doc.get("jsonrpc"), doc.get("result")) {
                (Some(_), Some(result @ Json::Object(_))) => result,
                _ => &doc,
            };
            if let Some(v) = result.get("ttlMs") {
                match ttl_of(v) {
                    Some(ms) => hints.ttl_ms = Some(hints.ttl_ms.map_or(ms, |t| t.min(ms))),
                    None => hints.ignored += 1,
                }
            }
            match result.get("cacheScope").map(Json::as_str) {
                None => {}
                Some(Some("private")) => hints.scope = Some(Scope::Private),
                Some(Some("public")) => public = true,
                Some(_) => hints.ignored += 1,
            }
        }
        if public && hints.scope.is_none() {
            hints.scope = Some(Scope::Public);
        }
        hints
    }
}

/// A page parsed, when it is a JSON object.
fn object_of(page: &str) -> Option<Json> {
    let text = model::text_of(page.as_bytes()).ok()?;
    json::parse(text)
        .ok()
        .filter(|doc| doc.as_object().is_some())
}

/// A `ttlMs` value: a JSON number whose value is a non-negative integer (JSON Schema's
/// `integer`, so `1000`, `1000.0` and `1e3` alike) no larger than [`MAX_TTL_MS`].
fn ttl_of(v: &Json) -> Option<u64> {
    let Json::Number(token) = v else {
        return None;
    };
    let f: f64 = token.parse().ok()?;
    // `as` is exact here: f is a whole number within 2^53.
    (f >= 0.0 && f.fract() == 0.0 && f <= MAX_TTL_MS as f64).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_of_no_pages_has_no_hints() {
        assert_eq!(CacheHints::of_pages::<&str>(&[]), CacheHints::default());
    }
}
