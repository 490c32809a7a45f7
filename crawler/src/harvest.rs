//! Paging through the official MCP registry's server list, politely.
//!
//! What it does:
//! - [`harvest`] pages `GET {base}/v0.1/servers` with `limit=100`, either the whole current set
//!   ([`Mode::Full`], `version=latest`) or everything changed since a time ([`Mode::Since`],
//!   `updated_since`, which the registry answers with every changed version, deleted ones
//!   included). Every item is parsed with [`registry::parse_page`]; a malformed item is recorded
//!   in [`Harvest::rejected`] and the others are kept.
//! - Politeness: a token bucket ([`Rate::REGISTRY`]: 1 request/s sustained, bursts of 5, the
//!   registry's own ingress limit); 429, 5xx and network failures are retried after
//!   `Retry-After` (seconds or HTTP-date, at most [`MAX_RETRY_AFTER`]) or an exponential
//!   back-off ([`Backoff::REGISTRY`]), at most [`MAX_RETRIES_PER_PAGE`] times per page.
//! - Limits: a repeated cursor aborts ([`HarvestError::RepeatedCursor`]), more than
//!   [`HarvestConfig::page_limit`] pages aborts, and the whole harvest has one deadline
//!   ([`HarvestConfig::timeout`]). Bodies are read with [`crate::body::read_capped`] under
//!   [`registry::MAX_PAGE_BYTES`].
//! - [`delisted`] names the servers a complete full harvest no longer lists; [`apply_delta`]
//!   merges a delta into the previous latest-per-name set.
//!
//! What it does not do: it prints and logs nothing (everything is in the returned [`Harvest`]
//! or [`HarvestError`]), it follows no redirect of its own (that is the caller's client's
//! policy; a 3xx it sees is an error), it never sends credentials, and it does not validate the
//! `updated_since` timestamp it is given (the registry answers a bad one with 400).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;
use url::Url;

use crate::body::{self, BodyError};
use crate::limits::{MAX_DETAIL_EXCERPT, REQUEST_TIMEOUT};
use crate::registry::{self, Record, RegistryError, Status};

/// Items asked for per page: the registry's maximum `limit`, so a harvest costs as few requests
/// as possible.
pub const PAGE_SIZE: usize = 100;

/// Sustained requests per second to the registry. Its NGINX ingress allows 1 request/s with
/// bursts of 5 since registry PR #843 (merged 2025-12-12, after traffic spikes took the service
/// down, issue #826); we stay within that limit rather than lean on its 429/503 answers.
pub const REGISTRY_RATE_PER_SECOND: f64 = 1.0;

/// Requests that may be sent back to back before [`REGISTRY_RATE_PER_SECOND`] applies: the
/// ingress's burst allowance (PR #843).
pub const REGISTRY_BURST: u32 = 5;

/// A request that had to wait for a token waits this fraction of one token's interval longer
/// (50 ms at 1 request/s). The server's limiter measures arrival times, which jitter by a few
/// milliseconds (a new connection's handshake delays the first request more than later ones),
/// so a request sent exactly on time can look early to it. The sustained rate is unchanged:
/// the slack is not counted against the bucket.
pub const PACING_SLACK_FRACTION: f64 = 0.05;

/// Most pages one harvest fetches. Today's `version=latest` set is about 200 pages (20,236
/// names in August 2026) and all 66,353 versions about 660; 2,000 pages (200,000 items) leaves
/// room for several-fold growth and for a delta after a long gap, and stops a registry that
/// keeps handing out fresh cursors.
pub const MAX_HARVEST_PAGES: usize = 2_000;

/// Deadline for one whole harvest, retries included. [`MAX_HARVEST_PAGES`] at 1 request/s is
/// 33 minutes; 90 minutes adds room for back-off, and still ends a stuck harvest well before
/// the next daily run.
pub const HARVEST_TIMEOUT: Duration = Duration::from_secs(90 * 60);

