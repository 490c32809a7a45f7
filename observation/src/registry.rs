//! Parsing the official MCP registry's server list and turning entries into crawl targets.
//!
//! What it does:
//! - [`parse_page`] reads one `GET /v0.1/servers` response (`{"servers": [...], "metadata":
//!   {"nextCursor", "count"}}`); [`parse_snapshot`] reads a bare JSON array of the same items (the
//!   shape of the mcp-insights `servers.json` mirror). Both tolerate a UTF-8 BOM, unknown members
//!   (the `server.json` schema keeps growing: `$schema` 2025-07-09 to 2025-12-11) and missing
//!   optional fields. One malformed item is recorded in [`Page::rejected`] and does not lose the
//!   rest of the page.
//! - Everything kept is bounded by the named limits below. A header's *value* is kept only when
//!   it can be sent as declared: a literal (no `{template}`), not `isSecret`, of a header that is
//!   neither a credential (`Authorization`, `Proxy-Authorization`) nor connection-level or MCP's
//!   own ([`reserved_header`]). Of every other header only its name, its `isRequired`/`isSecret`
//!   flags and whether its value is a `{template}` survive, because values such as
//!   `Bearer {smithery_api_key}` are credentials or templates for them.
//! - [`latest_per_name`] keeps one record per server name; [`targets`] lists every remote and
//!   every package of a record as a [`Target`], with a [`SkipReason`] when it must not be crawled,
//!   and, for a remote, what dialling it sends ([`Declared`]): the URL template values (each
//!   variable's `default`, or its only `choice`) and the declared headers sent or withheld.
//!
//! What it does not do: no network I/O (no paging, rate limiting or retries), no DNS or SSRF
//! checks (a URL that passes here, or one filled in from template defaults, may still point at
//! a private address), and no validation of names or versions against the registry's schema
//! patterns.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Most items accepted in one live page. The API caps `limit` at 100; ten times that leaves room
/// for a server that changes its cap while still bounding what one response can cost.
pub const MAX_ITEMS_PER_PAGE: usize = 1_000;

/// Most bytes accepted for one live page. A 100-item page of real data is about 150 KB (the
/// 2025-12-18 mirror averages 1.5 KB per item); 8 MiB is a generous ceiling against a hostile or
/// broken registry.
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;

/// Most items accepted in a bare-array snapshot. The registry held 66,353 version records in
/// August 2026; this allows several-fold growth and still bounds memory.
pub const MAX_SNAPSHOT_ITEMS: usize = 500_000;

/// Most bytes accepted for a snapshot (the 2,794-item mirror of 2025-12-18 is 4.2 MB).
pub const MAX_SNAPSHOT_BYTES: usize = 1024 * 1024 * 1024;

/// Longest server name kept; longer names reject the item. The schema allows 3–200 characters,
/// and a name is an identity, so it is never truncated.
pub const MAX_NAME_LEN: usize = 200;

/// Longest version kept; longer versions reject the item. The schema allows 255 characters, and
/// a version is an identity, so it is never truncated.
pub const MAX_VERSION_LEN: usize = 255;

/// Longest free text kept (title, description, repository and website URLs, timestamps, status
/// strings, transports, header names). Longer text is cut at a character boundary. The schema
/// caps descriptions at 100 characters; 1 KiB keeps every real value whole.
pub const MAX_TEXT_LEN: usize = 1024;

/// Longest remote URL or package identifier kept. These are identities we connect to or install,
/// so they are never truncated: a longer remote is dropped (counted in
/// [`Record::remotes_omitted`]) and a longer package in [`Record::packages_omitted`]. Browsers and
/// CDNs commonly accept about 2 KiB; the longest real remote URL is 80 bytes.
pub const MAX_URL_LEN: usize = 2048;

/// Most remotes considered per server; the rest are counted in [`Record::remotes_omitted`]. The
/// most seen in real data is 30.
pub const MAX_REMOTES_PER_SERVER: usize = 64;

/// Most packages considered per server; the rest are counted in [`Record::packages_omitted`]. The
/// most seen in real data is 7.
pub const MAX_PACKAGES_PER_SERVER: usize = 32;

/// Most headers kept per remote. The most seen in real data is 9. Needed headers
/// ([`HeaderSpec::is_needed`]) are kept first, so the cap can never hide that a remote asks a
/// client for credentials.
pub const MAX_HEADERS_PER_REMOTE: usize = 32;

/// Most bytes of declared headers sent to one remote, counted as `name: value\r\n`. Request
/// headers of MCP itself stay under 1 KiB; 4 KiB more keeps every request far below the 8 KiB
/// many HTTP servers accept for a request's headers. A header that would pass it is withheld
/// ([`WithheldWhy::OverLimit`]).
pub const MAX_SENT_HEADER_BYTES: usize = 4 * 1024;

/// Longest URL template value filled in (a `default` or a single `choice`); a longer one, or
/// one holding anything but URL-unreserved characters (`A-Z a-z 0-9 - . _ ~`), leaves the
/// remote [`SkipReason::TemplatedUrl`]. A DNS label is at most 63 bytes, a name 253.
pub const MAX_TEMPLATE_VALUE_LEN: usize = 253;

/// A page (or snapshot) could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The input is larger than the limit for its kind.
    #[error("input is {len} bytes, more than the limit of {max}")]
    TooLarge {
        /// Input length in bytes (after any BOM).
        len: usize,
        /// The limit that was exceeded.
        max: usize,
    },
    /// The input is not valid JSON.
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON is not the expected shape (an object with a `servers` array, or a bare array).
    #[error("not a registry page: {0}")]
    NotAPage(&'static str),
    /// More items than the limit for this kind of input.
    #[error("{count} items, more than the limit of {max}")]
    TooManyItems {
        /// Number of items present.
        count: usize,
        /// The limit that was exceeded.
        max: usize,
    },
}

