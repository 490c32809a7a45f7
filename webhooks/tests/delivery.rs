//! Webhook delivery against a real HTTPS receiver on loopback (axum behind a TLS listener whose
//! certificate a throwaway CA signed; the delivery client trusts only that CA): a receiver that
//! is down, answers 500, is slow or redirects. Every event arrives at least once, in order,
//! with a valid HMAC; no event the receiver acknowledged with a 2xx is sent again.

#[path = "../../index/tests/support/events_world.rs"]
mod events_world;
#[path = "../../index/tests/support/mod.rs"]
mod support;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio_util::sync::CancellationToken;
use toolmark_index::{EventQuery, Index, SecurityEventRow};
use toolmark_outbound::guard::{Policy, StaticResolver};
use toolmark_outbound::{Outbound, Trust};
use toolmark_standins::tls::{StandInCa, TlsListener};
use toolmark_webhooks::{
    Backoff, Bookkeeping, Deliverer, HEADER_EVENT_CURSOR, HEADER_EVENT_ID, HEADER_SIGNATURE,
    HEADER_TIMESTAMP, Store, Subscription, signature,
};

const HOST: &str = "hooks.test";
const SECRET: &[u8] = b"an-hmac-secret-of-at-least-32-bytes!";

/// What the receiver does with the next request.
#[derive(Debug, Clone)]
enum Answer {
    Status(u16),
    /// Answer 200 only after this long.
    Slow(Duration),
    /// 307 to another path of the receiver.
    Redirect,
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Got {
    path: &'static str,
    id: String,
    cursor: u64,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
    answer: Answer,
}

#[derive(Default)]
struct Receiver {
    plan: Mutex<VecDeque<Answer>>,
    got: Mutex<Vec<Got>>,
}

impl Receiver {
    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// The events the receiver acknowledged with a 2xx the client saw (slow answers came too
    /// late to count).
    fn acknowledged(&self) -> Vec<u64> {
        self.got()
            .iter()
            .filter(|g| g.path == "/hook" && matches!(g.answer, Answer::Status(s) if s < 300))
            .map(|g| g.cursor)
            .collect()
    }
}

fn header(h: &HeaderMap, name: &str) -> String {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn receive(
    path: &'static str,
    r: Arc<Receiver>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let answer = match path {
        "/hook" => r
            .plan
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Answer::Status(200)),
        _ => Answer::Status(200),
    };
    r.got.lock().unwrap().push(Got {
        path,
        id: header(&headers, HEADER_EVENT_ID),
        cursor: header(&headers, HEADER_EVENT_CURSOR).parse().unwrap_or(0),
        timestamp: header(&headers, HEADER_TIMESTAMP),
        signature: header(&headers, HEADER_SIGNATURE),
        body: body.to_vec(),
        answer: answer.clone(),
    });
    match answer {
        Answer::Status(s) => StatusCode::from_u16(s).unwrap().into_response(),
        Answer::Slow(d) => {
            tokio::time::sleep(d).await;
            StatusCode::OK.into_response()
        }
        Answer::Redirect => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, format!("https://{HOST}/elsewhere"))],
        )
            .into_response(),
    }
}

/// The receiver's TLS identity and address (the port stays the same across restarts).
struct Site {
    ca: StandInCa,
    addr: SocketAddr,
    receiver: Arc<Receiver>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Site {
    /// A site whose receiver is not up yet.
    fn down() -> Site {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        Site {
            ca: StandInCa::new("webhooks test CA").unwrap(),
            addr,
            receiver: Arc::default(),
            server: None,
        }
    }

    async fn up() -> Site {
        let mut site = Site::down();
        site.start().await;
        site
    }

    async fn start(&mut self) {
        let tcp = tokio::net::TcpListener::bind(self.addr).await.unwrap();
        let tls = TlsListener::new(tcp, self.ca.server_config(HOST).unwrap()).unwrap();
        let r = self.receiver.clone();
        let app = Router::new()
            .route("/hook", post(|State(r), h, b| receive("/hook", r, h, b)))
            .route(
                "/elsewhere",
                post(|State(r), h, b| receive("/elsewhere", r, h, b)),
            )
            .with_state(r);
        self.server = Some(tokio::spawn(async move {
            axum::serve(tls, app).await.unwrap();
        }));
    }

    /// A client that reaches `hooks.test` at this site and trusts only its CA.
    fn client(&self, allow_private: bool) -> Outbound {
        let mut pins = std::collections::HashMap::new();
        pins.insert(HOST.to_owned(), vec![self.addr]);
        Outbound {
            policy: Policy { allow_private },
            resolver: Arc::new(StaticResolver(pins)),
            trust: Trust::only(self.ca.certificate_pem().as_bytes()).unwrap(),
            ..Outbound::default()
        }
    }

    fn url(&self) -> String {
        format!("https://{HOST}:{}/hook", self.addr.port())
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            s.abort();
        }
    }
}

