//! A read-only MCP client: `tools/list` from one remote, over whichever transport answers,
//! keeping every response's raw JSON and ending in a named [`Status`] whatever the server does.
//!
//! ## Negotiation order
//!
//! For a remote the registry lists as `streamable-http`:
//!
//! 1. **2026-07-28 stateless**: `POST server/discover` with the protocol version, client
//!    capabilities and client info in `params._meta` and the `MCP-Protocol-Version` and
//!    `Mcp-Method` headers. A result whose `supportedVersions` lists 2026-07-28 selects this
//!    transport; `tools/list` pages follow with the same `_meta` and no session.
//! 2. **Streamable HTTP (2025-03-26 … 2025-11-25)**: `POST initialize` asking for 2025-11-25,
//!    `notifications/initialized`, then `tools/list` pages with `Mcp-Session-Id` (when issued)
//!    and `MCP-Protocol-Version` (the negotiated one) on every request. Responses may be one
//!    JSON body or an SSE stream; server→client requests on it are answered (`ping` with `{}`,
//!    anything else with -32601).
//! 3. **HTTP+SSE (2024-11-05)**: `GET` the URL as an event stream, take the `endpoint` event
//!    (same origin only), `POST` the same three messages there and read the answers from the
//!    stream by id.
//!
//! A step falls through to the next when the server plainly does not speak it (an HTTP 400,
//! 404, 405, 406 or 415, a 5xx, a JSON-RPC "method not found" or "not initialized" error, or a
//! non-MCP body). It does **not** fall through on answers that are about the server and not
//! the transport: 401/403 with a challenge (`auth-required`), a redirect, a timeout, a refused
//! connection, a TLS failure or a size limit. For a remote listed as `sse` the order is 3, 2.
//! When every step fell through, the status is that of the transport the registry declared.
//!
//! ## What is sent
//!
//! Always the same `clientInfo` ([`crate::observe::client_info`]) and empty capabilities, no
//! `Origin`, no cookies, no credentials, `Accept-Encoding: gzip, deflate` (decompressed here,
//! under [`crate::body`]'s caps), and a `User-Agent` naming the crawler. Redirects are never
//! followed. Only `initialize`, `notifications/initialized`, `server/discover` and `tools/list`
//! are ever sent; no tool is ever called.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::body::{Body, BodyError};
use crate::budget::{self as budget, AddressGate, Budget, Busy, Grant, Hold, Meter};
use crate::guard::{self, GuardError, Pinned, Policy, Resolve};
use crate::jsonrpc::{self, Id, Message};
use crate::limits;
use crate::observe::{Attempt, AuthChallenge, Observation, Status, Transport};
use crate::sse::{Event, SseParser};

/// The protocol version of the stateless era.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// The newest session-era version asked for in `initialize`.
pub const SESSION_VERSION: &str = "2025-11-25";
/// The version of the HTTP+SSE transport.
pub const SSE_VERSION: &str = "2024-11-05";

/// The limits one observation runs under; [`Limits::default`] takes every value from
/// [`crate::limits`]. Tests shrink the timeouts to keep hostile-server cases fast.
#[derive(Debug, Clone)]
pub struct Limits {
    /// See [`limits::CONNECT_TIMEOUT`].
    pub connect_timeout: Duration,
    /// See [`limits::REQUEST_TIMEOUT`].
    pub request_timeout: Duration,
    /// See [`limits::OBSERVATION_DEADLINE`].
    pub deadline: Duration,
    /// See [`limits::MAX_RESPONSE_BYTES`].
    pub max_response: usize,
    /// See [`limits::MAX_TOOLSET_BYTES`].
    pub max_toolset: usize,
    /// See [`limits::MAX_TOOLS`].
    pub max_tools: usize,
    /// See [`limits::MAX_PAGES`].
    pub max_pages: usize,
    /// See [`limits::MAX_SSE_EVENTS`].
    pub max_sse_events: usize,
    /// See [`limits::MAX_REPLIES`].
    pub max_replies: usize,
    /// See [`limits::OBSERVATION_GRANT`].
    pub grant: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: limits::CONNECT_TIMEOUT,
            request_timeout: limits::REQUEST_TIMEOUT,
            deadline: limits::OBSERVATION_DEADLINE,
            max_response: limits::MAX_RESPONSE_BYTES,
            max_toolset: limits::MAX_TOOLSET_BYTES,
            max_tools: limits::MAX_TOOLS,
            max_pages: limits::MAX_PAGES,
            max_sse_events: limits::MAX_SSE_EVENTS,
            max_replies: limits::MAX_REPLIES,
            grant: limits::OBSERVATION_GRANT,
        }
    }
}

/// Everything an observation needs besides the URL.
#[derive(Clone)]
pub struct ClientConfig {
    /// What the SSRF guard allows.
    pub policy: Policy,
    /// How host names are resolved (once per observation).
    pub resolver: Arc<dyn Resolve>,
    /// The limits.
    pub limits: Limits,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// The memory budget every observation made with this configuration (and its clones)
    /// shares; [`Budget::default`] is [`limits::MEMORY_BUDGET`]. See [`crate::budget`].
    pub budget: Budget,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            policy: Policy::default(),
            resolver: guard::system(),
            limits: Limits::default(),
            user_agent: format!(
                "toolmark/{} (transparency-log crawler; read-only: initialize + tools/list)",
                crate::observe::CLIENT_VERSION
            ),
            budget: Budget::default(),
        }
    }
}

/// Observe one remote: resolve and check it, negotiate a transport, read every `tools/list`
/// page. Never panics and never returns an error: every outcome is in the observation.
pub async fn observe(config: &ClientConfig, url: &str, declared_transport: &str) -> Observation {
    observe_with_hint(config, url, declared_transport, None).await
}

