//! A read-only MCP client: `tools/list` from one remote, over whichever transport answers,
//! keeping every response's raw JSON and ending in a named [`Status`] whatever the server does.
//!
//! This module is the HTTP half of it: the SSRF-checked, budgeted HTTP client, the transports
//! (streamable HTTP with and without a session, 2026-07-28 stateless, HTTP+SSE) as
//! implementations of [`toolmark_mcp::Transport`], the negotiation order, and the mapping of
//! every outcome to a [`Status`]. The session itself — the handshake, `tools/list` paging under
//! the named limits, answer matching by id, replies to server requests, what a complete listing
//! is — is [`toolmark_mcp::Session`], which a stdio transport shares. A transport's own
//! outcomes (an HTTP status, an auth challenge, a timeout, a size cap) pass through the session
//! untouched; the session's failures map to `protocol`, `too-large` and `partial`, and its "not
//! spoken" answers fall through to the next transport.
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
//! The same `clientInfo` ([`crate::observe::client_info`]; the second look, below, its own) and
//! empty capabilities, no `Origin`, no cookies, no credentials, `Accept-Encoding: gzip,
//! deflate` (decompressed here, under [`crate::body`]'s caps), a `User-Agent` naming the
//! crawler (the second look's its own), and the headers the
//! registry declares with a literal, non-secret value ([`Declared::headers`]; secrets, templates
//! and reserved headers never). Redirects are never followed. Only `initialize`,
//! `notifications/initialized`, `server/discover`, `tools/list` and the `DELETE` that ends a
//! session are ever sent (plus one `GET` of the protected-resource metadata after a challenge,
//! [`crate::resource`]); no tool is ever called.
//!
//! ## The second look
//!
//! After a listing that ended `ok`, the tools are listed once more in a separate session (a
//! client, a connection and a session of its own, ended with its own `DELETE`) from a second
//! identity: [`ClientConfig::second_client`] as `clientInfo` and `User-Agent`, the protocol
//! version [`SECOND_VERSION`] (HTTP+SSE keeps [`SSE_VERSION`]), from
//! [`ClientConfig::second_source`] when set; tools only, within
//! [`Limits::second_look_deadline`], holding the observation's places and memory grant. It is
//! kept as [`Observation::second`] and never changes the observation's status; a tool set that
//! differs from the first is the cloaking signal (`docs/crawler.md`, "Cloaking: the second
//! look").

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolmark_mcp::jsonrpc;
use toolmark_mcp::{Delivery, Failure, Handshake, Identity, Incoming, Listing, SessionError};

use toolmark_outbound::Outbound;
pub use toolmark_outbound::{Trust, TrustError};

use crate::body::{Body, BodyError};
use crate::budget::{self as budget, AddressGate, Budget, Busy, Grant, Hold, Meter};
use crate::guard::{self, GuardError, Pinned, Policy, Resolve};
use crate::limits;
use crate::observe::{
    Attempt, AuthChallenge, Dialled, Observation, SecondClient, SecondLook, Status, Transport, Via,
};
use crate::registry::Declared;
use crate::sse::{Event, SseParser};

/// The protocol version of the stateless era.
pub use toolmark_mcp::STATELESS_VERSION;
/// The newest session-era version asked for in `initialize`.
pub const SESSION_VERSION: &str = "2025-11-25";
/// The version of the HTTP+SSE transport.
pub const SSE_VERSION: &str = "2024-11-05";
/// The session-era version the second look asks for ([`ClientConfig::second_client`]): not the
/// one the first listing asked for ([`SESSION_VERSION`], or [`STATELESS_VERSION`]), and the
/// most widely served one before it (the SDKs' default through 2025).
pub const SECOND_VERSION: &str = "2025-06-18";

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
    /// Whether the surface beyond `tools/list` and the Server Card are read (`crawl.surface`).
    pub surface: bool,
    /// See [`limits::SURFACE_DEADLINE`].
    pub surface_deadline: Duration,
    /// The surface's limits (pages, entries, bytes, `ui://` reads).
    pub surface_limits: toolmark_mcp::SurfaceLimits,
    /// Whether a remote whose tools were listed completely is listed a second time from a
    /// second client identity (`crawl.second_look`; docs/crawler.md, "Cloaking: the second
    /// look").
    pub second_look: bool,
    /// See [`limits::SECOND_LOOK_DEADLINE`].
    pub second_look_deadline: Duration,
}

impl Limits {
    /// The limits of the session core ([`toolmark_mcp::Limits`]) among these.
    pub fn session(&self) -> toolmark_mcp::Limits {
        toolmark_mcp::Limits {
            max_toolset: self.max_toolset,
            max_tools: self.max_tools,
            max_pages: self.max_pages,
            max_replies: self.max_replies,
            surface: self.surface_limits.clone(),
        }
    }
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
            surface: true,
            surface_deadline: limits::SURFACE_DEADLINE,
            surface_limits: toolmark_mcp::SurfaceLimits::default(),
            second_look: true,
            second_look_deadline: limits::SECOND_LOOK_DEADLINE,
        }
    }
}

/// Everything an observation needs besides the URL: the [`Outbound`] settings of every request
/// (policy, resolver, user agent, trust; [`ClientConfig::outbound`]) and the crawl's own limits
/// and memory budget.
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
    /// Which server certificates are accepted.
    pub trust: Trust,
    /// The memory budget every observation made with this configuration (and its clones)
    /// shares; [`Budget::default`] is [`limits::MEMORY_BUDGET`]. See [`crate::budget`].
    pub budget: Budget,
    /// Who the second look says it is (`crawl.second_client`): its `clientInfo` and its
    /// `User-Agent`.
    pub second_client: SecondClient,
    /// The local address the second look connects from (`crawl.second_source`); `None`: the
    /// one the system picks, as for the first.
    pub second_source: Option<std::net::IpAddr>,
}

