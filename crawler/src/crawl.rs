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
//! `per_host` observations. At most [`CrawlConfig::waiting_per_address`] wait at one address;
//! a target finding its address full is set aside without a slot and put back on its host's
//! queue when the address has room, so many names on one shared address cannot take every
//! global slot. Waits end when [`CrawlConfig::stop`] is cancelled (the target counts as abandoned). All observations share [`ClientConfig::budget`]; each one's grant,
//! shrunk to what its pages hold, goes with them to `on_outcome` in [`Outcome::grant`] (see
//! [`crate::budget`]).
//!
//! Every observation runs in its own task under [`crate::mcp::observe`]'s deadline; a panic in
//! one (there should be none) is reported as that target's `protocol` failure and never
//! disturbs another. Skipped targets and packages are passed through without a connection.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::budget::{AddressGate, Grant};
use crate::guard;
use crate::mcp::{self, ClientConfig, Gated, Start};
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
    /// Observations that may wait at one busy address beyond the `per_host` running there
    /// ([`crate::limits::MAX_WAITING_PER_ADDRESS`]); more are set aside without a slot.
    pub waiting_per_address: usize,
    /// Cancel to stop taking new targets; observations running finish (graceful shutdown),
    /// those still waiting for DNS, their address or budget give up at once and count as
    /// abandoned.
    pub stop: CancellationToken,
    /// What earlier crawls learned about remotes, by URL.
    pub hints: Arc<HashMap<String, Hint>>,
    /// Today, in days since the Unix epoch (UTC): picks which remotes whose hint names an older
    /// transport are probed afresh in this crawl ([`crate::limits::REPROBE_DAYS`]), and which
    /// remotes read their surface and make their second look ([`CrawlConfig::surface_days`]).
    pub day: u64,
    /// A remote whose surface was read in an earlier crawl ([`Hint::surface_read`]) reads it
    /// again, with its Server Card, on one day in this many, chosen by its URL (`crawl.surface_days`,
    /// [`crate::limits::SURFACE_DAYS`]; 1: every crawl). A remote with no such hint reads it
    /// in this crawl.
    pub surface_days: u64,
    /// As [`CrawlConfig::surface_days`], for the second look (`crawl.second_look_days`,
    /// [`crate::limits::SECOND_LOOK_DAYS`]), on another day of the rotation.
    pub second_look_days: u64,
}

/// What an earlier crawl learned about one remote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hint {
    /// The transport that answered last time (tried first).
    pub transport: Option<Transport>,
    /// How long the last observation took (for longest-first scheduling).
    pub expected: Option<Duration>,
    /// Whether an earlier crawl read the remote's surface: from then on it is read one crawl
    /// in [`CrawlConfig::surface_days`] (a hint at all: the second look is made one crawl in
    /// [`CrawlConfig::second_look_days`]).
    pub surface_read: bool,
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
            waiting_per_address: crate::limits::MAX_WAITING_PER_ADDRESS,
            stop: CancellationToken::new(),
            hints: Arc::new(HashMap::new()),
            day: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() / 86_400),
            surface_days: crate::limits::SURFACE_DAYS,
            second_look_days: crate::limits::SECOND_LOOK_DAYS,
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

/// A target queued on its host: its expected duration, the target, and the address key it was
/// set aside for if it was (see [`crawl`]).
type Queued = (Duration, Target, Option<IpAddr>);

/// An observation's place in its host's limit: given back to the crawl when dropped, which the
/// observation does as soon as its listing is over (before the `DELETE` that ends a session) or,
/// at the latest, when its task ends (even by a panic).
pub(crate) struct HostSlot {
    host: String,
    back: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        // The crawl outlives its tasks; a send fails only when it has returned.
        let _ = self.back.send(std::mem::take(&mut self.host));
    }
}

/// How one observation task ended.
enum Finished {
    Observed(Target, Box<Observation>, Option<Grant>),
    /// Set aside: an address it resolved to was full.
    Busy(Target, IpAddr),
    /// The stop token was cancelled while it waited.
    Abandoned,
}