/// [`observe`], trying `hint` first: the transport that answered this remote last time. When it
/// no longer answers, the usual order follows (without trying it twice). For a session-era
/// server this saves the `server/discover` probe, a quarter of its requests.
pub async fn observe_with_hint(
    config: &ClientConfig,
    url: &str,
    declared_transport: &str,
    hint: Option<Transport>,
) -> Observation {
    match observe_gated(config, url, declared_transport, hint, None, None).await {
        Gated::Done(obs, _) => *obs,
        // Without a gate nothing is ever busy, and without a stop flag nothing is abandoned.
        Gated::Busy(_) | Gated::Abandoned => unreachable!("no gate and no stop flag"),
    }
}

/// How [`observe_gated`] ended.
#[derive(Debug)]
pub(crate) enum Gated {
    /// Observed; the grant the pages are accounted to (shrunk to what they hold).
    Done(Box<Observation>, Option<Grant>),
    /// An address this target resolved to was full ([`AddressGate::join`]): nothing was dialled.
    Busy(std::net::IpAddr),
    /// The stop flag was set while it waited (for DNS, its address or budget): nothing of it is
    /// kept, and it is not an observation.
    Abandoned,
}

/// Runs of one observation at most: the first under [`Limits::grant`], a second under a grant
/// for what the caps can need, a last one under the whole budget (see [`crate::budget`]).
const RUNS: usize = 3;

/// [`observe_with_hint`] behind `gate` (the crawl's per-address limit), returning the budget
/// grant the observation's pages are accounted to (the caller drops it when done with them).
///
/// Waiting for the address or for budget happens before the deadline starts, and a run
/// restarted for budget gets a fresh deadline; [`Observation::elapsed`] counts the runs only.
/// Every wait (DNS, the address, budget) ends as [`Gated::Abandoned`] once `stop` is set; a
/// run under way is not interrupted (it ends by its deadline).
pub(crate) async fn observe_gated(
    config: &ClientConfig,
    url: &str,
    declared: &str,
    hint: Option<Transport>,
    gate: Option<&Arc<AddressGate>>,
    stop: Option<&AtomicBool>,
) -> Gated {
    let deadline = config.limits.deadline;
    let mut obs = Observation::start();
    let checked = Instant::now();
    let pinned = budget::unless_stopped(
        tokio::time::timeout(
            deadline,
            guard::check(url, config.policy, config.resolver.as_ref()),
        ),
        stop,
    )
    .await;
    let Some(pinned) = pinned else {
        return Gated::Abandoned;
    };
    let pinned = match pinned {
        Err(_) => {
            obs.status = Status::Timeout;
            obs.detail = format!("dns: no answer within {} s", deadline.as_secs_f64());
            obs.elapsed = checked.elapsed();
            return Gated::Done(Box::new(obs), None);
        }
        Ok(Err(e)) => {
            obs.status = match e {
                GuardError::Blocked { .. } => Status::BlockedAddress,
                GuardError::Dns(_) => Status::Dns,
                GuardError::BadUrl(_) | GuardError::Scheme(_) | GuardError::Userinfo => {
                    Status::BadUrl
                }
            };
            obs.detail = e.to_string();
            obs.elapsed = checked.elapsed();
            return Gated::Done(Box::new(obs), None);
        }
        Ok(Ok(p)) => p,
    };
    let mut spent = checked.elapsed();
    // Held to the end: the observation occupies its addresses while it runs.
    let mut _place = None;
    if let Some(g) = gate {
        let mut place = match g.join(&pinned.addrs) {
            Ok(p) => p,
            Err(Busy(key)) => return Gated::Busy(key),
        };
        if budget::unless_stopped(place.wait(), stop).await.is_none() {
            return Gated::Abandoned;
        }
        _place = Some(place);
    }
    let mut want = config.limits.grant;
    let mut run_no = 0;
    loop {
        run_no += 1;
        let Some(grant) = budget::unless_stopped(config.budget.acquire(want), stop).await else {
            return Gated::Abandoned;
        };
        let meter = Arc::new(Meter::new(grant));
        obs = Observation::start();
        obs.address = pinned.addrs.first().copied();
        let started = Instant::now();
        if tokio::time::timeout(
            deadline,
            run(config, &pinned, declared, hint, &mut obs, &meter),
        )
        .await
        .is_err()
        {
            obs.status = Status::Timeout;
            obs.detail = format!(
                "observation deadline of {} s passed",
                deadline.as_secs_f64()
            );
        }
        spent += started.elapsed();
        let starved = meter.starved();
        let grant = meter.take_grant();
        match starved {
            Some(wanted) if run_no < RUNS => {
                // Return everything, then wait for enough, holding nothing (see crate::budget).
                drop(grant);
                drop(obs.pages.drain(..));
                want = if run_no + 1 < RUNS {
                    wanted.saturating_mul(2).max(cap_need(&config.limits))
                } else {
                    config.budget.bytes()
                };
            }
            _ => {
                if matches!(obs.status, Status::TooLarge) {
                    // What was read is not a tool set anyone can use, and may be huge: keep the
                    // numbers only.
                    obs.pages.clear();
                }
                obs.elapsed = spent;
                // What the caller is handed holds only the pages (and the initialize result);
                // the buffers and parses of the run are gone.
                let mut grant = grant;
                if let Some(g) = &mut grant {
                    g.shrink_to(held_bytes(&obs));
                }
                return Gated::Done(Box::new(obs), grant);
            }
        }
    }
}

/// Heap bytes a finished observation still holds of what remotes sent: its pages and its
/// `initialize` result, by capacity.
pub(crate) fn held_bytes(obs: &Observation) -> usize {
    obs.pages
        .iter()
        .map(String::capacity)
        .sum::<usize>()
        .saturating_add(obs.initialize.as_ref().map_or(0, String::capacity))
}

