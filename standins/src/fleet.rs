//! A fleet of stand-in MCP servers on loopback, for crawler benchmarks and `toolmark demo`.
//!
//! [`Fleet::start`] binds one listener per *host*, each on its own loopback address
//! (`127.1.x.y`: Linux routes all of 127.0.0.0/8 to `lo`, so every host is a distinct IP a
//! crawler's per-host politeness sees as a different server), and serves `endpoints_per_host`
//! MCP endpoints on it: endpoint `k` of a host is `http://127.1.x.y:PORT/mcp/k`. Every address is
//! bound explicitly; nothing listens on `0.0.0.0`.
//!
//! Each endpoint is a session-era streamable-HTTP server that answers with `application/json`,
//! the way the TypeScript SDK's servers in JSON-response mode do:
//!
//! | request | answer |
//! | --- | --- |
//! | `server/discover` (a 2026-07-28 probe) | HTTP 400, JSON-RPC error -32000 "Bad Request: Server not initialized" |
//! | `initialize` | the asked `protocolVersion` if it is one of [`SUPPORTED_VERSIONS`], else [`LATEST_VERSION`]; an `Mcp-Session-Id` header |
//! | `notifications/initialized` | HTTP 202, no body |
//! | `tools/list` | the endpoint's tool set, in one page |
//! | `ping` | `{}` |
//! | any other request | JSON-RPC error -32601 |
//! | a request after `initialize` without this endpoint's session id | HTTP 400, -32000 "Bad Request: No valid session ID provided" |
//! | `DELETE` with this endpoint's session id | HTTP 200: the session ends (counted in [`RequestCounts::closed`]); without one, HTTP 404 |
//! | `GET` | HTTP 405 (no server-to-client stream) |
//!
//! An endpoint given a [`Surface`] ([`Fleet::set_surface`], module [`surface`]) serves more:
//! prompts, resources and templates (paged), `resources/read` of MCP Apps pages, a Server Card
//! (`GET /.well-known/mcp/server-card.json` of its host, or `GET <endpoint URL>/server-card`),
//! cache hints, `Deprecation`/`Sunset` headers, 2026-07-28 stateless requests, a tool set that
//! depends on the client's name or protocol version (cloaking), or a hostile part; its session
//! ids end in the view they were given (`fleet-<endpoint>-<n>-c`, `…-x` for the cloaked one),
//! and [`Fleet::handshakes`] lists who it answered.
//!
//! **Every request** to an endpoint, whatever it is, waits that endpoint's latency (drawn once,
//! uniformly from [`FleetSpec::latency`] with a seeded generator) before it is answered, so an
//! observation costs its number of requests times the endpoint's latency. Sessions are not
//! stored: an id names its endpoint and is checked against it, so the fleet's memory does not
//! grow with the number of observations.
//!
//! [`Fleet::start_sites`] serves given `https` URLs instead (the demo's real registry URLs):
//! one listener per distinct host name, on its own loopback address, speaking TLS with a
//! certificate for that name from a throwaway CA made for the fleet
//! ([`crate::tls::StandInCa`], [`Fleet::ca_certificate_pem`]); each URL's path and query is
//! one endpoint. A client reaches them by pinning each name to its address
//! ([`Fleet::pins`]: `name=127.1.x.y:PORT`) and trusting that CA only; `Host`, SNI and the
//! paths are the real ones.
//!
//! [`Fleet::registry_items`] lists the fleet as registry `ServerResponse` items for
//! [`crate::registry::RegistryStandIn`], and [`schedule_bound`] computes the shortest time any
//! crawler with a given per-host limit and global concurrency could observe it in.
//!
//! What it does not do: TLS for [`Fleet::start`]'s endpoints, SSE responses, faults of the
//! transport (see the crawler's hostile-server tests for those; the surface's hostile parts are
//! [`surface::Hostile`]), `prompts/get`, subscriptions, or anything reachable from another
//! machine.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinSet;

pub mod surface;

use surface::{Handshake, Surface};

/// Protocol versions an endpoint agrees to when `initialize` asks for them.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version answered when `initialize` asks for one not in [`SUPPORTED_VERSIONS`].
pub const LATEST_VERSION: &str = "2025-11-25";

/// Most hosts one fleet can have: the third and fourth octets of `127.1.x.y` each run 1..=250.
pub const MAX_HOSTS: usize = 250 * 250;

/// Largest request body read (a crawler's requests are a few hundred bytes).
const MAX_REQUEST: usize = 64 * 1024;

/// Most handshakes [`Fleet::handshakes`] keeps (the first ones): a test's few sessions fit, and
/// a long benchmark over endpoints with a surface does not grow the fleet without bound.
pub const MAX_HANDSHAKES_KEPT: usize = 10_000;

/// The surfaces set on endpoints, by fleet-wide number.
type Surfaces = Arc<RwLock<HashMap<usize, Arc<Surface>>>>;

/// The `$schema` of the registry items [`Fleet::registry_items`] builds.
pub const SERVER_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// What to start.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    /// Distinct hosts (loopback addresses), at most [`MAX_HOSTS`].
    pub hosts: usize,
    /// Endpoints served by each host.
    pub endpoints_per_host: usize,
    /// Each endpoint's latency is drawn uniformly from `[min, max]` (microsecond steps).
    pub latency: (Duration, Duration),
    /// Seed of the latency draw: the same spec always gives the same latencies.
    pub seed: u64,
    /// `tools/list` results (JSON text of `{"tools": [...]}`); endpoint `i` (numbered host by
    /// host) serves `tool_sets[i % len]`. Must not be empty.
    pub tool_sets: Vec<String>,
}

/// What [`Fleet::start_sites`] starts.
#[derive(Debug, Clone)]
pub struct SiteSpec {
    /// The `https` URLs served (no userinfo, no explicit port, no fragment); endpoint `i` is
    /// `urls[i]` ([`Fleet::urls`] gives them as the `url` crate normalises them: the host in
    /// lower case, IDNA applied). Every distinct host name gets a loopback address of its own, at most
    /// [`MAX_HOSTS`]. Must not be empty nor repeat a URL.
    pub urls: Vec<String>,
    /// As [`FleetSpec::latency`].
    pub latency: (Duration, Duration),
    /// As [`FleetSpec::seed`].
    pub seed: u64,
    /// As [`FleetSpec::tool_sets`]: endpoint `i` serves `tool_sets[i % len]`.
    pub tool_sets: Vec<String>,
}

/// One listener to start: its address, the name it answers for (`None`: its address, plain
/// HTTP) and its endpoints (path and query → fleet-wide number).
struct HostPlan {
    ip: Ipv4Addr,
    name: Option<String>,
    endpoints: Vec<(String, usize)>,
}

/// Requests the fleet answered, by kind (all endpoints together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// `server/discover` probes (answered 400).
    pub discover: u64,
    /// `initialize` requests.
    pub initialize: u64,
    /// `notifications/initialized`.
    pub initialized: u64,
    /// `tools/list` requests answered with the tool set.
    pub tools_list: u64,
    /// `prompts/list` requests answered by an endpoint with a [`Surface`].
    pub prompts_list: u64,
    /// `resources/list` requests answered by an endpoint with a [`Surface`].
    pub resources_list: u64,
    /// `resources/templates/list` requests answered by an endpoint with a [`Surface`].
    pub templates_list: u64,
    /// `resources/read` requests answered by an endpoint with a [`Surface`] (found or not).
    pub resources_read: u64,
    /// Server Cards served ([`surface::Card`]), whatever their size.
    pub cards: u64,
    /// Sessions ended by the client (`DELETE` with the session's id).
    pub closed: u64,
    /// POSTs to a keyed endpoint ([`Fleet::set_keyed`]) refused with 401 and a challenge.
    pub refused: u64,
    /// `GET`s of a keyed endpoint's protected-resource metadata answered.
    pub metadata: u64,
    /// Requests of any kind that carried an `Authorization` header (a crawler must send none).
    pub credentialed: u64,
    /// Everything else (other methods, bad sessions, bad bodies, GET, DELETE without a session,
    /// unknown paths).
    pub other: u64,
    /// When the first request arrived, since the fleet started (`None` before any).
    pub first_at: Option<Duration>,
    /// When the last answer was sent, since the fleet started (`None` before any).
    pub last_at: Option<Duration>,
}

