//! `/health` and `/metrics` of the cluster's scheduler, worker and sequencer, on each role's
//! `listen` address: whether the role's last pass over the queue went well, whether it holds
//! its lease, what it did (counters of its own), and the queue as a whole (jobs by kind and
//! state, lease expiries, hand-offs waiting, host places held), read from PostgreSQL at each
//! scrape.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use toolmark_config::Config;
use toolmark_queue::{Overview, Queue};

use crate::{RoleError, Stop};

/// What one role process knows of itself.
#[derive(Debug)]
pub struct RoleStatus {
    role: &'static str,
    holder: OnceLock<String>,
    /// Holds its role's lease (the scheduler, the sequencer); a worker is always active.
    active: AtomicBool,
    passes_ok: AtomicU64,
    passes_failed: AtomicU64,
    /// The last pass's error, while the role is failing.
    failing: Mutex<Option<String>>,
    last_ok: Mutex<Option<SystemTime>>,
    /// The log's size after the sequencer's last append (0 for other roles).
    log_size: AtomicU64,
    events: Mutex<BTreeMap<&'static str, u64>>,
}

impl RoleStatus {
    /// A role's status, not yet active, with no pass run.
    pub fn new(role: &'static str) -> Arc<RoleStatus> {
        Arc::new(RoleStatus {
            role,
            holder: OnceLock::new(),
            active: AtomicBool::new(false),
            passes_ok: AtomicU64::new(0),
            passes_failed: AtomicU64::new(0),
            failing: Mutex::new(None),
            last_ok: Mutex::new(None),
            log_size: AtomicU64::new(0),
            events: Mutex::new(BTreeMap::new()),
        })
    }

    /// Who the role is in the queue (said once).
    pub fn set_holder(&self, holder: &str) {
        let _ = self.holder.set(holder.to_owned());
    }

    /// Whether it holds its lease.
    pub fn set_active(&self, active: bool) {
        self.active.store(active, Ordering::Relaxed);
    }

    /// Whether it holds its lease.
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// A pass over the queue went well.
    pub fn pass_ok(&self) {
        self.passes_ok.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut f) = self.failing.lock() {
            *f = None;
        }
        if let Ok(mut t) = self.last_ok.lock() {
            *t = Some(SystemTime::now());
        }
    }

    /// A pass failed (the database or the bucket, usually): the role is failing until a pass
    /// goes well.
    pub fn pass_failed(&self, why: &str) {
        self.passes_failed.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut f) = self.failing.lock() {
            *f = Some(why.chars().take(MAX_ERROR_CHARS).collect());
        }
    }

    /// `n` more of `event` (a counter of this process).
    pub fn count(&self, event: &'static str, n: u64) {
        if let Ok(mut e) = self.events.lock() {
            *e.entry(event).or_default() += n;
        }
    }

    /// The log's size after the last append.
    pub fn set_log_size(&self, size: u64) {
        self.log_size.store(size, Ordering::Relaxed);
    }

    /// The last pass's error, while failing.
    pub fn failing(&self) -> Option<String> {
        self.failing.lock().ok().and_then(|f| f.clone())
    }
}

/// Longest error `/health` shows.
const MAX_ERROR_CHARS: usize = 500;

/// How long `/metrics` reuses the queue's overview: scrapes share one connection and at most
/// one query per this long, however many come.
pub const OVERVIEW_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// The overview last read and the connection it was read on.
#[derive(Default)]
struct Overviews {
    queue: Option<Queue>,
    last: Option<(std::time::Instant, Option<Overview>)>,
}

#[derive(Clone)]
struct Shared {
    status: Arc<RoleStatus>,
    queue_url: Arc<str>,
    overviews: Arc<tokio::sync::Mutex<Overviews>>,
}

/// The role's `/health` and `/metrics`, reading the queue at `queue_url` for the queue's part.
pub fn router(status: Arc<RoleStatus>, queue_url: &str) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .with_state(Shared {
            status,
            queue_url: queue_url.into(),
            overviews: Arc::default(),
        })
}

/// Serves [`router`] on `config.listen` until `stop` (each role of one machine needs its own
/// address; port 0 takes any); the address bound.
pub async fn serve(
    config: &Config,
    status: Arc<RoleStatus>,
    stop: &Stop,
) -> Result<std::net::SocketAddr, RoleError> {
    let queue_url = crate::cluster::queue_url(config)?;
    let (listener, bound, _) = crate::api::listen(config).await?;
    let role = status.role;
    let router = router(status, &queue_url);
    let (limits, stop) = (config.http.limits(), stop.clone());
    let stats = Arc::new(toolmark_server::Stats::default());
    tokio::spawn(async move {
        if let Err(e) =
            toolmark_server::serve(listener, router, limits, stats, stop.cancelled_owned()).await
        {
            tracing::warn!("{role}: /health and /metrics stopped: {e}");
        }
    });
    tracing::info!("{role} health and metrics on http://{bound}/");
    Ok(bound)
}

async fn health(State(s): State<Shared>) -> Response {
    let st = &s.status;
    let failing = st.failing();
    let last_ok = st
        .last_ok
        .lock()
        .ok()
        .and_then(|t| *t)
        .map(toolmark_observation::time::utc);
    let body = serde_json::json!({
        "role": st.role,
        "holder": st.holder.get(),
        "status": if failing.is_some() { "failing" } else { "ok" },
        "active": st.active(),
        "lastOk": last_ok,
        "error": failing,
        "logSize": (st.role == "sequencer").then(|| st.log_size.load(Ordering::Relaxed)),
    });
    let code = if failing.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (code, axum::Json(body)).into_response()
}

async fn metrics(State(s): State<Shared>) -> Response {
    let overview = overview(&s).await;
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        render(&s.status, overview.as_ref()),
    )
        .into_response()
}

