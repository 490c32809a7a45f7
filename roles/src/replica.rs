//! An API replica (`toolmark api`): serves the API from its own index, which follows the log's
//! published files ([`crate::follower`]), and writes nothing but that index. Stateless for
//! clients: any number may serve one log; two at the same tree size answer alike.

use std::sync::Arc;
use std::time::Duration;

use toolmark_config::Config;

use crate::follower::{self, FollowerStatus, SnapshotPolicy};
use crate::jobs::data_dir;
use crate::{RoleError, Stop};

/// How a replica joins and whether it publishes index snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshots {
    /// Join from the bucket's newest snapshot when there is no index (otherwise derive it from
    /// the whole log).
    pub join: bool,
    /// Publish snapshots at this cadence (one publisher per cluster is enough).
    pub publish: Option<SnapshotPolicy>,
}

/// Serves `config`'s API from a local index that follows the log in `config`'s stores, polling
/// every `interval`, until `stop`. The first pass runs before the API listens, so a replica
/// never answers from an index behind the log it starts on (a new replica with no index joins
/// from the newest index snapshot when `snapshots.join` and one passes every check, and derives
/// the rest, or everything, from the log first). The index is created in the data directory when
/// missing; the answer key must be the cluster's (every replica signs with it).
pub async fn run(
    config: Config,
    interval: Duration,
    snapshots: Snapshots,
    stop: Stop,
) -> Result<(), RoleError> {
    let dir = data_dir(&config);
    std::fs::create_dir_all(dir.root()).map_err(RoleError::doing(format!(
        "creating the data directory {}",
        dir.root().display()
    )))?;
    let status = Arc::new(FollowerStatus::default());
    // With the cluster's PostgreSQL, the index lists the registry's servers from its harvests
    // and records its runs. Two kept connections: the follower's (its run reports read a whole
    // run's results once a run) and the API readers' (client reports, run history).
    let (db, follower_db) = match crate::cluster::queue_url(&config) {
        Ok(url) => {
            // The database client blocks: off the async workers.
            let (db, follower_db) = tokio::task::spawn_blocking(move || {
                let connect =
                    |role| crate::shared::Db::connect(&url, &crate::cluster::holder(role));
                Ok::<_, toolmark_queue::QueueError>((connect("api")?, connect("api-follower")?))
            })
            .await
            .map_err(RoleError::doing("connecting to the cluster's database"))?
            .map_err(RoleError::doing("the cluster's database"))?;
            (Some(Arc::new(db)), Some(Arc::new(follower_db)))
        }
        Err(_) => (None, None),
    };
    {
        let (d, s, l) = (dir.clone(), status.clone(), follower_db.clone());
        let first = tokio::task::spawn_blocking(move || {
            if snapshots.join {
                follower::join_from_snapshot(&d, &s);
            }
            follower::follow_once(&d, &s, l.as_deref())
        })
        .await
        .map_err(RoleError::doing("the first follow pass"))??;
        tracing::info!("replica index at {first} entries; following every {interval:?}");
    }
    let (listener, bound, base) = crate::api::listen(&config).await?;
    let mut state = crate::api::open_state(&dir, &base, &config.api_options())?;
    match &db {
        Some(db) => {
            state.client_reports = toolmark_api::contribute::ClientReports::over(Box::new(
                crate::reports::SharedReports::new(db.clone()),
            ))
            .keyed(&state.answer_key);
            state.jobs = Some(crate::api::cluster_jobs(db.clone()));
        }
        None => tracing::warn!(
            "no PostgreSQL in [storage] head: this replica keeps its client reports to itself \
             (in its data directory); replicas of one log should share them"
        ),
    }
    let metrics = status.clone();
    state.extra_metrics = Some(Arc::new(move || metrics.prometheus()));
    tracing::info!(
        "toolmark {} replica serving http://{bound}/ (public base {base})",
        env!("CARGO_PKG_VERSION")
    );
    if let Ok(url) = crate::cluster::queue_url(&config) {
        // The cluster's popularity snapshot, installed when the workers refresh it.
        let (dir, names, stop) = (dir.clone(), state.names.clone(), stop.clone());
        std::thread::Builder::new()
            .name("popularity snapshots".into())
            .spawn(move || {
                crate::cluster::popularity::run_installs(
                    &url,
                    &crate::cluster::holder("api"),
                    &dir,
                    &names,
                    &stop,
                );
            })
            .map_err(RoleError::doing("starting the popularity snapshots"))?;
    }
    if let Some(deliveries) = deliveries(&config, &base)? {
        let (runtime, stop) = (tokio::runtime::Handle::current(), stop.clone());
        std::thread::Builder::new()
            .name("webhook passes".into())
            .spawn(move || deliveries.run(&runtime, &stop))
            .map_err(RoleError::doing("starting the webhook passes"))?;
    }
    tokio::spawn(follower::follow(
        dir,
        status,
        interval,
        snapshots.publish,
        follower_db,
        stop.clone(),
    ));
    toolmark_api::serve(
        listener,
        state,
        config.http.limits(),
        stop.cancelled_owned(),
    )
    .await
    .map_err(RoleError::doing("serving"))
}

/// The webhook passes of a replica whose configuration lists `[[webhooks]]` and whose
/// `[storage] head` is the cluster's PostgreSQL (the delivery state every replica shares);
/// `None` otherwise (a replica without PostgreSQL delivers nothing, and says so).
fn deliveries(
    config: &Config,
    base: &str,
) -> Result<Option<crate::cluster::webhooks::Deliveries>, RoleError> {
    let Some(deliverer) = crate::jobs::deliverer(config, base)? else {
        return Ok(None);
    };
    let Ok(url) = crate::cluster::queue_url(config) else {
        tracing::warn!(
            "[[webhooks]] are delivered by replicas sharing PostgreSQL ([storage] head): \
             this replica delivers none"
        );
        return Ok(None);
    };
    Ok(Some(crate::cluster::webhooks::Deliveries::new(
        &url,
        &crate::cluster::holder("api"),
        deliverer,
        crate::cluster::worker_lease(config),
    )))
}