struct Counters {
    discover: AtomicU64,
    initialize: AtomicU64,
    initialized: AtomicU64,
    tools_list: AtomicU64,
    prompts_list: AtomicU64,
    resources_list: AtomicU64,
    templates_list: AtomicU64,
    resources_read: AtomicU64,
    cards: AtomicU64,
    other: AtomicU64,
    closed: AtomicU64,
    refused: AtomicU64,
    metadata: AtomicU64,
    credentialed: AtomicU64,
    sessions: AtomicU64,
    /// Nanoseconds since `started` of the first request, plus one (0: none yet).
    first_ns: AtomicU64,
    /// Nanoseconds since `started` of the last answer, plus one (0: none yet).
    last_ns: AtomicU64,
    started: Instant,
}

impl Counters {
    fn new() -> Counters {
        Counters {
            discover: AtomicU64::new(0),
            initialize: AtomicU64::new(0),
            initialized: AtomicU64::new(0),
            tools_list: AtomicU64::new(0),
            prompts_list: AtomicU64::new(0),
            resources_list: AtomicU64::new(0),
            templates_list: AtomicU64::new(0),
            resources_read: AtomicU64::new(0),
            cards: AtomicU64::new(0),
            other: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            metadata: AtomicU64::new(0),
            credentialed: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
            first_ns: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64 + 1
    }

    fn arrived(&self) {
        let now = self.now_ns();
        let _ = self
            .first_ns
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    fn answered(&self) {
        self.last_ns.fetch_max(self.now_ns(), Ordering::Relaxed);
    }
}

/// One host's listener and what its handlers need.
struct HostState {
    /// This host's endpoints: request path and query → fleet-wide number.
    endpoints: HashMap<String, usize>,
    /// This host's endpoints by path alone (every endpoint with that path, in order): a
    /// request whose query no endpoint names, and the protected-resource metadata under
    /// `/.well-known/oauth-protected-resource{path}`.
    by_path: HashMap<String, Vec<usize>>,
    /// Each endpoint's path (without its query), by fleet-wide number.
    path_of: HashMap<usize, String>,
    /// Every endpoint's latency, fleet-wide numbering.
    latencies: Arc<Vec<Duration>>,
    tool_sets: Arc<Vec<Bytes>>,
    /// Tool sets set later by [`Fleet::set_tool_set`], by fleet-wide endpoint number.
    overrides: Arc<RwLock<HashMap<usize, Vec<Bytes>>>>,
    /// Keyed endpoints ([`Fleet::set_keyed`]) and the authorization server each names.
    keyed: Arc<RwLock<HashMap<usize, String>>>,
    /// Endpoints with a surface ([`Fleet::set_surface`]).
    surfaces: Surfaces,
    /// Who the endpoints with a surface answered ([`Fleet::handshakes`]).
    handshakes: Arc<Mutex<Vec<Handshake>>>,
    /// `scheme://authority` of this host as its clients name it (for the metadata URLs its
    /// challenges name).
    origin: String,
    counters: Arc<Counters>,
    /// Requests this host is answering now, and the most it ever answered at once.
    in_flight: Arc<(AtomicU64, AtomicU64)>,
}

/// Counts a request in its host's in-flight requests while it lives.
struct InFlight(Arc<(AtomicU64, AtomicU64)>);

impl InFlight {
    fn enter(counts: &Arc<(AtomicU64, AtomicU64)>) -> InFlight {
        let now = counts.0.fetch_add(1, Ordering::SeqCst) + 1;
        counts.1.fetch_max(now, Ordering::SeqCst);
        InFlight(counts.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running fleet. Stops on [`shutdown`](Fleet::shutdown) or when dropped.
pub struct Fleet {
    addrs: Vec<SocketAddr>,
    /// Host names, by host (`None` for [`Fleet::start`]'s).
    names: Vec<Option<String>>,
    /// Every endpoint's URL and host, fleet-wide numbering.
    urls: Vec<String>,
    host_of: Vec<usize>,
    by_url: HashMap<String, usize>,
    ca: Option<String>,
    latencies: Vec<Duration>,
    overrides: Arc<RwLock<HashMap<usize, Vec<Bytes>>>>,
    keyed: Arc<RwLock<HashMap<usize, String>>>,
    surfaces: Surfaces,
    handshakes: Arc<Mutex<Vec<Handshake>>>,
    counters: Arc<Counters>,
    /// Each host's in-flight requests and their peak, by host.
    in_flight: Vec<Arc<(AtomicU64, AtomicU64)>>,
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("hosts", &self.addrs.len())
            .field("endpoints", &self.urls.len())
            .finish_non_exhaustive()
    }
}

/// The loopback address of host `i`: `127.1.x.y` with x, y in 1..=250.
pub fn host_ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 1, (1 + i / 250) as u8, (1 + i % 250) as u8)
}

/// SplitMix64: a tiny, good-enough generator for reproducible latencies.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..=n` (the modulo bias is below 2^-40 for the ranges used here).
    pub fn below_or_eq(&mut self, n: u64) -> u64 {
        if n == u64::MAX {
            self.next_u64()
        } else {
            self.next_u64() % (n + 1)
        }
    }
}

/// The latencies of a spec's endpoints, fleet-wide numbering (host by host).
pub fn draw_latencies(spec: &FleetSpec) -> Vec<Duration> {
    draw(
        spec.hosts * spec.endpoints_per_host,
        spec.latency,
        spec.seed,
    )
}

fn draw(n: usize, (lo, hi): (Duration, Duration), seed: u64) -> Vec<Duration> {
    let (lo_us, hi_us) = (
        lo.as_micros() as u64,
        hi.as_micros().max(lo.as_micros()) as u64,
    );
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| Duration::from_micros(lo_us + rng.below_or_eq(hi_us - lo_us)))
        .collect()
}