/// The queue's overview, read at most once per [`OVERVIEW_TTL`] on one connection (kept, and
/// made again after a failure); `None` when it cannot be read.
async fn overview(s: &Shared) -> Option<Overview> {
    let mut cache = s.overviews.lock().await;
    if let Some((at, o)) = &cache.last {
        if at.elapsed() < OVERVIEW_TTL {
            return o.clone();
        }
    }
    let (url, queue) = (s.queue_url.clone(), cache.queue.take());
    let read = tokio::task::spawn_blocking(move || {
        let mut q = match queue {
            Some(q) => q,
            None => Queue::connect(&url, "metrics").ok()?,
        };
        let o = q.overview().ok()?;
        Some((q, o))
    })
    .await
    .ok()
    .flatten();
    let o = read.map(|(q, o)| {
        cache.queue = Some(q);
        o
    });
    cache.last = Some((std::time::Instant::now(), o.clone()));
    o
}

/// The Prometheus text of `status` and, when it could be read, the queue's `overview`.
pub fn render(status: &RoleStatus, overview: Option<&Overview>) -> String {
    let role = status.role;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(
        "# HELP toolmark_role_active Whether this role holds its lease (a worker: always).".into(),
    );
    line("# TYPE toolmark_role_active gauge".into());
    line(format!(
        "toolmark_role_active{{role=\"{role}\"}} {}",
        u8::from(status.active())
    ));
    line("# HELP toolmark_role_passes_total Passes over the queue, by outcome.".into());
    line("# TYPE toolmark_role_passes_total counter".into());
    for (outcome, n) in [("ok", &status.passes_ok), ("failed", &status.passes_failed)] {
        line(format!(
            "toolmark_role_passes_total{{role=\"{role}\",outcome=\"{outcome}\"}} {}",
            n.load(Ordering::Relaxed)
        ));
    }
    line("# HELP toolmark_role_events_total What this process did, by event.".into());
    line("# TYPE toolmark_role_events_total counter".into());
    if let Ok(events) = status.events.lock() {
        for (event, n) in events.iter() {
            line(format!(
                "toolmark_role_events_total{{role=\"{role}\",event=\"{event}\"}} {n}"
            ));
        }
    }
    if role == "sequencer" {
        line("# HELP toolmark_log_size The log's size after this sequencer's last append.".into());
        line("# TYPE toolmark_log_size gauge".into());
        line(format!(
            "toolmark_log_size {}",
            status.log_size.load(Ordering::Relaxed)
        ));
    }
    line("# HELP toolmark_queue_up Whether the queue could be read for this scrape.".into());
    line("# TYPE toolmark_queue_up gauge".into());
    line(format!(
        "toolmark_queue_up {}",
        u8::from(overview.is_some())
    ));
    let Some(o) = overview else {
        return out;
    };
    line("# HELP toolmark_queue_jobs Jobs kept in the queue, by kind and state.".into());
    line("# TYPE toolmark_queue_jobs gauge".into());
    for (kind, state, n) in &o.jobs {
        line(format!(
            "toolmark_queue_jobs{{kind=\"{}\",state=\"{state}\"}} {n}",
            label(kind)
        ));
    }
    line(
        "# HELP toolmark_queue_lease_expiries Claims whose lease ran out, over the jobs kept."
            .into(),
    );
    line("# TYPE toolmark_queue_lease_expiries gauge".into());
    for (kind, n) in &o.lease_expiries {
        line(format!(
            "toolmark_queue_lease_expiries{{kind=\"{}\"}} {n}",
            label(kind)
        ));
    }
    line("# HELP toolmark_queue_handoffs_waiting Hand-offs the sequencer has not taken.".into());
    line("# TYPE toolmark_queue_handoffs_waiting gauge".into());
    line(format!(
        "toolmark_queue_handoffs_waiting {}",
        o.handoffs_waiting
    ));
    line("# HELP toolmark_queue_host_places Host places held across every worker.".into());
    line("# TYPE toolmark_queue_host_places gauge".into());
    line(format!("toolmark_queue_host_places {}", o.host_places));
    out
}

/// A label value as Prometheus writes one (kinds are ours, but a label never breaks the text).
fn label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_name_the_role_its_events_and_the_queue() {
        let s = RoleStatus::new("worker");
        s.set_active(true);
        s.pass_ok();
        s.count("jobs_done", 3);
        let o = Overview {
            jobs: vec![("remote".into(), "queued".into(), 2)],
            lease_expiries: vec![("remote".into(), 1)],
            handoffs_waiting: 4,
            host_places: 1,
        };
        let text = render(&s, Some(&o));
        for expected in [
            "toolmark_role_active{role=\"worker\"} 1",
            "toolmark_role_passes_total{role=\"worker\",outcome=\"ok\"} 1",
            "toolmark_role_events_total{role=\"worker\",event=\"jobs_done\"} 3",
            "toolmark_queue_up 1",
            "toolmark_queue_jobs{kind=\"remote\",state=\"queued\"} 2",
            "toolmark_queue_lease_expiries{kind=\"remote\"} 1",
            "toolmark_queue_handoffs_waiting 4",
            "toolmark_queue_host_places 1",
        ] {
            assert!(text.lines().any(|l| l == expected), "{expected} in\n{text}");
        }
        assert!(render(&s, None).contains("toolmark_queue_up 0"));
    }

    #[test]
    fn a_failed_pass_makes_the_role_failing_until_one_goes_well() {
        let s = RoleStatus::new("sequencer");
        s.pass_failed("the head store: connection refused");
        assert_eq!(
            s.failing().as_deref(),
            Some("the head store: connection refused")
        );
        s.pass_ok();
        assert_eq!(s.failing(), None);
    }
}
