//! One delivery pass over every subscription (see the crate documentation for the rules).
//!
//! A delivery is `POST <url>` with the signed event as its body (RFC 8785 bytes of the document
//! `/api/v1/security-events` serves) and these headers:
//!
//! - [`HEADER_EVENT_ID`]: the event's id (`sha256-…`), the receiver's de-duplication key;
//! - `X-Toolmark-Event-Cursor`: the event's cursor (`seq`);
//! - [`HEADER_TIMESTAMP`]: Unix seconds when this attempt was made;
//! - [`HEADER_SIGNATURE`]: `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`
//!   ([`signature`]), HISTOR's scheme under toolmark's header names.
//!
//! Events are delivered one at a time, oldest first; the next is sent only after the previous
//! one was acknowledged (2xx) and its cursor stored. So a receiver sees every event at least
//! once and in order, and an event it acknowledged is never sent again (unless
//! `DATA/webhooks.sqlite` is lost). An event it did not acknowledge — an error, a timeout, any
//! non-2xx status, a redirect (never followed) — is sent again after the back-off.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{KeyInit, Mac};
use tokio_util::sync::CancellationToken;
use toolmark_index::{EventQuery, Index};
use toolmark_outbound::Outbound;
use toolmark_outbound::webhook::{self, Outcome};

use crate::config::Subscription;
use crate::store::{Store, StoreError, SubscriptionState};
use toolmark_queue::{Queue, WEBHOOKS_LEASE};

/// The header that carries the event's id.
pub const HEADER_EVENT_ID: &str = "x-toolmark-event-id";

/// The header that carries the event's cursor.
pub const HEADER_EVENT_CURSOR: &str = "x-toolmark-event-cursor";

/// The header that carries the attempt's Unix time (seconds).
pub const HEADER_TIMESTAMP: &str = "x-toolmark-timestamp";

/// The header that carries the HMAC signature.
pub const HEADER_SIGNATURE: &str = "x-toolmark-signature";

/// Most events one subscription is sent in one pass (the rest wait for the next pass).
pub const EVENTS_PER_PASS: u32 = 100;

/// The back-off after failed attempts: after the n-th failure in a row the subscription is due
/// again `min(max, base · 2^(n−1))` later (by default 30 s, 1 min, 2 min, … capped at 1 day,
/// HISTOR's `min(1 day, 30·2^attempts)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the first failure.
    pub base: Duration,
    /// The longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_secs(30),
            max: Duration::from_secs(86_400),
        }
    }
}

impl Backoff {
    /// The delay after `failures` failed attempts in a row (at least 1).
    pub fn after(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(40);
        self.base
            .checked_mul(1u32 << doublings.min(31))
            .unwrap_or(self.max)
            .min(self.max)
    }
}

/// `sha256=` + hex of HMAC-SHA256 keyed by `secret` over `timestamp`, `.`, `body`.
pub fn signature(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "sha256={}",
        toolmark_toolset::hex::encode(&mac.finalize().into_bytes())
    )
}

/// Why a pass could not run.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// Another process is delivering (it holds the lock: the file named, or the cluster's
    /// lease).
    #[error("another process is delivering webhooks (it holds {0})")]
    Busy(String),
    /// The lock file could not be opened or locked.
    #[error("{path}: {reason}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The index could not be read.
    #[error("index: {0}")]
    Index(#[from] toolmark_index::IndexError),
    /// The bookkeeping could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An event could not be signed.
    #[error("signing event {seq}: {reason}")]
    Sign {
        /// The event's cursor.
        seq: u64,
        /// What failed.
        reason: String,
    },
    /// A blocking task failed.
    #[error("a blocking task failed: {0}")]
    Task(String),
}