impl Fleet {
    /// Bind every host (one shared port number when it is free on every address, else a port
    /// of its own) and start serving. Must be called within a Tokio runtime.
    pub async fn start(spec: FleetSpec) -> io::Result<Fleet> {
        if spec.hosts == 0 || spec.hosts > MAX_HOSTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("hosts must be 1..={MAX_HOSTS}"),
            ));
        }
        if spec.endpoints_per_host == 0 || spec.tool_sets.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a fleet needs at least one endpoint per host and one tool set",
            ));
        }
        let plans = (0..spec.hosts)
            .map(|h| HostPlan {
                ip: host_ip(h),
                name: None,
                endpoints: (0..spec.endpoints_per_host)
                    .map(|k| (format!("/mcp/{k}"), h * spec.endpoints_per_host + k))
                    .collect(),
            })
            .collect();
        Fleet::serve(plans, draw_latencies(&spec), &spec.tool_sets, None).await
    }

    /// Serve `spec.urls` over TLS, one loopback address per host name, with certificates from
    /// a CA made for this fleet. Must be called within a Tokio runtime.
    pub async fn start_sites(spec: SiteSpec) -> io::Result<Fleet> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        if spec.urls.is_empty() || spec.tool_sets.is_empty() {
            return Err(invalid(
                "a fleet needs at least one URL and one tool set".into(),
            ));
        }
        let mut plans: Vec<HostPlan> = Vec::new();
        let mut host_index: HashMap<String, usize> = HashMap::new();
        for (i, raw) in spec.urls.iter().enumerate() {
            let url = url::Url::parse(raw).map_err(|e| invalid(format!("{raw:?}: {e}")))?;
            // A fully qualified name is the name without its root dot, as the crawler's guard
            // sees it.
            let name = match url.host() {
                Some(url::Host::Domain(name))
                    if url.scheme() == "https" && !name.trim_end_matches('.').is_empty() =>
                {
                    name.trim_end_matches('.').to_owned()
                }
                _ => {
                    return Err(invalid(format!(
                        "{raw:?} is not an https URL with a host name"
                    )));
                }
            };
            if url.port().is_some() || !url.username().is_empty() || url.fragment().is_some() {
                return Err(invalid(format!("{raw:?} has a port, userinfo or fragment")));
            }
            let h = *host_index.entry(name.clone()).or_insert_with(|| {
                plans.push(HostPlan {
                    ip: host_ip(plans.len()),
                    name: Some(name),
                    endpoints: Vec::new(),
                });
                plans.len() - 1
            });
            if h >= MAX_HOSTS {
                return Err(invalid(format!("more than {MAX_HOSTS} host names")));
            }
            let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
            if plans[h].endpoints.iter().any(|(t, _)| t == target) {
                return Err(invalid(format!("{raw:?} is listed twice")));
            }
            plans[h].endpoints.push((target.to_owned(), i));
        }
        let ca = crate::tls::StandInCa::new("toolmark stand-in CA (throwaway)")?;
        let latencies = draw(spec.urls.len(), spec.latency, spec.seed);
        Fleet::serve(plans, latencies, &spec.tool_sets, Some(ca)).await
    }

    async fn serve(
        plans: Vec<HostPlan>,
        latencies: Vec<Duration>,
        tool_sets: &[String],
        ca: Option<crate::tls::StandInCa>,
    ) -> io::Result<Fleet> {
        let tool_sets: Arc<Vec<Bytes>> = Arc::new(
            tool_sets
                .iter()
                .map(|t| Bytes::copy_from_slice(t.as_bytes()))
                .collect(),
        );
        let shared_latencies = Arc::new(latencies.clone());
        let counters = Arc::new(Counters::new());
        let overrides = Arc::new(RwLock::new(HashMap::new()));
        let keyed = Arc::new(RwLock::new(HashMap::new()));
        let surfaces: Surfaces = Arc::new(RwLock::new(HashMap::new()));
        let handshakes = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let mut addrs = Vec::with_capacity(plans.len());
        let mut names = Vec::with_capacity(plans.len());
        let mut urls = vec![String::new(); latencies.len()];
        let mut host_of = vec![0; latencies.len()];
        let mut in_flight = Vec::with_capacity(plans.len());
        let mut port = 0u16;
        for (h, plan) in plans.into_iter().enumerate() {
            let listener = match tokio::net::TcpListener::bind((plan.ip, port)).await {
                Ok(l) => l,
                Err(e) if port != 0 && e.kind() == io::ErrorKind::AddrInUse => {
                    tokio::net::TcpListener::bind((plan.ip, 0)).await?
                }
                Err(e) => return Err(e),
            };
            let addr = listener.local_addr()?;
            if h == 0 {
                port = addr.port();
            }
            addrs.push(addr);
            let origin = match &plan.name {
                Some(name) => format!("https://{name}"),
                None => format!("http://{addr}"),
            };
            let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
            let mut path_of = HashMap::new();
            for (target, i) in &plan.endpoints {
                urls[*i] = format!("{origin}{target}");
                host_of[*i] = h;
                let path = target.split('?').next().unwrap_or(target).to_owned();
                by_path.entry(path.clone()).or_default().push(*i);
                path_of.insert(*i, path);
            }
            let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
            in_flight.push(counts.clone());
            let state = Arc::new(HostState {
                in_flight: counts,
                endpoints: plan.endpoints.into_iter().collect(),
                by_path,
                path_of,
                latencies: shared_latencies.clone(),
                tool_sets: tool_sets.clone(),
                overrides: overrides.clone(),
                keyed: keyed.clone(),
                surfaces: surfaces.clone(),
                handshakes: handshakes.clone(),
                origin,
                counters: counters.clone(),
            });
            let app = Router::new().fallback(dispatch).with_state(state);
            let mut stopped = stopped.clone();
            let until_stopped = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            match (&plan.name, &ca) {
                (Some(name), Some(ca)) => {
                    let tls = crate::tls::TlsListener::new(listener, ca.server_config(name)?)?;
                    tasks.spawn(async move {
                        let _ = axum::serve(tls, app)
                            .with_graceful_shutdown(until_stopped)
                            .await;
                    });
                }
                _ => {
                    tasks.spawn(async move {
                        let _ = axum::serve(listener, app)
                            .with_graceful_shutdown(until_stopped)
                            .await;
                    });
                }
            }
            names.push(plan.name);
        }
        let by_url = urls
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, u)| (u, i))
            .collect();
        Ok(Fleet {
            addrs,
            names,
            urls,
            host_of,
            by_url,
            ca: ca.map(|ca| ca.certificate_pem().to_owned()),
            latencies,
            overrides,
            keyed,
            surfaces,
            handshakes,
            counters,
            in_flight,
            stop,
            tasks,
        })
    }

    /// Every endpoint's URL, fleet-wide numbering ([`Fleet::start`]: host by host).
    pub fn urls(&self) -> Vec<String> {
        self.urls.clone()
    }

    /// The bound address of every host.
    pub fn host_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// For [`Fleet::start_sites`]: every host name pinned to its address, `name=IP:PORT` (the
    /// form of the crawler's `--resolve`); empty for [`Fleet::start`].
    pub fn pins(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.addrs)
            .filter_map(|(name, addr)| Some(format!("{}={addr}", name.as_ref()?)))
            .collect()
    }

    /// For [`Fleet::start_sites`]: the PEM certificate of the CA that signed every host's
    /// certificate (trust it, and nothing else, to reach the fleet); `None` for
    /// [`Fleet::start`].
    pub fn ca_certificate_pem(&self) -> Option<&str> {
        self.ca.as_deref()
    }

    /// Every endpoint's latency, in the order of [`Fleet::urls`].
    pub fn latencies(&self) -> &[Duration] {
        &self.latencies
    }

    /// The latencies grouped by host (the unit of per-host politeness), in host order.
    pub fn latencies_by_host(&self) -> Vec<Vec<Duration>> {
        let mut out = vec![Vec::new(); self.addrs.len()];
        for (i, h) in self.host_of.iter().enumerate() {
            out[*h].push(self.latencies[i]);
        }
        out
    }

    /// The latency of the endpoint at `url` (one of [`Fleet::urls`]); `None` for any other URL.
    pub fn latency_of(&self, url: &str) -> Option<Duration> {
        self.by_url.get(url).map(|i| self.latencies[*i])
    }

    /// Registry `ServerResponse` items listing the fleet: server `j` has the endpoints
    /// `j*remotes_per_server ..` (up to `remotes_per_server` of them, in [`Fleet::urls`] order)
    /// as `streamable-http` remotes. Names are `io.toolmark.bench/sNNNN`; every item is
    /// `active` and the latest version.
    pub fn registry_items(&self, remotes_per_server: usize) -> Vec<Value> {
        let urls = self.urls();
        let per = remotes_per_server.max(1);
        let servers = urls.len().div_ceil(per);
        let width = servers.to_string().len().max(4);
        urls.chunks(per)
            .enumerate()
            .map(|(j, chunk)| {
                let remotes: Vec<Value> = chunk
                    .iter()
                    .map(|u| json!({"type": "streamable-http", "url": u}))
                    .collect();
                json!({
                    "server": {
                        "$schema": SERVER_SCHEMA,
                        "name": format!("io.toolmark.bench/s{j:0width$}"),
                        "description": format!("Benchmark stand-in server {j} ({} remotes)", chunk.len()),
                        "version": "1.0.0",
                        "remotes": remotes,
                    },
                    "_meta": {
                        crate::registry::OFFICIAL_META: {
                            "status": "active",
                            "publishedAt": "2025-12-01T00:00:00Z",
                            "updatedAt": "2025-12-01T00:00:00Z",
                            "isLatest": true,
                        }
                    }
                })
            })
            .collect()
    }

    /// From now on endpoint `endpoint` (fleet-wide numbering, as in [`Fleet::urls`]) serves
    /// `tools_list_result` (the JSON text of a `tools/list` result) instead of its spec's tool
    /// set: a server changing its tools between two crawls. Out-of-range numbers are ignored.
    pub fn set_tool_set(&self, endpoint: usize, tools_list_result: String) {
        self.set_pages(endpoint, vec![tools_list_result]);
    }

    /// From now on endpoint `endpoint` serves its tools in `pages` (the JSON texts of
    /// `tools/list` results): the first without a cursor, page `n` for the cursor `"p<n>"`.
    /// Each page names its successor itself (`"nextCursor": "p1"` …); an unknown cursor gets
    /// the first page.
    pub fn set_pages(&self, endpoint: usize, pages: Vec<String>) {
        if endpoint < self.urls.len() && !pages.is_empty() {
            self.overrides
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(endpoint, pages.into_iter().map(Bytes::from).collect());
        }
    }

    /// From now on endpoint `endpoint` wants a key (`Some(authorization server)`): every POST
    /// is refused with 401 and `WWW-Authenticate: Bearer resource_metadata=…`, and its
    /// protected-resource metadata (RFC 9728) names that authorization server; `None` serves it
    /// openly again. No key is ever accepted: a request with `Authorization` is refused too,
    /// and counted in [`RequestCounts::credentialed`].
    pub fn set_keyed(&self, endpoint: usize, authorization_server: Option<String>) {
        if endpoint >= self.urls.len() {
            return;
        }
        let mut keyed = self
            .keyed
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match authorization_server {
            Some(a) => keyed.insert(endpoint, a),
            None => keyed.remove(&endpoint),
        };
    }

    /// From now on endpoint `endpoint` serves `surface` too (`None`: a plain tool set again):
    /// prompts, resources, app pages, a card, cache hints, deprecation headers, cloaking or a
    /// hostile part, as [`surface`] describes. Its tools are the surface's when it names them,
    /// else the endpoint's own ([`Fleet::set_tool_set`]). Out-of-range numbers are ignored.
    pub fn set_surface(&self, endpoint: usize, surface: Option<Surface>) {
        if endpoint >= self.urls.len() {
            return;
        }
        let mut all = self
            .surfaces
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match surface {
            Some(s) => all.insert(endpoint, Arc::new(s)),
            None => all.remove(&endpoint),
        };
    }

    /// Every endpoint serves `surface` from now on ([`Fleet::set_surface`]), all sharing one
    /// copy of it (a benchmark's fleet of thousands of endpoints).
    pub fn set_surface_everywhere(&self, surface: Surface) {
        let shared = Arc::new(surface);
        let mut all = self
            .surfaces
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for endpoint in 0..self.urls.len() {
            all.insert(endpoint, shared.clone());
        }
    }

    /// The surface endpoint `endpoint` serves, if any (a copy to change and set again).
    pub fn surface(&self, endpoint: usize) -> Option<Surface> {
        self.surfaces
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&endpoint)
            .map(|s| Surface::clone(s))
    }

    /// From now on endpoint `endpoint`'s surface serves `html` as the page at `uri`
    /// ([`Surface::set_page`]): an app page that changes between two observations. Does
    /// nothing for an endpoint without a surface.
    pub fn set_app_page(&self, endpoint: usize, uri: &str, html: &str) {
        if let Some(mut s) = self.surface(endpoint) {
            s.set_page(uri, html);
            self.set_surface(endpoint, Some(s));
        }
    }

    /// Who the endpoints with a surface answered, in order (`initialize`, and each stateless
    /// request): client name and version, protocol version, and whether it was served the
    /// cloaked tools. At most [`MAX_HANDSHAKES_KEPT`].
    pub fn handshakes(&self) -> Vec<Handshake> {
        self.handshakes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Requests answered so far.
    pub fn requests(&self) -> RequestCounts {
        let c = &self.counters;
        RequestCounts {
            discover: c.discover.load(Ordering::Relaxed),
            initialize: c.initialize.load(Ordering::Relaxed),
            initialized: c.initialized.load(Ordering::Relaxed),
            tools_list: c.tools_list.load(Ordering::Relaxed),
            prompts_list: c.prompts_list.load(Ordering::Relaxed),
            resources_list: c.resources_list.load(Ordering::Relaxed),
            templates_list: c.templates_list.load(Ordering::Relaxed),
            resources_read: c.resources_read.load(Ordering::Relaxed),
            cards: c.cards.load(Ordering::Relaxed),
            closed: c.closed.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
            metadata: c.metadata.load(Ordering::Relaxed),
            credentialed: c.credentialed.load(Ordering::Relaxed),
            other: c.other.load(Ordering::Relaxed),
            first_at: match c.first_ns.load(Ordering::Relaxed) {
                0 => None,
                n => Some(Duration::from_nanos(n - 1)),
            },
            last_at: match c.last_ns.load(Ordering::Relaxed) {
                0 => None,
                n => Some(Duration::from_nanos(n - 1)),
            },
        }
    }

    /// The most requests each host answered at once, by host ([`Fleet::host_addrs`]' order):
    /// a crawler keeping a per-host limit of `n` observations (each a sequence of requests)
    /// never makes a host's peak exceed `n`.
    pub fn peak_in_flight(&self) -> Vec<u64> {
        self.in_flight
            .iter()
            .map(|c| c.1.load(Ordering::SeqCst))
            .collect()
    }

    /// Stop accepting, let requests in flight finish (at most `grace`), and return.
    pub async fn shutdown(mut self, grace: Duration) {
        let _ = self.stop.send(true);
        let tasks = &mut self.tasks;
        let drained = async move { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, drained).await.is_err() {
            self.tasks.abort_all();
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

// ---- tool sets ----

/// Read every `*.json` file directly under each subdirectory of `corpus` (and under `corpus`
/// itself) as a tool set, sorted by path: a bare array of tools, or an object with a `tools`
/// array (other members are dropped). Each becomes the compact text of `{"tools": [...]}`.
pub fn load_tool_sets(corpus: &Path) -> io::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut dirs = vec![corpus.to_path_buf()];
    for entry in std::fs::read_dir(corpus)? {
        let path = entry?.path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_file() && path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .iter()
        .map(|path| {
            let value: Value = serde_json::from_slice(&std::fs::read(path)?).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            })?;
            let tools = match value {
                Value::Array(tools) => tools,
                Value::Object(mut o) => match o.remove("tools") {
                    Some(Value::Array(tools)) => tools,
                    _ => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("{}: no tools array", path.display()),
                        ));
                    }
                },
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{}: neither an array nor an object", path.display()),
                    ));
                }
            };
            Ok(json!({ "tools": tools }).to_string())
        })
        .collect()
}