/// What the budget charges an honest observation at its caps: every page up to
/// [`Limits::max_toolset`] and one more response kept ([`budget::BODY_COPIES`] each), plus the
/// parse of the largest response (its copies; trees of real tool sets add little beyond them).
fn cap_need(limits: &Limits) -> usize {
    (limits.max_toolset + limits.max_response)
        .saturating_mul(budget::BODY_COPIES)
        .saturating_add(limits.max_response.saturating_mul(budget::PARSE_COPIES))
}

async fn run(
    config: &ClientConfig,
    pinned: &Pinned,
    declared: &str,
    hint: Option<Transport>,
    obs: &mut Observation,
    meter: &Arc<Meter>,
) {
    let http = match build_client(config, pinned) {
        Ok(c) => c,
        Err(e) => {
            obs.status = Status::Protocol;
            obs.detail = format!("internal: cannot build the HTTP client: {e}");
            return;
        }
    };
    let usual: &[Transport] = if declared == "sse" {
        &[Transport::Sse, Transport::StreamableHttp]
    } else {
        &[
            Transport::Stateless,
            Transport::StreamableHttp,
            Transport::Sse,
        ]
    };
    let order: Vec<Transport> = hint
        .into_iter()
        .chain(usual.iter().copied().filter(|t| Some(*t) != hint))
        .collect();
    let declared_kind = if declared == "sse" {
        Transport::Sse
    } else {
        Transport::StreamableHttp
    };
    let mut session = Session {
        http: &http,
        config,
        url: pinned.url.clone(),
        obs,
        next_id: 1,
        replies: 0,
        meter: meter.clone(),
    };
    let mut fallen: Vec<(Transport, Status, String)> = Vec::new();
    for &transport in &order {
        session.next_id = 1;
        let result = match transport {
            Transport::Stateless => session.stateless().await,
            Transport::StreamableHttp => session.streamable().await,
            Transport::Sse => session.sse().await,
        };
        let (status, detail, fall) = match result {
            Ok(()) => (Status::Ok, String::new(), false),
            Err(Stop::Final(s, d)) => (s, d, false),
            Err(Stop::Fallback(s, d)) => (s, d, true),
        };
        session.obs.attempts.push(Attempt {
            transport,
            status: status.clone(),
            detail: detail.clone(),
        });
        if !fall {
            session.obs.transport = Some(transport);
            session.obs.status = status;
            session.obs.detail = detail;
            return;
        }
        fallen.push((transport, status, detail));
    }
    // Every transport fell through: report the declared one's outcome.
    let (t, s, d) = fallen
        .iter()
        .find(|(t, _, _)| *t == declared_kind)
        .or(fallen.last())
        .cloned()
        .unwrap_or((declared_kind, Status::Protocol, "no transport tried".into()));
    session.obs.transport = Some(t);
    session.obs.status = s;
    session.obs.detail = format!("no transport answered; {}: {d}", t.as_str());
}

/// The TLS configuration every observation's client shares: rustls with the platform's
/// certificate verifier (system roots, name checked against the URL's host), TLS 1.2 and 1.3,
/// ALPN h2 and http/1.1. Built once: reqwest would otherwise build a verifier per client, which
/// costs about 14 ms each (`docs/benchmarks.md`).
fn shared_tls() -> Result<rustls::ClientConfig, String> {
    static TLS: std::sync::OnceLock<Result<rustls::ClientConfig, String>> =
        std::sync::OnceLock::new();
    TLS.get_or_init(|| {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| format!("certificate verifier: {e}"))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS versions: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    })
    .clone()
}

fn build_client(config: &ClientConfig, pinned: &Pinned) -> Result<reqwest::Client, String> {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("gzip, deflate"),
    );
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(config.limits.connect_timeout)
        .user_agent(config.user_agent.clone())
        .default_headers(headers)
        .pool_max_idle_per_host(2)
        .dns_resolver(Arc::new(guard::RefuseAll))
        .tls_backend_preconfigured(shared_tls()?);
    if let url::Host::Domain(_) = pinned.url.host().unwrap_or(url::Host::Domain("")) {
        builder = builder.resolve_to_addrs(&pinned.host, &pinned.addrs);
    }
    builder.build().map_err(|e| crate::error_chain(&e))
}

/// How an attempt ended when it did not end with a tool set.
enum Stop {
    /// The outcome of this observation.
    Final(Status, String),
    /// This transport is not what the server speaks; try the next.
    Fallback(Status, String),
}

impl Stop {
    fn into_fallback(self) -> Stop {
        match self {
            Stop::Final(s, d) | Stop::Fallback(s, d) => Stop::Fallback(s, d),
        }
    }

    /// Once a transport has answered `initialize` (or `server/discover`), its failures are
    /// the observation's outcome, not a reason to try another transport.
    fn settled(self) -> Stop {
        match self {
            Stop::Final(s, d) | Stop::Fallback(s, d) => Stop::Final(s, d),
        }
    }
}

fn fin(status: Status, detail: impl Into<String>) -> Stop {
    Stop::Final(status, detail.into())
}

fn protocol(detail: impl Into<String>) -> Stop {
    Stop::Final(Status::Protocol, detail.into())
}

/// One observation's connection state.
struct Session<'a> {
    http: &'a reqwest::Client,
    config: &'a ClientConfig,
    url: url::Url,
    obs: &'a mut Observation,
    next_id: u64,
    /// Replies sent to server→client requests so far (at most [`Limits::max_replies`]).
    replies: usize,
    /// This run's account against the memory budget.
    meter: Arc<Meter>,
}

/// Headers of one POST beyond the fixed ones.
#[derive(Default, Clone)]
struct Extra {
    session_id: Option<String>,
    protocol_version: Option<String>,
    method: Option<&'static str>,
}

