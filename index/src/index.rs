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

/// The form endpoints are matched in (`/check`, lookups): for an `http(s)` URL, the scheme and
/// host lower-cased, the default port dropped, userinfo, query and fragment dropped, and the
/// path without trailing slashes (`https://Example.COM:443/mcp/?x#y` → `https://example.com/mcp`;
/// a bare host keeps no path). `npm:<name>` is kept as is; `pypi:<name>` is normalised as PEP 503
/// does (lower case, runs of `-`, `_`, `.` become one `-`). Anything else is returned unchanged.
pub fn endpoint_key(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
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
        return out;
    }
    match url::Url::parse(endpoint) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            let mut out = format!("{}://{}", u.scheme(), u.host_str().unwrap_or(""));
            if let Some(port) = u.port() {
                out.push_str(&format!(":{port}"));
            }
            out.push_str(u.path().trim_end_matches('/'));
            out
        }
        _ => endpoint.to_owned(),
    }
}

#[cfg(test)]
mod key_tests {
    use super::endpoint_key;

    #[test]
    fn endpoint_keys() {
        for (a, b) in [
            (
                "https://Example.COM:443/mcp/?x=1#f",
                "https://example.com/mcp",
            ),
            ("https://example.com", "https://example.com"),
            ("https://example.com/", "https://example.com"),
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
}
