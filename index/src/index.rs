//! The queryable index: one SQLite database (WAL, `STRICT` tables) holding runs, servers,
//! targets, observations and changes. This module holds the [`Index`] handle and its error;
//! the rest is split by concern, and re-exported here so `toolmark_index::index::…` paths keep
//! working:
//!
//! - [`crate::schema`]: the DDL, its version, opening a database.
//! - [`crate::rows`]: the typed rows queries return.
//! - [`crate::queries`]: every read (the one target search, changes, counts, the current tool
//!   set verified against the indexed digest). The database connection is private to the
//!   crate: callers get typed functions, never SQL.
//! - `derive` (private): deriving observation and change rows from the log and the blobs
//!   ([`Index::catch_up`], [`Index::rebuild`]).

use rusqlite::Connection;
use toolmark_log::LogError;
use toolmark_log::entry::EntryError;

use crate::blobs::BlobError;
use crate::document::DocumentError;

pub use crate::queries::{
    ChangeQuery, CrawlHint, TargetFilter, TargetPage, TargetState, TargetSummary, ToolSetRef,
    VerifiedToolSet,
};
pub use crate::rows::{ChangeRow, ObservationRow, RunRow, ServerRow, TargetRow};
pub use crate::schema::SCHEMA_VERSION;

/// Most rows a list query returns, whatever limit is asked for.
pub const MAX_QUERY_ROWS: u32 = 1_000;

/// What can go wrong with the index or recording.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// SQLite failed.
    #[error("index database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// The log failed.
    #[error("log: {0}")]
    Log(#[from] LogError),
    /// A log entry did not decode.
    #[error("log entry {index}: {source}")]
    Entry {
        /// Its index.
        index: u64,
        /// Why.
        source: EntryError,
    },
    /// The blob store failed (including a corrupted blob).
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// A stored observation document did not decode.
    #[error("observation document {sri}: {source}")]
    Document {
        /// The blob's name.
        sri: String,
        /// Why.
        source: DocumentError,
    },
    /// An observation document could not be written.
    #[error("writing an observation document: {0}")]
    Encode(DocumentError),
    /// A stored document holds no tool set that can be read where the index records one.
    #[error("entry {entry}: its document {sri} holds no readable tool set")]
    NoToolSet {
        /// The entry's index.
        entry: u64,
        /// The document's name.
        sri: String,
    },
    /// A stored tool set's full digest is not the one its entry and the index record.
    #[error(
        "entry {entry}: the tool set of document {sri} has full digest {found}, the index says {indexed}"
    )]
    ToolSetDigest {
        /// The entry's index.
        entry: u64,
        /// The document's name.
        sri: String,
        /// The digest of the tool set read.
        found: String,
        /// The digest the index (and the entry) record.
        indexed: String,
    },
    /// A log entry names a blob that is not stored.
    #[error("log entry {entry} names blob {sri}, which is not stored")]
    MissingBlob {
        /// The entry's index.
        entry: u64,
        /// The blob's name.
        sri: String,
    },
    /// The database has a schema version this code does not know.
    #[error("index schema version {found:?} is not {SCHEMA_VERSION}")]
    Schema {
        /// What the database says.
        found: String,
    },
    /// The index, the log and the blobs disagree.
    #[error("inconsistent index: {0}")]
    Inconsistent(String),
    /// A published log this index follows could not be read, or what it serves does not
    /// extend the tree the index verified (a fork, a shrink, a tampered bundle): nothing of it
    /// was indexed.
    #[error("following the log: {0}")]
    Follow(String),
    /// An index snapshot was refused (it failed a check) or could not be published.
    #[error("index snapshot: {0}")]
    Snapshot(String),
    /// A caller passed something unusable.
    #[error("invalid input: {0}")]
    Invalid(String),
    /// JSON serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

/// The index database. Its connection is private to the crate: reads are the typed
/// functions of [`crate::queries`], writes those of the derivation ([`Index::catch_up`]) and [`crate::Recorder`].
pub struct Index {
    pub(crate) conn: Connection,
}