/// How requests reach the server and answers come back.
enum Via {
    /// Each request is a POST whose response carries the answer (streamable HTTP, stateless).
    Post {
        url: url::Url,
        extra: Extra,
        /// The 2026-07-28 request `_meta`, added to every request's params.
        meta: Option<Value>,
    },
    /// Requests are POSTed to the endpoint; answers arrive on the GET stream (HTTP+SSE).
    Stream {
        endpoint: url::Url,
        answers: StreamAnswers,
    },
}

/// A JSON-RPC answer.
enum Answer {
    Result(String),
    Error { code: i64, message: String },
}

impl Session<'_> {
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// Charge the parse of `text` ([`budget::parse_estimate`]) until the hold is dropped.
    fn hold_parse(&self, text: &[u8]) -> Result<Hold, Stop> {
        self.meter
            .hold(budget::parse_estimate(text))
            .map_err(|_| budget_stop())
    }

    // ---- 2026-07-28 stateless ----

    async fn stateless(&mut self) -> Result<(), Stop> {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
            "io.modelcontextprotocol/clientCapabilities": crate::observe::client_capabilities(),
            "io.modelcontextprotocol/clientInfo": crate::observe::client_info(),
        });
        let extra = Extra {
            protocol_version: Some(STATELESS_VERSION.into()),
            method: Some("server/discover"),
            ..Extra::default()
        };
        let id = self.id();
        let body = jsonrpc::request(id, "server/discover", json!({ "_meta": meta }));
        let (answer, _) = self
            .post_rpc(&self.url.clone(), body, id, &extra, "server/discover")
            .await?;
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                return Err(Stop::Fallback(
                    Status::Protocol,
                    format!("server/discover: JSON-RPC error {code}: {message}"),
                ));
            }
        };
        let parse = self.hold_parse(result.as_bytes())?;
        let parsed: Value = serde_json::from_str(&result)
            .map_err(|e| protocol(format!("server/discover result: {e}")))?;
        let supports = parsed
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|s| s.as_str() == Some(STATELESS_VERSION)));
        drop(parsed);
        drop(parse);
        if !supports {
            return Err(Stop::Fallback(
                Status::Protocol,
                "server/discover answered without supporting 2026-07-28".into(),
            ));
        }
        self.obs.initialize = Some(result);
        self.obs.protocol_version = Some(STATELESS_VERSION.into());
        self.obs.session = false;
        let mut via = Via::Post {
            url: self.url.clone(),
            extra: Extra {
                method: Some("tools/list"),
                ..extra
            },
            meta: Some(meta),
        };
        // The transport is established: nothing after this point falls through to another.
        self.list_tools(&mut via).await.map_err(Stop::settled)
    }

    // ---- streamable HTTP, session era ----

    async fn streamable(&mut self) -> Result<(), Stop> {
        let id = self.id();
        let body = jsonrpc::request(id, "initialize", initialize_params(SESSION_VERSION));
        let url = self.url.clone();
        let (answer, headers) = self
            .post_rpc(&url, body, id, &Extra::default(), "initialize")
            .await?;
        let session_id = match headers.get("mcp-session-id") {
            None => None,
            Some(v) => Some(session_id(v)?),
        };
        let version = self.accept_initialize(answer)?;
        self.obs.session = session_id.is_some();
        let extra = Extra {
            session_id,
            protocol_version: header_version(&version),
            method: None,
        };
        // The notification's answer does not matter (202, 200, even an error): HISTOR and the
        // SDKs proceed either way, and some servers answer it oddly.
        self.post_notification(&url, &extra).await?;
        let mut via = Via::Post {
            url,
            extra,
            meta: None,
        };
        // The transport is established: nothing after this point falls through to another.
        self.list_tools(&mut via).await.map_err(Stop::settled)
    }

    /// Check an `initialize` answer, keep it, and return the negotiated version.
    fn accept_initialize(&mut self, answer: Answer) -> Result<String, Stop> {
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                let detail = format!("initialize: JSON-RPC error {code}: {message}");
                return Err(if code == -32601 {
                    Stop::Fallback(Status::Protocol, detail)
                } else {
                    protocol(detail)
                });
            }
        };
        let parse = self.hold_parse(result.as_bytes())?;
        let parsed: Value = serde_json::from_str(&result)
            .map_err(|e| protocol(format!("initialize result: {e}")))?;
        let version = parsed
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| protocol("initialize result has no protocolVersion"))?;
        if version.is_empty() || version.len() > limits::MAX_PROTOCOL_VERSION {
            return Err(protocol(
                "initialize result has an unusable protocolVersion",
            ));
        }
        let version = version.to_owned();
        drop(parsed);
        drop(parse);
        self.obs.initialize = Some(result);
        self.obs.protocol_version = Some(version.clone());
        Ok(version)
    }

    async fn post_notification(&mut self, url: &url::Url, extra: &Extra) -> Result<(), Stop> {
        let body = jsonrpc::notification("notifications/initialized", None);
        let response = self
            .send_post(url, body, extra, "notifications/initialized")
            .await?;
        // Drain a little of whatever came back so the connection can be reused; ignore content.
        if let Ok(b) = Body::new(response, 64 * 1024).map(|b| b.metered(self.meter.clone())) {
            let _ = tokio::time::timeout(Duration::from_secs(1), b.read_all()).await;
        }
        Ok(())
    }

    // ---- HTTP+SSE (2024-11-05) ----

    async fn sse(&mut self) -> Result<(), Stop> {
        let url = self.url.clone();
        self.obs.requests += 1;
        let response = self
            .http
            .get(url.clone())
            .header(header::ACCEPT, "text/event-stream")
            .timeout(self.limits().deadline)
            .send()
            .await
            .map_err(|e| send_error(&e, "GET sse"))?;
        let status = response.status();
        if let Some(stop) = self.bad_status(&response, "GET sse") {
            // Auth and redirects are answers about the server; any other error status means
            // this server does not offer the stream (the last transport tried anyway).
            let about_server = status.is_redirection() || matches!(status.as_u16(), 401 | 403);
            return Err(if about_server {
                stop
            } else {
                stop.into_fallback()
            });
        }
        if !is_content_type(&response, "text/event-stream") {
            return Err(Stop::Fallback(
                Status::Protocol,
                format!(
                    "GET sse: content type {:?}, not an event stream",
                    content_type(&response)
                ),
            ));
        }
        self.obs.sse_responses = true;
        let max_stream = self.limits().max_toolset + self.limits().max_response;
        let (tx, mut rx) = mpsc::channel::<Result<Event, Stop>>(2);
        let reader = tokio::spawn(read_stream(response, max_stream, tx, self.meter.clone()));
        let _abort = AbortOnDrop(reader);
        let mut events = 0usize;
        // The first event with data must be `endpoint`.
        let endpoint = loop {
            let Some(item) = rx.recv().await else {
                return Err(protocol("sse stream ended before the endpoint event"));
            };
            let event = item?;
            events += 1;
            if events > self.limits().max_sse_events {
                return Err(protocol("no endpoint event within the event limit"));
            }
            if event.event == "endpoint" {
                break event.data;
            }
        };
        let mut endpoint = url
            .join(endpoint.trim())
            .map_err(|e| protocol(format!("endpoint event {endpoint:?}: {e}")))?;
        if !endpoint.username().is_empty() || endpoint.password().is_some() {
            // reqwest would turn userinfo into `Authorization: Basic`: the crawler never sends
            // credentials, whoever supplies them.
            return Err(protocol(
                "endpoint event carries userinfo (credentials are never sent)",
            ));
        }
        guard::strip_root_dot(&mut endpoint)
            .map_err(|e| protocol(format!("endpoint event: {e}")))?;
        if endpoint.origin() != url.origin() {
            return Err(protocol(format!(
                "endpoint {endpoint} is not on the stream's origin"
            )));
        }
        self.obs.session = true;
        let mut via = Via::Stream {
            endpoint: endpoint.clone(),
            answers: StreamAnswers {
                rx,
                events,
                max_events: self.limits().max_sse_events,
            },
        };
        let answer = self
            .call(&mut via, "initialize", initialize_params(SSE_VERSION))
            .await?;
        self.accept_initialize(answer)?;
        let note = jsonrpc::notification("notifications/initialized", None);
        self.post_accepted(&endpoint, note, "notifications/initialized")
            .await?;
        // The transport is established: nothing after this point falls through to another.
        self.list_tools(&mut via).await.map_err(Stop::settled)
    }

    /// POST a message to an HTTP+SSE endpoint: the answer comes on the stream, so only a 2xx
    /// matters here.
    async fn post_accepted(
        &mut self,
        url: &url::Url,
        body: Vec<u8>,
        what: &str,
    ) -> Result<(), Stop> {
        let response = self.send_post(url, body, &Extra::default(), what).await?;
        if let Some(stop) = self.bad_status(&response, what) {
            return Err(stop);
        }
        if let Ok(b) = Body::new(response, 64 * 1024).map(|b| b.metered(self.meter.clone())) {
            let _ = tokio::time::timeout(Duration::from_secs(1), b.read_all()).await;
        }
        Ok(())
    }

    // ---- shared ----

    /// Send one request over `via` and wait for its answer.
    async fn call(
        &mut self,
        via: &mut Via,
        method: &'static str,
        params: Value,
    ) -> Result<Answer, Stop> {
        let id = self.id();
        match via {
            Via::Post { url, extra, meta } => {
                let mut params = params;
                if let Some(meta) = meta {
                    params["_meta"] = meta.clone();
                }
                let body = jsonrpc::request(id, method, params);
                let (url, extra) = (url.clone(), extra.clone());
                self.post_rpc(&url, body, id, &extra, method)
                    .await
                    .map(|(a, _)| a)
            }
            Via::Stream { endpoint, answers } => {
                let body = jsonrpc::request(id, method, params);
                let endpoint = endpoint.clone();
                self.post_accepted(&endpoint, body, method).await?;
                answers.answer(self, &endpoint, id, method).await
            }
        }
    }

    /// Read every `tools/list` page.
    async fn list_tools(&mut self, via: &mut Via) -> Result<(), Stop> {
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut tools = 0usize;
        let mut bytes = 0usize;
        loop {
            let params = cursor
                .as_ref()
                .map_or(json!({}), |c| json!({ "cursor": c }));
            let answer = self.call(via, "tools/list", params).await?;
            match self.take_page(answer, &mut seen, &mut tools, &mut bytes)? {
                Some(next) => cursor = Some(next),
                None => return Ok(()),
            }
        }
    }

    /// Keep one `tools/list` answer; the next cursor when there is one to follow.
    fn take_page(
        &mut self,
        answer: Answer,
        seen: &mut HashSet<String>,
        tools: &mut usize,
        bytes: &mut usize,
    ) -> Result<Option<String>, Stop> {
        let result = match answer {
            Answer::Result(r) => r,
            Answer::Error { code, message } => {
                return Err(protocol(format!(
                    "tools/list: JSON-RPC error {code}: {message}"
                )));
            }
        };
        let _parse = self.hold_parse(result.as_bytes())?;
        let set = toolmark_toolset::ToolSet::parse(result.as_bytes())
            .map_err(|e| protocol(format!("tools/list result: {e}")))?;
        *tools += set.tools.len();
        *bytes += result.len();
        if *tools > self.limits().max_tools {
            return Err(fin(
                Status::TooLarge,
                format!("more than {} tools", self.limits().max_tools),
            ));
        }
        if *bytes > self.limits().max_toolset {
            return Err(fin(
                Status::TooLarge,
                format!("tool set larger than {} bytes", self.limits().max_toolset),
            ));
        }
        let next = match &set.next_cursor {
            None | Some(toolmark_toolset::json::Json::Null) => None,
            Some(c) => match c.as_str() {
                Some("") => None,
                Some(s) => Some(s.to_owned()),
                None => return Err(protocol("tools/list nextCursor is not a string")),
            },
        };
        self.obs.pages.push(result);
        let Some(next) = next else {
            return Ok(None);
        };
        if !seen.insert(next.clone()) {
            return Err(fin(
                Status::Partial,
                format!(
                    "tools/list cursor repeated after {} pages",
                    self.obs.pages.len()
                ),
            ));
        }
        if self.obs.pages.len() >= self.limits().max_pages {
            return Err(fin(
                Status::Partial,
                format!("more than {} tools/list pages", self.limits().max_pages),
            ));
        }
        Ok(Some(next))
    }

    async fn send_post(
        &mut self,
        url: &url::Url,
        body: Vec<u8>,
        extra: &Extra,
        what: &str,
    ) -> Result<reqwest::Response, Stop> {
        let mut request = self
            .http
            .request(Method::POST, url.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .timeout(self.limits().request_timeout)
            .body(body);
        if let Some(s) = &extra.session_id {
            request = request.header("Mcp-Session-Id", s);
        }
        if let Some(v) = &extra.protocol_version {
            request = request.header("MCP-Protocol-Version", v);
        }
        if let Some(m) = extra.method {
            request = request.header("Mcp-Method", m);
        }
        self.obs.requests += 1;
        request.send().await.map_err(|e| send_error(&e, what))
    }

    /// POST a request and read its answer from a JSON body or an SSE stream.
    async fn post_rpc(
        &mut self,
        url: &url::Url,
        body: Vec<u8>,
        id: u64,
        extra: &Extra,
        what: &str,
    ) -> Result<(Answer, HeaderMap), Stop> {
        let response = self.send_post(url, body, extra, what).await?;
        let status = response.status();
        if let Some(stop) = self.bad_status(&response, what) {
            // A non-2xx with a JSON-RPC error body is still an answer we can judge.
            let fallback =
                matches!(status.as_u16(), 400 | 404 | 405 | 406 | 415) || status.is_server_error();
            if !fallback {
                return Err(stop);
            }
            let detail = match stop {
                Stop::Final(_, d) | Stop::Fallback(_, d) => d,
            };
            let excerpt = match Body::new(response, limits::MAX_DETAIL_EXCERPT * 16)
                .map(|b| b.metered(self.meter.clone()))
            {
                Ok(b) => match tokio::time::timeout(Duration::from_secs(2), b.read_all()).await {
                    Ok(Ok(bytes)) => excerpt(&bytes),
                    _ => String::new(),
                },
                Err(_) => String::new(),
            };
            let detail = if excerpt.is_empty() {
                detail
            } else {
                format!("{detail}: {excerpt}")
            };
            return Err(Stop::Fallback(Status::Http(status.as_u16()), detail));
        }
        if status == StatusCode::ACCEPTED {
            return Err(protocol(format!("{what}: 202 Accepted with no answer")));
        }
        let headers = response.headers().clone();
        if is_content_type(&response, "text/event-stream") {
            self.obs.sse_responses = true;
            let answer = self
                .answer_from_stream(url, response, id, extra, what)
                .await?;
            return Ok((answer, headers));
        }
        if !is_content_type(&response, "application/json") {
            let ct = content_type(&response);
            return Err(Stop::Fallback(
                Status::Protocol,
                format!("{what}: content type {ct:?} is neither JSON nor an event stream"),
            ));
        }
        let bytes = Body::new(response, self.limits().max_response)
            .map_err(body_stop)?
            .metered(self.meter.clone())
            .read_all()
            .await
            .map_err(body_stop)?;
        self.obs.bytes += bytes.len() as u64;
        let _parse = self.hold_parse(&bytes)?;
        let messages = jsonrpc::parse(&bytes).map_err(|e| protocol(format!("{what}: {e}")))?;
        match jsonrpc::find_answer(&messages, id) {
            Some(m) => Ok((to_answer(m), headers)),
            None => Err(protocol(format!(
                "{what}: no answer for id {id} in the response"
            ))),
        }
    }

    /// Read an SSE response until the answer to `id`, answering server requests on the way.
    async fn answer_from_stream(
        &mut self,
        url: &url::Url,
        response: reqwest::Response,
        id: u64,
        extra: &Extra,
        what: &str,
    ) -> Result<Answer, Stop> {
        let max = self.limits().max_response;
        let mut body = Body::new(response, max)
            .map_err(body_stop)?
            .metered(self.meter.clone());
        let mut parser = SseParser::new(
            limits::MAX_SSE_LINE.min(max),
            limits::MAX_SSE_EVENT.min(max),
        );
        let mut events = Vec::new();
        let mut seen = 0usize;
        loop {
            let chunk = body.next().await.map_err(body_stop)?;
            match &chunk {
                Some(bytes) => {
                    self.obs.bytes += bytes.len() as u64;
                    parser.push(bytes, &mut events).map_err(sse_stop)?;
                }
                None => parser.finish(&mut events).map_err(sse_stop)?,
            }
            for event in events.drain(..) {
                seen += 1;
                if seen > self.limits().max_sse_events {
                    return Err(protocol(format!(
                        "{what}: no answer within {} events",
                        self.limits().max_sse_events
                    )));
                }
                if event.data.is_empty() {
                    continue;
                }
                let _parse = self.hold_parse(event.data.as_bytes())?;
                let messages = jsonrpc::parse(event.data.as_bytes())
                    .map_err(|e| protocol(format!("{what}: sse event: {e}")))?;
                for m in &messages {
                    if let Message::Request { id: rid, method } = m {
                        if !self.may_reply() {
                            break;
                        }
                        self.reply(url, rid, method, extra).await;
                    }
                }
                if let Some(m) = jsonrpc::find_answer(&messages, id) {
                    return Ok(to_answer(m));
                }
            }
            if chunk.is_none() {
                return Err(protocol(format!(
                    "{what}: event stream ended without an answer to id {id}"
                )));
            }
        }
    }

    /// Whether one more server→client request may be answered, counting it: after
    /// [`Limits::max_replies`] the rest go unanswered and the observation carries on waiting
    /// for its own answer (a server that insists on answers ends it by its own timeout, or ours).
    fn may_reply(&mut self) -> bool {
        if self.replies >= self.limits().max_replies {
            return false;
        }
        self.replies += 1;
        true
    }

    /// Answer a server→client request (best effort, bounded; the outcome does not matter).
    async fn reply(&mut self, url: &url::Url, id: &Id, method: &str, extra: &Extra) {
        let body = jsonrpc::reply_to(id, method);
        let extra = Extra {
            method: None,
            ..extra.clone()
        };
        if let Ok(r) = self.send_post(url, body, &extra, "reply").await {
            drop(r);
        }
    }

    /// The stop for a non-2xx response (`None` for 2xx), recording an auth challenge.
    fn bad_status(&mut self, response: &reqwest::Response, what: &str) -> Option<Stop> {
        let status = response.status();
        if status.is_success() {
            return None;
        }
        let code = status.as_u16();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(header::LOCATION)
                .map(|v| {
                    cap(
                        &String::from_utf8_lossy(v.as_bytes()),
                        limits::MAX_HEADER_KEPT,
                    )
                })
                .unwrap_or_default();
            return Some(fin(
                Status::Redirect,
                format!("{what}: {code} to {location:?} (redirects are not followed)"),
            ));
        }
        let challenge = response.headers().get(header::WWW_AUTHENTICATE).map(|v| {
            cap(
                &String::from_utf8_lossy(v.as_bytes()),
                limits::MAX_HEADER_KEPT,
            )
        });
        if code == 401 || (code == 403 && challenge.is_some()) {
            let mut auth = parse_challenge(challenge.as_deref());
            auth.http_status = code;
            auth.method = what.to_owned();
            let detail = match &auth.resource_metadata {
                Some(m) => format!("{what}: {code}; resource metadata {m}"),
                None => format!("{what}: {code}"),
            };
            self.obs.auth = Some(auth);
            return Some(fin(Status::AuthRequired, detail));
        }
        Some(fin(Status::Http(code), format!("{what}: HTTP {code}")))
    }
}