impl ClientConfig {
    /// The settings of one request made with this configuration: its policy, resolver, user
    /// agent and trust, and [`Limits::connect_timeout`].
    pub fn outbound(&self) -> Outbound {
        Outbound {
            policy: self.policy,
            resolver: self.resolver.clone(),
            user_agent: self.user_agent.clone(),
            trust: self.trust.clone(),
            connect_timeout: self.limits.connect_timeout,
            local_address: None,
        }
    }

    /// The settings of the second look's requests: [`ClientConfig::outbound`]'s, from
    /// [`ClientConfig::second_source`], with [`ClientConfig::second_client`] as the
    /// `User-Agent`.
    pub fn second_outbound(&self) -> Outbound {
        Outbound {
            local_address: self.second_source,
            user_agent: self.second_client.to_string(),
            ..self.outbound()
        }
    }
}

/// The requests of webhooks and witness submissions made with a crawl's settings.
impl From<ClientConfig> for Outbound {
    fn from(config: ClientConfig) -> Outbound {
        config.outbound()
    }
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
            trust: Trust::platform(),
            second_client: SecondClient::default(),
            second_source: None,
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
    let none = Declared::default();
    let start = Start {
        hint,
        refused_by: None,
    };
    match observe_gated(
        config,
        url,
        declared_transport,
        &none,
        start,
        Waits::default(),
    )
    .await
    {
        Gated::Done(obs, _) => *obs,
        // Without a gate nothing is ever busy, and without a stop token nothing is abandoned.
        Gated::Busy(_) | Gated::Abandoned => unreachable!("no gate and no stop token"),
    }
}

/// How an observation starts, from what the crawl learned (see [`crate::crawl::crawl`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Start {
    /// The transport tried first (then the usual order without it).
    pub hint: Option<Transport>,
    /// Set when the `server/discover` probe is skipped because other endpoints of the origin
    /// refused it: the implementations that refused ([`implementation`]). An endpoint that
    /// then answers streamable HTTP as none of them is probed after its listing, and recorded
    /// over 2026-07-28 if it answers the probe.
    pub refused_by: Option<std::collections::HashSet<String>>,
}

/// The implementation a handshake result names: its `serverInfo` as `name/version`, or `None`
/// when it names none (such a server is never taken for another one).
pub(crate) fn implementation(handshake: Option<&str>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Answered {
        #[serde(rename = "serverInfo")]
        server_info: Info,
    }
    #[derive(serde::Deserialize)]
    struct Info {
        name: String,
        #[serde(default)]
        version: String,
    }
    let r: Answered = serde_json::from_str(handshake?).ok()?;
    Some(format!("{}/{}", r.server_info.name, r.server_info.version))
}

/// What an observation in a crawl waits on and holds: the crawl's per-address gate, its stop
/// token, and its place in the host's limit (given back when dropped).
#[derive(Default)]
pub(crate) struct Waits<'a> {
    /// The per-address limit ([`AddressGate::join`]).
    pub gate: Option<&'a Arc<AddressGate>>,
    /// Cancelled: give up waiting.
    pub stop: Option<&'a CancellationToken>,
    /// The observation's place in its host's limit, given back (dropped) once the listing is
    /// over: before the `DELETE` that ends a session, or when the observation ends.
    pub slot: Option<crate::crawl::HostSlot>,
}

/// A session to end after its listing: one `DELETE` with its `Mcp-Session-Id`.
struct Closing {
    client: reqwest::Client,
    url: url::Url,
    session_id: String,
    protocol_version: Option<String>,
}

impl Closing {
    /// Send the `DELETE`, bounded by [`limits::SESSION_CLOSE_TIMEOUT`], its body never read.
    /// Best effort: its status is returned (the first session's is `Dialled::session_closed`),
    /// its failure ignored; it counts in `Dialled::requests`.
    async fn send(self, dialled: &mut Dialled) -> Option<u16> {
        let mut request = self
            .client
            .request(Method::DELETE, self.url)
            .header("Mcp-Session-Id", self.session_id)
            .timeout(limits::SESSION_CLOSE_TIMEOUT);
        if let Some(v) = &self.protocol_version {
            request = request.header("MCP-Protocol-Version", v);
        }
        dialled.requests += 1;
        request.send().await.ok().map(|r| r.status().as_u16())
    }
}

/// The second look of one run, kept outside it as the first listing is (so a second look cut
/// off by its deadline still leaves what it read and the session to end).
#[derive(Default)]
struct Second {
    /// The protocol version its last handshake asked for; `None`: not started.
    asked: Option<&'static str>,
    /// How it ended; `None` while it runs.
    ended: Option<(Status, String)>,
    /// What its session read.
    listing: Listing,
    /// Its own counters: its requests and bytes are added to the observation's, the rest of it
    /// (session, auth, headers) is the first listing's alone.
    dialled: Dialled,
    /// Its session, to end as the first's is.
    closing: Option<Closing>,
}

impl Second {
    /// What the observation keeps of it, once started.
    fn into_look(self, client: &SecondClient) -> Option<SecondLook> {
        let asked = self.asked?;
        let (status, detail) = self
            .ended
            .unwrap_or_else(|| (Status::Timeout, "the second look did not end".into()));
        Some(SecondLook {
            client_info: client.client_info(),
            asked_version: asked.to_owned(),
            status,
            detail,
            protocol_version: self.listing.protocol_version,
            pages: self.listing.pages,
        })
    }
}

/// How [`observe_gated`] ended.
#[derive(Debug)]
pub(crate) enum Gated {
    /// Observed; the grant the pages are accounted to (shrunk to what they hold).
    Done(Box<Observation>, Option<Grant>),
    /// An address this target resolved to was full ([`AddressGate::join`]): nothing was dialled.
    Busy(std::net::IpAddr),
    /// The stop token was cancelled while it waited (for DNS, its address or budget): nothing of it is
    /// kept, and it is not an observation.
    Abandoned,
}

/// Runs of one observation at most: the first under [`Limits::grant`], a second under a grant
/// for what the caps can need, a last one under the whole budget (see [`crate::budget`]).
const RUNS: usize = 3;