/// Why one item of a page was rejected; stored as text in [`Page::rejected`].
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    /// The item does not match the `ServerResponse` shape (missing `server.name`, wrong types…).
    #[error("malformed item: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The server name is empty or longer than [`MAX_NAME_LEN`].
    #[error("server name is empty or longer than {MAX_NAME_LEN} bytes")]
    BadName,
    /// The version is empty or longer than [`MAX_VERSION_LEN`].
    #[error("version is empty or longer than {MAX_VERSION_LEN} bytes")]
    BadVersion,
}

/// One parsed page of the server list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The items that parsed, in page order.
    pub servers: Vec<Record>,
    /// [`parse_page`] only (empty for a snapshot): the compact JSON text of each item in
    /// `servers`, same order — the item as served, for a store of registry records.
    pub items: Vec<String>,
    /// `metadata.nextCursor`, if present and non-empty; pass it back verbatim (URL-encoded).
    pub next_cursor: Option<String>,
    /// Items that did not parse: (index in the page, reason).
    pub rejected: Vec<(usize, String)>,
    /// `server.name` of each item in `rejected` (same order) where it is a non-empty string.
    pub rejected_names: Vec<Option<String>>,
}

/// Lifecycle status from the official `_meta` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Listed normally.
    Active,
    /// Still listed; the publisher discourages use.
    Deprecated,
    /// Taken down (usually moderation); downstream users should drop it.
    Deleted,
    /// Missing or a value this code does not know.
    Unknown,
}

impl Status {
    fn parse(s: Option<&str>) -> Self {
        match s {
            Some("active") => Status::Active,
            Some("deprecated") => Status::Deprecated,
            Some("deleted") => Status::Deleted,
            _ => Status::Unknown,
        }
    }

    /// Stable lower-case id: `active`, `deprecated`, `deleted` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Deprecated => "deprecated",
            Status::Deleted => "deleted",
            Status::Unknown => "unknown",
        }
    }
}

/// One registry entry (one version of one server), bounded by the limits above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Reverse-DNS server name, e.g. `io.github.owner/server`.
    pub name: String,
    /// The version string as published.
    pub version: String,
    /// Lifecycle status.
    pub status: Status,
    /// `isLatest` from the official metadata (false when absent).
    pub is_latest: bool,
    /// `publishedAt` (RFC 3339) as given; empty when absent.
    pub published_at: String,
    /// `updatedAt` (RFC 3339) as given; empty when absent.
    pub updated_at: String,
    /// Optional display title, capped at [`MAX_TEXT_LEN`].
    pub title: Option<String>,
    /// Optional description, capped at [`MAX_TEXT_LEN`].
    pub description: Option<String>,
    /// `repository.url`, capped at [`MAX_TEXT_LEN`].
    pub repository_url: Option<String>,
    /// `websiteUrl`, capped at [`MAX_TEXT_LEN`].
    pub website_url: Option<String>,
    /// Remote endpoints, at most [`MAX_REMOTES_PER_SERVER`].
    pub remotes: Vec<Remote>,
    /// Remotes not kept: beyond [`MAX_REMOTES_PER_SERVER`] or with a URL over [`MAX_URL_LEN`].
    pub remotes_omitted: usize,
    /// Packages, at most [`MAX_PACKAGES_PER_SERVER`].
    pub packages: Vec<Package>,
    /// Packages not kept: beyond [`MAX_PACKAGES_PER_SERVER`] or with an identifier over
    /// [`MAX_URL_LEN`].
    pub packages_omitted: usize,
}

/// One entry of `remotes[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// `type`: `streamable-http`, `sse`, or anything else as given (capped).
    pub transport: String,
    /// The URL exactly as published (at most [`MAX_URL_LEN`] bytes), templates unexpanded.
    pub url: String,
    /// Header declarations, needed ones first; a value is kept only when it can be sent
    /// ([`HeaderSpec::value`]).
    pub headers: Vec<HeaderSpec>,
    /// Names of `{variable}` templates found in the URL, in order of first appearance.
    pub variables: Vec<String>,
    /// The value each declared URL variable can be filled with without asking anyone: its
    /// `default`, else its only `choices` entry — when that is non-secret and at most
    /// [`MAX_TEMPLATE_VALUE_LEN`] URL-unreserved characters. Only variables the URL holds.
    pub fills: Vec<(String, String)>,
}

/// A header a remote declares. Its value (often a credential template) is absent unless it can
/// be sent as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderSpec {
    /// Header name, capped at [`MAX_TEXT_LEN`].
    pub name: String,
    /// `isRequired` (false when absent).
    pub is_required: bool,
    /// `isSecret` (false when absent).
    pub is_secret: bool,
    /// The declared `value` holds a `{variable}` template (e.g. `Bearer {smithery_api_key}`), so
    /// the user must supply something. Only this flag is kept, never the value. In the 2025-12-18
    /// data, 109 smithery remotes declare such a header without `isRequired`.
    pub value_is_template: bool,
    /// The declared `value`, kept only when it is a literal (no template), not `isSecret`, at
    /// most [`MAX_TEXT_LEN`] bytes, of a header that is neither a credential nor
    /// [`reserved_header`]: a value toolmark may send as declared ([`Declared`] still checks it
    /// is a valid header value within [`MAX_SENT_HEADER_BYTES`]).
    pub value: Option<String>,
}