/// Answers read from an HTTP+SSE stream by the reader task.
struct StreamAnswers {
    rx: mpsc::Receiver<Result<Event, Stop>>,
    events: usize,
    max_events: usize,
}

impl StreamAnswers {
    async fn answer(
        &mut self,
        session: &mut Session<'_>,
        endpoint: &url::Url,
        id: u64,
        what: &str,
    ) -> Result<Answer, Stop> {
        loop {
            let Some(item) = self.rx.recv().await else {
                return Err(protocol(format!(
                    "{what}: sse stream ended without an answer to id {id}"
                )));
            };
            let event = item?;
            self.events += 1;
            if self.events > self.max_events {
                return Err(protocol(format!(
                    "{what}: no answer within {} events",
                    self.max_events
                )));
            }
            if event.data.is_empty() || event.event != "message" {
                continue;
            }
            let _parse = session.hold_parse(event.data.as_bytes())?;
            let messages = jsonrpc::parse(event.data.as_bytes())
                .map_err(|e| protocol(format!("{what}: sse event: {e}")))?;
            session.obs.bytes += event.data.len() as u64;
            for m in &messages {
                if let Message::Request { id: rid, method } = m {
                    if !session.may_reply() {
                        break;
                    }
                    let body = jsonrpc::reply_to(rid, method);
                    let _ = session
                        .send_post(endpoint, body, &Extra::default(), "reply")
                        .await;
                }
            }
            if let Some(m) = jsonrpc::find_answer(&messages, id) {
                return Ok(to_answer(m));
            }
        }
    }
}