// ---- the schedule bound ----

/// The shortest wall time any schedule could take, and its parts (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// `max(host_seconds, global_seconds)`: the bound.
    pub seconds: f64,
    /// Over hosts, `max(longest job, sum of the host's jobs / per_host)`.
    pub host_seconds: f64,
    /// The sum of all jobs / concurrency.
    pub global_seconds: f64,
    /// Like `host_seconds` but with each host's exact best split of its jobs over two slots
    /// (computed only when `per_host` is 2; otherwise equal to `host_seconds`). Never below
    /// `host_seconds`; `max(exact_host_seconds, global_seconds)` is a tighter lower bound.
    pub exact_host_seconds: f64,
}

impl Bound {
    /// `max(exact_host_seconds, global_seconds)`.
    pub fn tight_seconds(&self) -> f64 {
        self.exact_host_seconds.max(self.global_seconds)
    }
}

/// A lower bound on the makespan of observing every endpoint, when one observation of an
/// endpoint with latency `l` takes `requests × l`, each host allows `per_host` observations at
/// once and the crawler `concurrency` overall. No schedule can beat any of its parts: a host
/// cannot finish before its longest job nor before its total work spread over `per_host` slots,
/// and the whole crawl not before all work spread over `concurrency` slots. Processing time,
/// connection set-up and the registry harvest are not counted.
pub fn schedule_bound(
    by_host: &[&[Duration]],
    requests: u32,
    per_host: usize,
    concurrency: usize,
) -> Bound {
    let per_host = per_host.max(1);
    let concurrency = concurrency.max(1);
    let r = f64::from(requests);
    let mut host_seconds = 0f64;
    let mut exact_host_seconds = 0f64;
    let mut total = 0f64;
    for jobs in by_host {
        let sum: f64 = jobs.iter().map(|d| d.as_secs_f64() * r).sum();
        let longest = jobs.iter().map(|d| d.as_secs_f64() * r).fold(0.0, f64::max);
        total += sum;
        let simple = longest.max(sum / per_host as f64);
        host_seconds = host_seconds.max(simple);
        let exact = if per_host == 2 {
            best_two_way_split(jobs, requests).max(simple)
        } else {
            simple
        };
        exact_host_seconds = exact_host_seconds.max(exact);
    }
    let global_seconds = total / concurrency as f64;
    Bound {
        seconds: host_seconds.max(global_seconds),
        host_seconds,
        global_seconds,
        exact_host_seconds,
    }
}