impl HeaderSpec {
    /// Whether a client has to supply this header: it is `isRequired`, or its declared value is
    /// a template that only the user can fill in.
    pub fn is_needed(&self) -> bool {
        self.is_required || self.value_is_template
    }
}

/// One entry of `packages[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// `registryType`: `npm`, `pypi`, `oci`, `nuget`, `mcpb`, … (capped).
    pub registry_type: String,
    /// Package identifier in its registry (at most [`MAX_URL_LEN`] bytes).
    pub identifier: String,
    /// Package version, when given (capped).
    pub version: Option<String>,
    /// `transport.type`, e.g. `stdio`; empty when absent.
    pub transport: String,
    /// How a client starts it (`runtimeHint`, `packageArguments`, `environmentVariables`), as
    /// far as the package sandbox can use it.
    pub start: Start,
}

/// The version a `packages[]` entry lists, when it names one: `None` for none, an empty one, or
/// `latest` (a tag some entries give instead of a version: any version is then the listed one).
pub fn listed_version(version: Option<&str>) -> Option<&str> {
    version.filter(|v| !v.is_empty() && *v != "latest")
}

/// Most package arguments and environment variables kept per package (the most seen in real
/// data is 11); the rest are ignored, and the sandbox starts the server without them.
pub const MAX_START_ITEMS: usize = 64;

/// How a package's server is started, from its `packages[]` entry: the arguments after the
/// entry point and the environment. Values are the declaration's own (`value`, else
/// `default`, else the only `choices` entry); a required or secret one with none gets
/// `None`: the sandbox gives it a canary value (the one a configured value carries, not the
/// decoys'), never a real credential.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// `runtimeHint` (`npx`, `uvx`, `node`, `python`, …), when given (capped).
    pub runtime_hint: Option<String>,
    /// Arguments after the entry point, in order: a positional's value, or a named one's
    /// `--name value` (a name that starts with `-` is kept as is). Required arguments without
    /// a value are not given (the server may refuse to start: that is what it does without
    /// them), and counted in [`Start::unfilled`].
    pub arguments: Vec<String>,
    /// Environment variables: name and value (`None`: a canary value).
    pub env: Vec<(String, Option<String>)>,
    /// Names of required arguments that had no value to give.
    pub unfilled: Vec<String>,
}

// ---- raw wire shapes (unknown members ignored; header `value` never read) ----

#[derive(Deserialize)]
struct RawItem {
    server: RawServer,
    #[serde(rename = "_meta", default)]
    meta: Option<RawMeta>,
}