/// Read an event stream into `tx` until it ends, fails or the receiver goes away.
async fn read_stream(
    response: reqwest::Response,
    max: usize,
    tx: mpsc::Sender<Result<Event, Stop>>,
    meter: Arc<Meter>,
) {
    let mut body = match Body::new(response, max) {
        Ok(b) => b.metered(meter),
        Err(e) => {
            let _ = tx.send(Err(body_stop(e))).await;
            return;
        }
    };
    let mut parser = SseParser::new(
        limits::MAX_SSE_LINE.min(max),
        limits::MAX_SSE_EVENT.min(max),
    );
    let mut events = Vec::new();
    loop {
        let step = match body.next().await {
            Ok(Some(bytes)) => parser.push(&bytes, &mut events).map_err(sse_stop),
            Ok(None) => {
                let r = parser.finish(&mut events).map_err(sse_stop);
                for e in events.drain(..) {
                    if tx.send(Ok(e)).await.is_err() {
                        return;
                    }
                }
                if let Err(stop) = r {
                    let _ = tx.send(Err(stop)).await;
                }
                return;
            }
            Err(e) => Err(body_stop(e)),
        };
        for e in events.drain(..) {
            if tx.send(Ok(e)).await.is_err() {
                return;
            }
        }
        if let Err(stop) = step {
            let _ = tx.send(Err(stop)).await;
            return;
        }
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": crate::observe::client_capabilities(),
        "clientInfo": crate::observe::client_info(),
    })
}

