//! The popularity refresh in a cluster: the scheduler enqueues one `popularity` job per fire
//! time of `schedules.popularity` ([`super::polling::enqueue_one`]); a worker claims it, installs
//! the cluster's current snapshot in its data directory, refreshes it (`crate::popularity`),
//! stores the new snapshot in the bucket and names it in the queue's note [`NOTE`]; every API
//! replica installs the snapshot the note names and answers from it ([`Installer`]).

use std::path::Path;
use std::time::Duration;

use toolmark_crawler::popularity::CountSources;
use toolmark_index::{Blobs, DataDir};
use toolmark_queue::Queue;
use toolmark_toolset::Sri;

use crate::RoleError;

/// The kind of a popularity refresh.
pub const POPULARITY: &str = "popularity";
/// The queue's note naming the cluster's current popularity snapshot (its SRI in the bucket).
pub const NOTE: &str = "popularity snapshot";
/// How often a worker asks for a refresh job, and a replica looks for a new snapshot.
pub const POPULARITY_POLL: Duration = Duration::from_secs(10);
/// How long a worker's claim on a refresh lasts: longer than a whole refresh (5,000 names,
/// scoped npm names one request each, a pause between pypistats requests: minutes), so no
/// other worker takes the job over while it runs; a dead worker's job returns after it.
pub const POPULARITY_LEASE: Duration = Duration::from_secs(2 * 3600);

/// Writes the cluster's current snapshot (the note's, read from `blobs`) into `data`'s
/// popularity directory unless it is there already. Returns the snapshot's SRI when it wrote
/// it (`None`: no snapshot yet, or the same one in place).
pub fn install_current(
    queue: &mut Queue,
    blobs: &Blobs,
    data: &Path,
) -> Result<Option<String>, RoleError> {
    let Some(sri) = queue
        .note(NOTE)
        .map_err(RoleError::doing("the popularity note"))?
    else {
        return Ok(None);
    };
    let parsed: Sri = sri
        .parse()
        .map_err(|e| RoleError::Refused(format!("popularity snapshot {sri}: {e}")))?;
    let bytes = blobs
        .get(&parsed)
        .map_err(RoleError::doing(format!("popularity snapshot {sri}")))?
        .ok_or_else(|| RoleError::Refused(format!("popularity snapshot {sri} is not stored")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| RoleError::Refused(format!("popularity snapshot {sri} is not UTF-8")))?;
    // What is installed must read back (the API refuses to start on a snapshot it cannot read).
    let snapshot = toolmark_names::snapshot::Snapshot::parse(&text)
        .map_err(RoleError::doing(format!("popularity snapshot {sri}")))?;
    let dir = DataDir::new(data);
    let path = dir
        .popularity_dir()
        .join(format!("popularity-{}.txt", snapshot.date));
    if std::fs::read(&path).is_ok_and(|have| have == text.as_bytes()) {
        return Ok(None);
    }
    dir.write_popularity(&snapshot.date, &text)
        .map_err(RoleError::doing("installing the popularity snapshot"))?;
    Ok(Some(sri))
}

/// Claims one refresh if one is waiting and makes it (blocks; `runtime` runs the requests):
/// the cluster's snapshot installed in `data`, its `max_names` most downloaded packages
/// counted from `sources`, the new snapshot stored in `blobs` and named in [`NOTE`]. Whether
/// one was claimed. A refresh that had no count fails its job (tried again later).
#[allow(clippy::too_many_arguments)]
pub fn refresh_once(
    queue: &mut Queue,
    runtime: &tokio::runtime::Handle,
    blobs: &Blobs,
    data: &Path,
    sources: &CountSources,
    max_names: usize,
    allow_private: bool,
    lease: Duration,
) -> Result<bool, RoleError> {
    let claims = queue
        .claim(&[POPULARITY], 1, lease)
        .map_err(RoleError::doing("claiming a popularity refresh"))?;
    let Some(claim) = claims.into_iter().next() else {
        return Ok(false);
    };
    let refreshed = install_current(queue, blobs, data).and_then(|_| {
        let r = crate::popularity::refresh(runtime, data, max_names, sources, allow_private)?;
        let text = std::fs::read(&r.path)
            .map_err(RoleError::doing(format!("reading {}", r.path.display())))?;
        let sri = blobs
            .put(&text)
            .map_err(RoleError::doing("storing the popularity snapshot"))?;
        queue
            .set_note(NOTE, &sri.to_string())
            .map_err(RoleError::doing("naming the popularity snapshot"))?;
        Ok(format!(
            "popularity snapshot {sri} of {}: {} counts, {} names failed (older counts kept)",
            r.date, r.counted, r.failed_count
        ))
    });
    let done = match refreshed {
        Ok(text) => {
            tracing::info!("{text}");
            queue.complete(&claim, &text, None)
        }
        Err(e) => {
            let why = crate::chain(&e);
            tracing::warn!("popularity refresh failed: {why}");
            queue.fail(&claim, &why, super::FAILED_RETRY).map(|_| ())
        }
    };
    done.map_err(RoleError::doing("finishing the popularity refresh"))?;
    Ok(true)
}

/// A worker's refreshes until `stop`, on the calling thread (blocks): one connection, opened
/// again after a failure; the count APIs' defaults.
pub fn run_refreshes(
    url: &str,
    holder: &str,
    runtime: &tokio::runtime::Handle,
    config: &toolmark_config::Config,
    stop: &crate::Stop,
) {
    let dir = crate::jobs::data_dir(config);
    let blobs = match dir.blobs() {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!("popularity refreshes: the documents: {e}");
            return;
        }
    };
    super::polling::poll(
        url,
        holder,
        "popularity refreshes",
        POPULARITY_POLL,
        stop,
        |queue| {
            refresh_once(
                queue,
                runtime,
                &blobs,
                &config.data,
                &CountSources::default(),
                crate::popularity::DEFAULT_REFRESH_NAMES,
                config.crawl.allow_private,
                super::worker_lease(config),
            )
        },
    );
}

/// A replica's snapshots until `stop`, on the calling thread (blocks): the note's snapshot
/// installed in its data directory and `names` reloaded from it when it changes.
pub fn run_installs(
    url: &str,
    holder: &str,
    dir: &DataDir,
    names: &toolmark_api::lookalike::Names,
    stop: &crate::Stop,
) {
    let blobs = match dir.blobs() {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!("popularity snapshots: the documents: {e}");
            return;
        }
    };
    super::polling::poll(
        url,
        holder,
        "popularity snapshots",
        POPULARITY_POLL,
        stop,
        |queue| {
            if let Some(sri) = install_current(queue, &blobs, dir.root())? {
                names
                    .reload(dir.root())
                    .map_err(RoleError::doing("reading the new popularity snapshot"))?;
                tracing::info!("popularity snapshot {sri} installed and in use");
            }
            Ok(false)
        },
    );
}