#[derive(Deserialize, Default)]
struct RawMeta {
    #[serde(rename = "io.modelcontextprotocol.registry/official", default)]
    official: Option<RawOfficial>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawOfficial {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    published_at: Option<String>,
    #[serde(default)]
    updated_at: Option<String>,
    #[serde(default)]
    is_latest: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawServer {
    name: String,
    version: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    repository: Option<RawRepository>,
    #[serde(default)]
    website_url: Option<String>,
    #[serde(default)]
    remotes: Option<Vec<RawRemote>>,
    #[serde(default)]
    packages: Option<Vec<RawPackage>>,
}

#[derive(Deserialize)]
struct RawRepository {
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
struct RawRemote {
    #[serde(rename = "type")]
    transport: String,
    url: String,
    #[serde(default)]
    headers: Option<Vec<RawHeader>>,
    /// URL template variables (schema 2025-12-11): read leniently by [`fills`], so a malformed
    /// declaration costs the remote its fill, never the item.
    #[serde(default)]
    variables: Option<serde_json::Value>,
}

/// Only the name, flags and value: serde skips `default`, `choices` and the rest unread; `value`
/// is kept ([`HeaderSpec::value`]) only when it can be sent, and otherwise dropped with this
/// struct.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawHeader {
    name: String,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    is_required: Option<bool>,
    #[serde(default)]
    is_secret: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPackage {
    registry_type: String,
    identifier: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    transport: Option<RawPackageTransport>,
    #[serde(default)]
    runtime_hint: Option<String>,
    /// Read leniently ([`start_of`]): a malformed declaration costs the package its start
    /// values, never the item.
    #[serde(default)]
    package_arguments: Option<serde_json::Value>,
    #[serde(default)]
    environment_variables: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawPackageTransport {
    #[serde(rename = "type", default)]
    transport: Option<String>,
}

// ---- parsing ----

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Cut `s` to at most `max` bytes at a character boundary.
fn cap(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

fn cap_opt(s: Option<String>) -> Option<String> {
    s.map(|s| cap(s, MAX_TEXT_LEN))
}

/// A declared argument's or variable's value: `value`, else `default`, else the only
/// `choices` entry (strings, each at most [`MAX_TEXT_LEN`] bytes).
fn declared_value(item: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let text = |v: Option<&serde_json::Value>| {
        v.and_then(serde_json::Value::as_str)
            .filter(|s| s.len() <= MAX_TEXT_LEN && !s.contains('\0'))
            .map(str::to_owned)
    };
    text(item.get("value"))
        .or_else(|| text(item.get("default")))
        .or_else(|| match item.get("choices").and_then(|c| c.as_array()) {
            Some(only) if only.len() == 1 => text(only.first()),
            _ => None,
        })
}

/// [`Start`] from a package's raw declarations; anything not shaped as the schema says is
/// passed over.
fn start_of(
    runtime_hint: Option<String>,
    arguments: Option<&serde_json::Value>,
    variables: Option<&serde_json::Value>,
) -> Start {
    let items = |v: Option<&serde_json::Value>| -> Vec<serde_json::Map<String, serde_json::Value>> {
        v.and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .take(MAX_START_ITEMS)
            .filter_map(|i| i.as_object().cloned())
            .collect()
    };
    let flag = |item: &serde_json::Map<String, serde_json::Value>, key: &str| {
        item.get(key).and_then(serde_json::Value::as_bool) == Some(true)
    };
    let name_of = |item: &serde_json::Map<String, serde_json::Value>| {
        item.get("name")
            .and_then(serde_json::Value::as_str)
            .filter(|n| !n.is_empty() && n.len() <= MAX_TEXT_LEN && !n.contains('\0'))
            .map(str::to_owned)
    };
    let mut start = Start {
        runtime_hint: cap_opt(runtime_hint),
        ..Start::default()
    };
    for item in items(arguments) {
        let value = declared_value(&item);
        let required = flag(&item, "isRequired");
        let named = item.get("type").and_then(serde_json::Value::as_str) == Some("named");
        match (named, name_of(&item), value) {
            (true, Some(name), value) => {
                if value.is_none() && !required {
                    continue;
                }
                if value.is_none() {
                    start.unfilled.push(name);
                    continue;
                }
                let flag = if name.starts_with('-') {
                    name
                } else {
                    format!("--{name}")
                };
                start.arguments.push(flag);
                start.arguments.extend(value);
            }
            (false, _, Some(value)) => start.arguments.push(value),
            (false, name, None) if required => start.unfilled.push(
                name.or_else(|| {
                    item.get("valueHint")
                        .and_then(serde_json::Value::as_str)
                        .map(|h| cap(h.to_owned(), MAX_TEXT_LEN))
                })
                .unwrap_or_else(|| "(positional)".to_owned()),
            ),
            _ => {}
        }
    }
    for item in items(variables) {
        // An environment variable's name as a shell writes one; anything else is passed over.
        let Some(name) = name_of(&item).filter(|n| {
            n.len() <= 128
                && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }) else {
            continue;
        };
        let secret = flag(&item, "isSecret");
        let required = flag(&item, "isRequired");
        match declared_value(&item) {
            // A secret's declared value is a placeholder at best: the sandbox's canary stands in.
            _ if secret => start.env.push((name, None)),
            Some(value) => start.env.push((name, Some(value))),
            None if required => start.env.push((name, None)),
            None => {}
        }
    }
    start
}

/// Parse one live `/v0.1/servers` page.
///
/// The page must be a JSON object with a `servers` array (optionally after a UTF-8 BOM); an item
/// that does not parse (including one whose remote or package is malformed: an item is kept or
/// rejected whole) is listed in [`Page::rejected`] and the others are kept. `metadata.count`
/// is ignored; `metadata.nextCursor` becomes [`Page::next_cursor`] when it is a non-empty string.
pub fn parse_page(bytes: &[u8]) -> Result<Page, RegistryError> {
    let bytes = strip_bom(bytes);
    if bytes.len() > MAX_PAGE_BYTES {
        return Err(RegistryError::TooLarge {
            len: bytes.len(),
            max: MAX_PAGE_BYTES,
        });
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)?;
    let serde_json::Value::Object(mut obj) = value else {
        return Err(RegistryError::NotAPage("top level is not an object"));
    };
    let Some(serde_json::Value::Array(items)) = obj.remove("servers") else {
        return Err(RegistryError::NotAPage("no `servers` array"));
    };
    let next_cursor = obj
        .get("metadata")
        .and_then(|m| m.get("nextCursor"))
        .and_then(|c| c.as_str())
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    let mut page = parse_items(items, MAX_ITEMS_PER_PAGE, true)?;
    page.next_cursor = next_cursor;
    Ok(page)
}

/// Parse a snapshot: a bare JSON array of `ServerResponse` items, as mirrored by mcp-insights.
///
/// Same per-item rules as [`parse_page`], with the larger [`MAX_SNAPSHOT_ITEMS`] and
/// [`MAX_SNAPSHOT_BYTES`] limits; [`Page::next_cursor`] is always `None`.
pub fn parse_snapshot(bytes: &[u8]) -> Result<Page, RegistryError> {
    parse_items(snapshot_values(bytes)?, MAX_SNAPSHOT_ITEMS, false)
}

/// [`parse_snapshot`], keeping each parsed item's JSON text in [`Page::items`] (as
/// [`parse_page`] does): what a harvest merged from a stored snapshot needs to store again.
pub fn parse_snapshot_with_items(bytes: &[u8]) -> Result<Page, RegistryError> {
    parse_items(snapshot_values(bytes)?, MAX_SNAPSHOT_ITEMS, true)
}

fn snapshot_values(bytes: &[u8]) -> Result<Vec<serde_json::Value>, RegistryError> {
    let bytes = strip_bom(bytes);
    if bytes.len() > MAX_SNAPSHOT_BYTES {
        return Err(RegistryError::TooLarge {
            len: bytes.len(),
            max: MAX_SNAPSHOT_BYTES,
        });
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)?;
    let serde_json::Value::Array(items) = value else {
        return Err(RegistryError::NotAPage("snapshot is not an array"));
    };
    Ok(items)
}

fn parse_items(
    items: Vec<serde_json::Value>,
    max: usize,
    keep_items: bool,
) -> Result<Page, RegistryError> {
    if items.len() > max {
        return Err(RegistryError::TooManyItems {
            count: items.len(),
            max,
        });
    }
    let mut page = Page::default();
    for (i, item) in items.iter().enumerate() {
        match parse_item(item) {
            Ok(r) => {
                page.servers.push(r);
                if keep_items {
                    page.items.push(item.to_string());
                }
            }
            Err(e) => {
                page.rejected.push((i, e.to_string()));
                page.rejected_names.push(
                    item.pointer("/server/name")
                        .and_then(serde_json::Value::as_str)
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned),
                );
            }
        }
    }
    Ok(page)
}

fn parse_item(item: &serde_json::Value) -> Result<Record, ItemError> {
    let raw = RawItem::deserialize(item)?;
    let s = raw.server;
    if s.name.is_empty() || s.name.len() > MAX_NAME_LEN {
        return Err(ItemError::BadName);
    }
    if s.version.is_empty() || s.version.len() > MAX_VERSION_LEN {
        return Err(ItemError::BadVersion);
    }
    let official = raw.meta.and_then(|m| m.official).unwrap_or_default();

    let raw_remotes = s.remotes.unwrap_or_default();
    let mut remotes_omitted = raw_remotes.len().saturating_sub(MAX_REMOTES_PER_SERVER);
    let mut remotes = Vec::new();
    for r in raw_remotes.into_iter().take(MAX_REMOTES_PER_SERVER) {
        if r.url.len() > MAX_URL_LEN {
            remotes_omitted += 1;
            continue;
        }
        remotes.push(convert_remote(r));
    }

    let raw_packages = s.packages.unwrap_or_default();
    let mut packages_omitted = raw_packages.len().saturating_sub(MAX_PACKAGES_PER_SERVER);
    let mut packages = Vec::new();
    for p in raw_packages.into_iter().take(MAX_PACKAGES_PER_SERVER) {
        if p.identifier.len() > MAX_URL_LEN {
            packages_omitted += 1;
            continue;
        }
        let start = start_of(
            p.runtime_hint,
            p.package_arguments.as_ref(),
            p.environment_variables.as_ref(),
        );
        packages.push(Package {
            registry_type: cap(p.registry_type, MAX_TEXT_LEN),
            identifier: p.identifier,
            version: cap_opt(p.version),
            transport: cap(
                p.transport.and_then(|t| t.transport).unwrap_or_default(),
                MAX_TEXT_LEN,
            ),
            start,
        });
    }

    Ok(Record {
        name: s.name,
        version: s.version,
        status: Status::parse(official.status.as_deref()),
        is_latest: official.is_latest.unwrap_or(false),
        published_at: cap(official.published_at.unwrap_or_default(), MAX_TEXT_LEN),
        updated_at: cap(official.updated_at.unwrap_or_default(), MAX_TEXT_LEN),
        title: cap_opt(s.title),
        description: cap_opt(s.description),
        repository_url: cap_opt(s.repository.and_then(|r| r.url)),
        website_url: cap_opt(s.website_url),
        remotes,
        remotes_omitted,
        packages,
        packages_omitted,
    })
}

fn convert_remote(r: RawRemote) -> Remote {
    let raw_headers = r.headers.unwrap_or_default();
    let specs = raw_headers.into_iter().map(|h| {
        let is_secret = h.is_secret.unwrap_or(false);
        let value_is_template = h
            .value
            .as_deref()
            .is_some_and(|v| !template_variables(v).is_empty());
        let sendable = !is_secret
            && !value_is_template
            && !credential_header(&h.name)
            && !reserved_header(&h.name);
        HeaderSpec {
            value: h.value.filter(|v| sendable && v.len() <= MAX_TEXT_LEN),
            value_is_template,
            name: cap(h.name, MAX_TEXT_LEN),
            is_required: h.is_required.unwrap_or(false),
            is_secret,
        }
    });
    // Needed headers first, so the cap can never hide that a remote needs credentials.
    let (needed, optional): (Vec<_>, Vec<_>) = specs.partition(HeaderSpec::is_needed);
    let headers = needed
        .into_iter()
        .chain(optional)
        .take(MAX_HEADERS_PER_REMOTE)
        .collect();
    let variables = template_variables(&r.url);
    let fills = fills(&variables, r.variables.as_ref());
    Remote {
        transport: cap(r.transport, MAX_TEXT_LEN),
        url: r.url,
        headers,
        variables,
        fills,
    }
}

/// For each of `variables` (the URL's), the value a declaration in `declared` (the remote's
/// `variables` object) fills it with: a string `default`, else the only string of `choices`;
/// none for a secret variable or a value that is not [`MAX_TEMPLATE_VALUE_LEN`] URL-unreserved
/// characters (it could change the URL's shape: its host, path or query).
fn fills(variables: &[String], declared: Option<&serde_json::Value>) -> Vec<(String, String)> {
    let Some(declared) = declared.and_then(serde_json::Value::as_object) else {
        return Vec::new();
    };
    variables
        .iter()
        .filter_map(|name| {
            let input = declared.get(name)?.as_object()?;
            if input.get("isSecret").and_then(serde_json::Value::as_bool) == Some(true) {
                return None;
            }
            let value = match input.get("default").and_then(serde_json::Value::as_str) {
                Some(d) => d,
                None => match input.get("choices")?.as_array()?.as_slice() {
                    [only] => only.as_str()?,
                    _ => return None,
                },
            };
            let unreserved =
                |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
            (!value.is_empty()
                && value.len() <= MAX_TEMPLATE_VALUE_LEN
                && value.chars().all(unreserved))
            .then(|| (name.clone(), value.to_owned()))
        })
        .collect()
}

/// Headers that carry credentials by their nature: never sent, whatever the declaration says.
fn credential_header(name: &str) -> bool {
    ["authorization", "proxy-authorization"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// Headers a declaration may never make the crawler send: connection-level and hop-by-hop ones
/// (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Keep-Alive`, `TE`, `Trailer`,
/// `Upgrade`, `Proxy-Connection`, `Expect`), `Cookie`, the ones the crawler sets for the
/// transport itself (`Accept`, `Accept-Encoding`, `Content-Type`, `Content-Encoding`,
/// `Last-Event-ID`, `User-Agent`), and every header MCP defines or reserves (`Mcp-*`:
/// `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, …), compared without case.
pub fn reserved_header(name: &str) -> bool {
    const RESERVED: [&str; 17] = [
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "expect",
        "cookie",
        "accept",
        "accept-encoding",
        "content-type",
        "content-encoding",
        "last-event-id",
        "user-agent",
    ];
    RESERVED.iter().any(|h| name.eq_ignore_ascii_case(h))
        || name
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("mcp-"))
}

/// Names of `{name}` templates (`[A-Za-z_][A-Za-z0-9_]*`) in `url`, deduplicated, in order.
fn template_variables(url: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = url.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let valid = j > start && !b[start].is_ascii_digit() && j < b.len() && b[j] == b'}';
            if valid {
                let name = &url[start..j];
                if !out.iter().any(|v| v == name) {
                    out.push(name.to_owned());
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

// ---- choosing one record per name ----

/// An RFC 3339 timestamp as a sortable key: the `YYYY-MM-DDTHH:MM:SS` prefix and the fraction
/// padded to nine digits (so `…:09Z` sorts before `…:09.5Z`). Odd formats fall back to the raw
/// string, which still gives a deterministic order.
fn time_key(t: &str) -> (String, String) {
    let b = t.as_bytes();
    if b.len() >= 20 && b[10] == b'T' {
        let (head, rest) = t.split_at(19);
        let frac: String = rest
            .strip_prefix('.')
            .map(|r| r.chars().take_while(char::is_ascii_digit).collect())
            .unwrap_or_default();
        return (head.to_owned(), format!("{frac:0<9}"));
    }
    (t.to_owned(), String::new())
}

/// Keep one record per server name, sorted by name.
///
/// Deleted records are dropped first (so a name whose every version is deleted disappears). Among
/// the rest, a record with `is_latest` wins; then the newest `published_at`; remaining ties go to
/// the greater `version`, then the greater `updated_at`, so the result does not depend on input
/// order.
pub fn latest_per_name(records: impl IntoIterator<Item = Record>) -> Vec<Record> {
    let mut best: BTreeMap<String, Record> = BTreeMap::new();
    for r in records {
        if r.status == Status::Deleted {
            continue;
        }
        match best.get(&r.name) {
            Some(cur) if !better(&r, cur) => {}
            _ => {
                best.insert(r.name.clone(), r);
            }
        }
    }
    best.into_values().collect()
}

fn better(a: &Record, b: &Record) -> bool {
    let key = |r: &Record| {
        (
            r.is_latest,
            time_key(&r.published_at),
            r.version.clone(),
            time_key(&r.updated_at),
        )
    };
    key(a) > key(b)
}

// ---- targets ----

/// The PEP 503 normal form of a PyPI name (lower case, runs of `-`, `_`, `.` as one `-`): the
/// one definition, `toolmark-names`', which the look-alike rules use too.
pub use toolmark_names::packages::pep503;

/// A package ecosystem.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ecosystem {
    /// npm (run with `npx`).
    Npm,
    /// PyPI (run with `uvx`).
    Pypi,
    /// Any other `registryType` as given (`oci`, `mcpb`, `nuget`, …); not supported.
    Other(String),
}

impl Ecosystem {
    /// The ecosystem a `registryType` names.
    pub fn parse(s: &str) -> Self {
        match s {
            "npm" => Ecosystem::Npm,
            "pypi" => Ecosystem::Pypi,
            other => Ecosystem::Other(other.to_owned()),
        }
    }
}

/// What a target points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A remote endpoint.
    Remote {
        /// `streamable-http`, `sse` or another value as given.
        transport: String,
        /// The URL as published (templates unexpanded: the target's identity).
        url: String,
        /// What dialling it sends beyond MCP's own requests, from its declaration.
        declared: Declared,
    },
    /// A package to run locally (in the sandbox).
    Package {
        /// Its ecosystem.
        ecosystem: Ecosystem,
        /// The package identifier.
        name: String,
        /// The version, when published.
        version: Option<String>,
        /// Its declared `transport.type` (`stdio`, …); empty when absent.
        transport: String,
    },
}

/// What a remote's declaration makes dialling it send, sorted into what is sent and what is
/// withheld. Credentials and templated values are never sent: a remote that asks for them is
/// dialled anonymously, as a client without a key would dial it, and what it answers is
/// recorded with the names of the headers it did not get.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// URL template variables filled in, with the value used ([`Remote::fills`]), in the
    /// URL's order.
    pub variables: Vec<(String, String)>,
    /// Declared headers sent as declared (a literal, non-secret value; [`HeaderSpec::value`]),
    /// within [`MAX_SENT_HEADER_BYTES`].
    pub headers: Vec<SentHeader>,
    /// Declared headers not sent, with why.
    pub withheld: Vec<Withheld>,
}

/// A declared header the crawler sends with its declared literal value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentHeader {
    /// The header's name as declared.
    pub name: String,
    /// The declared value.
    pub value: String,
    /// Whether the declaration marks it `isRequired`.
    pub required: bool,
}

/// A declared header the crawler did not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withheld {
    /// The header's name as declared.
    pub name: String,
    /// Whether the declaration marks it `isRequired`.
    pub required: bool,
    /// Why it was not sent.
    pub why: WithheldWhy,
}

/// Why a declared header was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithheldWhy {
    /// `isSecret`, or a credential header by its name (`Authorization`, `Proxy-Authorization`).
    Secret,
    /// Its value is a `{template}` only the user can fill in.
    Template,
    /// No value is declared: the user supplies one.
    NoValue,
    /// Connection-level, hop-by-hop, set by the transport, or MCP's own ([`reserved_header`]).
    Reserved,
    /// The name is not an HTTP token, or the value holds characters a header cannot carry.
    Invalid,
    /// Sending it would pass [`MAX_SENT_HEADER_BYTES`] (or its value [`MAX_TEXT_LEN`]).
    OverLimit,
}

impl WithheldWhy {
    /// Stable kebab-case id, as stored in observation documents.
    pub fn as_str(self) -> &'static str {
        match self {
            WithheldWhy::Secret => "secret",
            WithheldWhy::Template => "template",
            WithheldWhy::NoValue => "no-value",
            WithheldWhy::Reserved => "reserved",
            WithheldWhy::Invalid => "invalid",
            WithheldWhy::OverLimit => "over-limit",
        }
    }
}

impl Declared {
    /// The URL to dial: `url` with every filled variable's `{name}` replaced by its value.
    pub fn dial_url(&self, url: &str) -> String {
        let mut out = url.to_owned();
        for (name, value) in &self.variables {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// `"served without declared header(s) A (secret), B (no-value)"`, or `None` when every
    /// declared header was sent.
    pub fn withheld_note(&self) -> Option<String> {
        if self.withheld.is_empty() {
            return None;
        }
        let names: Vec<String> = self
            .withheld
            .iter()
            .map(|w| format!("{} ({})", w.name, w.why.as_str()))
            .collect();
        Some(format!("without declared header(s) {}", names.join(", ")))
    }
}

/// Sort `remote`'s declaration into what is sent and what is withheld; the skip reason when the
/// remote cannot be dialled meaningfully: a required header whose declared literal value
/// toolmark may not send (reserved, invalid or over the limit: the publisher fixed what the
/// server needs, and dialling without it would observe some other service).
fn declared(remote: &Remote) -> (Declared, Option<SkipReason>) {
    let mut d = Declared {
        variables: remote.fills.clone(),
        ..Declared::default()
    };
    let mut unsendable_required = Vec::new();
    let mut bytes = 0usize;
    for h in &remote.headers {
        let why = if h.is_secret || credential_header(&h.name) {
            Some(WithheldWhy::Secret)
        } else if h.value_is_template {
            Some(WithheldWhy::Template)
        } else if reserved_header(&h.name) {
            Some(WithheldWhy::Reserved)
        } else if let Some(value) = &h.value {
            let cost = h.name.len() + value.len() + 4;
            if !header_token(&h.name) || !header_value(value) {
                Some(WithheldWhy::Invalid)
            } else if bytes + cost > MAX_SENT_HEADER_BYTES {
                Some(WithheldWhy::OverLimit)
            } else {
                bytes += cost;
                d.headers.push(SentHeader {
                    name: h.name.clone(),
                    value: value.clone(),
                    required: h.is_required,
                });
                None
            }
        } else {
            // A literal longer than MAX_TEXT_LEN was not kept; anything else has no value.
            Some(WithheldWhy::NoValue)
        };
        if let Some(why) = why {
            let literal = matches!(
                why,
                WithheldWhy::Reserved | WithheldWhy::Invalid | WithheldWhy::OverLimit
            );
            if h.is_required && literal {
                unsendable_required.push(h.name.clone());
            }
            d.withheld.push(Withheld {
                name: h.name.clone(),
                required: h.is_required,
                why,
            });
        }
    }
    let skip = (!unsendable_required.is_empty()).then_some(SkipReason::HeaderRequired {
        headers: unsendable_required,
    });
    (d, skip)
}

/// An RFC 9110 token (a header name).
fn header_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A header value a request can carry: visible ASCII, spaces and tabs inside, not at either end.
fn header_value(value: &str) -> bool {
    !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && value
            .bytes()
            .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
}

/// Why a target is not crawled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The URL holds `{variable}` templates that the declaration gives no value for (no
    /// `default`, no single `choice`; see [`Remote::fills`]).
    TemplatedUrl {
        /// The variables without a value.
        variables: Vec<String>,
    },
    /// The remote cannot be dialled meaningfully: it requires a header whose declared literal
    /// value toolmark may not send ([`WithheldWhy::Reserved`], [`WithheldWhy::Invalid`],
    /// [`WithheldWhy::OverLimit`]). Remotes that ask for credentials or user-supplied values are
    /// dialled anonymously instead ([`Declared::withheld`]); rows of runs before that was so
    /// carry this reason for them too.
    HeaderRequired {
        /// Names of those headers.
        headers: Vec<String>,
    },
    /// The URL is not `https`.
    CleartextUrl,
    /// A remote transport other than `streamable-http` or `sse`.
    UnsupportedTransport(String),
    /// A package registry other than npm or PyPI.
    UnsupportedPackageType(String),
    /// The URL is not an absolute http(s) URL with a host, or holds whitespace or controls.
    InvalidUrl,
}

impl SkipReason {
    /// Stable kebab-case id, for logs and counts.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::TemplatedUrl { .. } => "templated-url",
            SkipReason::HeaderRequired { .. } => "header-required",
            SkipReason::CleartextUrl => "cleartext-url",
            SkipReason::UnsupportedTransport(_) => "unsupported-transport",
            SkipReason::UnsupportedPackageType(_) => "unsupported-package-type",
            SkipReason::InvalidUrl => "invalid-url",
        }
    }
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing to crawl, or to record as skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The server name.
    pub server: String,
    /// The server version this target came from.
    pub version: String,
    /// What to crawl.
    pub kind: TargetKind,
    /// `Some` when the target must not be crawled.
    pub skip: Option<SkipReason>,
}