/// The `MCP-Protocol-Version` header for later requests: the negotiated version when it looks
/// like a spec version (`YYYY-MM-DD`), else none (the server then assumes 2025-03-26).
fn header_version(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let date = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    date.then(|| v.to_owned())
}

/// A usable `Mcp-Session-Id`: visible ASCII, at most [`limits::MAX_SESSION_ID`] bytes.
fn session_id(v: &HeaderValue) -> Result<String, Stop> {
    let b = v.as_bytes();
    if b.is_empty() || b.len() > limits::MAX_SESSION_ID {
        return Err(protocol(format!(
            "Mcp-Session-Id of {} bytes (allowed 1–{})",
            b.len(),
            limits::MAX_SESSION_ID
        )));
    }
    if !b.iter().all(|c| (0x21..=0x7e).contains(c)) {
        return Err(protocol(
            "Mcp-Session-Id holds characters outside visible ASCII",
        ));
    }
    Ok(String::from_utf8_lossy(b).into_owned())
}

fn to_answer(m: &Message) -> Answer {
    match m {
        Message::Response { result, .. } => Answer::Result(result.clone()),
        Message::ErrorResponse { code, message, .. } => Answer::Error {
            code: *code,
            message: message.clone(),
        },
        _ => Answer::Error {
            code: i64::MIN,
            message: "not a response".into(),
        },
    }
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| cap(&String::from_utf8_lossy(v.as_bytes()), 100))
        .unwrap_or_default()
}