/// Observe every dialable remote of `targets`; `on_outcome` is called once per target as soon
/// as it is done (skipped targets and packages first). Returns how many targets were left
/// unobserved because [`CrawlConfig::stop`] was set: never started, set aside, or given up
/// while waiting for DNS, their address or budget (such a target gets no `on_outcome` call).
///
/// A target whose address already has [`CrawlConfig::waiting_per_address`] observations
/// waiting beyond those running is set aside, holding no slot, and put back on its host's queue
/// (in its longest-first place) when an observation returns and the address has room, so one
/// busy address never takes more than `per_host + waiting_per_address` global slots.
pub async fn crawl(
    config: &CrawlConfig,
    targets: Vec<Target>,
    on_outcome: impl FnMut(Outcome),
) -> usize {
    crawl_with(config, targets, &Refusals::default(), on_outcome, |_| {}).await
}

/// The origins that refused the `server/discover` probe (see [`start`]): by origin
/// ([`origin_key`]), the implementations that refused it there. [`crawl`] keeps one for its
/// own length; a caller running many crawls over one registry run shares one across them
/// ([`crawl_with`]: the cluster's worker, one crawl a job, keeps one per run it holds), so an
/// origin that refused the probe is probed about once, as in one crawl. It holds at most one
/// entry per remote target of the crawls sharing it (an origin and an implementation each): the
/// sharer bounds it by what it shares it over.
#[derive(Debug, Default)]
pub struct Refusals(std::sync::Mutex<HashMap<String, HashSet<String>>>);

impl Refusals {
    /// The implementations that refused the probe at `origin`, if any did.
    fn at(&self, origin: &str) -> Option<HashSet<String>> {
        self.locked().get(origin).cloned()
    }

    /// `who` refused the probe at `origin`.
    fn add(&self, origin: String, who: String) {
        self.locked().entry(origin).or_default().insert(who);
    }