/// A clock the test moves forward.
#[derive(Clone, Default)]
struct Clock(Arc<AtomicU64>);

impl Clock {
    fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }
}

struct World {
    env: support::Env,
    key: ed25519_dalek::SigningKey,
    clock: Clock,
}

fn world(tag: &str) -> World {
    World {
        env: events_world::world(&format!("webhooks-{tag}"), 5),
        key: ed25519_dalek::SigningKey::from_bytes(&[7; 32]),
        clock: Clock::default(),
    }
}

impl World {
    fn deliverer(&self, site: &Site, watch: Option<Vec<String>>) -> Deliverer {
        let offset = self.clock.0.clone();
        Deliverer {
            index_path: self.env.dir.join("index.sqlite"),
            bookkeeping: Bookkeeping::File(self.env.dir.join("webhooks.sqlite")),
            key: self.key.clone(),
            issuer: "https://toolmark.test/api/v1/issuer".into(),
            subscriptions: vec![Subscription {
                id: "soc".into(),
                url: site.url(),
                secret: SECRET.to_vec(),
                watch,
            }],
            client: site.client(true),
            backoff: Backoff::default(),
            timeout: Duration::from_secs(5),
            clock: Arc::new(move || {
                SystemTime::now() + Duration::from_millis(offset.load(Ordering::SeqCst))
            }),
        }
    }

    fn events(&self) -> Vec<SecurityEventRow> {
        self.env
            .index
            .security_events(&EventQuery {
                after: Some(0),
                limit: 1_000,
                ..EventQuery::default()
            })
            .unwrap()
    }

    fn cursor(&self) -> u64 {
        Store::open(&self.env.dir.join("webhooks.sqlite"))
            .unwrap()
            .get("soc")
            .unwrap()
            .map_or(0, |s| s.cursor)
    }

    fn public_hex(&self) -> String {
        toolmark_toolset::hex::encode(&self.key.verifying_key().to_bytes())
    }
}

/// Every request to `/hook` carries a valid HMAC over its timestamp and body, and its body is
/// the signed event named by its headers.
fn check_requests(w: &World, got: &[Got]) {
    for g in got.iter().filter(|g| g.path == "/hook") {
        assert_eq!(
            g.signature,
            signature(SECRET, &g.timestamp, &g.body),
            "HMAC"
        );
        let doc: serde_json::Value = serde_json::from_slice(&g.body).unwrap();
        let event = toolmark_client::verify_event(&doc, &w.public_hex()).unwrap();
        assert_eq!(event.id, g.id);
    }
}

