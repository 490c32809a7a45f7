//! Client reports (`"contribute": true` on `/check`): count the tool sets clients say they were
//! served, once per client, target and UTC day, without keeping who the client is.
//!
//! What is kept, in `DATA/contributions.sqlite` (`toolmark_index::contributions`): per (target,
//! digest, day) how many distinct clients reported it. What is never kept, anywhere: the
//! address, the client key, the tool text, the user agent.
//!
//! Telling clients apart for the day: the client's key (`toolmark_server::client_key`: the
//! IPv4 address, or the IPv6 /64, as the rate limits use it) and the target id are hashed with
//! HMAC-SHA256 under a random key drawn from the OS (`getrandom`) for the current UTC day and
//! this process only; the set of those hashes lives in memory only, holds at most
//! [`MAX_CLIENTS_PER_DAY`] of them, and is dropped with its key when the day changes (a new key
//! is drawn), so yesterday's hashes cannot be recomputed by anyone, this process included.
//! With each hash the set keeps a hash (same key) of the digest that client reported, so a
//! repeat of the same report answers `contributed: true` without counting again, and a second,
//! different digest the same day is not counted (`contributed: false`). Past the cap no new
//! client is counted that day rather than the set growing. A restart draws a new key and
//! starts an empty set: a client may then be counted again that day (documented; it needs the
//! operator's restart, not the client's doing).
//!
//! In a cluster (`toolmark api` replicas over PostgreSQL) the same is kept in the database
//! every replica shares (`toolmark_queue::reports`: the counts, and the day's key and hashes in
//! tables PostgreSQL does not log), so a client is counted once per target and day whichever
//! replica it reaches, and every replica reads the same counts ([`ReportStore`]).
//!
//! What is shown is read back with the store's minimum (`MINIMUM_REPORTS` clients for a
//! (target, digest, day)) and without the digests toolmark observed itself at that target
//! ([`other_reports`]).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use hmac::{KeyInit, Mac};
use serde_json::{Value, json};
use toolmark_index::contributions::{
    ClientReport, Contributions, Counted, Day, DigestKind, MINIMUM_REPORTS, WINDOW_DAYS,
};
use toolmark_index::index::Index;
use toolmark_toolset::Sri;

use crate::ApiError;

/// Most distinct (client, target) pairs remembered for one day (about 50 bytes each: 10 MB at
/// worst). Past it, reports from clients not yet seen that day are not counted.
pub const MAX_CLIENTS_PER_DAY: usize = 200_000;

/// What became of one report: the store's decision ([`ReportStore::report`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Counted now.
    Counted,
    /// This client reported this digest for this target earlier today (counted then).
    Again,
    /// This client reported another digest for this target today: not counted.
    OtherToday,
    /// Today's (client, target) pairs are at their cap.
    ClientsFull,
    /// The target has as many distinct digests today as are counted.
    TargetFull,
    /// Today's rows are at their cap.
    DayFull,
}

/// A client-report store failed.
#[derive(Debug, thiserror::Error)]
#[error("client reports: {0}")]
pub struct StoreError(pub String);

/// The (client, target) and (kind, digest) hashes of one report under a day's key.
pub type Pair<'a> = &'a dyn Fn(&[u8; 32]) -> ([u8; 16], [u8; 16]);

/// Where client reports are kept and counted: in this process ([`LocalReports`]: the counts in
/// `DATA/contributions.sqlite`, the day's key and clients in memory), or in a store every API
/// replica of a cluster shares (PostgreSQL: `toolmark_roles`), so a client is counted once
/// per target and day whichever replica it reaches.
pub trait ReportStore: Send + Sync {
    /// Count one report of `digest` (`kind`) for `target_id` on `day`, atomically: the day's
    /// key is `fresh_key` unless the store has one for `day` already (a new day forgets the
    /// old key and every pair hashed with it); `pair` hashes the report under the key; a pair
    /// seen today is not counted again.
    ///
    /// # Errors
    ///
    /// The store failed.
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        day: Day,
        fresh_key: [u8; 32],
        pair: Pair<'_>,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
    ) -> Result<Outcome, StoreError>;

    /// The digests reported for `target_id` by at least [`MINIMUM_REPORTS`] clients on some
    /// day of the window ending `today` (`toolmark_index::Contributions::reports`).
    ///
    /// # Errors
    ///
    /// The store failed.
    fn reports(&self, target_id: &str, today: Day) -> Result<Vec<ClientReport>, StoreError>;
}

impl<T: ReportStore + ?Sized> ReportStore for std::sync::Arc<T> {
    fn report(
        &self,
        day: Day,
        fresh_key: [u8; 32],
        pair: Pair<'_>,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
    ) -> Result<Outcome, StoreError> {
        (**self).report(day, fresh_key, pair, target_id, kind, digest)
    }

    fn reports(&self, target_id: &str, today: Day) -> Result<Vec<ClientReport>, StoreError> {
        (**self).reports(target_id, today)
    }
}