fn is_content_type(response: &reqwest::Response, want: &str) -> bool {
    let ct = content_type(response);
    ct.split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(want))
}

/// The status for a failed send (before any response).
fn send_error(e: &reqwest::Error, what: &str) -> Stop {
    let chain = crate::error_chain(e);
    let lower = chain.to_ascii_lowercase();
    let status = if e.is_timeout() {
        Status::Timeout
    } else if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("invalidcontenttype")
    {
        Status::Tls
    } else if e.is_connect() {
        Status::Connect
    } else if lower.contains("too large") || lower.contains("parse") || lower.contains("invalid") {
        Status::Protocol
    } else {
        Status::Connect
    };
    fin(
        status,
        format!("{what}: {}", cap(&chain, limits::MAX_DETAIL_EXCERPT)),
    )
}

/// The stop of a run whose grant could not grow without waiting: the observation runs again
/// once the budget has room (this status is never the outcome of a finished observation but
/// the last run's, which holds the whole budget and is never refused).
fn budget_stop() -> Stop {
    fin(Status::TooLarge, BodyError::Budget.to_string())
}

fn body_stop(e: BodyError) -> Stop {
    let status = match e {
        BodyError::TooLarge(_) | BodyError::Ratio(..) | BodyError::Budget => Status::TooLarge,
        BodyError::Timeout => Status::Timeout,
        BodyError::Encoding(_) => Status::Protocol,
        BodyError::Network(_) => Status::Connect,
    };
    fin(status, e.to_string())
}

fn sse_stop(e: crate::sse::SseError) -> Stop {
    let status = match e {
        crate::sse::SseError::NotUtf8 => Status::Protocol,
        _ => Status::TooLarge,
    };
    fin(status, format!("event stream: {e}"))
}

fn cap(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    cap(one_line.trim(), limits::MAX_DETAIL_EXCERPT)
}

/// Parse a `WWW-Authenticate` challenge: its scheme and the RFC 6750 / RFC 9728 parameters.
pub fn parse_challenge(raw: Option<&str>) -> AuthChallenge {
    let mut out = AuthChallenge {
        www_authenticate: raw.map(str::to_owned),
        ..AuthChallenge::default()
    };
    let Some(raw) = raw else { return out };
    let raw = raw.trim();
    let (scheme, mut rest) = match raw.find(|c: char| c.is_ascii_whitespace()) {
        Some(i) => (&raw[..i], raw[i..].trim_start()),
        None => (raw, ""),
    };
    if !scheme.is_empty() && !scheme.contains('=') {
        out.scheme = Some(scheme.to_owned());
    } else {
        rest = raw;
    }
    // auth-param = token "=" ( token / quoted-string ), separated by commas.
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq]
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let mut value = String::new();
        let after = rest[eq + 1..].trim_start();
        let consumed;
        if let Some(q) = after.strip_prefix('"') {
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => value.push(c),
                }
            }
            consumed = &q[end.min(q.len())..];
        } else {
            let end = after.find(',').unwrap_or(after.len());
            value = after[..end].trim().to_owned();
            consumed = &after[end..];
        }
        match name.as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            "error" => out.error = Some(value),
            "realm" => out.realm = Some(value),
            _ => {}
        }
        rest = consumed.trim_start().trim_start_matches(',').trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges() {
        let c = parse_challenge(Some(
            r#"Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource", scope="read write", error="invalid_token""#,
        ));
        assert_eq!(c.scheme.as_deref(), Some("Bearer"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope.as_deref(), Some("read write"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        let c = parse_challenge(Some(r#"Bearer realm="a\"b",error=insufficient_scope"#));
        assert_eq!(c.realm.as_deref(), Some("a\"b"));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        let c = parse_challenge(Some("Bearer"));
        assert_eq!(c.scheme.as_deref(), Some("Bearer"));
        assert_eq!(parse_challenge(None), AuthChallenge::default());
        // Garbage never panics.
        for s in ["=", "Bearer =\"", "Bearer a=\"\\", ",,,", "Bearer x=1,,y"] {
            parse_challenge(Some(s));
        }
    }

    #[test]
    fn versions_and_sessions() {
        assert_eq!(header_version("2025-06-18").as_deref(), Some("2025-06-18"));
        assert_eq!(header_version("2025-6-18"), None);
        assert_eq!(header_version("latest"), None);
        assert!(session_id(&HeaderValue::from_static("abc-123")).is_ok());
        assert!(session_id(&HeaderValue::from_str(&"a".repeat(257)).unwrap()).is_err());
        assert!(session_id(&HeaderValue::from_static("a b")).is_err());
    }
}