/// What one pass did for one subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionReport {
    /// The subscription.
    pub id: String,
    /// Events acknowledged in this pass.
    pub delivered: u64,
    /// The cursor after the pass.
    pub cursor: u64,
    /// It was not due (backing off) and nothing was sent.
    pub waiting: bool,
    /// The failure that ended its pass, when one did.
    pub failure: Option<String>,
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// One report per subscription, in configuration order.
    pub subscriptions: Vec<SubscriptionReport>,
}

/// Delivers events to the subscriptions.
pub struct Deliverer {
    /// The index (`DATA/index.sqlite`), opened read-only for each pass.
    pub index_path: PathBuf,
    /// Where the delivery state lives and what makes a pass exclusive.
    pub bookkeeping: Bookkeeping,
    /// The answer key, which signs events.
    pub key: ed25519_dalek::SigningKey,
    /// The events' `issuer` (`{base}/api/v1/issuer`, as the API serves them).
    pub issuer: String,
    /// The subscriptions.
    pub subscriptions: Vec<Subscription>,
    /// The HTTP client's rules (SSRF policy, resolver, user agent, trust).
    pub client: Outbound,
    /// The back-off after failures.
    pub backoff: Backoff,
    /// How long one delivery may take ([`webhook::WEBHOOK_TIMEOUT`] by default).
    pub timeout: Duration,
    /// The clock (the system's, unless a test moves time).
    pub clock: Arc<dyn Fn() -> SystemTime + Send + Sync>,
}

fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, DeliveryError> + Send + 'static,
) -> Result<T, DeliveryError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| DeliveryError::Task(e.to_string()))?
}