/// The events acknowledged, in order, are exactly every event once.
fn assert_all_acknowledged_once_in_order(w: &World, site: &Site) {
    let all: Vec<u64> = w.events().iter().map(|e| e.seq).collect();
    assert!(all.len() >= 6, "the world has events: {all:?}");
    assert_eq!(site.receiver.acknowledged(), all);
    assert_eq!(w.cursor(), *all.last().unwrap());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn every_event_arrives_once_in_order_with_its_hmac_and_the_chain_verifies() {
    let w = world("all");
    runtime().block_on(async {
        let site = Site::up().await;
        let d = w.deliverer(&site, None);
        let report = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(report.subscriptions[0].failure, None);
        assert_all_acknowledged_once_in_order(&w, &site);
        let got = site.receiver.got();
        check_requests(&w, &got);
        // The bodies, in order, are a chain the client crate verifies.
        let docs: Vec<serde_json::Value> = got
            .iter()
            .map(|g| serde_json::from_slice(&g.body).unwrap())
            .collect();
        toolmark_client::verify_chain(&docs, &w.public_hex()).unwrap();
        // Nothing new: the next pass sends nothing.
        let again = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(again.subscriptions[0].delivered, 0);
        assert_eq!(site.receiver.got().len(), got.len());
    });
}

#[test]
fn a_receiver_that_is_down_gets_every_event_once_it_is_up() {
    let w = world("down");
    runtime().block_on(async {
        let mut site = Site::down();
        let d = w.deliverer(&site, None);
        let first = d.pass(&CancellationToken::new()).await.unwrap();
        let failure = first.subscriptions[0].failure.clone().unwrap();
        assert!(failure.starts_with("failed"), "{failure}");
        assert_eq!(w.cursor(), 0);
        // Still down after the back-off: another failure, a longer back-off.
        w.clock.advance(Duration::from_secs(30));
        let second = d.pass(&CancellationToken::new()).await.unwrap();
        assert!(second.subscriptions[0].failure.is_some());
        let store = Store::open(&w.env.dir.join("webhooks.sqlite")).unwrap();
        let state = store.get("soc").unwrap().unwrap();
        assert_eq!(state.attempts, 2);
        // Up again; not due until the second back-off (60 s) has passed.
        site.start().await;
        w.clock.advance(Duration::from_secs(30));
        let waiting = d.pass(&CancellationToken::new()).await.unwrap();
        assert!(waiting.subscriptions[0].waiting);
        assert!(site.receiver.got().is_empty());
        w.clock.advance(Duration::from_secs(30));
        let done = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(done.subscriptions[0].failure, None);
        assert_all_acknowledged_once_in_order(&w, &site);
        assert_eq!(store.get("soc").unwrap().unwrap().attempts, 0);
        check_requests(&w, &site.receiver.got());
    });
}

#[test]
fn a_500_is_sent_again_after_the_back_off_and_acknowledged_events_never_are() {
    let w = world("500");
    runtime().block_on(async {
        let site = Site::up().await;
        site.receiver.plan.lock().unwrap().extend([
            Answer::Status(200),
            Answer::Status(200),
            Answer::Status(500),
            Answer::Status(503),
        ]);
        let d = w.deliverer(&site, None);
        let first = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(first.subscriptions[0].failure.as_deref(), Some("HTTP 500"));
        assert_eq!(first.subscriptions[0].delivered, 2);
        let events = w.events();
        assert_eq!(w.cursor(), events[1].seq);
        // Before the back-off has passed, nothing is sent.
        d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(site.receiver.got().len(), 3);
        w.clock.advance(Duration::from_secs(30));
        let second = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(second.subscriptions[0].failure.as_deref(), Some("HTTP 503"));
        w.clock.advance(Duration::from_secs(60));
        d.pass(&CancellationToken::new()).await.unwrap();
        assert_all_acknowledged_once_in_order(&w, &site);
        // The third event was sent three times (500, 503, 200), in the same order each time.
        let third: Vec<u64> = site
            .receiver
            .got()
            .iter()
            .map(|g| g.cursor)
            .filter(|c| *c == events[2].seq)
            .collect();
        assert_eq!(third.len(), 3);
        check_requests(&w, &site.receiver.got());
    });
}

#[test]
fn a_slow_receiver_times_out_and_gets_the_event_again() {
    let w = world("slow");
    runtime().block_on(async {
        let site = Site::up().await;
        site.receiver
            .plan
            .lock()
            .unwrap()
            .push_back(Answer::Slow(Duration::from_secs(3)));
        let mut d = w.deliverer(&site, None);
        d.timeout = Duration::from_millis(300);
        let first = d.pass(&CancellationToken::new()).await.unwrap();
        let failure = first.subscriptions[0].failure.clone().unwrap();
        assert!(failure.starts_with("no answer within"), "{failure}");
        assert_eq!(w.cursor(), 0);
        w.clock.advance(Duration::from_secs(30));
        d.pass(&CancellationToken::new()).await.unwrap();
        assert_all_acknowledged_once_in_order(&w, &site);
        let got = site.receiver.got();
        assert_eq!(
            got[0].cursor, got[1].cursor,
            "the timed-out event came again"
        );
        check_requests(&w, &got);
    });
}

#[test]
fn a_redirect_is_not_followed_and_counts_as_not_delivered() {
    let w = world("redirect");
    runtime().block_on(async {
        let site = Site::up().await;
        site.receiver
            .plan
            .lock()
            .unwrap()
            .push_back(Answer::Redirect);
        let d = w.deliverer(&site, None);
        let first = d.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(first.subscriptions[0].failure.as_deref(), Some("HTTP 307"));
        assert!(
            site.receiver.got().iter().all(|g| g.path == "/hook"),
            "the redirect's target was never asked"
        );
        assert_eq!(w.cursor(), 0);
        w.clock.advance(Duration::from_secs(30));
        d.pass(&CancellationToken::new()).await.unwrap();
        assert_all_acknowledged_once_in_order(&w, &site);
    });
}

#[test]
fn a_loopback_receiver_is_refused_by_the_ssrf_guard_in_production() {
    let w = world("guard");
    runtime().block_on(async {
        let site = Site::up().await;
        let mut d = w.deliverer(&site, None);
        d.client = site.client(false);
        let first = d.pass(&CancellationToken::new()).await.unwrap();
        let failure = first.subscriptions[0].failure.clone().unwrap();
        assert!(failure.starts_with("blocked"), "{failure}");
        assert!(site.receiver.got().is_empty());
    });
}

#[test]
fn a_subscription_gets_only_its_watched_targets_events() {
    let w = world("watch");
    runtime().block_on(async {
        let site = Site::up().await;
        let events = w.events();
        let beta = events
            .iter()
            .find(|e| e.kind == "authorization")
            .unwrap()
            .target_id
            .clone();
        let d = w.deliverer(&site, Some(vec![beta.clone()]));
        d.pass(&CancellationToken::new()).await.unwrap();
        let expected: Vec<u64> = events
            .iter()
            .filter(|e| e.target_id == beta)
            .map(|e| e.seq)
            .collect();
        assert!(!expected.is_empty() && expected.len() < events.len());
        assert_eq!(site.receiver.acknowledged(), expected);
        check_requests(&w, &site.receiver.got());
    });
}

#[test]
fn events_recorded_after_a_pass_are_delivered_by_the_next() {
    let mut w = world("later");
    runtime().block_on(async {
        let site = Site::up().await;
        let d = w.deliverer(&site, None);
        d.pass(&CancellationToken::new()).await.unwrap();
        let before = site.receiver.acknowledged().len();
        events_world::record_day(&mut w.env, 5);
        d.pass(&CancellationToken::new()).await.unwrap();
        assert!(site.receiver.acknowledged().len() > before);
        assert_all_acknowledged_once_in_order(&w, &site);
        // The new events link to the ones delivered before.
        let docs: Vec<serde_json::Value> = site
            .receiver
            .got()
            .iter()
            .map(|g| serde_json::from_slice(&g.body).unwrap())
            .collect();
        toolmark_client::verify_chain(&docs, &w.public_hex()).unwrap();
    });
    // The index stays readable by others while delivering (read-only).
    Index::open_read_only(&w.env.dir.join("index.sqlite")).unwrap();
}

/// `second`'s pass, started while `first`'s has its first delivery in flight (the receiver
/// answers it slowly), is refused as busy; `first`'s pass then ends well.
async fn refused_while_another_delivers(site: &Site, first: Deliverer, second: Deliverer) {
    site.receiver
        .plan
        .lock()
        .unwrap()
        .push_back(Answer::Slow(Duration::from_secs(2)));
    let running = tokio::spawn(async move { first.pass(&CancellationToken::new()).await });
    // Wait (bounded) until the first pass has its first delivery in flight.
    for _ in 0..400 {
        if !site.receiver.got().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(site.receiver.got().len(), 1);
    let refused = second.pass(&CancellationToken::new()).await;
    assert!(
        matches!(refused, Err(toolmark_webhooks::DeliveryError::Busy(_))),
        "{refused:?}"
    );
    running.await.unwrap().unwrap();
}

#[test]
fn a_second_pass_while_one_is_delivering_is_refused_not_run() {
    let w = world("lock");
    runtime().block_on(async {
        let site = Site::up().await;
        refused_while_another_delivers(&site, w.deliverer(&site, None), w.deliverer(&site, None))
            .await;
        // The first pass went on (its slow answer came within the timeout): each event once.
        let all: Vec<u64> = w.events().iter().map(|e| e.seq).collect();
        let got: Vec<u64> = site.receiver.got().iter().map(|g| g.cursor).collect();
        assert_eq!(got, all);
        assert_eq!(w.cursor(), *all.last().unwrap());
    });
}

#[test]
fn a_cursor_that_no_longer_stands_at_the_last_delivered_event_follows_that_event() {
    let w = world("moved");
    runtime().block_on(async {
        let site = Site::up().await;
        let d = w.deliverer(&site, None);
        d.pass(&CancellationToken::new()).await.unwrap();
        let sent = site.receiver.got().len();
        let last = w.events().last().unwrap().seq;
        // As if an index rebuilt by another release had numbered the events otherwise: the
        // stored cursor points elsewhere (behind, then ahead) while the last id stays.
        for wrong in [1, last + 5] {
            Store::open(&w.env.dir.join("webhooks.sqlite"))
                .unwrap()
                .moved("soc", wrong)
                .unwrap();
            let again = d.pass(&CancellationToken::new()).await.unwrap();
            assert_eq!(again.subscriptions[0].delivered, 0, "from {wrong}");
            assert_eq!(site.receiver.got().len(), sent, "nothing sent twice");
            assert_eq!(w.cursor(), last, "the cursor is the last event's again");
        }
    });
}

#[test]
fn a_webhook_body_is_the_document_the_api_serves_for_the_event() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    const BASE: &str = "https://toolmark.test";
    let w = world("same-document");
    runtime().block_on(async {
        let site = Site::up().await;
        // As `toolmark run` builds it: the data directory's answer key, the API's base.
        let data = toolmark_index::DataDir::new(&w.env.dir);
        let mut d = w.deliverer(&site, None);
        d.key = data.answer_key().unwrap();
        d.issuer = format!("{BASE}/api/v1/issuer");
        d.pass(&CancellationToken::new()).await.unwrap();
        let got = site.receiver.got();
        assert!(!got.is_empty());
        let state = Arc::new(toolmark_api::AppState::open(&w.env.dir, BASE).unwrap());
        for g in &got {
            let path = format!(
                "/api/v1/security-events/{}",
                g.id.replace('/', "%2F")
                    .replace('+', "%2B")
                    .replace('=', "%3D")
            );
            let response = toolmark_api::router(state.clone())
                .oneshot(
                    axum::http::Request::get(&path)
                        .body(axum::body::Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            let served = response.into_body().collect().await.unwrap().to_bytes();
            let served: serde_json::Value = serde_json::from_slice(&served).unwrap();
            let sent: serde_json::Value = serde_json::from_slice(&g.body).unwrap();
            assert_eq!(served, sent, "{}", g.id);
        }
    });
}

/// The deliverer of `w` as replica `name` of a cluster whose delivery state is in `db`.
fn replica(w: &World, site: &Site, db: &str, name: &str) -> Deliverer {
    Deliverer {
        bookkeeping: Bookkeeping::Shared {
            url: db.to_owned(),
            holder: format!("api@{name}"),
        },
        ..w.deliverer(site, None)
    }
}

/// Subscription `soc`'s cursor in the cluster's database (read on a thread of its own: the
/// database client blocks, and the tests ask from async code).
fn shared_cursor(db: &str) -> u64 {
    std::thread::scope(|s| {
        s.spawn(|| {
            toolmark_queue::Queue::connect(db, "test")
                .unwrap()
                .webhook("soc")
                .unwrap()
                .map_or(0, |s| s.cursor)
        })
        .join()
        .unwrap()
    })
}

#[test]
fn in_a_cluster_the_next_pass_on_another_replica_goes_on_from_the_shared_cursor() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let w = world("shared");
    let all: Vec<u64> = w.events().iter().map(|e| e.seq).collect();
    runtime().block_on(async {
        let site = Site::up().await;
        // Replica a's receiver takes the first three events, then answers 500.
        {
            let mut plan = site.receiver.plan.lock().unwrap();
            plan.extend([
                Answer::Status(200),
                Answer::Status(200),
                Answer::Status(200),
                Answer::Status(500),
            ]);
        }
        let a = replica(&w, &site, db.url(), "a");
        let first = a.pass(&CancellationToken::new()).await.unwrap();
        assert!(first.subscriptions[0].failure.is_some());
        assert_eq!(shared_cursor(db.url()), all[2]);
        // Replica b makes the next pass after the back-off: the rest, none sent again.
        w.clock.advance(Duration::from_secs(30));
        let b = replica(&w, &site, db.url(), "b");
        let second = b.pass(&CancellationToken::new()).await.unwrap();
        assert_eq!(second.subscriptions[0].failure, None);
        assert_eq!(site.receiver.acknowledged(), all);
        assert_eq!(shared_cursor(db.url()), *all.last().unwrap());
        assert_eq!(
            w.cursor(),
            0,
            "nothing was written to the data directory's store"
        );
    });
}

#[test]
fn in_a_cluster_a_pass_while_another_replica_delivers_is_refused() {
    let Some(db) = toolmark_standins::services::postgres().expect("the test PostgreSQL") else {
        return;
    };
    let w = world("shared-lock");
    runtime().block_on(async {
        let site = Site::up().await;
        refused_while_another_delivers(
            &site,
            replica(&w, &site, db.url(), "a"),
            replica(&w, &site, db.url(), "b"),
        )
        .await;
        // The lease was given back when the pass ended: replica b's next pass runs.
        let next = replica(&w, &site, db.url(), "b")
            .pass(&CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(next.subscriptions[0].delivered, 0);
    });
}
