//! Observing many remotes at once: per-host politeness, a global cap, one deadline each.
//!
//! The scheduler keeps a queue per host (the URL's host, lower-cased: the unit a server
//! operator sees load on) and starts an observation whenever a global slot is free and some
//! host is below its limit, always choosing the host with the most expected work left, and on
//! that host the target expected to take longest (longest-processing-time first). Expected
//! durations come from [`Hint`]s — how long each remote's previous observation took — and
//! default to [`DEFAULT_EXPECTED`], so a first crawl orders hosts by how many targets they have.
//! Work on one host never waits behind another host's slow endpoints, and what would finish
//! last starts first, which keeps the wall time close to the schedule's lower bound (see
//! `docs/benchmarks.md`).
//!
//! The per-host limit also applies per resolved address ([`AddressGate`]): once the SSRF guard
//! has resolved a target, its observation waits until each address it may dial has fewer than
//! `per_host` observations. All observations share [`ClientConfig::budget`]; each one's grant,
//! shrunk to what its pages hold, goes with them to `on_outcome` in [`Outcome::grant`] (see
//! [`crate::budget`]).
//!
//! Every observation runs in its own task under [`crate::mcp::observe`]'s deadline; a panic in
//! one (there should be none) is reported as that target's `protocol` failure and never
//! disturbs another. Skipped targets and packages are passed through without a connection.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::task::JoinSet;

use crate::budget::{AddressGate, Grant};
use crate::mcp::{self, ClientConfig};
use crate::observe::{Observation, Status, Transport};
use crate::registry::{Target, TargetKind};

/// How a crawl runs.
#[derive(Clone)]
pub struct CrawlConfig {
    /// The client every observation uses.
    pub client: ClientConfig,
    /// Observations in flight per host ([`crate::limits::PER_HOST_CONCURRENCY`]).
    pub per_host: usize,
    /// Observations in flight overall ([`crate::limits::MAX_CONCURRENT_OBSERVATIONS`]).
    pub concurrency: usize,
    /// Set to stop taking new targets; observations in flight finish (graceful shutdown).
    pub stop: Arc<AtomicBool>,
    /// What earlier crawls learned about remotes, by URL.
    pub hints: Arc<HashMap<String, Hint>>,
}

/// What an earlier crawl learned about one remote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hint {
    /// The transport that answered last time (tried first).
    pub transport: Option<Transport>,
    /// How long the last observation took (for longest-first scheduling).
    pub expected: Option<Duration>,
}

/// The expected duration of a remote never observed before: a typical session-era observation
/// (four round trips of ~250 ms).
pub const DEFAULT_EXPECTED: Duration = Duration::from_secs(1);

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            client: ClientConfig::default(),
            per_host: crate::limits::PER_HOST_CONCURRENCY,
            concurrency: crate::limits::MAX_CONCURRENT_OBSERVATIONS,
            stop: Arc::new(AtomicBool::new(false)),
            hints: Arc::new(HashMap::new()),
        }
    }
}

/// What happened to one target.
#[derive(Debug)]
pub struct Outcome {
    /// The target.
    pub target: Target,
    /// The observation, for a dialled remote; `None` for skipped targets and packages.
    pub observation: Option<Observation>,
    /// The share of [`ClientConfig::budget`] the observation's pages are accounted to (shrunk
    /// to what they hold); it returns to the budget when dropped. Keep it as long as the pages
    /// are kept (a consumer batching outcomes drops it once the batch is recorded), and drop it
    /// within a bounded time: observations waiting for budget may be waiting for it.
    pub grant: Option<Grant>,
}