    /// How many origins are known to refuse the probe.
    pub fn origins(&self) -> usize {
        self.locked().len()
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashSet<String>>> {
        // Held only for a look-up or an insert, which cannot leave the map half-written.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// [`crawl`], with the origins that refused the probe read from and added to `refusals`
/// (shared with other crawls), and `on_place_back` called with a target's host as soon as its
/// observation gives its place in the host's limit back: its last request inside the limit is
/// done (only the `DELETE` that ends its session, if any, may follow). Called once per target
/// dialled (also for those set aside or abandoned), before that target's `on_outcome`.
pub async fn crawl_with(
    config: &CrawlConfig,
    targets: Vec<Target>,
    refusals: &Refusals,
    mut on_outcome: impl FnMut(Outcome),
    mut on_place_back: impl FnMut(&str),
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
    let mut queues: HashMap<String, (Vec<Queued>, Duration)> = HashMap::new();
    for target in targets {
        match (&target.kind, &target.skip) {
            (TargetKind::Remote { url, declared, .. }, None) => {
                let e = expected(&target);
                let q = queues.entry(host_key(&declared.dial_url(url))).or_default();
                q.0.push((e, target, None));
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
        q.sort_by_key(|(e, ..)| *e);
    }
    let mut in_flight: HashMap<String, usize> = HashMap::new();
    // Places in a host's limit come back through this channel ([`HostSlot`]).
    let (slot_back, mut slots_back) = tokio::sync::mpsc::unbounded_channel::<String>();
    let mut tasks: JoinSet<(Option<IpAddr>, Finished)> = JoinSet::new();
    // The per-host limit again, per resolved address: many names for one address share it.
    let addresses = Arc::new(AddressGate::new(
        config.per_host,
        config.waiting_per_address,
    ));
    // Targets set aside by address key, and how many put back from each are not yet done.
    let mut parked: HashMap<IpAddr, Vec<(Duration, Target)>> = HashMap::new();
    let mut returning: HashMap<IpAddr, usize> = HashMap::new();
    let mut abandoned = 0;
    loop {
        let stopping = config.stop.is_cancelled();
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
            let Some((target, from)) = queues.get_mut(&host).and_then(|(q, left)| {
                let (e, target, from) = q.pop()?;
                *left = left.saturating_sub(e);
                Some((target, from))
            }) else {
                break;
            };
            *in_flight.entry(host.clone()).or_default() += 1;
            let slot = HostSlot {
                host: host.clone(),
                back: slot_back.clone(),
            };
            let mut client = config.client.clone();
            if let TargetKind::Remote { url, .. } = &target.kind {
                let deeper = deeper_looks(config, url);
                client.limits.surface &= deeper.surface;
                client.limits.second_look &= deeper.second_look;
            }
            let gate = addresses.clone();
            let stop = config.stop.clone();
            let start = match &target.kind {
                TargetKind::Remote { url, declared, .. } => {
                    start(config, url, &declared.dial_url(url), refusals)
                }
                TargetKind::Package { .. } => Start::default(),
            };
            tasks.spawn(async move {
                let (url, transport, declared) = match &target.kind {
                    TargetKind::Remote {
                        url,
                        transport,
                        declared,
                    } => (url.clone(), transport.clone(), declared.clone()),
                    TargetKind::Package { .. } => unreachable!("only remotes are queued"),
                };
                // The observation runs in its own task so a panic (a bug of ours) becomes this
                // target's failure instead of losing the target.
                let inner = tokio::spawn(async move {
                    let waits = mcp::Waits {
                        gate: Some(&gate),
                        stop: Some(&stop),
                        slot: Some(slot),
                    };
                    mcp::observe_gated(&client, &url, &transport, &declared, start, waits).await
                });
                let finished = match inner.await {
                    Ok(Gated::Done(observation, grant)) => {
                        Finished::Observed(target, observation, grant)
                    }
                    Ok(Gated::Busy(key)) => Finished::Busy(target, key),
                    Ok(Gated::Abandoned) => Finished::Abandoned,
                    Err(e) => {
                        let mut failed = Observation::remote();
                        failed.status = Status::Protocol;
                        failed.detail = format!("internal: observation task failed: {e}");
                        Finished::Observed(target, Box::new(failed), None)
                    }
                };
                (from, finished)
            });
        }
        if stopping {
            abandoned += queues.values().map(|(q, _)| q.len()).sum::<usize>();
            abandoned += parked.values().map(Vec::len).sum::<usize>();
            queues.clear();
            parked.clear();
        }
        let done = tokio::select! {
            biased;
            Some(host) = slots_back.recv() => {
                // A place in a host's limit (and its address's) is free again.
                if let Some(n) = in_flight.get_mut(&host) {
                    *n = n.saturating_sub(1);
                }
                on_place_back(&host);
                unpark(&mut parked, &mut queues, &mut returning, &addresses);
                continue;
            }
            done = tasks.join_next() => done,
        };
        let Some(done) = done else {
            if parked.is_empty() {
                break;
            }
            // Nothing runs, so every address has room: put targets back and go on.
            unpark(&mut parked, &mut queues, &mut returning, &addresses);
            continue;
        };
        match done {
            Ok((from, finished)) => {
                // The host's place came back through `slots_back` (the task's HostSlot).
                if let Some(key) = from
                    && let Some(n) = returning.get_mut(&key)
                {
                    *n = n.saturating_sub(1);
                }
                match finished {
                    // The pages stay accounted to the grant for as long as the consumer keeps it.
                    Finished::Observed(target, observation, grant) => {
                        if refused_discover(&observation)
                            && let TargetKind::Remote { url, declared, .. } = &target.kind
                            && let Some(who) =
                                mcp::implementation(observation.initialize.as_deref())
                        {
                            let origin = origin_key(&declared.dial_url(url));
                            refusals.add(origin, who);
                        }
                        on_outcome(Outcome {
                            target,
                            observation: Some(*observation),
                            grant,
                        })
                    }
                    Finished::Busy(target, key) => {
                        let e = expected(&target);
                        parked.entry(key).or_default().push((e, target));
                    }
                    Finished::Abandoned => abandoned += 1,
                }
                // Whatever ended, an address may have room now.
                unpark(&mut parked, &mut queues, &mut returning, &addresses);
            }
            Err(e) => {
                // Only a cancelled outer task gets here (the runtime shutting down).
                eprintln!("toolmark crawler: observation task lost: {e}");
            }
        }
    }
    abandoned
}

/// How the observation of the remote `url` (dialled as `dial`) starts:
///
/// - Its own hint from an earlier crawl names the transport tried first. A hint naming an older
///   transport spares it the `server/discover` probe, except on its re-probe day (one day in
///   [`crate::limits::REPROBE_DAYS`], chosen by its URL), when it starts afresh with the probe.
/// - Without a hint, when other endpoints of its origin refused the probe in this crawl (or
///   in a crawl sharing its [`Refusals`]), it
///   starts with streamable HTTP, and is probed after its listing unless it answered as one of
///   the implementations that refused ([`mcp::Start::refused_by`]).
/// - Otherwise the usual order: the probe first.
fn start(config: &CrawlConfig, url: &str, dial: &str, refusals: &Refusals) -> Start {
    match config.hints.get(url).and_then(|h| h.transport) {
        Some(t) if t != Transport::Stateless && reprobes_on(url, config.day) => Start::default(),
        Some(t) => Start {
            hint: Some(t),
            refused_by: None,
        },
        None => match refusals.at(&origin_key(dial)) {
            Some(refused) => Start {
                hint: Some(Transport::StreamableHttp),
                refused_by: Some(refused),
            },
            None => Start::default(),
        },
    }
}

/// Whether the remote `url`, when its hint names a transport older than 2026-07-28, is probed
/// afresh on `day` (days since the Unix epoch): one day in [`crate::limits::REPROBE_DAYS`],
/// chosen by its URL ([`rotates_on`]).
pub fn reprobes_on(url: &str, day: u64) -> bool {
    rotates_on(url, day, crate::limits::REPROBE_DAYS, 0)
}

/// Whether `url`'s turn comes on `day` (days since the Unix epoch) in a rotation of `every`
/// days: one day in `every`, chosen by FNV-1a of the URL shifted by `phase` (so two rotations
/// of one length fall on different days), the same in every process, spreading remotes evenly
/// over the days. Every day when `every` is 0 or 1.
pub fn rotates_on(url: &str, day: u64, every: u64, phase: u64) -> bool {
    if every <= 1 {
        return true;
    }
    let hash = url.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash.wrapping_add(phase) % every == day % every
}

/// What an observation of a remote reads beyond its tools in this crawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeeperLooks {
    /// The surface beyond `tools/list` and the Server Card.
    pub surface: bool,
    /// The second look (cloaking).
    pub second_look: bool,
}

/// Which of the looks beyond `tools/list` the remote `url` takes in this crawl (each also needs
/// its own switch on, `crawl.surface` and `crawl.second_look`): the surface when no earlier
/// crawl read it ([`Hint::surface_read`]), the second look when no earlier crawl observed the
/// remote (no hint); else each on its own rotation day ([`CrawlConfig::surface_days`],
/// [`CrawlConfig::second_look_days`]; phases 2 and 4, so when both lengths are 7 a remote does
/// not take both, or its re-probe, on one day). This is what keeps a daily crawl near the
/// tools-only crawl's time (docs/benchmarks.md, "The surface beyond tools/list").
pub fn deeper_looks(config: &CrawlConfig, url: &str) -> DeeperLooks {
    let hint = config.hints.get(url);
    DeeperLooks {
        surface: !hint.is_some_and(|h| h.surface_read)
            || rotates_on(url, config.day, config.surface_days, 2),
        second_look: hint.is_none() || rotates_on(url, config.day, config.second_look_days, 4),
    }
}

/// Whether `obs` shows its server does not speak 2026-07-28: its `server/discover` probe
/// failed and another transport answered (before the probe, when it came after a listing).
fn refused_discover(obs: &Observation) -> bool {
    let Some(dialled) = obs.dialled() else {
        return false;
    };
    let refused = dialled
        .attempts
        .iter()
        .any(|a| a.transport == Transport::Stateless && a.status != Status::Ok);
    refused
        && dialled
            .attempts
            .iter()
            .any(|a| a.transport != Transport::Stateless && a.status == Status::Ok)
}

/// Put targets set aside back on their hosts' queues, longest expected first, as many per
/// address key as it has room for: its capacity less its occupants and the targets already put
/// back and not yet done.
fn unpark(
    parked: &mut HashMap<IpAddr, Vec<(Duration, Target)>>,
    queues: &mut HashMap<String, (Vec<Queued>, Duration)>,
    returning: &mut HashMap<IpAddr, usize>,
    gate: &AddressGate,
) {
    parked.retain(|key, waiting| {
        let pending = returning.get(key).copied().unwrap_or(0);
        let room = gate
            .capacity()
            .saturating_sub(gate.occupants(*key))
            .saturating_sub(pending);
        for _ in 0..room {
            let Some(longest) = (0..waiting.len()).max_by_key(|&i| waiting[i].0) else {
                break;
            };
            let (e, target) = waiting.swap_remove(longest);
            let host = match &target.kind {
                TargetKind::Remote { url, .. } => host_key(url),
                TargetKind::Package { .. } => unreachable!("only remotes are queued"),
            };
            let (q, left) = queues.entry(host).or_default();
            let at = q.partition_point(|(x, ..)| *x <= e);
            q.insert(at, (e, target, Some(*key)));
            *left += e;
            *returning.entry(*key).or_default() += 1;
        }
        !waiting.is_empty()
    });
    returning.retain(|_, n| *n > 0);
}

/// The key of what the crawl learns about a server's protocol: the URL's origin, as
/// `scheme://host:port` with the host lower-cased and its root dot dropped and the port always
/// written (80 and 443 when the URL leaves it out). Servers on other ports of one host are
/// other servers.
pub fn origin_key(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = guard::strip_root_dot(&mut u);
            let host = u.host_str().unwrap_or("").to_ascii_lowercase();
            match u.port_or_known_default() {
                Some(port) => format!("{}://{host}:{port}", u.scheme()),
                None => format!("{}://{host}", u.scheme()),
            }
        }
        Err(_) => url.to_ascii_lowercase(),
    }
}

/// The politeness key of a URL: its host, lower-cased, without port, userinfo or a root dot
/// (`name.example.` is the host `name.example`, as [`guard::strip_root_dot`] pins it).
pub fn host_key(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            // A host of dots only stays as it is (the guard refuses it as a bad URL).
            let _ = guard::strip_root_dot(&mut u);
            u.host_str().unwrap_or("").to_ascii_lowercase()
        }
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
                    declared: Default::default(),
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
            stop.cancel();
        })
        .await;
        // Two were in flight (the per-host limit) and, once their listings were over, two more
        // started while the first two ended their sessions; the first to finish set `stop`. What
        // was in flight finished, nothing else started, and every other target is abandoned.
        assert!((2..=4).contains(&observed), "{observed}");
        assert_eq!(abandoned, 10 - observed);
        // Each observed is listed twice: its own listing and the second look.
        assert_eq!(fleet.requests().tools_list, 2 * observed as u64);
        fleet.shutdown(Duration::from_secs(1)).await;
    }

    #[test]
    fn origin_keys_write_the_port() {
        assert_eq!(
            origin_key("https://A.example.com/mcp"),
            "https://a.example.com:443"
        );
        assert_eq!(
            origin_key("https://a.example.com:8443/mcp"),
            "https://a.example.com:8443"
        );
        assert_eq!(origin_key("http://127.0.0.2/x"), "http://127.0.0.2:80");
        assert_eq!(origin_key("http://127.0.0.2:81/x"), "http://127.0.0.2:81");
        assert_eq!(
            origin_key("https://Name.Example./mcp"),
            "https://name.example:443"
        );
    }

    #[test]
    fn remotes_with_an_older_hint_are_reprobed_one_day_in_seven() {
        let days: Vec<u64> = (0..crate::limits::REPROBE_DAYS)
            .filter(|d| {
                let config = CrawlConfig {
                    day: 20_000 + d,
                    hints: Arc::new(HashMap::from([(
                        "https://a.example/mcp".to_owned(),
                        Hint {
                            transport: Some(Transport::StreamableHttp),
                            ..Hint::default()
                        },
                    )])),
                    ..CrawlConfig::default()
                };
                let s = start(
                    &config,
                    "https://a.example/mcp",
                    "https://a.example/mcp",
                    &Refusals::default(),
                );
                s.hint.is_none()
            })
            .collect();
        assert_eq!(days.len(), 1, "{days:?}");
    }

    /// The looks beyond `tools/list` a remote takes on each of the 7 days from day 20,000.
    fn looks_over_a_week(hint: Option<Hint>, days: u64) -> Vec<DeeperLooks> {
        let url = "https://a.example/mcp";
        (0..7)
            .map(|d| {
                let config = CrawlConfig {
                    day: 20_000 + d,
                    hints: Arc::new(hint.map(|h| (url.to_owned(), h)).into_iter().collect()),
                    surface_days: days,
                    second_look_days: days,
                    ..CrawlConfig::default()
                };
                deeper_looks(&config, url)
            })
            .collect()
    }

    #[test]
    fn a_remote_whose_surface_was_read_reads_it_and_looks_twice_one_day_in_seven_each() {
        let hint = Hint {
            surface_read: true,
            ..Hint::default()
        };
        let week = looks_over_a_week(Some(hint), crate::limits::SURFACE_DAYS);
        let surface: Vec<usize> = (0..7).filter(|&d| week[d].surface).collect();
        let second: Vec<usize> = (0..7).filter(|&d| week[d].second_look).collect();
        assert_eq!((surface.len(), second.len()), (1, 1), "{week:?}");
        assert_ne!(surface, second, "the two looks fall on different days");
    }

    #[test]
    fn a_remote_never_seen_takes_both_looks_every_day() {
        let everything = DeeperLooks {
            surface: true,
            second_look: true,
        };
        assert_eq!(looks_over_a_week(None, 7), vec![everything; 7]);
    }

    #[test]
    fn a_remote_seen_without_its_surface_reads_it_and_looks_twice_one_day_in_seven() {
        // Observed before (a hint), its surface never read (made before it was, or with
        // `crawl.surface` off): the surface every crawl, the second look on its rotation day.
        let seen = Hint {
            transport: Some(Transport::StreamableHttp),
            ..Hint::default()
        };
        let week = looks_over_a_week(Some(seen), 7);
        assert!(week.iter().all(|l| l.surface), "{week:?}");
        assert_eq!(week.iter().filter(|l| l.second_look).count(), 1, "{week:?}");
    }

    #[test]
    fn surface_days_of_one_reads_the_surface_every_crawl() {
        let hint = Hint {
            surface_read: true,
            ..Hint::default()
        };
        assert!(
            looks_over_a_week(Some(hint), 1)
                .iter()
                .all(|l| l.surface && l.second_look)
        );
    }

    #[test]
    fn host_keys() {
        assert_eq!(host_key("https://A.example.com:8443/mcp"), "a.example.com");
        assert_eq!(host_key("http://127.0.0.2:80/x"), "127.0.0.2");
        assert_eq!(host_key("https://[::1]/"), "[::1]");
        assert_eq!(host_key("https://Name.Example./mcp"), "name.example");
    }
}