/// [`observe_with_hint`] of a remote as its registry entry declares it — `url` as published,
/// dialled with its template variables filled in and [`Declared::headers`] sent on every request
/// to it (never to its protected-resource metadata), what was withheld recorded
/// (`Dialled::declared`) and named in the detail — behind `gate` (the
/// crawl's per-address limit), returning the budget grant the observation's pages are accounted
/// to (the caller drops it when done with them).
///
/// Waiting for the address or for budget happens before the deadline starts, and a run
/// restarted for budget gets a fresh deadline; [`Observation::elapsed`] counts the runs only.
/// Every wait (DNS, the address, budget) ends as [`Gated::Abandoned`] once `stop` is set; a
/// run under way is not interrupted (it ends by its deadline).
pub(crate) async fn observe_gated(
    config: &ClientConfig,
    url: &str,
    declared_transport: &str,
    declared: &Declared,
    start: Start,
    waits: Waits<'_>,
) -> Gated {
    match observe_dialled(config, url, (declared_transport, declared), &start, waits).await {
        Gated::Done(mut obs, grant) => {
            if let Some(d) = obs.dialled_mut() {
                d.declared = declared.clone();
            }
            if let Some(note) = declared.withheld_note() {
                obs.detail = if obs.detail.is_empty() {
                    note
                } else {
                    format!("{}; {note}", obs.detail)
                };
            }
            Gated::Done(obs, grant)
        }
        other => other,
    }
}

