//! The popularity refresh: weekly download counts fetched for the most downloaded packages of
//! the snapshot in use, merged into a new dated snapshot in the data directory
//! (docs/operations.md, "Popularity"). The `popularity` job and `toolmark package popularity
//! --refresh` run it.

use std::path::{Path, PathBuf};

use toolmark_api::lookalike::read_snapshot;
use toolmark_crawler::popularity::{self, CountSources};
use toolmark_index::DataDir;
use toolmark_names::packages::PackageKey;
use toolmark_names::snapshot::Snapshot;

use crate::RoleError;

/// Names one refresh asks about unless told otherwise: the popular side of the rules (every
/// package of at least 1,000 a week in the bundled snapshot, about 1,900) fits with room.
pub const DEFAULT_REFRESH_NAMES: usize = 5000;

/// Names whose failure a [`Refreshed`] keeps the reason of.
pub const FAILED_KEPT: usize = 20;

/// What a refresh did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refreshed {
    /// The snapshot written.
    pub path: PathBuf,
    /// Its date.
    pub date: String,
    /// Counts had.
    pub counted: usize,
    /// Names whose count could not be had (their older count is kept), and why (at most
    /// [`FAILED_KEPT`]).
    pub failed: Vec<(String, String)>,
    /// How many failed.
    pub failed_count: usize,
}

impl Refreshed {
    /// What `toolmark package popularity --refresh` prints: the file written, its date, the
    /// counts had, how many failed and the first failures with why.
    pub fn to_json(&self) -> serde_json::Value {
        let failed: Vec<serde_json::Value> = self
            .failed
            .iter()
            .map(|(k, why)| serde_json::json!({"package": k, "why": why}))
            .collect();
        serde_json::json!({"written": self.path, "date": self.date, "counted": self.counted,
                           "failed": self.failed_count, "failedFirst": failed})
    }
}

/// One refresh: the snapshot in use (the data directory's newest, else the bundled one), its
/// `max_names` most downloaded packages asked about (at most
/// `popularity::MAX_REFRESH_NAMES`), the counts had merged in, written as
/// `DATA/popularity/popularity-TODAY.txt`. Nothing is written when no count could be had.
/// Blocks the calling thread, which must not be one of `runtime`'s workers.
pub fn refresh(
    runtime: &tokio::runtime::Handle,
    data: &Path,
    max_names: usize,
    sources: &CountSources,
    allow_private: bool,
) -> Result<Refreshed, RoleError> {
    let (current, _) = read_snapshot(data).map_err(RoleError::doing("the snapshot in use"))?;
    let mut ranked: Vec<(&String, u64)> =
        current.counts.iter().map(|(k, c)| (k, c.weekly)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let keys: Vec<PackageKey> = ranked
        .iter()
        .take(max_names.min(popularity::MAX_REFRESH_NAMES))
        .filter_map(|(k, _)| PackageKey::parse(k).ok())
        .collect();
    let mut config = toolmark_crawler::mcp::ClientConfig::default();
    config.policy.allow_private = allow_private;
    let report = runtime.block_on(popularity::weekly_counts(&config, sources, &keys));
    if report.counted.is_empty() {
        let first = report
            .failed
            .first()
            .map(|(k, why)| format!(" (first: {k}: {why})"))
            .unwrap_or_default();
        return Err(RoleError::Refused(format!(
            "no count could be had for {} names{first}; nothing written",
            keys.len()
        )));
    }
    let date = toolmark_index::time::utc(std::time::SystemTime::now())[..10].to_owned();
    let npm = report
        .counted
        .iter()
        .filter(|c| c.key.starts_with("npm:"))
        .count();
    let source = format!(
        "refreshed {date}: {npm} npm last-week counts from {}/downloads/point/last-week, {} PyPI last_week counts from {}/api/packages/NAME/recent (dated {date}); {} names failed and keep their older counts",
        sources.npm.trim_end_matches('/'),
        report.counted.len() - npm,
        sources.pypistats.trim_end_matches('/'),
        report.failed.len(),
    );
    let counted = report.counted.len();
    let next: Snapshot = current.refreshed(
        &date,
        report
            .counted
            .into_iter()
            .map(|c| (c.key, c.weekly, c.as_of)),
        source,
    );
    let text = next.to_text();
    // What is written must read back (the service refuses to start on a snapshot it cannot read).
    Snapshot::parse(&text).map_err(RoleError::doing(
        "the refreshed snapshot does not read back",
    ))?;
    let path = DataDir::new(data)
        .write_popularity(&date, &text)
        .map_err(RoleError::doing("writing the snapshot"))?;
    let failed_count = report.failed.len();
    let mut failed = report.failed;
    failed.truncate(FAILED_KEPT);
    Ok(Refreshed {
        path,
        date,
        counted,
        failed,
        failed_count,
    })
}