/// Every remote, then every package, of `record`, each with its skip reason if any.
///
/// Remote checks, first match wins: unsupported transport, a URL variable without a value,
/// invalid URL (after filling), cleartext URL, a required header that cannot be sent as declared
/// ([`SkipReason::HeaderRequired`]). `sse` is supported. Packages are skipped unless npm or PyPI.
pub fn targets(record: &Record) -> Vec<Target> {
    targets_with(record, false)
}

/// [`targets`], but `http://` remotes are not skipped when `allow_cleartext` (tests and demos on
/// loopback, together with the SSRF guard's `allow_private`).
pub fn targets_with(record: &Record, allow_cleartext: bool) -> Vec<Target> {
    let remotes = record.remotes.iter().map(|r| {
        let (declared, header_skip) = declared(r);
        Target {
            server: record.name.clone(),
            version: record.version.clone(),
            skip: remote_skip(r, allow_cleartext, &declared).or(header_skip),
            kind: TargetKind::Remote {
                transport: r.transport.clone(),
                url: r.url.clone(),
                declared,
            },
        }
    });
    let packages = record.packages.iter().map(|p| {
        let ecosystem = Ecosystem::parse(&p.registry_type);
        let skip = match &ecosystem {
            Ecosystem::Other(t) => Some(SkipReason::UnsupportedPackageType(t.clone())),
            _ => None,
        };
        Target {
            server: record.name.clone(),
            version: record.version.clone(),
            kind: TargetKind::Package {
                ecosystem,
                name: p.identifier.clone(),
                version: p.version.clone(),
                transport: p.transport.clone(),
            },
            skip,
        }
    });
    remotes.chain(packages).collect()
}

