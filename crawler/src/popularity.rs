//! Weekly download counts for the look-alike rules' popularity snapshot
//! (`toolmark package popularity --refresh`): npm's downloads API and pypistats, each request
//! through the SSRF guard like every other fetch of this crate, bounded in names, bytes and time.
//!
//! - npm: `GET {npm}/downloads/point/last-week/{name}` answers
//!   `{"downloads": N, "start": "YYYY-MM-DD", "end": "YYYY-MM-DD", "package": NAME}`; unscoped
//!   names go [`NPM_BULK_NAMES`] to a request, comma-separated, and the answer is then an object
//!   of such objects by name (`null` for an unknown one); scoped names go one to a request
//!   (npm's API takes no scoped name in a bulk query). The count is dated by its `end`.
//! - PyPI: `GET {pypistats}/api/packages/{name}/recent` answers
//!   `{"data": {"last_day": N, "last_week": N, "last_month": N}, "package": NAME, "type":
//!   "recent_downloads"}`; one name a request, [`PYPISTATS_PAUSE`] apart (pypistats asks for
//!   restraint). It carries no date: the caller dates it with the day of the refresh.
//!
//! These shapes are the APIs' documented ones; neither API was reachable where this was
//! written, so the tests serve them from a loopback stand-in.
//!
//! Never follows a redirect, sends credentials or reads more than [`MAX_COUNTS_BODY`] bytes of
//! an answer; a name whose count cannot be had is reported as failed, never guessed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use toolmark_names::packages::{PackageKey, Registry};

use crate::mcp::ClientConfig;
use crate::packages::{PackageError, get};

/// npm's downloads API.
pub const NPM_DOWNLOADS: &str = "https://api.npmjs.org";
/// pypistats' API.
pub const PYPISTATS: &str = "https://pypistats.org";
/// Unscoped npm names per bulk request (npm's limit is 128).
pub const NPM_BULK_NAMES: usize = 128;
/// Most bytes read of one answer (a bulk answer of 128 names is about 15 KiB).
pub const MAX_COUNTS_BODY: usize = 1 << 20;
/// The pause between two pypistats requests.
pub const PYPISTATS_PAUSE: Duration = Duration::from_millis(500);
/// Most names one refresh asks about, whatever the caller asks for.
pub const MAX_REFRESH_NAMES: usize = 20_000;

/// Where the counts come from.
#[derive(Debug, Clone)]
pub struct CountSources {
    /// npm's downloads API ([`NPM_DOWNLOADS`]).
    pub npm: String,
    /// pypistats ([`PYPISTATS`]).
    pub pypistats: String,
    /// The pause between pypistats requests ([`PYPISTATS_PAUSE`]).
    pub pypistats_pause: Duration,
}

impl Default for CountSources {
    fn default() -> Self {
        CountSources {
            npm: NPM_DOWNLOADS.into(),
            pypistats: PYPISTATS.into(),
            pypistats_pause: PYPISTATS_PAUSE,
        }
    }
}

/// One package's count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    /// The package key (`npm:…`, `pypi:…`).
    pub key: String,
    /// Downloads in the last week.
    pub weekly: u64,
    /// The last day counted (npm's `end`); `None` from pypistats, which gives no date.
    pub as_of: Option<String>,
}