/// The in-memory half of one process's client reports: which (client, target) pairs were
/// counted today.
struct Seen {
    day: Option<Day>,
    key: [u8; 32],
    /// HMAC(key, client, target) → HMAC(key, kind, digest), both cut to 16 bytes.
    counted: HashMap<[u8; 16], [u8; 16]>,
}

/// One process's client reports: the counts in SQLite, today's key and clients in memory.
pub struct LocalReports {
    store: Mutex<Contributions>,
    seen: Mutex<Seen>,
    max_clients: usize,
}

impl LocalReports {
    /// Over `store`, remembering at most `max_clients` (client, target) pairs a day
    /// ([`MAX_CLIENTS_PER_DAY`] in service).
    pub fn new(store: Contributions, max_clients: usize) -> LocalReports {
        LocalReports {
            store: Mutex::new(store),
            seen: Mutex::new(Seen {
                day: None,
                key: [0; 32],
                counted: HashMap::new(),
            }),
            max_clients,
        }
    }
}

impl ReportStore for LocalReports {
    fn report(
        &self,
        day: Day,
        fresh_key: [u8; 32],
        pair: Pair<'_>,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
    ) -> Result<Outcome, StoreError> {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.day != Some(day) {
            *seen = Seen {
                day: Some(day),
                key: fresh_key,
                counted: HashMap::new(),
            };
        }
        let (who, what) = pair(&seen.key);
        match seen.counted.get(&who) {
            Some(earlier) if *earlier == what => return Ok(Outcome::Again),
            Some(_) => return Ok(Outcome::OtherToday),
            None => {}
        }
        if seen.counted.len() >= self.max_clients {
            return Ok(Outcome::ClientsFull);
        }
        let counted = self
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .count(target_id, kind, digest, day)
            .map_err(|e| StoreError(e.to_string()))?;
        Ok(match counted {
            Counted::Counted => {
                seen.counted.insert(who, what);
                Outcome::Counted
            }
            Counted::TargetFull => Outcome::TargetFull,
            Counted::DayFull => Outcome::DayFull,
        })
    }

    fn reports(&self, target_id: &str, today: Day) -> Result<Vec<ClientReport>, StoreError> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .reports(target_id, today)
            .map_err(|e| StoreError(e.to_string()))
    }
}

/// The client reports every `/check` shares: hashing and the answer's sentences here, the
/// counting in a [`ReportStore`].
pub struct ClientReports {
    store: Box<dyn ReportStore>,
    /// With a store others can read (a cluster's database): a secret only the API holds,
    /// combined with the store's day key, so the store's contents alone cannot be hashed again.
    secret: Option<[u8; 32]>,
}

/// Why a report was not counted (the sentence the answer's `note` carries).
pub type NotCounted = &'static str;

fn hmac16(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 16] {
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    for p in parts {
        // Length-prefixed, so parts cannot run into one another.
        mac.update(&(p.len() as u64).to_be_bytes());
        mac.update(p);
    }
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; 16];
    out.copy_from_slice(&full[..16]);
    out
}