fn remote_skip(r: &Remote, allow_cleartext: bool, declared: &Declared) -> Option<SkipReason> {
    if r.transport != "streamable-http" && r.transport != "sse" {
        return Some(SkipReason::UnsupportedTransport(r.transport.clone()));
    }
    let unfilled: Vec<String> = r
        .variables
        .iter()
        .filter(|v| !declared.variables.iter().any(|(n, _)| n == *v))
        .cloned()
        .collect();
    if !unfilled.is_empty() {
        return Some(SkipReason::TemplatedUrl {
            variables: unfilled,
        });
    }
    let Some(https) = url_scheme_is_https(&declared.dial_url(&r.url)) else {
        return Some(SkipReason::InvalidUrl);
    };
    if !https && !allow_cleartext {
        return Some(SkipReason::CleartextUrl);
    }
    None
}

/// `Some(true)` for a plausible `https://host…` URL, `Some(false)` for `http://host…`, `None`
/// when it is neither or holds whitespace, controls or an empty host.
fn url_scheme_is_https(url: &str) -> Option<bool> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let lower_prefix = |p: &str| {
        url.get(..p.len())
            .filter(|s| s.eq_ignore_ascii_case(p))
            .map(|_| &url[p.len()..])
    };
    let (https, rest) = if let Some(rest) = lower_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = lower_prefix("http://") {
        (false, rest)
    } else {
        return None;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if host_port.starts_with('[') {
        host_port
            .split(']')
            .next()
            .map(|h| h.trim_start_matches('['))
    } else {
        host_port.split(':').next()
    };
    match host {
        Some(h) if !h.is_empty() => Some(https),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_or_latest_version_lists_none() {
        assert_eq!(super::listed_version(Some("1.2.0")), Some("1.2.0"));
        for none in [None, Some(""), Some("latest")] {
            assert_eq!(super::listed_version(none), None);
        }
    }

    #[test]
    fn start_values_keep_only_variables_a_shell_could_name() {
        let vars = serde_json::json!([
            {"name": "GOOD_1", "default": "x"},
            {"name": "1BAD", "default": "x"},
            {"name": "BAD-NAME", "default": "x"},
            {"name": "A=B", "default": "x"},
            {"name": "TOKEN", "isSecret": true, "default": "placeholder"},
            {"name": "OPTIONAL"}
        ]);
        let start = super::start_of(None, None, Some(&vars));
        assert_eq!(
            start.env,
            [
                ("GOOD_1".to_owned(), Some("x".to_owned())),
                ("TOKEN".to_owned(), None)
            ]
        );
    }

    use super::*;

    #[test]
    fn cap_respects_char_boundary() {
        assert_eq!(cap("héllo".to_owned(), 2), "h");
        assert_eq!(cap("abc".to_owned(), 5), "abc");
    }

    #[test]
    fn template_variables_found() {
        assert_eq!(
            template_variables("https://{tenant_id}.x.com/{a}/{tenant_id}/{1x}/{}"),
            vec!["tenant_id".to_owned(), "a".to_owned()]
        );
        assert!(template_variables("https://x.com/mcp").is_empty());
    }

    #[test]
    fn url_checks() {
        assert_eq!(url_scheme_is_https("https://a.b/mcp"), Some(true));
        assert_eq!(url_scheme_is_https("HTTP://a.b"), Some(false));
        assert_eq!(url_scheme_is_https("https://[::1]:8080/x"), Some(true));
        assert_eq!(url_scheme_is_https("https:///x"), None);
        assert_eq!(url_scheme_is_https("ftp://a.b"), None);
        assert_eq!(url_scheme_is_https("https://a b"), None);
        assert_eq!(url_scheme_is_https("/relative"), None);
    }

    #[test]
    fn time_key_orders_fractions() {
        assert!(time_key("2025-09-08T23:47:09Z") < time_key("2025-09-08T23:47:09.5Z"));
        assert!(time_key("2025-09-08T23:47:09.45Z") < time_key("2025-09-08T23:47:09.5Z"));
    }
}