/// The version of the [`endpoint_key`] rules the `targets.endpoint_key` column was computed
/// with, kept in `meta.endpoint_keys`: a writable [`Index::open`] of a database whose keys were
/// computed otherwise computes them again (version 1 dropped the query; 2 keeps it).
pub const ENDPOINT_KEY_RULES: &str = "endpoint-key/2";

/// An endpoint split the way it is matched ([`endpoint_key`]): for an `http(s)` URL its
/// normalised scheme, host, port and path (`base`) and its query; anything else whole, as its
/// `base`, with no query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointKey {
    base: String,
    query: Option<String>,
    url: bool,
}

impl EndpointKey {
    /// Split `endpoint`: for an `http(s)` URL with a host, the scheme and host lower-cased, the
    /// default port dropped, userinfo and fragment dropped, the path without trailing slashes (a
    /// bare host keeps no path), and the query exactly as the URL parser (WHATWG URL)
    /// serialises it — parameter order, case, repeats and percent-escapes as written, the
    /// characters the standard escapes in a query (space, `"`, `<`, `>`, `'`, non-ASCII)
    /// escaped — with an empty query (`?` alone) read as none. `npm:<name>` is kept as is;
    /// `pypi:<name>` is normalised as PEP 503 does (lower case, runs of `-`, `_`, `.` become one
    /// `-`). Anything else is kept whole (trimmed).
    pub fn of(endpoint: &str) -> EndpointKey {
        let endpoint = endpoint.trim();
        let whole = |base: String| EndpointKey {
            base,
            query: None,
            url: false,
        };
        if let Some(name) = endpoint.strip_prefix("pypi:") {
            let mut out = String::from("pypi:");
            let mut dash = false;
            for c in name.chars() {
                if matches!(c, '-' | '_' | '.') {
                    dash = true;
                } else {
                    if dash && out.len() > 5 {
                        out.push('-');
                    }
                    dash = false;
                    out.extend(c.to_lowercase());
                }
            }
            return whole(out);
        }
        match url::Url::parse(endpoint) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
                let mut base = format!("{}://{}", u.scheme(), u.host_str().unwrap_or(""));
                if let Some(port) = u.port() {
                    base.push_str(&format!(":{port}"));
                }
                base.push_str(u.path().trim_end_matches('/'));
                EndpointKey {
                    base,
                    query: u.query().filter(|q| !q.is_empty()).map(str::to_owned),
                    url: true,
                }
            }
            _ => whole(endpoint.to_owned()),
        }
    }

    /// The whole key: the base, then `?` and the query when there is one.
    pub fn key(&self) -> String {
        match &self.query {
            Some(q) => format!("{}?{q}", self.base),
            None => self.base.clone(),
        }
    }

    /// The normalised scheme, host, port and path of a URL (all of anything else).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The query, when a URL has a non-empty one.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// Whether this is an `http(s)` URL without a query: asked about, it stands for every target
    /// at its base, whatever their queries (a client that strips queries, as WARDEN does,
    /// asks so).
    pub fn is_bare_url(&self) -> bool {
        self.url && self.query.is_none()
    }
}

/// The form endpoints are matched in (`/check`, lookups), [`EndpointKey::key`]: for an
/// `http(s)` URL the scheme and host lower-cased, the default port, userinfo and fragment
/// dropped, the path without trailing slashes, and the query kept
/// (`https://Example.COM:443/mcp/?login#y` → `https://example.com/mcp?login`); `pypi:` names
/// PEP 503-normalised; anything else unchanged ([`EndpointKey::of`] says exactly how).
pub fn endpoint_key(endpoint: &str) -> String {
    EndpointKey::of(endpoint).key()
}

#[cfg(test)]
mod key_tests {
    use super::{EndpointKey, endpoint_key};

    fn same(a: &str, b: &str) {
        assert_eq!(endpoint_key(a), endpoint_key(b), "{a} vs {b}");
    }

    fn apart(a: &str, b: &str) {
        assert_ne!(endpoint_key(a), endpoint_key(b), "{a} vs {b}");
    }