/// HMAC-SHA256 of `message` under `key`, whole.
fn hmac32(key: &[u8; 32], message: &[u8; 32]) -> [u8; 32] {
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

fn client_bytes(peer: IpAddr) -> Vec<u8> {
    match toolmark_server::client_key(peer) {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

impl ClientReports {
    /// One process's reports over `store` ([`LocalReports`]), remembering at most
    /// `max_clients` (client, target) pairs a day ([`MAX_CLIENTS_PER_DAY`] in service).
    pub fn new(store: Contributions, max_clients: usize) -> ClientReports {
        ClientReports::over(Box::new(LocalReports::new(store, max_clients)))
    }

    /// Reports kept in `store` (a cluster's shared one).
    pub fn over(store: Box<dyn ReportStore>) -> ClientReports {
        ClientReports {
            store,
            secret: None,
        }
    }

    /// The same reports, hashed under the store's day key combined with a secret derived from
    /// `answer_key` (which every API replica of a log holds, and nothing else does): whoever
    /// reads the store — the day key and the hashes in a cluster's database — cannot hash
    /// addresses to match them without it, and once the day key is deleted nobody can.
    pub fn keyed(mut self, answer_key: &ed25519_dalek::SigningKey) -> ClientReports {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"toolmark client reports v1\0");
        h.update(answer_key.to_bytes());
        self.secret = Some(h.finalize().into());
        self
    }

    /// Count the report of `digest` (of `kind`) for `target_id` by the client at `peer` on
    /// `day`, once per client, target and day: `Ok(())` when it is counted (now or earlier
    /// today), else why not.
    ///
    /// # Errors
    ///
    /// The store failed, or no randomness could be had for a new day's key.
    pub fn report(
        &self,
        peer: IpAddr,
        target_id: &str,
        kind: DigestKind,
        digest: &Sri,
        day: Day,
    ) -> Result<Result<(), NotCounted>, ApiError> {
        // Drawn for every report and used only when the store has no key for `day` yet.
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(ApiError::internal)?;
        let client = client_bytes(peer);
        let digest_text = digest.to_string();
        let secret = self.secret;
        let pair = |day_key: &[u8; 32]| {
            let key = match &secret {
                Some(secret) => hmac32(secret, day_key),
                None => *day_key,
            };
            (
                hmac16(&key, &[&client, target_id.as_bytes()]),
                hmac16(&key, &[kind.as_str().as_bytes(), digest_text.as_bytes()]),
            )
        };
        let outcome = match self
            .store
            .report(day, fresh, &pair, target_id, kind, digest)
        {
            Ok(o) => o,
            // The answer does not depend on the count: the store failing costs the report,
            // not the answer.
            Err(e) => {
                tracing::warn!("client report not counted: {e}");
                return Ok(Err("not counted: client reports are unavailable right now"));
            }
        };
        Ok(match outcome {
            Outcome::Counted | Outcome::Again => Ok(()),
            Outcome::OtherToday => Err(
                "not counted: a client's report counts once per target and day, and this \
                 client reported another tool set for this target today",
            ),
            Outcome::ClientsFull => {
                Err("not counted: the reports of today's clients are at their cap")
            }
            Outcome::TargetFull => Err(
                "not counted: this target has as many distinct reported tool sets today as are \
                 counted",
            ),
            Outcome::DayFull => Err("not counted: today's reports are at their cap"),
        })
    }

    /// The digests reported for `target_id` at or above the minimum in the window ending with
    /// `today` that toolmark never observed at that target (any log entry of it with that
    /// digest counts as observed).
    ///
    /// # Errors
    ///
    /// The store or the index failed.
    pub fn other_reports(
        &self,
        index: &Index,
        target_id: &str,
        today: Day,
    ) -> Result<Vec<ClientReport>, ApiError> {
        let reports = match self.store.reports(target_id, today) {
            Ok(r) => r,
            // Shown as none: a page or feed does not fail for want of client reports.
            Err(e) => {
                tracing::warn!("client reports not read: {e}");
                return Ok(Vec::new());
            }
        };
        let mut out = Vec::with_capacity(reports.len());
        for r in reports {
            let digest = r.digest.to_string();
            let observed = match r.kind {
                DigestKind::Full => index.entries_with_full(target_id, &digest)?,
                DigestKind::Mtl1 => index.entries_with_mtl1(target_id, &digest)?,
            };
            if observed.is_empty() {
                out.push(r);
            }
        }
        Ok(out)
    }
}

/// `clientReports` of `/api/v1/servers/{id}`: the digests toolmark never observed at the
/// target that at least [`MINIMUM_REPORTS`] clients reported on a day of the window ending
/// `today` (docs/api.md "Client reports").
pub(crate) fn reports_json(reports: &[ClientReport], today: Day) -> Value {
    json!({
        "otherToolSets": reports.len(),
        "window": format!("{WINDOW_DAYS}d"),
        "until": today.date(),
        "minimumReports": MINIMUM_REPORTS,
        "toolSets": reports.iter().map(|r| json!({
            "kind": r.kind.as_str(),
            "digest": r.digest.to_string(),
            "reports": r.reports,
            "firstDay": r.first_day.date(),
            "lastDay": r.last_day.date(),
            "firstReached": r.first_reached.date(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reports(tag: &str) -> (ClientReports, std::sync::Arc<LocalReports>) {
        let dir =
            std::env::temp_dir().join(format!("toolmark-contribute-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let local = std::sync::Arc::new(LocalReports::new(
            Contributions::open(&dir.join("c.sqlite")).unwrap(),
            MAX_CLIENTS_PER_DAY,
        ));
        (ClientReports::over(Box::new(local.clone())), local)
    }

    #[test]
    fn a_new_day_draws_a_new_key_and_counts_the_client_again() {
        let (r, local) = reports("new-day");
        let peer: IpAddr = "192.0.2.1".parse().unwrap();
        let digest = Sri::of(b"a set");
        let (day, next) = (Day(20_000), Day(20_001));
        assert_eq!(
            r.report(peer, "0123456789abcdef", DigestKind::Full, &digest, day)
                .unwrap(),
            Ok(())
        );
        let key = local.seen.lock().unwrap().key;
        assert_eq!(local.seen.lock().unwrap().counted.len(), 1);
        assert_eq!(
            r.report(peer, "0123456789abcdef", DigestKind::Full, &digest, next)
                .unwrap(),
            Ok(())
        );
        let seen = local.seen.lock().unwrap();
        assert_ne!(seen.key, key, "a new day has a new key");
        assert_eq!(seen.counted.len(), 1, "yesterday's hashes are gone");
    }

    #[test]
    fn client_hashes_are_keyed_and_never_the_address() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let who = |key: &[u8; 32]| hmac16(key, &[&[192, 0, 2, 1], b"0123456789abcdef"]);
        assert_ne!(who(&a), who(&b));
        assert_eq!(who(&a), who(&a));
        // Parts are length-prefixed: moving a byte from one part to the next changes the hash.
        assert_ne!(hmac16(&a, &[b"ab", b"c"]), hmac16(&a, &[b"a", b"bc"]));
    }
}