/// Retries of one page after a 429, a 5xx or a network failure. With [`Backoff::REGISTRY`]
/// five retries wait 2 + 4 + 8 + 16 + 30 = 60 s, enough to ride out a restart or a rolling
/// deploy; a longer outage fails the harvest, which the next run repeats.
pub const MAX_RETRIES_PER_PAGE: usize = 5;

/// First back-off wait when the registry gave no `Retry-After`.
pub const BACKOFF_FIRST: Duration = Duration::from_secs(2);

/// Longest back-off wait: doubling stops here.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Longest `Retry-After` honoured. The ingress asks for about a second; two minutes covers
/// any plausible maintenance hint. A longer one fails the harvest
/// ([`HarvestError::RetryAfterTooLong`]) instead of silently holding the run for hours.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// How much earlier than its own start a harvest suggests the next delta begin
/// ([`Harvest::next_since`]). The registry compares `updated_since` with its own clock; a local
/// clock that runs ahead would otherwise miss changes made just before the harvest. Overlap only
/// costs a few repeated items: [`apply_delta`] is idempotent.
pub const CLOCK_SKEW_ALLOWANCE: Duration = Duration::from_secs(5 * 60);

/// The `User-Agent` of [`HarvestConfig::new`]: names the project so the registry's operators
/// can tell who is paging.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "toolmark-crawler/",
    env!("CARGO_PKG_VERSION"),
    " (transparency log of MCP tool definitions)"
);

/// Request pacing: a token bucket of `burst` tokens refilled at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Sustained requests per second; must be finite and positive.
    pub per_second: f64,
    /// Requests that may go back to back; at least 1.
    pub burst: u32,
}

impl Rate {
    /// The official registry's limit: [`REGISTRY_RATE_PER_SECOND`], [`REGISTRY_BURST`].
    pub const REGISTRY: Rate = Rate {
        per_second: REGISTRY_RATE_PER_SECOND,
        burst: REGISTRY_BURST,
    };
}

/// Exponential back-off for retries without `Retry-After`: `first`, doubling, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Backoff {
    /// [`BACKOFF_FIRST`] doubling to [`BACKOFF_MAX`].
    pub const REGISTRY: Backoff = Backoff {
        first: BACKOFF_FIRST,
        max: BACKOFF_MAX,
    };

    /// The wait before retry number `retry` (0-based).
    pub fn delay(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(31));
        self.first.saturating_mul(factor).min(self.max)
    }
}

/// What to harvest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// The current latest version of every listed server (`version=latest`; deleted entries
    /// are hidden by the registry).
    Full,
    /// Every version changed after the given RFC 3339 time (`updated_since`), deleted ones
    /// included (the registry forces `include_deleted` with it).
    Since(String),
}

/// How to harvest.
#[derive(Debug, Clone, PartialEq)]
pub struct HarvestConfig {
    /// The registry's base URL, e.g. `https://registry.modelcontextprotocol.io`; any path is
    /// kept and `/v0.1/servers` is appended to it.
    pub base_url: String,
    /// Full or delta.
    pub mode: Mode,
    /// Most pages fetched ([`MAX_HARVEST_PAGES`]).
    pub page_limit: usize,
    /// Deadline for the whole harvest ([`HARVEST_TIMEOUT`]).
    pub timeout: Duration,
    /// Request pacing ([`Rate::REGISTRY`]).
    pub rate: Rate,
    /// Waits between retries without `Retry-After` ([`Backoff::REGISTRY`]).
    pub backoff: Backoff,
    /// The `User-Agent` header sent ([`DEFAULT_USER_AGENT`]).
    pub user_agent: String,
}