/// The best makespan of splitting `jobs` (each `requests × latency`) over two slots, with job
/// lengths rounded down to whole milliseconds (so it stays a lower bound): a subset-sum over
/// the reachable totals.
fn best_two_way_split(jobs: &[Duration], requests: u32) -> f64 {
    let ms: Vec<usize> = jobs
        .iter()
        .map(|d| (d.as_micros() as usize * requests as usize) / 1000)
        .collect();
    let total: usize = ms.iter().sum();
    if total > 50_000_000 {
        // Too big to enumerate (never for a benchmark fleet); the simple bound stands.
        return 0.0;
    }
    let mut reachable = vec![false; total / 2 + 1];
    reachable[0] = true;
    for &m in &ms {
        for s in (m..reachable.len()).rev() {
            if reachable[s - m] {
                reachable[s] = true;
            }
        }
    }
    let best_low = (0..reachable.len())
        .rev()
        .find(|&s| reachable[s])
        .unwrap_or(0);
    (total - best_low) as f64 / 1000.0
}

/// The makespan of toolmark's scheduling policy (`crawler::crawl`) with zero overhead: whenever
/// one of `concurrency` slots is free, start the next target of the host with the most targets
/// left among hosts below `per_host` in flight (ties: the smallest host key), each host's targets
/// in order; an observation takes `requests × latency`. `hosts` pairs each host's politeness key
/// (its address as text, as `crawler::crawl::host_key` gives it) with its endpoints' latencies.
/// What the policy itself costs over [`schedule_bound`]: it does not know the latencies.
pub fn simulate_most_left_first(
    hosts: &[(String, &[Duration])],
    requests: u32,
    per_host: usize,
    concurrency: usize,
) -> f64 {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, VecDeque};
    let per_host = per_host.max(1);
    let concurrency = concurrency.max(1);
    let mut left: Vec<VecDeque<u64>> = hosts
        .iter()
        .map(|(_, jobs)| {
            jobs.iter()
                .map(|d| d.as_micros() as u64 * u64::from(requests))
                .collect()
        })
        .collect();
    let mut in_flight = vec![0usize; hosts.len()];
    let mut running: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut now = 0u64;
    let mut end = 0u64;
    loop {
        while running.len() < concurrency {
            let mut best: Option<usize> = None;
            for h in 0..hosts.len() {
                if left[h].is_empty() || in_flight[h] >= per_host {
                    continue;
                }
                best = match best {
                    None => Some(h),
                    Some(b) => {
                        let better = left[h].len() > left[b].len()
                            || (left[h].len() == left[b].len() && hosts[h].0 < hosts[b].0);
                        Some(if better { h } else { b })
                    }
                };
            }
            let Some(h) = best else { break };
            let job = left[h].pop_front().unwrap_or(0);
            in_flight[h] += 1;
            running.push(Reverse((now + job, h)));
        }
        let Some(Reverse((finish, h))) = running.pop() else {
            break;
        };
        now = finish;
        end = end.max(finish);
        in_flight[h] -= 1;
    }
    end as f64 / 1e6
}

/// The makespan of HISTOR 0.4.2's policy with zero overhead: targets in one list interleaved
/// round-robin by host (`_interleave_by_host`, hosts in order), taken in order by `workers`
/// threads; a thread whose target's host already has `per_host` in flight waits (holding the
/// thread) until one finishes.
pub fn simulate_round_robin_fifo(
    by_host: &[&[Duration]],
    requests: u32,
    per_host: usize,
    workers: usize,
) -> f64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let per_host = per_host.max(1);
    let mut order = Vec::new();
    let longest = by_host.iter().map(|j| j.len()).max().unwrap_or(0);
    for k in 0..longest {
        for (h, jobs) in by_host.iter().enumerate() {
            if let Some(d) = jobs.get(k) {
                order.push((h, d.as_micros() as u64 * u64::from(requests)));
            }
        }
    }
    let mut free: BinaryHeap<Reverse<u64>> = (0..workers.max(1)).map(|_| Reverse(0)).collect();
    let mut host_running: Vec<Vec<u64>> = vec![Vec::new(); by_host.len()];
    let mut end = 0u64;
    for (h, job) in order {
        let Reverse(t) = free.pop().unwrap_or(Reverse(0));
        let running = &mut host_running[h];
        running.retain(|&f| f > t);
        let start = if running.len() >= per_host {
            running.sort_unstable();
            running.remove(0)
        } else {
            t
        };
        let finish = start + job;
        running.push(finish);
        free.push(Reverse(finish));
        end = end.max(finish);
    }
    end as f64 / 1e6
}