    #[test]
    fn endpoint_keys() {
        for (a, b) in [
            (
                "https://Example.COM:443/mcp/?x=1#f",
                "https://example.com/mcp?x=1",
            ),
            ("https://example.com", "https://example.com"),
            ("https://example.com/", "https://example.com"),
            ("https://example.com/?login", "https://example.com?login"),
            ("HTTP://u:p@example.com:80/a//", "http://example.com/a"),
            (
                "https://example.com:8443/MCP",
                "https://example.com:8443/MCP",
            ),
            ("pypi:Mcp_Server.Time", "pypi:mcp-server-time"),
            ("npm:@scope/Name", "npm:@scope/Name"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(endpoint_key(a), b, "{a}");
        }
    }

    #[test]
    fn scheme_and_host_case_do_not_matter() {
        same("HTTPS://HuggingFace.CO/mcp", "https://huggingface.co/mcp");
    }

    #[test]
    fn the_path_case_matters() {
        apart("https://example.com/MCP", "https://example.com/mcp");
    }

    #[test]
    fn the_default_port_does_not_matter_another_port_does() {
        same("https://example.com:443/mcp", "https://example.com/mcp");
        same("http://example.com:80/mcp", "http://example.com/mcp");
        apart("https://example.com:8443/mcp", "https://example.com/mcp");
    }

    #[test]
    fn trailing_slashes_do_not_matter_before_a_query_either() {
        same("https://example.com/mcp//", "https://example.com/mcp");
        same(
            "https://example.com/mcp/?login",
            "https://example.com/mcp?login",
        );
    }

    #[test]
    fn fragment_and_userinfo_do_not_matter() {
        same("https://example.com/mcp#tools", "https://example.com/mcp");
        same(
            "https://example.com/mcp?login#x",
            "https://example.com/mcp?login",
        );
        same("https://user:pw@example.com/mcp", "https://example.com/mcp");
    }

    #[test]
    fn the_query_matters() {
        apart(
            "https://huggingface.co/mcp?login",
            "https://huggingface.co/mcp",
        );
        apart("https://example.com/mcp?a=1", "https://example.com/mcp?a=2");
        let k = EndpointKey::of("https://huggingface.co/mcp/?login#x");
        assert_eq!(
            (k.base(), k.query(), k.is_bare_url()),
            ("https://huggingface.co/mcp", Some("login"), false)
        );
        assert!(EndpointKey::of("https://huggingface.co/mcp").is_bare_url());
        // A package is never a bare URL: it stands for itself only.
        assert!(!EndpointKey::of("npm:@scope/name").is_bare_url());
    }

    #[test]
    fn the_query_is_compared_as_written_order_case_and_repeats_included() {
        apart(
            "https://example.com/mcp?a=1&b=2",
            "https://example.com/mcp?b=2&a=1",
        );
        apart(
            "https://example.com/mcp?Login",
            "https://example.com/mcp?login",
        );
        apart(
            "https://example.com/mcp?a=1&a=1",
            "https://example.com/mcp?a=1",
        );
        apart(
            "https://example.com/mcp?a=%2F",
            "https://example.com/mcp?a=%2f",
        );
        apart(
            "https://example.com/mcp?a=%2F",
            "https://example.com/mcp?a=/",
        );
    }

    #[test]
    fn characters_the_url_standard_escapes_in_a_query_are_compared_escaped() {
        same(
            "https://example.com/mcp?q=a b",
            "https://example.com/mcp?q=a%20b",
        );
        same(
            "https://example.com/mcp?q=é",
            "https://example.com/mcp?q=%C3%A9",
        );
        same(
            "https://example.com/mcp?q='",
            "https://example.com/mcp?q=%27",
        );
    }

    #[test]
    fn an_empty_query_is_no_query() {
        same("https://example.com/mcp?", "https://example.com/mcp");
        same("https://example.com/mcp?#x", "https://example.com/mcp");
        assert!(EndpointKey::of("https://example.com/mcp?").is_bare_url());
    }
}