impl HarvestConfig {
    /// A configuration with every default: the registry's rate and back-off, the named limits.
    pub fn new(base_url: impl Into<String>, mode: Mode) -> HarvestConfig {
        HarvestConfig {
            base_url: base_url.into(),
            mode,
            page_limit: MAX_HARVEST_PAGES,
            timeout: HARVEST_TIMEOUT,
            rate: Rate::REGISTRY,
            backoff: Backoff::REGISTRY,
            user_agent: DEFAULT_USER_AGENT.to_owned(),
        }
    }
}

/// What a harvest read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Harvest {
    /// The mode it ran in.
    pub mode: Mode,
    /// Every item that parsed, in the order served.
    pub records: Vec<Record>,
    /// The JSON text of each of [`records`](Harvest::records)' items, index for index: the
    /// `ServerResponse` item as served, re-serialised compactly (so [`registry::parse_snapshot`]
    /// of `[item]` gives the record again). Kept so the index can hold the registry's records
    /// and rebuild targets from them without the registry (deltas).
    pub items: Vec<String>,
    /// Items that did not parse: (page, index in the page, reason), both 0-based.
    pub rejected: Vec<(usize, usize, String)>,
    /// `server.name` of each rejected item whose name could still be read. [`delisted`] counts
    /// these names as listed.
    pub rejected_names: BTreeSet<String>,
    /// Rejected items whose name could not be read at all; while there are any, [`delisted`]
    /// delists nothing (such an item might have been any server).
    pub rejected_unnamed: usize,
    /// Pages read.
    pub pages: usize,
    /// HTTP requests sent, retries included.
    pub requests: usize,
    /// Retries (requests sent again after a 429, a 5xx or a network failure).
    pub retries: usize,
    /// Whether the last page was reached. Only [`harvest_partial`] can return an incomplete
    /// harvest.
    pub complete: bool,
    /// When the harvest started, RFC 3339 UTC (local clock).
    pub started_at: String,
    /// [`started_at`](Harvest::started_at) less [`CLOCK_SKEW_ALLOWANCE`]: the `updated_since`
    /// to use for the next delta, once this harvest is complete and applied.
    pub next_since: String,
}

/// Why a harvest stopped.
#[derive(Debug, thiserror::Error)]
pub enum HarvestError {
    /// The configuration cannot be used (base URL, rate, page limit).
    #[error("harvest configuration: {0}")]
    Config(String),
    /// An HTTP status that is not retried (3xx, 4xx other than 429).
    #[error("{url} answered HTTP {status}: {detail}")]
    Http {
        /// The status code.
        status: u16,
        /// The request URL.
        url: String,
        /// An excerpt of the body (at most [`MAX_DETAIL_EXCERPT`] bytes, controls replaced).
        detail: String,
    },
    /// The registry asked to wait longer than [`MAX_RETRY_AFTER`].
    #[error("{url} asked to retry after {seconds} s, more than the {} s a harvest waits", MAX_RETRY_AFTER.as_secs())]
    RetryAfterTooLong {
        /// The request URL.
        url: String,
        /// The wait asked for.
        seconds: u64,
    },
    /// The whole harvest passed its deadline.
    #[error("harvest did not finish within {0:?}")]
    Timeout(Duration),
    /// The request could not be sent at all (not retried: a client or redirect-policy error).
    #[error("request failed: {0}")]
    Network(String),
    /// A page's body was refused (too large, compression bomb, bad encoding).
    #[error("{url}: {error}")]
    Body {
        /// The request URL.
        url: String,
        /// Why.
        #[source]
        error: BodyError,
    },
    /// The registry handed out a cursor it had already given: paging would loop.
    #[error("the registry repeated the cursor {0:?}")]
    RepeatedCursor(String),
    /// Still more pages after the page limit.
    #[error("more than {0} pages")]
    TooManyPages(usize),
    /// A page is not a registry page at all (not JSON, wrong shape, too many items).
    #[error("page {page} ({url}) is not a registry page: {error}")]
    Page {
        /// 0-based page number.
        page: usize,
        /// The request URL.
        url: String,
        /// Why.
        #[source]
        error: RegistryError,
    },
    /// A page still failed after [`MAX_RETRIES_PER_PAGE`] retries.
    #[error("{url}: gave up after {attempts} attempts; last: {last}")]
    TooManyRetries {
        /// The request URL.
        url: String,
        /// Requests sent for this page.
        attempts: usize,
        /// The last failure.
        last: String,
    },
}

