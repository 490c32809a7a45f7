//! Look-alike names: is a package or MCP server name made to be mistaken for a popular one?
//!
//! A typosquat needs no change to a tool description, only a name a user mistypes or misreads
//! (`@modelcontextprotocol/server-githb`, `mcp-server-fetch` under someone else's scope,
//! `server-gіthub` with a Cyrillic `і`). This crate decides that from names and weekly download
//! counts alone, with HISTOR's rules (peer reference §6) plus two of ours:
//!
//! - [`skeleton`]: the name a reader sees (HISTOR's: scope dropped, lower case, `-_.` removed,
//!   `0`→`o`, `1`→`l`; ours first folds non-ASCII characters through Unicode's confusable
//!   skeleton, UTS #39, so `gіthub` with a Cyrillic `і` reads as `github`);
//! - [`packages`]: the key [`packages::PackageKey`] (`npm:@scope/name`, `pypi:name`
//!   PEP 503-normalised) and [`packages::LookalikeIndex`] over a popularity
//!   [`snapshot::Snapshot`]: the same name under another scope, the same skeleton with other
//!   separators or look-alike characters, one edit away (Damerau–Levenshtein exactly 1, found
//!   through a symmetric-delete index) for skeletons of at least [`MIN_EDIT_LENGTH`]
//!   characters, generic names excluded, reported only when the popular package has at least
//!   [`RATIO`] times the asked one's downloads;
//! - [`servers`]: the same for MCP registry server names (`io.github.x/name`) against the
//!   names the registry lists, where being listed stands in for popularity;
//! - [`snapshot`]: the dated popularity snapshot's text format (read and written), bounded.
//!
//! It never does I/O (no files, sockets, clocks or environment), async or randomness: the
//! caller hands it the snapshot's text and the listed names, so the same inputs always give
//! the same answer. It never decides anything but "looks like": whether a look-alike is
//! malicious is for a person to judge.

#![deny(missing_docs)]

mod edit;
pub mod packages;
pub mod servers;
pub mod skeleton;
pub mod snapshot;

/// Downloads a week for a package to count as a name worth imitating (HISTOR's
/// `POPULAR_WEEKLY`).
pub const POPULAR_WEEKLY: u64 = 1000;

/// The popular package must have at least this many times the asked one's weekly downloads
/// (HISTOR's `RATIO`), so two popular siblings (`mysql` / `mssql`) never accuse each other.
pub const RATIO: u64 = 100;

/// An unscoped name used under this many scopes (`mcp`, `mcp-server`, `cli`) is generic, not a
/// brand (HISTOR's `GENERIC_SCOPES`); a name within one edit of a generic one is not taken as
/// imitating anything.
pub const GENERIC_SCOPES: usize = 3;

/// One-edit neighbours only for skeletons at least this many characters long (HISTOR's
/// `MIN_EDIT_LENGTH`): short names are one edit from too many honest ones.
pub const MIN_EDIT_LENGTH: usize = 7;

/// The one-edit rule is not applied to skeletons longer than this many characters (npm names
/// are at most 214 characters and registry server names at most 200): it bounds the work a
/// hostile name can cause, and no real name is that long.
pub const MAX_EDIT_CHARS: usize = 256;

/// `how` for the same name under another npm scope (HISTOR's phrase).
pub const HOW_OTHER_SCOPE: &str = "the same name under another scope";
/// `how` for the same skeleton spelled otherwise (HISTOR's phrase).
pub const HOW_SEPARATORS: &str = "the same name with other separators or look-alike characters";
/// `how` for a one-edit neighbour (HISTOR's phrase).
pub const HOW_ONE_EDIT: &str = "one character away";
/// `how` for the same skeleton once non-ASCII characters are read as the ASCII ones they look
/// like (ours: HISTOR has no rule for Unicode confusables).
pub const HOW_CONFUSABLE: &str = "the same name with look-alike characters from another script";

/// A look-alike found: what the asked name imitates and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookalike {
    /// The imitated name (a package key such as `npm:@scope/name`, or a server name).
    pub of: String,
    /// One of the `HOW_*` phrases.
    pub how: &'static str,
    /// The imitated package's weekly downloads (`None` for server names: no counts exist).
    pub weekly: Option<Weekly>,
    /// The asked package's weekly downloads (0 when the snapshot does not list it; `None` for
    /// server names).
    pub own_weekly: Option<u64>,
}

/// A weekly download count and the day it was counted (`YYYY-MM-DD`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weekly {
    /// Downloads in a week.
    pub count: u64,
    /// When (`YYYY-MM-DD`): the end of the week counted, or the snapshot's date.
    pub as_of: String,
}

/// The bundled popularity snapshot (`names/data/popularity.txt`; origin, date and how it was
/// made in `names/data/SOURCES`). A refreshed snapshot in the data directory replaces it.
pub const BUNDLED_SNAPSHOT: &str = include_str!("../data/popularity.txt");