/// Latency percentiles (milliseconds) of the fleet, for a report.
pub fn latency_summary(latencies: &[Duration]) -> BTreeMap<&'static str, f64> {
    let mut ms: Vec<f64> = latencies.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let mut out = BTreeMap::new();
    if ms.is_empty() {
        return out;
    }
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    out.insert("minMs", ms[0]);
    out.insert("p50Ms", at(0.5));
    out.insert("p90Ms", at(0.9));
    out.insert("maxMs", ms[ms.len() - 1]);
    out.insert("meanMs", ms.iter().sum::<f64>() / ms.len() as f64);
    out
}

// ---- the server ----

fn json_response(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id});
    json_response(status, body.to_string())
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

/// Where the protected-resource metadata of an endpoint at `path` lives (RFC 9728 §3.1).
const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource";

/// Every request: an endpoint's (by its path and query, else by its path alone: a query no
/// endpoint names is ignored, as most servers do), or a keyed endpoint's metadata. Methods
/// other than POST, GET and DELETE get 405 and are not counted, as before the fleet routed by
/// hand.
async fn dispatch(
    State(host): State<Arc<HostState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let _in_flight = InFlight::enter(&host.in_flight);
    if ![Method::POST, Method::GET, Method::DELETE].contains(&method) {
        let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
        return r;
    }
    let path = uri.path();
    if method == Method::GET
        && let Some(endpoint) = path.strip_prefix(RESOURCE_METADATA)
        && let Some(all) = host.by_path.get(endpoint)
    {
        return metadata(&host, all, endpoint).await;
    }
    if method == Method::GET
        && (path == surface::WELL_KNOWN_CARD || path.ends_with(surface::CARD_SUFFIX))
        && let Some(card) = surface::card(&host, path).await
    {
        return card;
    }
    let target = uri.path_and_query().map_or(path, |t| t.as_str());
    let index = host
        .endpoints
        .get(target)
        .or_else(|| host.by_path.get(path).and_then(|all| all.first()))
        .copied();
    let Some(index) = index else {
        host.counters.arrived();
        host.counters.other.fetch_add(1, Ordering::Relaxed);
        let r = not_found().await;
        host.counters.answered();
        return r;
    };
    match method {
        Method::POST => mcp(host, index, headers, body).await,
        Method::DELETE => end_session(&host, index, &headers).await,
        _ => no_stream(&host, index).await,
    }
}

/// `DELETE`: ends the session named by `Mcp-Session-Id` when it is one of this endpoint's.
async fn end_session(host: &HostState, index: usize, headers: &HeaderMap) -> Response {
    host.counters.arrived();
    tokio::time::sleep(host.latencies[index]).await;
    let prefix = format!("fleet-{index}-");
    let ours = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| s.starts_with(&prefix));
    let response = if ours {
        host.counters.closed.fetch_add(1, Ordering::Relaxed);
        StatusCode::OK.into_response()
    } else {
        host.counters.other.fetch_add(1, Ordering::Relaxed);
        rpc_error(
            StatusCode::NOT_FOUND,
            &Value::Null,
            -32001,
            "Session not found",
        )
    };
    host.counters.answered();
    response
}

impl HostState {
    /// The surface of endpoint `index`, if it has one.
    fn surface_of(&self, index: usize) -> Option<Arc<Surface>> {
        self.surfaces
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&index)
            .cloned()
    }

    /// Note who `client` (a `clientInfo`) is at `version` on endpoint `index` (within
    /// [`MAX_HANDSHAKES_KEPT`]) and return the tool set `surface` shows it.
    fn record(
        &self,
        index: usize,
        surface: &Surface,
        client: &Value,
        version: &str,
    ) -> surface::View {
        let name = client.get("name").and_then(Value::as_str).unwrap_or("");
        let view = surface.view_of(name, version);
        let mut kept = self
            .handshakes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() < MAX_HANDSHAKES_KEPT {
            kept.push(Handshake {
                endpoint: index,
                client_name: name.to_owned(),
                client_version: client
                    .get("version")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                protocol_version: version.to_owned(),
                cloaked: view == surface::View::Cloaked,
            });
        }
        view
    }

    /// The authorization server endpoint `index` (fleet-wide) is keyed to, if it is.
    fn keyed_by(&self, index: usize) -> Option<String> {
        self.keyed
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&index)
            .cloned()
    }
}

/// `GET /.well-known/oauth-protected-resource{path}`: the protected-resource metadata of the
/// first keyed endpoint at `path` (`all`: every endpoint there); 404 when none is keyed.
async fn metadata(host: &HostState, all: &[usize], path: &str) -> Response {
    host.counters.arrived();
    let Some(authorization_server) = all.iter().find_map(|i| host.keyed_by(*i)) else {
        host.counters.other.fetch_add(1, Ordering::Relaxed);
        let r = not_found().await;
        host.counters.answered();
        return r;
    };
    host.counters.metadata.fetch_add(1, Ordering::Relaxed);
    let body = json!({
        "resource": format!("{}{path}", host.origin),
        "authorization_servers": [authorization_server],
        "scopes_supported": ["mcp"],
        "bearer_methods_supported": ["header"],
    });
    let r = json_response(StatusCode::OK, body.to_string());
    host.counters.answered();
    r
}

async fn no_stream(host: &HostState, index: usize) -> Response {
    host.counters.arrived();
    host.counters.other.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(host.latencies[index]).await;
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        &Value::Null,
        -32000,
        "Method not allowed.",
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    host.counters.answered();
    r
}

async fn mcp(host: Arc<HostState>, index: usize, headers: HeaderMap, body: Bytes) -> Response {
    host.counters.arrived();
    if headers.contains_key(header::AUTHORIZATION) {
        host.counters.credentialed.fetch_add(1, Ordering::Relaxed);
    }
    let counters = host.counters.clone();
    let response = answer(host, index, headers, body).await;
    counters.answered();
    response
}

/// The `tools/list` result endpoint `index` serves for `message`'s cursor: its pages
/// ([`Fleet::set_pages`]; `"p<n>"` names page n, any other cursor the first) or its spec's set.
fn tool_set_page(host: &HostState, index: usize, message: &Value) -> Bytes {
    let page = message
        .pointer("/params/cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.strip_prefix('p')?.parse::<usize>().ok())
        .unwrap_or(0);
    host.overrides
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&index)
        .and_then(|pages| pages.get(page).or(pages.first()).cloned())
        .unwrap_or_else(|| host.tool_sets[index % host.tool_sets.len()].clone())
}