/// The HTTP client a harvest should use: no redirects followed, no default headers, rustls
/// (`toolmark_outbound::client::unguarded`: the operator named the registry).
pub fn registry_client() -> Result<reqwest::Client, HarvestError> {
    toolmark_outbound::client::unguarded(None)
        .map_err(|e| HarvestError::Config(format!("building the registry client: {e}")))
}

/// Harvest the registry at `config.base_url`. Any failure is an error and no partial data is
/// returned; see [`harvest_partial`] for what was read before a failure.
///
/// `client` should not follow redirects and should have no default headers carrying
/// credentials; its own timeouts apply as well as [`REQUEST_TIMEOUT`] per request.
pub async fn harvest(
    client: &reqwest::Client,
    config: &HarvestConfig,
) -> Result<Harvest, HarvestError> {
    match harvest_partial(client, config).await {
        (harvest, None) => Ok(harvest),
        (_, Some(error)) => Err(error),
    }
}

/// Like [`harvest`], but also returns what was read before a failure: the harvest is
/// [`complete`](Harvest::complete) exactly when there is no error. An incomplete harvest must
/// not be used to delist servers ([`delisted`] refuses to) nor to advance the next `since`.
pub async fn harvest_partial(
    client: &reqwest::Client,
    config: &HarvestConfig,
) -> (Harvest, Option<HarvestError>) {
    let now = SystemTime::now();
    let mut harvest = Harvest {
        mode: config.mode.clone(),
        records: Vec::new(),
        items: Vec::new(),
        rejected: Vec::new(),
        rejected_names: BTreeSet::new(),
        rejected_unnamed: 0,
        pages: 0,
        requests: 0,
        retries: 0,
        complete: false,
        started_at: format_rfc3339(now),
        next_since: format_rfc3339(now.checked_sub(CLOCK_SKEW_ALLOWANCE).unwrap_or(now)),
    };
    let run = run(client, config, &mut harvest);
    let result = match tokio::time::timeout(config.timeout, run).await {
        Ok(result) => result,
        Err(_) => Err(HarvestError::Timeout(config.timeout)),
    };
    harvest.complete = result.is_ok();
    (harvest, result.err())
}

async fn run(
    client: &reqwest::Client,
    config: &HarvestConfig,
    harvest: &mut Harvest,
) -> Result<(), HarvestError> {
    let rate = config.rate;
    if !(rate.per_second.is_finite() && rate.per_second > 0.0) || rate.burst == 0 {
        return Err(HarvestError::Config(format!(
            "rate must be positive with a burst of at least 1, not {rate:?}"
        )));
    }
    if config.page_limit == 0 {
        return Err(HarvestError::Config("page limit must be at least 1".into()));
    }
    let base = list_url(&config.base_url)?;
    let mut limiter = Limiter::new(rate);
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        if harvest.pages >= config.page_limit {
            return Err(HarvestError::TooManyPages(config.page_limit));
        }
        let url = page_url(&base, &config.mode, cursor.as_deref());
        let bytes = fetch(client, config, &mut limiter, &url, harvest).await?;
        let number = harvest.pages;
        let page = registry::parse_page(&bytes).map_err(|error| HarvestError::Page {
            page: number,
            url: url.to_string(),
            error,
        })?;
        harvest.pages += 1;
        harvest.items.extend(page.items);
        for ((index, reason), name) in page.rejected.into_iter().zip(page.rejected_names) {
            match name {
                Some(name) => {
                    harvest.rejected_names.insert(name);
                }
                None => harvest.rejected_unnamed += 1,
            }
            harvest.rejected.push((number, index, reason));
        }
        harvest.records.extend(page.servers);
        let Some(next) = page.next_cursor else {
            return Ok(());
        };
        if !seen.insert(next.clone()) {
            return Err(HarvestError::RepeatedCursor(next));
        }
        cursor = Some(next);
    }
}