/// Observe every dialable remote of `targets`; `on_outcome` is called once per target as soon
/// as it is done (skipped targets and packages first). Returns how many targets were left
/// unobserved because [`CrawlConfig::stop`] was set.
pub async fn crawl(
    config: &CrawlConfig,
    targets: Vec<Target>,
    mut on_outcome: impl FnMut(Outcome),
) -> usize {
    // Per host: targets sorted so the longest expected is last (popped first), and the sum of
    // expected work left.
    let expected = |t: &Target| -> Duration {
        match &t.kind {
            TargetKind::Remote { url, .. } => config
                .hints
                .get(url)
                .and_then(|h| h.expected)
                .unwrap_or(DEFAULT_EXPECTED),
            TargetKind::Package { .. } => Duration::ZERO,
        }
    };
    let mut queues: HashMap<String, (Vec<(Duration, Target)>, Duration)> = HashMap::new();
    for target in targets {
        match (&target.kind, &target.skip) {
            (TargetKind::Remote { url, .. }, None) => {
                let e = expected(&target);
                let q = queues.entry(host_key(url)).or_default();
                q.0.push((e, target));
                q.1 += e;
            }
            _ => on_outcome(Outcome {
                target,
                observation: None,
                grant: None,
            }),
        }
    }
    for (q, _) in queues.values_mut() {
        q.sort_by_key(|(e, _)| *e);
    }
    let mut in_flight: HashMap<String, usize> = HashMap::new();
    let mut tasks: JoinSet<(String, Target, Observation, Option<Grant>)> = JoinSet::new();
    // The per-host limit again, per resolved address: many names for one address share it.
    let addresses = Arc::new(AddressGate::new(config.per_host));
    let mut abandoned = 0;
    loop {
        let stopping = config.stop.load(Ordering::Relaxed);
        while !stopping && tasks.len() < config.concurrency.max(1) {
            let next = queues
                .iter()
                .filter(|(h, (q, _))| {
                    !q.is_empty()
                        && in_flight.get(*h).copied().unwrap_or(0) < config.per_host.max(1)
                })
                .max_by(|a, b| (a.1).1.cmp(&(b.1).1).then_with(|| b.0.cmp(a.0)))
                .map(|(h, _)| h.clone());
            let Some(host) = next else { break };
            let Some(target) = queues.get_mut(&host).and_then(|(q, left)| {
                let (e, target) = q.pop()?;
                *left = left.saturating_sub(e);
                Some(target)
            }) else {
                break;
            };
            *in_flight.entry(host.clone()).or_default() += 1;
            let client = config.client.clone();
            let gate = addresses.clone();
            let hint = match &target.kind {
                TargetKind::Remote { url, .. } => config.hints.get(url).and_then(|h| h.transport),
                TargetKind::Package { .. } => None,
            };
            tasks.spawn(async move {
                let (url, transport) = match &target.kind {
                    TargetKind::Remote { url, transport } => (url.clone(), transport.clone()),
                    TargetKind::Package { .. } => unreachable!("only remotes are queued"),
                };
                // The observation runs in its own task so a panic (a bug of ours) becomes this
                // target's failure instead of losing the target.
                let inner = tokio::spawn(async move {
                    mcp::observe_gated(&client, &url, &transport, hint, Some(&gate)).await
                });
                let (observation, grant) = inner.await.unwrap_or_else(|e| {
                    let mut failed = Observation::start();
                    failed.status = Status::Protocol;
                    failed.detail = format!("internal: observation task failed: {e}");
                    (failed, None)
                });
                (host, target, observation, grant)
            });
        }
        if stopping {
            abandoned += queues.values().map(|(q, _)| q.len()).sum::<usize>();
            queues.clear();
        }
        let Some(done) = tasks.join_next().await else {
            break;
        };
        match done {
            Ok((host, target, observation, grant)) => {
                if let Some(n) = in_flight.get_mut(&host) {
                    *n = n.saturating_sub(1);
                }
                // The pages stay accounted to the grant for as long as the consumer keeps it.
                on_outcome(Outcome {
                    target,
                    observation: Some(observation),
                    grant,
                });
            }
            Err(e) => {
                // Only a cancelled outer task gets here (the runtime shutting down).
                eprintln!("toolmark crawler: observation task lost: {e}");
            }
        }
    }
    abandoned
}

/// The politeness key of a URL: its host, lower-cased, without port, userinfo or a root dot
/// (`name.example.` is the host `name.example`).
pub fn host_key(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => u
            .host_str()
            .unwrap_or("")
            .trim_end_matches('.')
            .to_ascii_lowercase(),
        Err(_) => url.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Target;
    use std::time::Duration;
    use toolmark_standins::fleet::{Fleet, FleetSpec};

    /// Setting `stop` mid-crawl: the observations in flight finish and are delivered, nothing
    /// new starts, and every target not observed is counted as abandoned.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stop_finishes_what_is_in_flight_and_counts_the_rest() {
        let fleet = Fleet::start(FleetSpec {
            hosts: 1,
            endpoints_per_host: 10,
            latency: (Duration::from_millis(100), Duration::from_millis(100)),
            seed: 3,
            tool_sets: vec![r#"{"tools":[]}"#.into()],
        })
        .await
        .unwrap();
        let targets: Vec<Target> = fleet
            .urls()
            .into_iter()
            .map(|url| Target {
                server: "io.example/s".into(),
                version: "1".into(),
                kind: TargetKind::Remote {
                    transport: "streamable-http".into(),
                    url,
                },
                skip: None,
            })
            .collect();
        let mut config = CrawlConfig::default();
        config.client.policy.allow_private = true;
        let stop = config.stop.clone();
        let mut observed = 0;
        let abandoned = crawl(&config, targets, |outcome| {
            assert!(outcome.observation.is_some());
            observed += 1;
            stop.store(true, Ordering::Relaxed);
        })
        .await;
        // Two were in flight (the per-host limit) when the first finished and set `stop`.
        assert_eq!(observed, 2);
        assert_eq!(abandoned, 8);
        assert_eq!(fleet.requests().tools_list, 2);
        fleet.shutdown(Duration::from_secs(1)).await;
    }

    #[test]
    fn host_keys() {
        assert_eq!(host_key("https://A.example.com:8443/mcp"), "a.example.com");
        assert_eq!(host_key("http://127.0.0.2:80/x"), "127.0.0.2");
        assert_eq!(host_key("https://[::1]/"), "[::1]");
        assert_eq!(host_key("https://Name.Example./mcp"), "name.example");
    }
}