/// The exclusive lock a pass holds (released when dropped, or when the process dies).
struct PassLock(#[allow(dead_code)] std::fs::File);

fn lock(path: PathBuf) -> Result<PassLock, DeliveryError> {
    use rustix::fs::{FlockOperation, flock};
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| DeliveryError::Lock {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(PassLock(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(DeliveryError::Busy(path.display().to_string())),
        Err(e) => Err(DeliveryError::Lock {
            path,
            reason: e.to_string(),
        }),
    }
}

/// How long a cluster's pass holds [`WEBHOOKS_LEASE`] without writing: it is renewed at each
/// delivery's outcome, and one delivery takes at most [`webhook::WEBHOOK_TIMEOUT`].
pub const SHARED_PASS_LEASE: Duration = Duration::from_secs(120);

/// Where the delivery state lives, and what makes a pass exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bookkeeping {
    /// One box: [`Store`] at this path (`DATA/webhooks.sqlite`); a pass holds an exclusive
    /// lock on the path with `.lock` appended.
    File(PathBuf),
    /// A cluster's API replicas: the PostgreSQL at `url` (`toolmark_queue::webhooks`), as
    /// `holder`; a pass holds the queue's lease [`WEBHOOKS_LEASE`] ([`SHARED_PASS_LEASE`],
    /// renewed at each delivery's outcome), so any replica may make the next pass.
    Shared {
        /// The database.
        url: String,
        /// Who delivers (`api@host:pid:start`).
        holder: String,
    },
}

/// The state of one pass, held exclusively until dropped.
enum Books {
    File {
        _lock: PassLock,
        store: Store,
    },
    /// `None` only while dropping (boxed: a database client is large, and there is one).
    Shared(Option<Box<Queue>>),
}

impl Bookkeeping {
    /// The state, opened exclusively for one pass (blocks).
    fn open(&self) -> Result<Books, DeliveryError> {
        match self {
            Bookkeeping::File(path) => {
                let lock_path = {
                    let mut p = path.clone().into_os_string();
                    p.push(".lock");
                    PathBuf::from(p)
                };
                let lock = lock(lock_path)?;
                Ok(Books::File {
                    _lock: lock,
                    store: Store::open(path)?,
                })
            }
            Bookkeeping::Shared { url, holder } => {
                let mut queue = Queue::connect(url, holder).map_err(StoreError::from)?;
                if !queue
                    .hold(WEBHOOKS_LEASE, SHARED_PASS_LEASE)
                    .map_err(StoreError::from)?
                {
                    return Err(DeliveryError::Busy(format!(
                        "the cluster's lease {WEBHOOKS_LEASE:?}"
                    )));
                }
                Ok(Books::Shared(Some(Box::new(queue))))
            }
        }
    }
}

impl Books {
    fn queue(&mut self) -> Option<&mut Queue> {
        match self {
            Books::Shared(q) => q.as_deref_mut(),
            Books::File { .. } => None,
        }
    }

    /// Renews a cluster pass's lease: a pass that lost it stops.
    fn renew(queue: &mut Queue) -> Result<(), StoreError> {
        if queue.hold(WEBHOOKS_LEASE, SHARED_PASS_LEASE)? {
            Ok(())
        } else {
            Err(StoreError::LeaseLost)
        }
    }

    fn state(&mut self, id: &str, url: &str) -> Result<SubscriptionState, StoreError> {
        match self {
            Books::File { store, .. } => store.state(id, url),
            Books::Shared(_) => {
                let q = self.queue().expect("open");
                Ok(q.webhook_state(id, url)?)
            }
        }
    }

    fn acknowledged(
        &mut self,
        id: &str,
        event: (u64, &str),
        outcome: &str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        match self {
            Books::File { store, .. } => store.acknowledged(id, event, outcome, now_ms),
            Books::Shared(_) => {
                // The lease first: a pass another replica took over writes nothing more.
                let q = self.queue().expect("open");
                Books::renew(q)?;
                Ok(q.webhook_acknowledged(id, event, outcome, now_ms)?)
            }
        }
    }

    fn moved(&mut self, id: &str, seq: u64) -> Result<(), StoreError> {
        match self {
            Books::File { store, .. } => store.moved(id, seq),
            Books::Shared(_) => Ok(self.queue().expect("open").webhook_moved(id, seq)?),
        }
    }

    fn failed(
        &mut self,
        id: &str,
        outcome: &str,
        now_ms: u64,
        next_ms: u64,
    ) -> Result<(), StoreError> {
        match self {
            Books::File { store, .. } => store.failed(id, outcome, now_ms, next_ms),
            Books::Shared(_) => {
                let q = self.queue().expect("open");
                Books::renew(q)?;
                Ok(q.webhook_failed(id, outcome, now_ms, next_ms)?)
            }
        }
    }
}

impl Books {
    /// Ends the pass on this thread (blocks): a cluster pass gives its lease back.
    fn close(mut self) {
        if let Books::Shared(q) = &mut self {
            if let Some(mut queue) = q.take() {
                if let Err(e) = queue.release(WEBHOOKS_LEASE) {
                    tracing::warn!("giving the webhooks lease back: {e}");
                }
            }
        }
    }
}

impl Drop for Books {
    /// A cluster pass gives its lease back; the database client's own drop blocks on a runtime
    /// of its own, which panics on an async worker thread (where a pass ends), so both happen
    /// on a thread of their own.
    fn drop(&mut self) {
        if let Books::Shared(q) = self {
            if let Some(mut queue) = q.take() {
                std::thread::spawn(move || {
                    if let Err(e) = queue.release(WEBHOOKS_LEASE) {
                        tracing::warn!("giving the webhooks lease back: {e}");
                    }
                });
            }
        }
    }
}

impl Deliverer {
    /// A deliverer with the defaults: the system clock, [`Backoff::default`],
    /// [`webhook::WEBHOOK_TIMEOUT`]. `client` is [`Outbound`] or anything that converts into
    /// it (the crawler's `ClientConfig`).
    pub fn new(
        data: &toolmark_index::DataDir,
        key: ed25519_dalek::SigningKey,
        issuer: String,
        subscriptions: Vec<Subscription>,
        client: impl Into<Outbound>,
    ) -> Deliverer {
        Deliverer {
            index_path: data.index_path(),
            bookkeeping: Bookkeeping::File(data.webhooks_path()),
            key,
            issuer,
            subscriptions,
            client: client.into(),
            backoff: Backoff::default(),
            timeout: webhook::WEBHOOK_TIMEOUT,
            clock: Arc::new(SystemTime::now),
        }
    }

    /// One pass: every subscription that is due gets the events after its cursor (at most
    /// [`EVENTS_PER_PASS`]), in order, until one is not acknowledged. Stops between deliveries
    /// (or abandons the one in flight, unacknowledged) when `stop` is cancelled.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::Busy`] when another process is delivering; the index, the store or
    /// signing failing. A receiver's failure is not an error: it is in the report.
    pub async fn pass(&self, stop: &CancellationToken) -> Result<PassReport, DeliveryError> {
        let (books, index_path) = (self.bookkeeping.clone(), self.index_path.clone());
        let (store, index) = blocking(move || {
            let books = books.open()?;
            Ok((
                Arc::new(Mutex::new(books)),
                Arc::new(Mutex::new(Index::open_read_only(&index_path)?)),
            ))
        })
        .await?;
        let mut report = PassReport::default();
        for sub in &self.subscriptions {
            if stop.is_cancelled() {
                break;
            }
            report
                .subscriptions
                .push(self.deliver(sub, &store, &index, stop).await?);
        }
        // The pass is over: its lease (in a cluster) is given back before this returns, so
        // the next pass, here or on another replica, can start at once.
        if let Ok(books) = Arc::try_unwrap(store) {
            let books = books
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            blocking(move || {
                books.close();
                Ok(())
            })
            .await?;
        }
        Ok(report)
    }

    /// The cursor to deliver after: the stored one, unless the last acknowledged event (by
    /// id) now stands at another cursor — an index rebuilt by a release that derives other
    /// events numbers them otherwise — then that one (stored). An id the index no longer holds
    /// leaves the cursor as it is, with a warning: the events around it were derived anew.
    async fn found_again(
        &self,
        sub: &Subscription,
        store: &Arc<Mutex<Books>>,
        index: &Arc<Mutex<Index>>,
        state: &crate::store::SubscriptionState,
    ) -> Result<u64, DeliveryError> {
        let Some(last) = state.last_id.clone() else {
            return Ok(state.cursor);
        };
        let i = index.clone();
        let found =
            blocking(move || Ok(i.lock().expect("index lock").security_event(&last)?)).await?;
        match found {
            Some(row) if row.seq != state.cursor => {
                tracing::warn!(subscription = %sub.id, from = state.cursor, to = row.seq,
                    "the last delivered event moved: the cursor follows it");
                let (s, id, seq) = (store.clone(), sub.id.clone(), row.seq);
                blocking(move || Ok(s.lock().expect("store lock").moved(&id, seq)?)).await?;
                Ok(row.seq)
            }
            Some(_) => Ok(state.cursor),
            None => {
                tracing::warn!(subscription = %sub.id, cursor = state.cursor,
                    "the last delivered event is no longer in the index: delivering after the stored cursor");
                Ok(state.cursor)
            }
        }
    }

    async fn deliver(
        &self,
        sub: &Subscription,
        store: &Arc<Mutex<Books>>,
        index: &Arc<Mutex<Index>>,
        stop: &CancellationToken,
    ) -> Result<SubscriptionReport, DeliveryError> {
        let (id, url) = (sub.id.clone(), sub.url.clone());
        let s = store.clone();
        let state = blocking(move || Ok(s.lock().expect("store lock").state(&id, &url)?)).await?;
        let mut report = SubscriptionReport {
            id: sub.id.clone(),
            delivered: 0,
            cursor: state.cursor,
            waiting: false,
            failure: None,
        };
        if state.next_attempt_ms > ms((self.clock)()) {
            report.waiting = true;
            return Ok(report);
        }
        let after = self.found_again(sub, store, index, &state).await?;
        let (i, watch) = (index.clone(), sub.watch.clone());
        let rows = blocking(move || {
            Ok(i.lock().expect("index lock").security_events(&EventQuery {
                after: Some(after),
                targets: watch.as_deref(),
                limit: EVENTS_PER_PASS,
                ..EventQuery::default()
            })?)
        })
        .await?;
        let mut failures = state.attempts;
        for row in rows {
            if stop.is_cancelled() {
                break;
            }
            let doc =
                toolmark_client::signed_event(&row.body, &self.issuer, &self.key).map_err(|e| {
                    DeliveryError::Sign {
                        seq: row.seq,
                        reason: e.to_string(),
                    }
                })?;
            let body = toolmark_client::canonical(&doc).map_err(|e| DeliveryError::Sign {
                seq: row.seq,
                reason: e.to_string(),
            })?;
            let now = (self.clock)();
            let timestamp = (ms(now) / 1_000).to_string();
            let headers = [
                (HEADER_EVENT_ID, row.id.clone()),
                (HEADER_EVENT_CURSOR, row.seq.to_string()),
                (HEADER_TIMESTAMP, timestamp.clone()),
                (HEADER_SIGNATURE, signature(&sub.secret, &timestamp, &body)),
            ];
            let outcome = tokio::select! {
                o = webhook::post(&self.client, &sub.url, &headers, body, self.timeout) => o,
                () = stop.cancelled() => break,
            };
            let text = match &outcome {
                Outcome::Status(s) => format!("HTTP {s}"),
                Outcome::Blocked(e) => format!("blocked: {e}"),
                Outcome::Failed(e) => format!("failed: {e}"),
                Outcome::TimedOut => format!("no answer within {:?}", self.timeout),
            };
            let (s, id, seq, done) = (store.clone(), sub.id.clone(), row.seq, ms((self.clock)()));
            let event = row.id.clone();
            if outcome.delivered() {
                let t = text.clone();
                blocking(move || {
                    Ok(s.lock()
                        .expect("store lock")
                        .acknowledged(&id, (seq, &event), &t, done)?)
                })
                .await?;
                report.delivered += 1;
                report.cursor = row.seq;
                failures = 0;
                tracing::debug!(subscription = %sub.id, seq = row.seq, "webhook delivered");
            } else {
                failures = failures.saturating_add(1);
                let delay = self.backoff.after(failures);
                let next =
                    done.saturating_add(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
                let t = text.clone();
                blocking(move || Ok(s.lock().expect("store lock").failed(&id, &t, done, next)?))
                    .await?;
                tracing::warn!(
                    subscription = %sub.id,
                    seq = row.seq,
                    attempts = failures,
                    "webhook not delivered ({text}); next attempt in {delay:?}"
                );
                report.failure = Some(text);
                break;
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_from_its_base_up_to_its_cap() {
        let b = Backoff::default();
        assert_eq!(b.after(1), Duration::from_secs(30));
        assert_eq!(b.after(2), Duration::from_secs(60));
        assert_eq!(b.after(3), Duration::from_secs(120));
        assert_eq!(b.after(12), Duration::from_secs(61_440));
        assert_eq!(b.after(13), Duration::from_secs(86_400));
        assert_eq!(b.after(u32::MAX), Duration::from_secs(86_400));
    }

    #[test]
    fn the_signature_is_hmac_sha256_over_timestamp_dot_body() {
        // The value Python's hmac module gives for the same key and message
        // (`hmac.new(b"Jefe", b'1764700000.{"a":1}', hashlib.sha256).hexdigest()`).
        assert_eq!(
            signature(b"Jefe", "1764700000", br#"{"a":1}"#),
            "sha256=d0c2d958691dd00d4eb9e8a9fec8bf3fe16df746a98e0a5bc362363f5c40033f"
        );
    }
}