async fn answer(host: Arc<HostState>, index: usize, headers: HeaderMap, body: Bytes) -> Response {
    let latency = host.latencies[index];
    tokio::time::sleep(latency).await;
    let counters = &host.counters;
    if host.keyed_by(index).is_some() {
        counters.refused.fetch_add(1, Ordering::Relaxed);
        let challenge = format!(
            r#"Bearer error="invalid_token", resource_metadata="{}{RESOURCE_METADATA}{}""#,
            host.origin,
            host.path_of.get(&index).map_or("", String::as_str),
        );
        let mut r = json_response(
            StatusCode::UNAUTHORIZED,
            r#"{"error":"invalid_token","error_description":"Authentication required"}"#.to_owned(),
        );
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        return r;
    }
    let other = || {
        counters.other.fetch_add(1, Ordering::Relaxed);
    };
    if body.len() > MAX_REQUEST {
        other();
        return rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &Value::Null,
            -32600,
            "Request too large",
        );
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        other();
        return rpc_error(StatusCode::BAD_REQUEST, &Value::Null, -32700, "Parse error");
    };
    if let Some(surface) = host.surface_of(index) {
        return surface::answer(&host, index, &surface, &message, &headers);
    }
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let id = message.get("id").cloned();
    let session_prefix = format!("fleet-{index}-");
    let session_ok = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| s.starts_with(&session_prefix));
    match (method, &id) {
        ("server/discover", _) => {
            counters.discover.fetch_add(1, Ordering::Relaxed);
            rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32000,
                "Bad Request: Server not initialized",
            )
        }
        ("initialize", Some(id)) => {
            counters.initialize.fetch_add(1, Ordering::Relaxed);
            let asked = message
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = SUPPORTED_VERSIONS
                .iter()
                .find(|v| **v == asked)
                .copied()
                .unwrap_or(LATEST_VERSION);
            let n = counters.sessions.fetch_add(1, Ordering::Relaxed);
            let body = json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": format!("fleet-{index}"), "version": "1.0.0"},
                },
            });
            let mut r = json_response(StatusCode::OK, body.to_string());
            if let Ok(v) = HeaderValue::from_str(&format!("{session_prefix}{n:x}")) {
                r.headers_mut().insert("mcp-session-id", v);
            }
            r
        }
        _ if !session_ok => {
            other();
            rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32000,
                "Bad Request: No valid session ID provided",
            )
        }
        ("notifications/initialized", None) => {
            counters.initialized.fetch_add(1, Ordering::Relaxed);
            StatusCode::ACCEPTED.into_response()
        }
        ("tools/list", Some(id)) => {
            counters.tools_list.fetch_add(1, Ordering::Relaxed);
            let set = tool_set_page(&host, index, &message);
            let id = id.to_string();
            let mut out = Vec::with_capacity(set.len() + id.len() + 40);
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            out.extend_from_slice(id.as_bytes());
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(&set);
            out.push(b'}');
            json_response(StatusCode::OK, out)
        }
        ("ping", Some(id)) => {
            other();
            json_response(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
            )
        }
        (_, Some(id)) => {
            other();
            rpc_error(StatusCode::OK, id, -32601, "Method not found")
        }
        (_, None) => {
            other();
            StatusCode::ACCEPTED.into_response()
        }
    }
}