async fn observe_dialled(
    config: &ClientConfig,
    url: &str,
    (declared, headers): (&str, &Declared),
    start: &Start,
    waits: Waits<'_>,
) -> Gated {
    let Waits {
        gate,
        stop,
        mut slot,
    } = waits;
    let deadline = config.limits.deadline;
    let mut obs = Observation::remote();
    let checked = Instant::now();
    let dial = headers.dial_url(url);
    let pinned = budget::unless_stopped(
        tokio::time::timeout(
            deadline,
            guard::check(&dial, config.policy, config.resolver.as_ref()),
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
        obs = Observation::remote();
        let mut dialled = Dialled {
            address: pinned.addrs.first().copied(),
            ..Dialled::default()
        };
        // What the session reads is kept outside the run, so a run cut off by the deadline
        // still leaves the pages it had read.
        let mut listing = Listing::default();
        let mut closing = None;
        let mut second = Second::default();
        let started = Instant::now();
        let observed = async {
            run(
                config,
                &pinned,
                (declared, headers),
                start,
                (&mut obs, &mut dialled, &mut closing),
                &mut listing,
                (&meter, started + deadline),
            )
            .await;
            if matches!(obs.status, Status::AuthRequired) {
                crate::resource::fetch_for(config, &pinned.url, &mut dialled).await;
            }
            if obs.status == Status::Ok
                && config.limits.second_look
                && let Some(first) = dialled.transport
            {
                second_look(
                    config,
                    &pinned,
                    headers,
                    first,
                    &mut second,
                    (&meter, started + deadline),
                )
                .await;
            }
        };
        if tokio::time::timeout(deadline, observed).await.is_err() {
            obs.status = Status::Timeout;
            obs.detail = format!(
                "observation deadline of {} s passed",
                deadline.as_secs_f64()
            );
        }
        let starved = meter.starved();
        dialled.requests = dialled.requests.saturating_add(second.dialled.requests);
        dialled.bytes = dialled.bytes.saturating_add(second.dialled.bytes);
        if closing.is_some() || second.closing.is_some() {
            // On the last run, the host's and the addresses' places are given back before the
            // sessions are ended (when a closing permit is free at every address), so the
            // `DELETE`s do not hold up the next observation there; one after the other, so a
            // host sees at most one `DELETE` per closing permit.
            let mut closer = None;
            if (starved.is_none() || run_no >= RUNS)
                && let Some(place) = _place.take()
            {
                match place.into_closer() {
                    Ok(c) => {
                        closer = Some(c);
                        drop(slot.take());
                    }
                    Err(place) => _place = Some(place),
                }
            }
            if let Some(c) = closing.take() {
                dialled.session_closed = c.send(&mut dialled).await;
            }
            if let Some(c) = second.closing.take() {
                c.send(&mut dialled).await;
            }
            drop(closer);
        }
        obs.via = Via::Remote(dialled);
        obs.initialize = listing.initialize;
        obs.protocol_version = listing.protocol_version;
        obs.pages = listing.pages;
        obs.surface = listing.surface;
        obs.second = second.into_look(&config.second_client);
        spent += started.elapsed();
        let grant = meter.take_grant();
        match starved {
            Some(wanted) if run_no < RUNS => {
                // Return everything, then wait for enough, holding nothing (see crate::budget).
                drop(grant);
                drop(obs.pages.drain(..));
                drop(obs.second.take());
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
                if let Some(s) = obs.second.as_mut().filter(|s| s.status == Status::TooLarge) {
                    // The same of a second look's.
                    s.pages.clear();
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

/// Heap bytes a finished observation still holds of what remotes sent: its pages, its
/// `initialize` result, its surface and its second look's pages, by capacity.
pub(crate) fn held_bytes(obs: &Observation) -> usize {
    obs.pages
        .iter()
        .map(String::capacity)
        .sum::<usize>()
        .saturating_add(obs.initialize.as_ref().map_or(0, String::capacity))
        .saturating_add(obs.surface.as_ref().map_or(0, |s| s.held_bytes()))
        .saturating_add(obs.second.as_ref().map_or(0, SecondLook::held_bytes))
}

/// What the budget charges an honest observation at its caps: every page up to
/// [`Limits::max_toolset`] and one more response kept ([`budget::BODY_COPIES`] each), for the
/// listing and, when it is made ([`Limits::second_look`]), the second look's, plus the parse of
/// the largest response (its copies; trees of real tool sets add little beyond them).
fn cap_need(limits: &Limits) -> usize {
    let listings = if limits.second_look { 2 } else { 1 };
    (limits.max_toolset + limits.max_response)
        .saturating_mul(budget::BODY_COPIES)
        .saturating_mul(listings)
        .saturating_add(limits.max_response.saturating_mul(budget::PARSE_COPIES))
}

async fn run(
    config: &ClientConfig,
    pinned: &Pinned,
    // The transport the registry declares, and the headers it declares.
    (declared, headers): (&str, &Declared),
    start: &Start,
    // What the run fills: the observation's core, what dialling found, and the session to end.
    (obs, dialled, closing): (&mut Observation, &mut Dialled, &mut Option<Closing>),
    listing: &mut Listing,
    // This run's memory account, and when the observation's deadline passes.
    (meter, ends): (&Arc<Meter>, Instant),
) {
    let client = match build_client(config, pinned, headers) {
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
    let hint = start.hint;
    let order: Vec<Transport> = hint
        .into_iter()
        .chain(usual.iter().copied().filter(|t| Some(*t) != hint))
        .collect();
    let declared_kind = if declared == "sse" {
        Transport::Sse
    } else {
        Transport::StreamableHttp
    };
    let mut http = Http {
        client: &client,
        config,
        url: pinned.url.clone(),
        dialled,
        meter: meter.clone(),
    };
    // One session core for the whole run: replies to server requests count across transports.
    let mut session = toolmark_mcp::Session::new(config.limits.session(), identity(), listing);
    let mut fallen: Vec<(Transport, Status, String)> = Vec::new();
    let mut answered = None;
    for &transport in &order {
        let result = match transport {
            Transport::Stateless => {
                let mut post = Post::new(&mut http, true);
                let listed = session.list_tools(&mut post, Handshake::Discover).await;
                if listed.is_ok() {
                    read_surface(&mut session, &mut post, config, ends).await;
                }
                listed
            }
            Transport::StreamableHttp => {
                let mut post = Post::new(&mut http, false);
                let handshake = Handshake::Initialize(SESSION_VERSION);
                let listed = session.list_tools(&mut post, handshake).await;
                if listed.is_ok() {
                    read_surface(&mut session, &mut post, config, ends).await;
                }
                // Whatever the listing came to, a session it was issued is to be ended.
                *closing = post.closing();
                listed
            }
            Transport::Sse => match open_sse(&mut http).await {
                Ok(mut stream) => {
                    let handshake = Handshake::Initialize(SSE_VERSION);
                    let listed = session.list_tools(&mut stream, handshake).await;
                    if listed.is_ok() {
                        read_surface(&mut session, &mut stream, config, ends).await;
                    }
                    listed
                }
                // The stream never opened: the session did not start.
                Err(stop) => Err(SessionError::transport(stop)),
            },
        }
        .map_err(Stop::from_session);
        let (status, detail, fall) = match result {
            Ok(()) => (Status::Ok, String::new(), false),
            Err(Stop::Final(s, d)) => (s, d, false),
            Err(Stop::Fallback(s, d)) => (s, d, true),
        };
        http.dialled.attempts.push(Attempt {
            transport,
            status: status.clone(),
            detail: detail.clone(),
        });
        if !fall {
            http.dialled.transport = Some(transport);
            obs.status = status;
            obs.detail = detail;
            answered = Some(transport);
            break;
        }
        fallen.push((transport, status, detail));
    }
    if let Some(transport) = answered {
        let other = |refused: &std::collections::HashSet<String>| {
            implementation(listing.initialize.as_deref()).is_none_or(|i| !refused.contains(&i))
        };
        let tried = |t| http.dialled.attempts.iter().any(|a| a.transport == t);
        // Only a complete listing is upgraded: a failed one is what the server did.
        if transport == Transport::StreamableHttp
            && obs.status == Status::Ok
            && start.refused_by.as_ref().is_some_and(other)
            && !tried(Transport::Stateless)
        {
            upgrade(config, &mut http, listing, ends).await;
        }
        // A server that answered, listing or challenging, may publish a card (which clients
        // read without authorization).
        if config.limits.surface && matches!(obs.status, Status::Ok | Status::AuthRequired) {
            let left = ends
                .saturating_duration_since(Instant::now())
                .saturating_sub(limits::SESSION_CLOSE_TIMEOUT);
            let fetched =
                tokio::time::timeout(left, crate::card::fetch(config, pinned, http.dialled)).await;
            let card = fetched.unwrap_or_else(|_| toolmark_toolset::surface::RawCard {
                url: crate::card::locations(&pinned.url)[0].to_string(),
                status: "timeout".into(),
                detail: "the observation's deadline passed before the card was read".into(),
                body: None,
            });
            listing.surface.get_or_insert_default().card = Some(card);
        }
        return;
    }
    // Every transport fell through: report the declared one's outcome.
    let (t, s, d) = fallen
        .iter()
        .find(|(t, _, _)| *t == declared_kind)
        .or(fallen.last())
        .cloned()
        .unwrap_or((declared_kind, Status::Protocol, "no transport tried".into()));
    http.dialled.transport = Some(t);
    obs.status = s;
    obs.detail = format!("no transport answered; {}: {d}", t.as_str());
}

/// After a streamable HTTP listing whose probe was skipped for its origin's memory, by an
/// implementation other than those that refused the probe: probe `server/discover` after all
/// and, if it answers, list over 2026-07-28 and record that instead. The streamable listing is
/// kept aside meanwhile (its pages stay charged to the meter) and comes back if the probe or
/// its listing fails; the attempt is recorded either way.
async fn upgrade(config: &ClientConfig, http: &mut Http<'_>, listing: &mut Listing, ends: Instant) {
    let kept = std::mem::take(listing);
    let had_session = http.dialled.session;
    let result = {
        let mut session = toolmark_mcp::Session::new(config.limits.session(), identity(), listing);
        let mut post = Post::new(http, true);
        let listed = session.list_tools(&mut post, Handshake::Discover).await;
        if listed.is_ok() {
            read_surface(&mut session, &mut post, config, ends).await;
        }
        listed.map_err(Stop::from_session)
    };
    let (status, detail) = match result {
        Ok(()) => (Status::Ok, String::new()),
        Err(Stop::Final(s, d) | Stop::Fallback(s, d)) => (s, d),
    };
    let ok = status == Status::Ok;
    http.dialled.attempts.push(Attempt {
        transport: Transport::Stateless,
        status,
        detail,
    });
    if ok {
        http.dialled.transport = Some(Transport::Stateless);
    } else {
        *listing = kept;
        http.dialled.session = had_session;
    }
}

/// After a complete listing, in the same session: the surface the server declares and the
/// `ui://` pages its tools name ([`toolmark_mcp::Session::list_surface`]), when the crawl reads
/// the surface ([`Limits::surface`]), within [`Limits::surface_deadline`] and never past the
/// observation's deadline `ends` less [`limits::SESSION_CLOSE_TIMEOUT`]: what is not read by
/// then is recorded as unfinished, and the tools' outcome stands.
async fn read_surface<T: toolmark_mcp::Transport<Error = Stop>>(
    session: &mut toolmark_mcp::Session<'_>,
    transport: &mut T,
    config: &ClientConfig,
    ends: Instant,
) {
    if !config.limits.surface {
        return;
    }
    let uris = crate::observe::assemble(&session.listing().pages)
        .map(|set| toolmark_toolset::surface::app::ui_uris(&set))
        .unwrap_or_default();
    let left = ends
        .saturating_duration_since(Instant::now())
        .saturating_sub(limits::SESSION_CLOSE_TIMEOUT);
    let named = |stop: &Stop| match stop {
        Stop::Final(s, d) | Stop::Fallback(s, d) => (s.name(), d.clone()),
    };
    let _ = tokio::time::timeout(
        config.limits.surface_deadline.min(left),
        session.list_surface(transport, &uris, named),
    )
    .await;
}

/// After a complete listing over `first`: the tools listed again in a separate session (a
/// client of its own, so a connection of its own) from the second client identity
/// ([`ClientConfig::second_client`], [`ClientConfig::second_source`]), another protocol
/// version where the transport has one ([`SECOND_VERSION`]; HTTP+SSE keeps [`SSE_VERSION`]),
/// the tools only (no surface, no card), within [`Limits::second_look_deadline`] and never past
/// the observation's deadline `ends` less [`limits::SESSION_CLOSE_TIMEOUT`]. Its pages are
/// charged to the observation's `meter`; what it read and how it ended are in `second`.
async fn second_look(
    config: &ClientConfig,
    pinned: &Pinned,
    headers: &Declared,
    first: Transport,
    second: &mut Second,
    (meter, ends): (&Arc<Meter>, Instant),
) {
    let left = ends
        .saturating_duration_since(Instant::now())
        .saturating_sub(limits::SESSION_CLOSE_TIMEOUT);
    let within = config.limits.second_look_deadline.min(left);
    second.asked = Some(match first {
        Transport::Sse => SSE_VERSION,
        Transport::Stateless | Transport::StreamableHttp => SECOND_VERSION,
    });
    if within.is_zero() {
        second.ended = Some((
            Status::Timeout,
            "second look: the observation's deadline left no time for it".into(),
        ));
        return;
    }
    if tokio::time::timeout(
        within,
        list_again(config, pinned, headers, first, second, meter),
    )
    .await
    .is_err()
    {
        second.ended = Some((
            Status::Timeout,
            format!(
                "second look: no complete listing within {} s",
                within.as_secs_f64()
            ),
        ));
    }
}

/// The second look's listing ([`second_look`]): over the transport that answered the first,
/// a session-era one for a first that was 2026-07-28 (and, should the server not speak the
/// session era, 2026-07-28 again under the second identity).
async fn list_again(
    config: &ClientConfig,
    pinned: &Pinned,
    headers: &Declared,
    first: Transport,
    second: &mut Second,
    meter: &Arc<Meter>,
) {
    let client = match build_client_with(&config.second_outbound(), pinned, headers) {
        Ok(c) => c,
        Err(e) => {
            second.ended = Some((
                Status::Protocol,
                format!("internal: cannot build the second look's HTTP client: {e}"),
            ));
            return;
        }
    };
    let identity = Identity {
        client_info: config.second_client.client_info(),
        capabilities: crate::observe::client_capabilities(),
    };
    let mut http = Http {
        client: &client,
        config,
        url: pinned.url.clone(),
        dialled: &mut second.dialled,
        meter: meter.clone(),
    };
    let mut session =
        toolmark_mcp::Session::new(config.limits.session(), identity, &mut second.listing);
    let order: &[Transport] = match first {
        Transport::Sse => &[Transport::Sse],
        Transport::StreamableHttp => &[Transport::StreamableHttp],
        Transport::Stateless => &[Transport::StreamableHttp, Transport::Stateless],
    };
    for &transport in order {
        let result = match transport {
            Transport::Sse => {
                second.asked = Some(SSE_VERSION);
                match open_sse(&mut http).await {
                    Ok(mut stream) => {
                        let handshake = Handshake::Initialize(SSE_VERSION);
                        session.list_tools(&mut stream, handshake).await
                    }
                    Err(stop) => Err(SessionError::transport(stop)),
                }
            }
            Transport::StreamableHttp => {
                second.asked = Some(SECOND_VERSION);
                let mut post = Post::new(&mut http, false);
                let handshake = Handshake::Initialize(SECOND_VERSION);
                let listed = session.list_tools(&mut post, handshake).await;
                second.closing = post.closing();
                listed
            }
            Transport::Stateless => {
                second.asked = Some(STATELESS_VERSION);
                let mut post = Post::new(&mut http, true);
                session.list_tools(&mut post, Handshake::Discover).await
            }
        };
        let (ended, fall) = match result.map_err(Stop::from_session) {
            Ok(()) => ((Status::Ok, String::new()), false),
            Err(Stop::Final(s, d)) => ((s, d), false),
            Err(Stop::Fallback(s, d)) => ((s, d), true),
        };
        second.ended = Some(ended);
        if !fall {
            return;
        }
    }
}

/// Who the crawler says it is, in every handshake.
fn identity() -> Identity {
    Identity {
        client_info: crate::observe::client_info(),
        capabilities: crate::observe::client_capabilities(),
    }
}

/// The client of one observation: pinned to the checked addresses, sending `declared`'s
/// headers (already checked to be sendable by the registry parser; one that still does not make
/// a header fails the build, which ends the observation as `protocol`), by
/// [`toolmark_outbound::client::pinned`]'s rules.
pub(crate) fn build_client(
    config: &ClientConfig,
    pinned: &Pinned,
    declared: &Declared,
) -> Result<reqwest::Client, String> {
    build_client_with(&config.outbound(), pinned, declared)
}

/// [`build_client`] with `settings` for the request's settings.
fn build_client_with(
    settings: &Outbound,
    pinned: &Pinned,
    declared: &Declared,
) -> Result<reqwest::Client, String> {
    let mut headers = HeaderMap::new();
    for h in &declared.headers {
        let name = header::HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| format!("declared header name {:?} is not a header name", h.name))?;
        let value = HeaderValue::from_str(&h.value)
            .map_err(|_| format!("declared header {:?} has a value no header carries", h.name))?;
        headers.append(name, value);
    }
    toolmark_outbound::client::pinned(settings, pinned, headers).map_err(|e| e.to_string())
}

/// How an attempt ended when it did not end with a tool set.
#[derive(Debug)]
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

    /// The stop for how the session core ended: a transport's own stop as it reported it, the
    /// session's failures under their statuses, and nothing falling through once the server
    /// had accepted the handshake.
    fn from_session(e: SessionError<Stop>) -> Stop {
        let stop = match e.failure {
            Failure::Transport(stop) => stop,
            Failure::NotSpoken(d) => Stop::Fallback(Status::Protocol, d),
            Failure::Protocol(d) => protocol(d),
            Failure::TooLarge(d) => fin(Status::TooLarge, d),
            Failure::Partial(d) => fin(Status::Partial, d),
        };
        if e.established { stop.settled() } else { stop }
    }
}

fn fin(status: Status, detail: impl Into<String>) -> Stop {
    Stop::Final(status, detail.into())
}

fn protocol(detail: impl Into<String>) -> Stop {
    Stop::Final(Status::Protocol, detail.into())
}

/// What every HTTP transport of one run shares: the client, the remote, the observation's
/// counters (requests, bytes, SSE, session, auth) and the run's account against the budget.
struct Http<'a> {
    client: &'a reqwest::Client,
    config: &'a ClientConfig,
    url: url::Url,
    dialled: &'a mut Dialled,
    /// This run's account against the memory budget.
    meter: Arc<Meter>,
}

/// Headers of one POST beyond the fixed ones.
#[derive(Default, Clone)]
struct Extra {
    session_id: Option<String>,
    protocol_version: Option<String>,
    method: Option<&'static str>,
    /// 2026-07-28's `Mcp-Name` of the next request (a `resources/read`'s URI).
    name: Option<String>,
}

impl Http<'_> {
    fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// Charge the parse of `text` ([`budget::parse_estimate`]) until the hold is dropped.
    fn hold_parse(&self, text: &[u8]) -> Result<Hold, Stop> {
        self.meter
            .hold(budget::parse_estimate(text))
            .map_err(|_| budget_stop())
    }

    /// The messages of one SSE event's data, charged to the budget while they live.
    fn event_messages(&self, data: &str, what: &str) -> Result<Incoming<Hold>, Stop> {
        let charge = self.hold_parse(data.as_bytes())?;
        let messages = jsonrpc::parse(data.as_bytes())
            .map_err(|e| protocol(format!("{what}: sse event: {e}")))?;
        Ok(Incoming {
            messages,
            delivery: Delivery::Stream,
            charge,
        })
    }

    async fn send_post(
        &mut self,
        url: &url::Url,
        body: Vec<u8>,
        extra: &Extra,
        what: &str,
    ) -> Result<reqwest::Response, Stop> {
        let mut request = self
            .client
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
        if let Some(n) = &extra.name {
            request = request.header("Mcp-Name", n);
        }
        self.dialled.requests += 1;
        let response = request.send().await.map_err(|e| send_error(&e, what))?;
        self.note_lifecycle(&response);
        Ok(response)
    }

    /// Keep the first `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers the server
    /// sends, capped at [`limits::MAX_HEADER_KEPT`].
    fn note_lifecycle(&mut self, response: &reqwest::Response) {
        let kept = |name: &str| {
            response.headers().get(name).map(|v| {
                cap(
                    &String::from_utf8_lossy(v.as_bytes()),
                    limits::MAX_HEADER_KEPT,
                )
            })
        };
        if self.dialled.deprecation.is_none() {
            self.dialled.deprecation = kept("deprecation");
        }
        if self.dialled.sunset.is_none() {
            self.dialled.sunset = kept("sunset");
        }
    }

    /// Read a little of whatever came back so the connection can be reused; ignore content.
    async fn drain(&self, response: reqwest::Response) {
        if let Ok(b) = Body::new(response, 64 * 1024).map(|b| b.metered(self.meter.clone())) {
            let _ = tokio::time::timeout(Duration::from_secs(1), b.read_all()).await;
        }
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
        self.drain(response).await;
        Ok(())
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
            self.dialled.auth = Some(auth);
            return Some(fin(Status::AuthRequired, detail));
        }
        Some(fin(Status::Http(code), format!("{what}: HTTP {code}")))
    }
}

// ---- streamable HTTP (2025-03-26 … 2025-11-25) and 2026-07-28 stateless ----

/// Streamable HTTP: each request is a POST whose response carries the answer, as one JSON body
/// or an SSE stream. With `stateless` (2026-07-28) every request names its method in
/// `Mcp-Method` and the protocol version is sent from the first request on; otherwise the
/// `Mcp-Session-Id` issued with the `initialize` response and the negotiated version go with
/// every later request.
struct Post<'h, 'a> {
    http: &'h mut Http<'a>,
    url: url::Url,
    stateless: bool,
    /// Headers for every message sent from now on (besides `Mcp-Method`).
    extra: Extra,
    /// The request sent last: its id and method.
    current: (u64, &'static str),
    /// Where its answer is read from.
    pending: Pending,
    /// The `Mcp-Session-Id` header of the response to the request sent last.
    issued: Option<HeaderValue>,
    /// That header, checked, once the handshake was answered.
    session_id: Option<String>,
}

/// The response to the request a [`Post`] sent last.
enum Pending {
    /// Read to its end (or no request sent).
    Done,
    /// A JSON body not read yet.
    Json(reqwest::Response),
    /// An event stream, read event by event.
    Events(Box<Events>),
}

/// An SSE response being read.
struct Events {
    body: Body,
    parser: SseParser,
    /// Parsed and not yet delivered.
    queue: VecDeque<Event>,
    /// Events taken from the stream so far.
    seen: usize,
    /// The body ended.
    ended: bool,
}

impl<'h, 'a> Post<'h, 'a> {
    fn new(http: &'h mut Http<'a>, stateless: bool) -> Self {
        let extra = Extra {
            protocol_version: stateless.then(|| STATELESS_VERSION.to_owned()),
            ..Extra::default()
        };
        Post {
            url: http.url.clone(),
            http,
            stateless,
            extra,
            current: (0, ""),
            pending: Pending::Done,
            issued: None,
            session_id: None,
        }
    }

    /// A non-2xx answer to a POSTed request: statuses that say "not this transport" fall
    /// through, with an excerpt of a body that explains; auth, redirects and the rest are final.
    async fn refused(&mut self, response: reqwest::Response, stop: Stop) -> Stop {
        let status = response.status();
        // A non-2xx with a JSON-RPC error body is still an answer we can judge.
        let fallback =
            matches!(status.as_u16(), 400 | 404 | 405 | 406 | 415) || status.is_server_error();
        if !fallback {
            return stop;
        }
        let detail = match stop {
            Stop::Final(_, d) | Stop::Fallback(_, d) => d,
        };
        let excerpt = match Body::new(response, limits::MAX_DETAIL_EXCERPT * 16)
            .map(|b| b.metered(self.http.meter.clone()))
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
        Stop::Fallback(Status::Http(status.as_u16()), detail)
    }
}

impl toolmark_mcp::Transport for Post<'_, '_> {
    type Error = Stop;
    type Charge = Hold;

    async fn send_request(
        &mut self,
        id: u64,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), Stop> {
        self.current = (id, method);
        self.pending = Pending::Done;
        self.issued = None;
        let extra = Extra {
            method: self.stateless.then_some(method),
            name: self.extra.name.take(),
            ..self.extra.clone()
        };
        let url = self.url.clone();
        let response = self.http.send_post(&url, body, &extra, method).await?;
        let status = response.status();
        if let Some(stop) = self.http.bad_status(&response, method) {
            return Err(self.refused(response, stop).await);
        }
        if status == StatusCode::ACCEPTED {
            return Err(protocol(format!("{method}: 202 Accepted with no answer")));
        }
        self.issued = response.headers().get("mcp-session-id").cloned();
        if is_content_type(&response, "text/event-stream") {
            self.http.dialled.sse_responses = true;
            let max = self.http.limits().max_response;
            let body = Body::new(response, max)
                .map_err(body_stop)?
                .metered(self.http.meter.clone());
            let parser = SseParser::new(
                limits::MAX_SSE_LINE.min(max),
                limits::MAX_SSE_EVENT.min(max),
            );
            self.pending = Pending::Events(Box::new(Events {
                body,
                parser,
                queue: VecDeque::new(),
                seen: 0,
                ended: false,
            }));
            return Ok(());
        }
        if !is_content_type(&response, "application/json") {
            let ct = content_type(&response);
            return Err(Stop::Fallback(
                Status::Protocol,
                format!("{method}: content type {ct:?} is neither JSON nor an event stream"),
            ));
        }
        self.pending = Pending::Json(response);
        Ok(())
    }

    async fn receive(&mut self) -> Result<Incoming<Hold>, Stop> {
        let (id, what) = self.current;
        match std::mem::replace(&mut self.pending, Pending::Done) {
            Pending::Done => Err(protocol(format!(
                "{what}: no answer for id {id} in the response"
            ))),
            Pending::Json(response) => {
                let bytes = Body::new(response, self.http.limits().max_response)
                    .map_err(body_stop)?
                    .metered(self.http.meter.clone())
                    .read_all()
                    .await
                    .map_err(body_stop)?;
                self.http.dialled.bytes += bytes.len() as u64;
                let charge = self.http.hold_parse(&bytes)?;
                let messages =
                    jsonrpc::parse(&bytes).map_err(|e| protocol(format!("{what}: {e}")))?;
                Ok(Incoming {
                    messages,
                    delivery: Delivery::Body,
                    charge,
                })
            }
            Pending::Events(mut events) => {
                let incoming = self.next_event(&mut events, id, what).await;
                self.pending = Pending::Events(events);
                incoming
            }
        }
    }

    async fn send_notification(&mut self, method: &'static str, body: Vec<u8>) -> Result<(), Stop> {
        let url = self.url.clone();
        let extra = self.extra.clone();
        let response = self.http.send_post(&url, body, &extra, method).await?;
        self.http.drain(response).await;
        Ok(())
    }

    async fn send_reply(&mut self, body: Vec<u8>) {
        let url = self.url.clone();
        let extra = Extra {
            method: None,
            ..self.extra.clone()
        };
        if let Ok(r) = self.http.send_post(&url, body, &extra, "reply").await {
            drop(r);
        }
    }

    fn charge(&mut self, text: &[u8]) -> Result<Hold, Stop> {
        self.http.hold_parse(text)
    }

    fn handshake_answered(&mut self) -> Result<(), Stop> {
        if self.stateless {
            return Ok(());
        }
        self.session_id = match self.issued.take() {
            None => None,
            Some(v) => Some(session_id(&v)?),
        };
        Ok(())
    }

    fn name_next(&mut self, name: &str) {
        if self.stateless {
            self.extra.name = Some(name.to_owned());
        }
    }

    fn established(&mut self, version: &str) {
        if self.stateless {
            self.http.dialled.session = false;
            return;
        }
        self.extra = Extra {
            session_id: self.session_id.take(),
            protocol_version: header_version(version),
            method: None,
            name: None,
        };
        self.http.dialled.session = self.extra.session_id.is_some();
    }
}

impl Post<'_, '_> {
    /// Done with the session: the response being read is dropped, and the session the
    /// handshake was issued, if any, is handed back to be ended ([`Closing::send`]).
    fn closing(&mut self) -> Option<Closing> {
        self.pending = Pending::Done;
        let session_id = self.extra.session_id.take()?;
        Some(Closing {
            client: self.http.client.clone(),
            url: self.url.clone(),
            session_id,
            protocol_version: self.extra.protocol_version.clone(),
        })
    }

    /// The next event with data on an SSE response, as messages.
    async fn next_event(
        &mut self,
        events: &mut Events,
        id: u64,
        what: &str,
    ) -> Result<Incoming<Hold>, Stop> {
        let mut parsed = Vec::new();
        loop {
            while let Some(event) = events.queue.pop_front() {
                events.seen += 1;
                let max_events = self.http.limits().max_sse_events;
                if events.seen > max_events {
                    return Err(protocol(format!(
                        "{what}: no answer within {max_events} events"
                    )));
                }
                if event.data.is_empty() {
                    continue;
                }
                return self.http.event_messages(&event.data, what);
            }
            if events.ended {
                return Err(protocol(format!(
                    "{what}: event stream ended without an answer to id {id}"
                )));
            }
            match events.body.next().await.map_err(body_stop)? {
                Some(bytes) => {
                    self.http.dialled.bytes += bytes.len() as u64;
                    events.parser.push(&bytes, &mut parsed).map_err(sse_stop)?;
                }
                None => {
                    events.ended = true;
                    events.parser.finish(&mut parsed).map_err(sse_stop)?;
                }
            }
            events.queue.extend(parsed.drain(..));
        }
    }
}

// ---- HTTP+SSE (2024-11-05) ----

/// HTTP+SSE: requests are POSTed to the endpoint the stream named; answers arrive on the GET
/// stream, read by a task of its own.
struct SseSession<'h, 'a> {
    http: &'h mut Http<'a>,
    endpoint: url::Url,
    rx: mpsc::Receiver<Result<Event, Stop>>,
    /// Events taken from the stream so far (the endpoint event's wait included).
    events: usize,
    /// The request sent last: its id and method.
    current: (u64, &'static str),
    /// Ends the reader task when the session is done.
    _reader: AbortOnDrop,
}

/// Open the HTTP+SSE stream and wait for its `endpoint` event.
async fn open_sse<'h, 'a>(http: &'h mut Http<'a>) -> Result<SseSession<'h, 'a>, Stop> {
    let url = http.url.clone();
    http.dialled.requests += 1;
    let response = http
        .client
        .get(url.clone())
        .header(header::ACCEPT, "text/event-stream")
        .timeout(http.limits().deadline)
        .send()
        .await
        .map_err(|e| send_error(&e, "GET sse"))?;
    http.note_lifecycle(&response);
    let status = response.status();
    if let Some(stop) = http.bad_status(&response, "GET sse") {
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
    http.dialled.sse_responses = true;
    let max_stream = http.limits().max_toolset + http.limits().max_response;
    let (tx, mut rx) = mpsc::channel::<Result<Event, Stop>>(2);
    let reader = tokio::spawn(read_stream(response, max_stream, tx, http.meter.clone()));
    let reader = AbortOnDrop(reader);
    let mut events = 0usize;
    // The first event with data must be `endpoint`.
    let endpoint = loop {
        let Some(item) = rx.recv().await else {
            return Err(protocol("sse stream ended before the endpoint event"));
        };
        let event = item?;
        events += 1;
        if events > http.limits().max_sse_events {
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
    guard::strip_root_dot(&mut endpoint).map_err(|e| protocol(format!("endpoint event: {e}")))?;
    if endpoint.origin() != url.origin() {
        return Err(protocol(format!(
            "endpoint {endpoint} is not on the stream's origin"
        )));
    }
    http.dialled.session = true;
    Ok(SseSession {
        http,
        endpoint,
        rx,
        events,
        current: (0, ""),
        _reader: reader,
    })
}

impl toolmark_mcp::Transport for SseSession<'_, '_> {
    type Error = Stop;
    type Charge = Hold;

    async fn send_request(
        &mut self,
        id: u64,
        method: &'static str,
        body: Vec<u8>,
    ) -> Result<(), Stop> {
        self.current = (id, method);
        let endpoint = self.endpoint.clone();
        self.http.post_accepted(&endpoint, body, method).await
    }

    async fn receive(&mut self) -> Result<Incoming<Hold>, Stop> {
        let (id, what) = self.current;
        loop {
            let Some(item) = self.rx.recv().await else {
                return Err(protocol(format!(
                    "{what}: sse stream ended without an answer to id {id}"
                )));
            };
            let event = item?;
            self.events += 1;
            let max_events = self.http.limits().max_sse_events;
            if self.events > max_events {
                return Err(protocol(format!(
                    "{what}: no answer within {max_events} events"
                )));
            }
            if event.data.is_empty() || event.event != "message" {
                continue;
            }
            let incoming = self.http.event_messages(&event.data, what)?;
            self.http.dialled.bytes += event.data.len() as u64;
            return Ok(incoming);
        }
    }

    async fn send_notification(&mut self, method: &'static str, body: Vec<u8>) -> Result<(), Stop> {
        let endpoint = self.endpoint.clone();
        self.http.post_accepted(&endpoint, body, method).await
    }

    async fn send_reply(&mut self, body: Vec<u8>) {
        let endpoint = self.endpoint.clone();
        let _ = self
            .http
            .send_post(&endpoint, body, &Extra::default(), "reply")
            .await;
    }

    fn charge(&mut self, text: &[u8]) -> Result<Hold, Stop> {
        self.http.hold_parse(text)
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
