//! What one run did, as stored with the run in the index (`runs.report`) and written by
//! `toolmark crawl --report` (followed there by one line per target).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The registry harvest of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarvestReport {
    /// `full`, or `since <time>` for a delta.
    pub mode: String,
    /// Why this mode (a delta from the last complete harvest, a full one due, none stored …);
    /// empty in reports stored before deltas.
    #[serde(default)]
    pub reason: String,
    /// For a delta merged into the stored registry records: how many were held before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<usize>,
    /// Pages read.
    pub pages: usize,
    /// HTTP requests sent, retries included.
    pub requests: usize,
    /// Requests sent again.
    pub retries: usize,
    /// Records that parsed.
    pub records: usize,
    /// Items that did not parse.
    pub rejected: usize,
    /// Whether the last page was reached.
    pub complete: bool,
    /// Why the harvest stopped early, when it did.
    pub error: Option<String>,
    /// How long it took.
    pub seconds: f64,
    /// The `updated_since` for the next delta (only when complete).
    pub next_since: Option<String>,
}

impl HarvestReport {
    /// The report of `harvest`, made in `mode` in `seconds`, stopped early by `error`; no
    /// reason and no records held (a delta's merge sets them).
    pub fn new(
        harvest: &toolmark_crawler::harvest::Harvest,
        mode: &toolmark_crawler::harvest::Mode,
        error: Option<String>,
        seconds: f64,
    ) -> Self {
        HarvestReport {
            mode: match mode {
                toolmark_crawler::harvest::Mode::Full => "full".to_owned(),
                toolmark_crawler::harvest::Mode::Since(t) => format!("since {t}"),
            },
            reason: String::new(),
            held: None,
            pages: harvest.pages,
            requests: harvest.requests,
            retries: harvest.retries,
            records: harvest.records.len(),
            rejected: harvest.rejected.len(),
            complete: harvest.complete,
            error,
            seconds,
            next_since: harvest.complete.then(|| harvest.next_since.clone()),
        }
    }
}

/// One run's report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The run's id in the index.
    pub run: i64,
    /// The registry read.
    pub registry: String,
    /// UTC start.
    pub started_at: String,
    /// UTC end.
    pub finished_at: String,
    /// The harvest.
    pub harvest: HarvestReport,
    /// Servers observed (the latest record per name, after `limit`).
    pub servers: usize,
    /// Servers marked delisted.
    pub delisted: Vec<String>,
    /// How long observing took.
    pub observe_seconds: f64,
    /// Targets not observed because the run was stopped.
    pub abandoned: usize,
    /// The log's size after the run.
    pub log_size: u64,
    /// Targets per status.
    pub totals: BTreeMap<String, u64>,
}