#[cfg(test)]
// The tests talk to the stand-ins as a plain HTTP client would.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn spec(hosts: usize, per: usize) -> FleetSpec {
        FleetSpec {
            hosts,
            endpoints_per_host: per,
            latency: (Duration::from_millis(5), Duration::from_millis(20)),
            seed: 7,
            tool_sets: vec![
                r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#.into(),
                r#"{"tools":[]}"#.into(),
            ],
        }
    }

    #[test]
    fn latencies_are_seeded_and_in_range() {
        let s = spec(3, 4);
        let a = draw_latencies(&s);
        assert_eq!(a, draw_latencies(&s));
        assert_eq!(a.len(), 12);
        assert!(a.iter().all(|d| *d >= s.latency.0 && *d <= s.latency.1));
        let other = draw_latencies(&FleetSpec { seed: 8, ..s });
        assert_ne!(a, other);
    }

    #[test]
    fn bounds() {
        let ms = Duration::from_millis;
        // Two hosts: [3, 3, 3] (best split 6 | 3 = 6, simple bound 4.5) and [1].
        let h1 = [ms(1000), ms(1000), ms(1000)];
        let h2 = [ms(1000)];
        let b = schedule_bound(&[&h1, &h2], 1, 2, 100);
        assert_eq!(b.host_seconds, 1.5);
        assert_eq!(b.exact_host_seconds, 2.0);
        assert_eq!(b.global_seconds, 0.04);
        assert_eq!(b.seconds, 1.5);
        assert_eq!(b.tight_seconds(), 2.0);
        // Requests multiply; a small global concurrency binds.
        let b = schedule_bound(&[&h1, &h2], 3, 2, 1);
        assert_eq!(b.global_seconds, 12.0);
        assert_eq!(b.seconds, 12.0);
        // One long job dominates its host.
        let h3 = [ms(5000), ms(100), ms(100)];
        let b = schedule_bound(&[&h3], 1, 2, 10);
        assert_eq!(b.host_seconds, 5.0);
        assert_eq!(b.exact_host_seconds, 5.0);
    }

    #[test]
    fn simulations() {
        let ms = Duration::from_millis;
        // One host, per-host 2: [3, 1, 1, 1] in order → slot A: 3; slot B: 1, 1, 1 → 3 s.
        let h = [ms(3000), ms(1000), ms(1000), ms(1000)];
        let hosts = [("a".to_owned(), &h[..])];
        assert_eq!(simulate_most_left_first(&hosts, 1, 2, 10), 3.0);
        assert_eq!(simulate_round_robin_fifo(&[&h], 1, 2, 10), 3.0);
        // Two hosts, one slot overall: everything in sequence.
        let g = [ms(500)];
        let hosts = [("a".to_owned(), &h[..]), ("b".to_owned(), &g[..])];
        assert_eq!(simulate_most_left_first(&hosts, 2, 2, 1), 13.0);
        assert_eq!(simulate_round_robin_fifo(&[&h, &g], 2, 2, 1), 13.0);
        // Per-host 1, two workers: HISTOR's blocked worker waits for the host.
        let one = [ms(1000), ms(1000)];
        assert_eq!(simulate_round_robin_fifo(&[&one], 1, 1, 2), 2.0);
        let bound = schedule_bound(&[&h, &g], 1, 2, 256);
        assert!(simulate_most_left_first(&hosts, 1, 2, 256) >= bound.seconds);
    }

    #[test]
    fn corpus_tool_sets_load() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolset/tests/fixtures/corpus");
        let sets = load_tool_sets(&corpus).unwrap();
        assert!(sets.len() >= 7, "{}", sets.len());
        for s in &sets {
            let v: Value = serde_json::from_str(s).unwrap();
            assert!(v["tools"].as_array().is_some_and(|t| !t.is_empty()));
        }
    }

    async fn post(
        client: &reqwest::Client,
        url: &str,
        session: Option<&str>,
        body: Value,
    ) -> reqwest::Response {
        let mut r = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.body(body.to_string()).send().await.unwrap()
    }

    #[tokio::test]
    async fn speaks_session_era_mcp_with_latency() {
        let fleet = Fleet::start(spec(3, 2)).await.unwrap();
        let urls = fleet.urls();
        assert_eq!(urls.len(), 6);
        assert!(urls[0].starts_with("http://127.1.1.1:"));
        assert!(urls[5].starts_with("http://127.1.1.3:") && urls[5].ends_with("/mcp/1"));
        let items = fleet.registry_items(2);
        assert_eq!(items.len(), 3);
        assert_eq!(items[1]["server"]["name"], "io.toolmark.bench/s0001");
        assert_eq!(items[1]["server"]["remotes"][1]["url"], urls[3].as_str());

        let client = reqwest::Client::new();
        let url = &urls[3];
        let latency = fleet.latency_of(url).unwrap();
        assert_eq!(latency, fleet.latencies()[3]);
        let started = std::time::Instant::now();
        let r = post(
            &client,
            url,
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}),
        )
        .await;
        assert_eq!(r.status(), 400);
        assert!(started.elapsed() >= latency);
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32000);

        let r = post(&client, url, None, json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})).await;
        assert_eq!(r.status(), 200);
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        assert!(session.starts_with("fleet-3-"));
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["result"]["protocolVersion"], "2025-06-18");

        let r = post(
            &client,
            url,
            Some(&session),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        )
        .await;
        assert_eq!(r.status(), 202);
        let r = post(
            &client,
            url,
            Some(&session),
            json!({"jsonrpc":"2.0","id":"x","method":"tools/list","params":{}}),
        )
        .await;
        assert_eq!(r.status(), 200);
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["id"], "x");
        assert_eq!(
            body["result"]["tools"].as_array().unwrap().len(),
            0,
            "endpoint 3 serves set 1"
        );
        // A changed tool set is served from the next request on, by that endpoint only.
        fleet.set_tool_set(3, r#"{"tools":[{"name":"new","inputSchema":{}}]}"#.into());
        fleet.set_tool_set(99, r#"{"tools":[]}"#.into());
        let r = post(
            &client,
            url,
            Some(&session),
            json!({"jsonrpc":"2.0","id":"y","method":"tools/list"}),
        )
        .await;
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["result"]["tools"][0]["name"], "new");
        let r = post(
            &client,
            url,
            Some("fleet-2-0"),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        )
        .await;
        assert_eq!(r.status(), 400, "another endpoint's session");
        let r = client.get(url).send().await.unwrap();
        assert_eq!(r.status(), 405);

        let r = post(
            &client,
            &urls[0],
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params":{"protocolVersion":"1999-01-01"}}),
        )
        .await;
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["result"]["protocolVersion"], LATEST_VERSION);

        assert_eq!(
            fleet.requests(),
            RequestCounts {
                discover: 1,
                initialize: 2,
                initialized: 1,
                tools_list: 2,
                other: 2,
                ..fleet.requests()
            }
        );
        let counts = fleet.requests();
        assert!(counts.first_at.unwrap() < counts.last_at.unwrap());
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    fn sites(urls: &[&str]) -> SiteSpec {
        SiteSpec {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            latency: (Duration::from_millis(1), Duration::from_millis(2)),
            seed: 7,
            tool_sets: spec(1, 1).tool_sets,
        }
    }

    /// A client that reaches `fleet`'s names at their pinned addresses and trusts its CA only.
    fn pinned_client(fleet: &Fleet) -> reqwest::Client {
        let ca = fleet.ca_certificate_pem().unwrap();
        let mut b = reqwest::Client::builder()
            .tls_certs_only([reqwest::Certificate::from_pem(ca.as_bytes()).unwrap()]);
        for pin in fleet.pins() {
            let (name, addr) = pin.split_once('=').unwrap();
            b = b.resolve(name, addr.parse().unwrap());
        }
        b.build().unwrap()
    }

    #[tokio::test]
    async fn sites_answer_for_their_real_names_over_tls() {
        let urls = [
            "https://a.example/mcp",
            "https://a.example/mcp?login",
            "https://b.example/x/mcp",
        ];
        let fleet = Fleet::start_sites(sites(&urls)).await.unwrap();
        assert_eq!(fleet.urls(), urls);
        let pins = fleet.pins();
        assert_eq!(pins.len(), 2, "one address per host name: {pins:?}");
        assert!(pins[0].starts_with("a.example=127.1.1.1:"), "{pins:?}");
        let client = pinned_client(&fleet);
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        // Each path and query is its own endpoint: the session id names it.
        for (i, url) in urls.iter().enumerate() {
            let r = post(&client, url, None, init.clone()).await;
            assert_eq!(r.status(), 200, "{url}");
            let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
            assert!(
                session.starts_with(&format!("fleet-{i}-")),
                "{url}: {session}"
            );
        }
        // A path no URL names is not an endpoint.
        let r = post(&client, "https://b.example/mcp", None, init).await;
        assert_eq!(r.status(), 404);
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn each_hosts_peak_of_requests_at_once_is_counted() {
        let fleet = Fleet::start(spec(2, 3)).await.unwrap();
        let urls = fleet.urls();
        let client = reqwest::Client::new();
        let probe = json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}});
        // Three requests at once to host 0's endpoints, then one to host 1's.
        let at_once = urls[..3]
            .iter()
            .map(|u| post(&client, u, None, probe.clone()));
        futures_util::future::join_all(at_once).await;
        post(&client, &urls[3], None, probe).await;
        assert_eq!(fleet.peak_in_flight(), [3, 1]);
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn sites_are_not_trusted_without_their_ca() {
        let fleet = Fleet::start_sites(sites(&["https://a.example/mcp"]))
            .await
            .unwrap();
        let (name, addr) = fleet.pins()[0]
            .split_once('=')
            .map(|(n, a)| (n.to_owned(), a.to_owned()))
            .unwrap();
        let platform_only = reqwest::Client::builder()
            .resolve(&name, addr.parse().unwrap())
            .build()
            .unwrap();
        let e = platform_only
            .post("https://a.example/mcp")
            .body("{}")
            .send()
            .await
            .unwrap_err();
        assert!(e.is_connect(), "{e:?}");
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn a_keyed_site_names_its_real_metadata_url() {
        let fleet = Fleet::start_sites(sites(&["https://a.example/x/mcp"]))
            .await
            .unwrap();
        fleet.set_keyed(0, Some("https://auth.example".into()));
        let client = pinned_client(&fleet);
        let r = post(&client, "https://a.example/x/mcp", None, json!({})).await;
        assert_eq!(r.status(), 401);
        let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
        let metadata = "https://a.example/.well-known/oauth-protected-resource/x/mcp";
        assert!(
            challenge.contains(&format!("resource_metadata=\"{metadata}\"")),
            "{challenge}"
        );
        let r = client.get(metadata).send().await.unwrap();
        let body: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(body["resource"], "https://a.example/x/mcp");
        assert_eq!(body["authorization_servers"][0], "https://auth.example");
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn a_keyed_endpoint_beside_an_open_one_at_the_same_path_serves_its_metadata() {
        let fleet = Fleet::start_sites(sites(&[
            "https://a.example/mcp",
            "https://a.example/mcp?login",
        ]))
        .await
        .unwrap();
        fleet.set_keyed(1, Some("https://auth.example".into()));
        let client = pinned_client(&fleet);
        let r = post(&client, "https://a.example/mcp?login", None, json!({})).await;
        assert_eq!(r.status(), 401);
        let metadata = "https://a.example/.well-known/oauth-protected-resource/mcp";
        let r = client.get(metadata).send().await.unwrap();
        assert_eq!(r.status(), 200);
        // The open endpoint still serves.
        let r = post(
            &client,
            "https://a.example/mcp",
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"ping"}),
        )
        .await;
        assert_eq!(r.status(), 400, "no session yet");
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn a_query_no_endpoint_names_is_ignored_and_other_methods_are_not_counted() {
        let fleet = Fleet::start(spec(1, 1)).await.unwrap();
        let url = &fleet.urls()[0];
        let client = reqwest::Client::new();
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        let r = post(&client, &format!("{url}?x=1"), None, init).await;
        assert_eq!(r.status(), 200);
        let before = fleet.requests();
        let r = client.put(url).body("{}").send().await.unwrap();
        assert_eq!(r.status(), 405);
        assert_eq!(fleet.requests(), before);
        fleet.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn sites_refuse_what_they_cannot_serve() {
        for urls in [
            vec!["http://a.example/mcp"],
            vec!["https://127.0.0.1/mcp"],
            vec!["https://a.example:8443/mcp"],
            vec!["https://a.example/mcp", "https://a.example/mcp"],
            vec![],
        ] {
            let e = Fleet::start_sites(sites(&urls)).await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{urls:?}");
        }
    }
}