/// `{base}/v0.1/servers`, with the base's query and fragment dropped.
fn list_url(base: &str) -> Result<Url, HarvestError> {
    let bad = |why: &str| HarvestError::Config(format!("base URL {base:?}: {why}"));
    let mut url = Url::parse(base).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("not http or https"));
    }
    url.set_query(None);
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| bad("cannot be a base"))?
        .pop_if_empty()
        .extend(["v0.1", "servers"]);
    Ok(url)
}

/// One page's URL. The cursor is passed exactly as the registry gave it, form-encoded by the
/// `url` crate (so `/`, `:` and `+` survive).
fn page_url(base: &Url, mode: &Mode, cursor: Option<&str>) -> Url {
    let mut url = base.clone();
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("limit", &PAGE_SIZE.to_string());
        match mode {
            Mode::Full => query.append_pair("version", "latest"),
            Mode::Since(since) => query.append_pair("updated_since", since),
        };
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
    }
    url
}

/// What one request came to.
enum Attempt {
    /// The page's body.
    Done(Vec<u8>),
    /// A failure worth retrying, with the server's `Retry-After` if it gave one.
    Retry {
        after: Option<Duration>,
        why: String,
    },
}

/// Fetch one page's body, pacing every request and retrying what is worth retrying.
async fn fetch(
    client: &reqwest::Client,
    config: &HarvestConfig,
    limiter: &mut Limiter,
    url: &Url,
    harvest: &mut Harvest,
) -> Result<Vec<u8>, HarvestError> {
    let mut retries: usize = 0;
    loop {
        limiter.acquire().await;
        harvest.requests += 1;
        let (after, why) = match attempt(client, config, url).await? {
            Attempt::Done(bytes) => return Ok(bytes),
            Attempt::Retry { after, why } => (after, why),
        };
        if retries >= MAX_RETRIES_PER_PAGE {
            return Err(HarvestError::TooManyRetries {
                url: url.to_string(),
                attempts: retries + 1,
                last: why,
            });
        }
        let wait = after.unwrap_or_else(|| config.backoff.delay(retries as u32));
        retries += 1;
        harvest.retries += 1;
        tokio::time::sleep(wait).await;
    }
}

async fn attempt(
    client: &reqwest::Client,
    config: &HarvestConfig,
    url: &Url,
) -> Result<Attempt, HarvestError> {
    use reqwest::header::{ACCEPT, ACCEPT_ENCODING, USER_AGENT};
    let sent = client
        .get(url.clone())
        .header(USER_AGENT, &config.user_agent)
        .header(ACCEPT, "application/json")
        // body.rs decompresses these two itself, under its caps.
        .header(ACCEPT_ENCODING, "gzip, deflate")
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) if e.is_builder() || e.is_redirect() => {
            return Err(HarvestError::Network(crate::error_chain(&e)));
        }
        Err(e) => {
            return Ok(Attempt::Retry {
                after: None,
                why: format!("network: {}", crate::error_chain(&e)),
            });
        }
    };
    let status = response.status();
    if status.is_success() {
        return match body::read_capped(response, registry::MAX_PAGE_BYTES).await {
            Ok(bytes) => Ok(Attempt::Done(bytes)),
            Err(e @ (BodyError::Timeout | BodyError::Network(_))) => Ok(Attempt::Retry {
                after: None,
                why: e.to_string(),
            }),
            Err(error) => Err(HarvestError::Body {
                url: url.to_string(),
                error,
            }),
        };
    }
    let after = retry_after(response.headers(), SystemTime::now());
    let code = status.as_u16();
    let detail = excerpt(response).await;
    if code == 429 || status.is_server_error() {
        if let Some(wait) = after.filter(|w| *w > MAX_RETRY_AFTER) {
            return Err(HarvestError::RetryAfterTooLong {
                url: url.to_string(),
                seconds: wait.as_secs(),
            });
        }
        return Ok(Attempt::Retry {
            after,
            why: format!("HTTP {code}: {detail}"),
        });
    }
    Err(HarvestError::Http {
        status: code,
        url: url.to_string(),
        detail,
    })
}