/// What a refresh got.
#[derive(Debug, Default)]
pub struct CountReport {
    /// The counts had.
    pub counted: Vec<Counted>,
    /// The keys whose count could not be had, and why.
    pub failed: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Point {
    downloads: u64,
    end: String,
    package: String,
}

#[derive(Deserialize)]
struct Recent {
    data: RecentData,
    package: String,
}

#[derive(Deserialize)]
struct RecentData {
    last_week: u64,
}

/// Whether `s` can stand in a URL path as it is (npm's and PyPI's name characters).
fn url_safe(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

fn is_date(s: &str) -> bool {
    toolmark_names::snapshot::is_date(s)
}

/// The weekly counts of `keys` (at most [`MAX_REFRESH_NAMES`]; the rest are reported failed).
pub async fn weekly_counts(
    config: &ClientConfig,
    sources: &CountSources,
    keys: &[PackageKey],
) -> CountReport {
    let mut report = CountReport::default();
    let mut unscoped = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let shown = key.key();
        if i >= MAX_REFRESH_NAMES {
            report
                .failed
                .push((shown, format!("over {MAX_REFRESH_NAMES} names a refresh")));
            continue;
        }
        let scope_ok = key.scope.is_empty() || url_safe(&key.scope[1..]);
        if !url_safe(&key.name) || !scope_ok {
            report
                .failed
                .push((shown, "not a name the APIs take".into()));
            continue;
        }
        match key.registry {
            Registry::Npm if key.scope.is_empty() => unscoped.push(key.name.clone()),
            Registry::Npm => {
                let name = format!("{}/{}", key.scope, key.name);
                let url = format!(
                    "{}/downloads/point/last-week/{name}",
                    sources.npm.trim_end_matches('/')
                );
                match npm_one(config, &url, &name).await {
                    Ok((weekly, end)) => report.counted.push(Counted {
                        key: shown,
                        weekly,
                        as_of: Some(end),
                    }),
                    Err(e) => report.failed.push((shown, e)),
                }
            }
            Registry::Pypi => {
                let url = format!(
                    "{}/api/packages/{}/recent",
                    sources.pypistats.trim_end_matches('/'),
                    key.name
                );
                match pypi_one(config, &url, &key.name).await {
                    Ok(weekly) => report.counted.push(Counted {
                        key: shown,
                        weekly,
                        as_of: None,
                    }),
                    Err(e) => report.failed.push((shown, e)),
                }
                tokio::time::sleep(sources.pypistats_pause).await;
            }
        }
    }
    for chunk in unscoped.chunks(NPM_BULK_NAMES) {
        let url = format!(
            "{}/downloads/point/last-week/{}",
            sources.npm.trim_end_matches('/'),
            chunk.join(",")
        );
        if let [name] = chunk {
            match npm_one(config, &url, name).await {
                Ok((weekly, end)) => report.counted.push(Counted {
                    key: format!("npm:{name}"),
                    weekly,
                    as_of: Some(end),
                }),
                Err(e) => report.failed.push((format!("npm:{name}"), e)),
            }
            continue;
        }
        match npm_bulk(config, &url, chunk).await {
            Ok(points) => {
                for name in chunk {
                    let key = format!("npm:{name}");
                    match points.get(name) {
                        Some(Some((weekly, end))) => report.counted.push(Counted {
                            key,
                            weekly: *weekly,
                            as_of: Some(end.clone()),
                        }),
                        _ => report.failed.push((key, "not in npm's answer".into())),
                    }
                }
            }
            Err(e) => {
                for name in chunk {
                    report.failed.push((format!("npm:{name}"), e.clone()));
                }
            }
        }
    }
    report
}

fn point(p: Point, name: &str) -> Result<(u64, String), String> {
    if p.package != name {
        return Err(format!("npm answered for {:?}", p.package));
    }
    if !is_date(&p.end) {
        return Err(format!("npm's end {:?} is not a date", p.end));
    }
    Ok((p.downloads, p.end))
}

async fn fetch_json<T: serde::de::DeserializeOwned>(
    config: &ClientConfig,
    url: &str,
) -> Result<T, String> {
    let body = get(config, url, "application/json", MAX_COUNTS_BODY)
        .await
        .map_err(|e| match e {
            PackageError::NotFound(_) => "not found".to_owned(),
            e => e.to_string(),
        })?;
    serde_json::from_slice(&body).map_err(|e| format!("{url}: not the documented answer: {e}"))
}

async fn npm_one(config: &ClientConfig, url: &str, name: &str) -> Result<(u64, String), String> {
    point(fetch_json::<Point>(config, url).await?, name)
}

async fn npm_bulk(
    config: &ClientConfig,
    url: &str,
    names: &[String],
) -> Result<BTreeMap<String, Option<(u64, String)>>, String> {
    let mut points: BTreeMap<String, Option<Point>> = fetch_json(config, url).await?;
    Ok(names
        .iter()
        .filter_map(|name| {
            let p = points.remove(name)??;
            Some((name.clone(), point(p, name).ok()))
        })
        .collect())
}

async fn pypi_one(config: &ClientConfig, url: &str, name: &str) -> Result<u64, String> {
    let recent: Recent = fetch_json(config, url).await?;
    // pypistats answers with the normalised name.
    if toolmark_names::packages::pep503(&recent.package) != name {
        return Err(format!("pypistats answered for {:?}", recent.package));
    }
    Ok(recent.data.last_week)
}