/// The start of an error body, as printable text of at most [`MAX_DETAIL_EXCERPT`] bytes.
async fn excerpt(response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut body) = body::Body::new(response, registry::MAX_PAGE_BYTES) {
        while bytes.len() < MAX_DETAIL_EXCERPT {
            match body.next().await {
                Ok(Some(part)) => bytes.extend_from_slice(&part),
                _ => break,
            }
        }
    }
    let text: String = String::from_utf8_lossy(&bytes)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut end = text.len().min(MAX_DETAIL_EXCERPT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].trim().to_owned()
}

/// The wait a `Retry-After` header asks for: delay-seconds, or an IMF-fixdate HTTP-date (a date
/// in the past means no wait). `None` when absent or in another form (the obsolete RFC 850 and
/// asctime date forms are not read; back-off applies instead).
pub fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let when = parse_http_date(text)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A token bucket; see [`Rate`] and [`PACING_SLACK_FRACTION`].
struct Limiter {
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Limiter {
    fn new(rate: Rate) -> Limiter {
        Limiter {
            per_second: rate.per_second,
            burst: f64::from(rate.burst),
            tokens: f64::from(rate.burst),
            last: Instant::now(),
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.last = now;
    }

    async fn acquire(&mut self) {
        self.refill();
        if self.tokens < 1.0 {
            let secs = (1.0 - self.tokens + PACING_SLACK_FRACTION) / self.per_second;
            let wait = Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX);
            tokio::time::sleep(wait).await;
            self.refill();
        }
        self.tokens -= 1.0;
    }
}

// ---- delisting and deltas ----

/// Server names in `previous` that a complete [`Mode::Full`] harvest no longer lists, sorted.
///
/// Empty for a [`Mode::Since`] harvest (a delta lists only what changed) and for an incomplete
/// one: a failed harvest never delists anything. A name counts as listed when the harvest holds
/// a record of it that is not deleted, or a rejected item whose name could be read
/// ([`Harvest::rejected_names`]); if some rejected item's name could not be read at all
/// ([`Harvest::rejected_unnamed`]), that item might have been any server, so nothing is
/// delisted either.
pub fn delisted(previous: &BTreeSet<String>, harvest: &Harvest) -> Vec<String> {
    if !harvest.complete || harvest.mode != Mode::Full || harvest.rejected_unnamed > 0 {
        return Vec::new();
    }
    let listed: BTreeSet<&str> = harvest
        .records
        .iter()
        .filter(|r| r.status != Status::Deleted)
        .map(|r| r.name.as_str())
        .chain(harvest.rejected_names.iter().map(String::as_str))
        .collect();
    previous
        .iter()
        .filter(|name| !listed.contains(name.as_str()))
        .cloned()
        .collect()
}

/// Merge a delta ([`Mode::Since`] harvest) into the previous latest-per-name set (as made by
/// [`registry::latest_per_name`]); the result is again one record per name, sorted by name.
///
/// The rule, per server name:
/// - A name the delta does not mention keeps its previous record.
/// - For a name it does mention, the candidates are the delta's records of that name (for a
///   version served twice, the later one) plus the previous record, unless the delta holds a
///   record of that same version (the delta's is newer news of it). Deleted candidates are
///   dropped; of the rest, the one [`registry::latest_per_name`] prefers wins (`isLatest`,
///   then newest `publishedAt`, then greatest version, then newest `updatedAt`). Deprecated
///   records stay, with their status.
/// - So a deleted record removes the name when it is the version held (or the name's only
///   version) and the delta offers no other live version; a deleted older version changes
///   nothing. A new latest version replaces the held one even when the registry did not move
///   the old one's `updatedAt` (it does not, in the December 2025 data): both say `isLatest`
///   and the newer `publishedAt` wins.
///
/// Applying a delta twice, or two overlapping deltas, gives the same result. Rejected items are
/// ignored. Given a [`Mode::Full`] harvest, this upserts every record and removes nothing (use
/// [`delisted`] for removals).
pub fn apply_delta(latest: Vec<Record>, delta: &Harvest) -> Vec<Record> {
    let mut changed: BTreeMap<&str, BTreeMap<&str, &Record>> = BTreeMap::new();
    for r in &delta.records {
        changed
            .entry(r.name.as_str())
            .or_default()
            .insert(r.version.as_str(), r);
    }
    let mut candidates: Vec<Record> = latest
        .into_iter()
        .filter(|held| {
            changed
                .get(held.name.as_str())
                .is_none_or(|versions| !versions.contains_key(held.version.as_str()))
        })
        .collect();
    candidates.extend(
        changed
            .values()
            .flat_map(|versions| versions.values())
            .map(|r| (*r).clone()),
    );
    registry::latest_per_name(candidates)
}

// ---- dates ----

/// `time` as RFC 3339 UTC with milliseconds, e.g. `2025-12-18T08:42:00.123Z`.
pub fn format_rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// An HTTP date in any of the three forms RFC 9110 §5.6.7 requires recipients to accept.
fn parse_http_date(text: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    #[test]
    fn dates() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_765_947_851_081);
        assert_eq!(format_rfc3339(t), "2025-12-17T05:04:11.081Z");
        assert_eq!(
            format_rfc3339(SystemTime::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        assert_eq!(
            parse_http_date("Thu, 29 Feb 2024 23:59:59 GMT"),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_251_199))
        );
        // RFC 9110 requires accepting the obsolete RFC 850 and asctime forms too.
        let same = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), same);
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), same);
        for bad in [
            "",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_700);
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(RETRY_AFTER, HeaderValue::from_str(v).unwrap());
            retry_after(&h, now)
        };
        assert_eq!(with("1"), Some(Duration::from_secs(1)));
        assert_eq!(with(" 120 "), Some(Duration::from_secs(120)));
        assert_eq!(
            with("99999999999999999999999"),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(
            with("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::from_secs(77))
        );
        assert_eq!(with("Sat, 05 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(with("-1"), None);
        assert_eq!(with("soon"), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_to_its_cap() {
        let b = Backoff::REGISTRY;
        let waits: Vec<u64> = (0..7).map(|i| b.delay(i).as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(b.delay(u32::MAX), BACKOFF_MAX);
    }

    #[test]
    fn urls() {
        let base = list_url("https://r.example/prefix/?x=1#f").unwrap();
        assert_eq!(base.as_str(), "https://r.example/prefix/v0.1/servers");
        let full = page_url(&base, &Mode::Full, Some("io.github.a/b c+d:1.0"));
        assert_eq!(
            full.query(),
            Some("limit=100&version=latest&cursor=io.github.a%2Fb+c%2Bd%3A1.0")
        );
        let since = page_url(
            &base,
            &Mode::Since("2025-12-17T06:00:00+01:00".into()),
            None,
        );
        assert_eq!(
            since.query(),
            Some("limit=100&updated_since=2025-12-17T06%3A00%3A00%2B01%3A00")
        );
        assert_eq!(
            list_url("http://127.0.0.1:9").unwrap().as_str(),
            "http://127.0.0.1:9/v0.1/servers"
        );
        assert!(list_url("ftp://x").is_err());
        assert!(list_url("not a url").is_err());
        assert!(list_url("mailto:a@b").is_err());
    }
}
