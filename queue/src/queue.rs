//! The queue's tables and operations (see the crate documentation).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use postgres::{Client, NoTls};

/// The longest one statement may run (`statement_timeout`) or wait for a lock
/// (`lock_timeout`): a stalled database costs a worker this much per statement, then an error.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest connecting to the database may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a connection's unacknowledged data, or its silence (TCP keepalives from 15 s idle,
/// every 5 s, 3 unanswered), may last before the kernel drops it: a database lost without a
/// word (a half-open connection) fails the call waiting on it within about this, where the
/// server's `statement_timeout` cannot help.
pub const DEAD_CONNECTION: Duration = Duration::from_secs(30);
/// The states of a job waiting or claimed, as SQL (`queue_jobs_open_run` indexes them).
const OPEN_STATES: &str = "('queued', 'claimed')";
/// The states of a job that will not be tried again, as SQL (`queue_jobs_failed_run`).
const FAILED_STATES: &str = "('failed', 'abandoned')";
/// Attempts a job gets: a job whose lease lapses on its last attempt is `abandoned` (a job that
/// kills its worker three times is not handed to a fourth).
pub const MAX_ATTEMPTS: i32 = 3;
/// Most jobs one claim takes.
pub const MAX_CLAIM: usize = 1000;
/// Largest payload, result or hand-off one job may carry (they are small descriptions: a
/// target, a package version, a document's address), so a hostile or broken caller cannot fill
/// the database through one row.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;
/// Longest error text kept for a failed job.
const MAX_ERROR_CHARS: usize = 2000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS queue_jobs (
    id BIGSERIAL PRIMARY KEY,
    run TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'claimed', 'done', 'failed', 'abandoned')),
    attempt INTEGER NOT NULL DEFAULT 0,
    claims INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    lease_until TIMESTAMPTZ,
    not_before TIMESTAMPTZ NOT NULL DEFAULT now(),
    enqueued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at TIMESTAMPTZ,
    result TEXT,
    error TEXT,
    UNIQUE (run, key)
);
CREATE INDEX IF NOT EXISTS queue_jobs_open ON queue_jobs (kind, id)
    WHERE state IN ('queued', 'claimed');
CREATE TABLE IF NOT EXISTS queue_handoff (
    seq BIGSERIAL PRIMARY KEY,
    job BIGINT NOT NULL REFERENCES queue_jobs (id),
    attempt INTEGER NOT NULL,
    body BYTEA NOT NULL,
    taken BOOLEAN NOT NULL DEFAULT false,
    UNIQUE (job)
);
CREATE INDEX IF NOT EXISTS queue_handoff_open ON queue_handoff (seq) WHERE NOT taken;
CREATE TABLE IF NOT EXISTS queue_host_slots (
    id BIGSERIAL PRIMARY KEY,
    host TEXT NOT NULL,
    holder TEXT NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS queue_host_slots_host ON queue_host_slots (host);
CREATE TABLE IF NOT EXISTS queue_leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS queue_rates (
    name TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at TIMESTAMPTZ NOT NULL
);
ALTER TABLE queue_jobs ADD COLUMN IF NOT EXISTS lapses INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS queue_notes (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS queue_runs (
    kind TEXT NOT NULL,
    run TEXT NOT NULL,
    started TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended BOOLEAN NOT NULL DEFAULT false,
    finished TIMESTAMPTZ,
    failed BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, run)
);
CREATE INDEX IF NOT EXISTS queue_runs_latest ON queue_runs (kind, started DESC);
CREATE INDEX IF NOT EXISTS queue_jobs_open_run ON queue_jobs (run)
    WHERE state IN ('queued', 'claimed');
CREATE INDEX IF NOT EXISTS queue_jobs_failed_run ON queue_jobs (run)
    WHERE state IN ('failed', 'abandoned');
INSERT INTO queue_runs (kind, run, started)
    SELECT kind, run, min(enqueued_at) FROM queue_jobs GROUP BY kind, run
    ON CONFLICT (kind, run) DO NOTHING;
";

/// Whether [`SCHEMA`], the client reports' (`crate::reports`), the webhooks'
/// (`crate::webhooks`), the harvests' (`crate::harvests`) and the schedules'
/// (`crate::schedules`) are all there: their last tables and the last columns added.
const SCHEMA_CURRENT: &str = "SELECT to_regclass('queue_runs') IS NOT NULL
    AND to_regclass('client_report_seen') IS NOT NULL
    AND to_regclass('webhook_state') IS NOT NULL
    AND to_regclass('cluster_harvests') IS NOT NULL
    AND to_regclass('schedule_runs') IS NOT NULL
    AND EXISTS (SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'queue_jobs'
          AND column_name = 'lapses')
    AND EXISTS (SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'cluster_harvests'
          AND column_name = 'report')";

/// An arbitrary constant: the advisory lock that serialises schema creation.
const SCHEMA_LOCK: i64 = 0x7175_6575_6573_6368;

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The database failed or refused (connection, timeout, constraint).
    #[error("queue database {url}: {reason}")]
    Postgres {
        /// The database, without its password.
        url: String,
        /// What it said.
        reason: String,
    },
    /// The claim is no longer the job's current one: its lease lapsed and the job was claimed
    /// again (or finished). Nothing of the late result was written.
    #[error("job {job} claim {claim}: the claim was lost (its lease lapsed and the job moved on)")]
    Lost {
        /// The job.
        job: i64,
        /// The claim that lost it ([`Claim::seq`]).
        claim: i32,
    },
    /// A payload, result or hand-off over [`MAX_PAYLOAD_BYTES`], or an argument out of range.
    #[error("{0}")]
    Refused(String),
}

/// A job to enqueue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    /// What kind of work (`remote`, `package`, …): workers claim the kinds they do.
    pub kind: String,
    /// The job's identity within its run (a target, a package version): enqueued once per run.
    pub key: String,
    /// What the worker needs (JSON text, kept byte for byte).
    pub payload: String,
}

/// A job claimed: `(id, seq)` is the claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The job.
    pub id: i64,
    /// Which attempt this claim is (1 for the first; a deferred claim does not count).
    pub attempt: i32,
    /// Which claim of the job this is (every claim, deferred ones too): what fences a late
    /// result.
    pub seq: i32,
    /// The run it belongs to.
    pub run: String,
    /// Its kind.
    pub kind: String,
    /// Its key.
    pub key: String,
    /// Its payload.
    pub payload: String,
    /// When the lease lapses unless renewed (the database's clock).
    pub lease_until: SystemTime,
}

/// What [`Queue::fail`] did with the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failed {
    /// Back in the queue for another attempt, not before the delay.
    Retried,
    /// That was its last attempt: failed for good.
    Failed,
}

/// How many jobs of a run are in each state, and how many claims have lapsed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Waiting to be claimed.
    pub queued: u64,
    /// Claimed, lease running.
    pub claimed: u64,
    /// Claimed, lease lapsed (its worker died or stalled; claimed again next).
    pub lapsed: u64,
    /// Finished with a result.
    pub done: u64,
    /// Failed on their last attempt.
    pub failed: u64,
    /// Lost their worker on their last attempt.
    pub abandoned: u64,
}

/// The queue as a whole, for a role's `/metrics` and `/health`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    /// Jobs by kind and state (`queued`, `claimed`, `lapsed`: claimed with its lease run out,
    /// `done`, `failed`, `abandoned`), for the jobs kept (finished ones until pruned).
    pub jobs: Vec<(String, String, u64)>,
    /// Claims whose lease ran out before their job finished (the job was claimed again or
    /// abandoned), by kind, over the jobs kept.
    pub lease_expiries: Vec<(String, u64)>,
    /// Hand-offs waiting for the sequencer.
    pub handoffs_waiting: u64,
    /// Host places held (leases running), across every worker.
    pub host_places: u64,
}

/// What became of one run's jobs of one kind ([`Queue::run_outcome`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// Jobs in all.
    pub jobs: u64,
    /// Jobs waiting or claimed.
    pub open: u64,
    /// Jobs failed or abandoned.
    pub failed: u64,
    /// When the last job finished (`None`: none has).
    pub finished: Option<SystemTime>,
    /// When the first job was enqueued (`None`: the run has none).
    pub started: Option<SystemTime>,
    /// Entries handed on that the sequencer has not logged yet.
    pub unlogged: u64,
}

/// One run of one kind of job, as [`Queue::runs`] sums it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// The kind of its jobs.
    pub kind: String,
    /// The run.
    pub run: String,
    /// When its first job was enqueued.
    pub started: SystemTime,
    /// When its last job finished (`None` while jobs are open, or when none has).
    pub finished: Option<SystemTime>,
    /// Jobs waiting or claimed.
    pub open: u64,
    /// Jobs failed or abandoned.
    pub failed: u64,
}

/// What a finished job handed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// Its place in the hand-off table ([`Queue::taken`] takes it).
    pub seq: i64,
    /// The job's run.
    pub run: String,
    /// The job's key.
    pub key: String,
    /// What it carries.
    pub body: Vec<u8>,
}

/// A place under a host's limit, held until released or until its lease lapses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSlot {
    /// The host.
    pub host: String,
    id: i64,
}

/// One worker's (or scheduler's, or sequencer's) connection to the queue.
pub struct Queue {
    client: Client,
    url: String,
    holder: String,
}

/// The URL without its password, for messages; a connection string that is not a URL
/// (`host=… password=…`) is not shown at all.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{user}@{}", &url[..s + 3], &url[at + 1..])
        }
        // A password may also be given in the query.
        (Some(_), _) if url.contains("password") => match url.split_once('?') {
            Some((base, _)) => format!("{base}?…"),
            None => url.to_owned(),
        },
        (Some(_), _) => url.to_owned(),
        (None, _) => "(a PostgreSQL connection string)".to_owned(),
    }
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn bounded(what: &str, text: &[u8]) -> Result<(), QueueError> {
    if text.len() > MAX_PAYLOAD_BYTES {
        return Err(QueueError::Refused(format!(
            "{what} of {} bytes: more than {MAX_PAYLOAD_BYTES}",
            text.len()
        )));
    }
    Ok(())
}

impl Queue {
    /// Connects to `url` (`postgres://user:password@host:port/db`) as `holder` (who claims:
    /// `host:pid` of a worker), creating the tables if they are missing.
    pub fn connect(url: &str, holder: &str) -> Result<Queue, QueueError> {
        let fail = |e: &dyn std::fmt::Display| QueueError::Postgres {
            url: redact(url),
            reason: e.to_string(),
        };
        let mut config: postgres::Config = url.parse().map_err(|e| fail(&e))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config
            .tcp_user_timeout(DEAD_CONNECTION)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(15))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        config.options(&format!(
            "-c statement_timeout={ms} -c lock_timeout={ms} -c synchronous_commit=on \
             -c client_min_messages=warning",
            ms = STATEMENT_TIMEOUT.as_millis()
        ));
        let client = config.connect(NoTls).map_err(|e| fail(&e))?;
        let mut me = Queue {
            client,
            url: redact(url),
            holder: holder.to_owned(),
        };
        // The schema's DDL runs only when something of it is missing: `ALTER TABLE` locks the
        // whole table even when it changes nothing, and every role connects often (a scrape of
        // `/metrics` too).
        let current: bool = me
            .client
            .query_one(SCHEMA_CURRENT, &[])
            .map_err(|e| fail(&e))?
            .get(0);
        if !current {
            let mut tx = me.client.transaction().map_err(|e| fail(&e))?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
                .map_err(|e| fail(&e))?;
            tx.batch_execute(SCHEMA).map_err(|e| fail(&e))?;
            tx.batch_execute(crate::reports::SCHEMA)
                .map_err(|e| fail(&e))?;
            tx.batch_execute(crate::webhooks::SCHEMA)
                .map_err(|e| fail(&e))?;
            tx.batch_execute(crate::harvests::SCHEMA)
                .map_err(|e| fail(&e))?;
            tx.batch_execute(crate::schedules::SCHEMA)
                .map_err(|e| fail(&e))?;
            tx.commit().map_err(|e| fail(&e))?;
        }
        Ok(me)
    }

    fn db(&self, e: postgres::Error) -> QueueError {
        db_of(&self.url, e)
    }

    /// The database's URL without its password.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The connection, for the other modules' statements.
    pub(crate) fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Enqueues `jobs` for `run`; a job whose `(run, key)` is already there (enqueued earlier,
    /// whatever became of it) is left alone. Returns how many were added. One transaction.
    pub fn enqueue(&mut self, run: &str, jobs: &[NewJob]) -> Result<u64, QueueError> {
        for j in jobs {
            bounded("a payload", j.payload.as_bytes())?;
        }
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        let insert = tx
            .prepare(
                "INSERT INTO queue_jobs (run, kind, key, payload) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (run, key) DO NOTHING",
            )
            .map_err(|e| db_of(&self.url, e))?;
        let mut added = 0;
        let mut kinds: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
        for j in jobs {
            let n = tx
                .execute(&insert, &[&run, &j.kind, &j.key, &j.payload])
                .map_err(|e| db_of(&self.url, e))?;
            added += n;
            *kinds.entry(&j.kind).or_default() |= n > 0;
        }
        // The run as `runs` lists it; a job added to a run that had ended opens it again.
        for (kind, opened) in kinds {
            if !opened {
                // Every job of it was there: so is its run.
                continue;
            }
            tx.execute(
                "INSERT INTO queue_runs (kind, run) VALUES ($1, $2)
                 ON CONFLICT (kind, run) DO UPDATE SET ended = false",
                &[&kind, &run],
            )
            .map_err(|e| db_of(&self.url, e))?;
        }
        tx.commit().map_err(|e| db_of(&self.url, e))?;
        Ok(added)
    }

    /// Claims up to `max` jobs of `kinds` (oldest first), each leased for `lease`: jobs waiting
    /// and due, and jobs whose lease lapsed before their last attempt. Jobs whose lease lapsed
    /// on their last attempt are marked `abandoned` first. Two claimers never get the same job
    /// (`FOR UPDATE SKIP LOCKED`).
    pub fn claim(
        &mut self,
        kinds: &[&str],
        max: usize,
        lease: Duration,
    ) -> Result<Vec<Claim>, QueueError> {
        if max == 0 || max > MAX_CLAIM {
            return Err(QueueError::Refused(format!(
                "a claim takes 1 to {MAX_CLAIM} jobs, not {max}"
            )));
        }
        let kinds: Vec<String> = kinds.iter().map(|k| (*k).to_owned()).collect();
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        tx.execute(
            "UPDATE queue_jobs SET state = 'abandoned', finished_at = now(), holder = NULL,
                 error = 'its worker stopped answering on the last attempt (the lease lapsed)'
             WHERE id IN (
                 SELECT id FROM queue_jobs
                 WHERE state = 'claimed' AND lease_until < now() AND attempt >= $1
                   AND kind = ANY($2)
                 FOR UPDATE SKIP LOCKED)",
            &[&MAX_ATTEMPTS, &kinds],
        )
        .map_err(|e| db_of(&self.url, e))?;
        let rows = tx
            .query(
                "UPDATE queue_jobs j
                 SET state = 'claimed', attempt = j.attempt + 1, claims = j.claims + 1,
                     lapses = j.lapses + (j.state = 'claimed')::int,
                     holder = $1,
                     lease_until = now() + make_interval(secs => $2)
                 WHERE j.id IN (
                     SELECT id FROM queue_jobs
                     WHERE kind = ANY($3)
                       AND ((state = 'queued' AND not_before <= now())
                            OR (state = 'claimed' AND lease_until < now() AND attempt < $4))
                     ORDER BY id
                     LIMIT $5
                     FOR UPDATE SKIP LOCKED)
                 RETURNING j.id, j.attempt, j.claims, j.run, j.kind, j.key, j.payload,
                     j.lease_until",
                &[&self.holder, &seconds(lease), &kinds, &MAX_ATTEMPTS, &limit],
            )
            .map_err(|e| db_of(&self.url, e))?;
        tx.commit().map_err(|e| db_of(&self.url, e))?;
        let mut claims: Vec<Claim> = rows
            .iter()
            .map(|r| Claim {
                id: r.get(0),
                attempt: r.get(1),
                seq: r.get(2),
                run: r.get(3),
                kind: r.get(4),
                key: r.get(5),
                payload: r.get(6),
                lease_until: r.get(7),
            })
            .collect();
        claims.sort_by_key(|c| c.id);
        Ok(claims)
    }

    /// Extends `claim`'s lease to `lease` from now, if it is still the job's current claim
    /// (else [`QueueError::Lost`]: stop working on it).
    pub fn renew(&mut self, claim: &mut Claim, lease: Duration) -> Result<(), QueueError> {
        let row = self
            .client
            .query_opt(
                "UPDATE queue_jobs SET lease_until = now() + make_interval(secs => $1)
                 WHERE id = $2 AND claims = $3 AND holder = $4 AND state = 'claimed'
                 RETURNING lease_until",
                &[&seconds(lease), &claim.id, &claim.seq, &self.holder],
            )
            .map_err(|e| self.db(e))?;
        match row {
            Some(r) => {
                claim.lease_until = r.get(0);
                Ok(())
            }
            None => Err(QueueError::Lost {
                job: claim.id,
                claim: claim.seq,
            }),
        }
    }

    /// [`Queue::renew`] for every claim of `claims` in one statement: each still current is
    /// extended to `lease` from now (its `lease_until` updated); returns the jobs whose claim
    /// was lost (left as they were: another worker has them, or they finished).
    pub fn renew_many<'a>(
        &mut self,
        claims: impl IntoIterator<Item = &'a mut Claim>,
        lease: Duration,
    ) -> Result<Vec<i64>, QueueError> {
        let mut claims: HashMap<i64, &mut Claim> = claims.into_iter().map(|c| (c.id, c)).collect();
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let (ids, seqs): (Vec<i64>, Vec<i32>) = claims.values().map(|c| (c.id, c.seq)).unzip();
        let rows = self
            .client
            .query(
                "UPDATE queue_jobs AS j SET lease_until = now() + make_interval(secs => $1)
                 FROM unnest($2::int8[], $3::int4[]) AS c(id, claims)
                 WHERE j.id = c.id AND j.claims = c.claims AND j.holder = $4
                   AND j.state = 'claimed'
                 RETURNING j.id, j.lease_until",
                &[&seconds(lease), &ids, &seqs, &self.holder],
            )
            .map_err(|e| self.db(e))?;
        for r in rows {
            if let Some(c) = claims.remove(&r.get::<_, i64>(0)) {
                c.lease_until = r.get(1);
            }
        }
        let mut lost: Vec<i64> = claims.into_keys().collect();
        lost.sort_unstable();
        Ok(lost)
    }

    /// Finishes `claim` with `result`, and with `handoff` (what the job hands on, e.g. the
    /// observation for the sequencer) in the same transaction — only if `claim` is still the
    /// job's current claim. A late claim (the lease lapsed and another attempt took the job,
    /// or it finished) is refused with [`QueueError::Lost`] and nothing is written. A claim whose
    /// lease lapsed but which nobody took over yet still counts: nobody else worked on it.
    pub fn complete(
        &mut self,
        claim: &Claim,
        result: &str,
        handoff: Option<&[u8]>,
    ) -> Result<(), QueueError> {
        bounded("a result", result.as_bytes())?;
        if let Some(h) = handoff {
            bounded("a hand-off", h)?;
        }
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        let done = tx
            .execute(
                "UPDATE queue_jobs SET state = 'done', result = $1, finished_at = now(),
                     lease_until = NULL
                 WHERE id = $2 AND claims = $3 AND holder = $4 AND state = 'claimed'",
                &[&result, &claim.id, &claim.seq, &self.holder],
            )
            .map_err(|e| db_of(&self.url, e))?;
        if done != 1 {
            // Dropping the transaction rolls it back.
            return Err(QueueError::Lost {
                job: claim.id,
                claim: claim.seq,
            });
        }
        if let Some(body) = handoff {
            tx.execute(
                "INSERT INTO queue_handoff (job, attempt, body) VALUES ($1, $2, $3)",
                &[&claim.id, &claim.attempt, &body],
            )
            .map_err(|e| db_of(&self.url, e))?;
        }
        tx.commit().map_err(|e| db_of(&self.url, e))
    }

    /// Gives `claim`'s job back: another attempt not before `retry_after`, or, on its last
    /// attempt, failed for good with `error` (cut to 2,000 characters). A lost claim changes
    /// nothing ([`QueueError::Lost`]).
    pub fn fail(
        &mut self,
        claim: &Claim,
        error: &str,
        retry_after: Duration,
    ) -> Result<Failed, QueueError> {
        let error: String = error.chars().take(MAX_ERROR_CHARS).collect();
        let row = self
            .client
            .query_opt(
                "UPDATE queue_jobs SET
                     state = CASE WHEN attempt >= $1 THEN 'failed' ELSE 'queued' END,
                     finished_at = CASE WHEN attempt >= $1 THEN now() END,
                     not_before = now() + make_interval(secs => $2),
                     holder = NULL, lease_until = NULL, error = $3
                 WHERE id = $4 AND claims = $5 AND holder = $6 AND state = 'claimed'
                 RETURNING state",
                &[
                    &MAX_ATTEMPTS,
                    &seconds(retry_after),
                    &error,
                    &claim.id,
                    &claim.seq,
                    &self.holder,
                ],
            )
            .map_err(|e| self.db(e))?;
        match row.map(|r| r.get::<_, String>(0)) {
            Some(s) if s == "failed" => Ok(Failed::Failed),
            Some(_) => Ok(Failed::Retried),
            None => Err(QueueError::Lost {
                job: claim.id,
                claim: claim.seq,
            }),
        }
    }

    /// Gives `claim`'s job back without counting the attempt (the worker could not start it:
    /// its host's places were taken), not to be claimed again before `delay`. A lost claim
    /// changes nothing ([`QueueError::Lost`]).
    pub fn defer(&mut self, claim: &Claim, delay: Duration) -> Result<(), QueueError> {
        let n = self
            .client
            .execute(
                "UPDATE queue_jobs SET state = 'queued', attempt = attempt - 1, holder = NULL,
                     lease_until = NULL, not_before = now() + make_interval(secs => $1)
                 WHERE id = $2 AND claims = $3 AND holder = $4 AND state = 'claimed'",
                &[&seconds(delay), &claim.id, &claim.seq, &self.holder],
            )
            .map_err(|e| self.db(e))?;
        if n == 1 {
            Ok(())
        } else {
            Err(QueueError::Lost {
                job: claim.id,
                claim: claim.seq,
            })
        }
    }

    /// Takes or renews the lease `name` (one active scheduler, one active sequencer) for `ttl`:
    /// `true` while this connection's holder has it, `false` while another holder's lease runs.
    pub fn hold(&mut self, name: &str, ttl: Duration) -> Result<bool, QueueError> {
        let row = self
            .client
            .query_opt(
                "INSERT INTO queue_leases (name, holder, until)
                 VALUES ($1, $2, now() + make_interval(secs => $3))
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
                 WHERE queue_leases.holder = excluded.holder OR queue_leases.until < now()
                 RETURNING holder",
                &[&name, &self.holder, &seconds(ttl)],
            )
            .map_err(|e| self.db(e))?;
        Ok(row.is_some())
    }

    /// Gives the lease `name` up, if this holder has it.
    pub fn release(&mut self, name: &str) -> Result<(), QueueError> {
        self.client
            .execute(
                "DELETE FROM queue_leases WHERE name = $1 AND holder = $2",
                &[&name, &self.holder],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// Removes what is finished and no longer needed: hand-offs taken, and jobs finished (done,
    /// failed, abandoned) more than `older_than` ago whose hand-off, if any, was taken. Returns
    /// (jobs, hand-offs) removed. The scheduler prunes after each run it enqueues.
    pub fn prune(&mut self, older_than: Duration) -> Result<(u64, u64), QueueError> {
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        // The runs first: a job enqueued meanwhile waits to write its run's row until the
        // runs left without jobs are deleted (a fresh statement sees it, below).
        tx.execute("SELECT 1 FROM queue_runs FOR UPDATE", &[])
            .map_err(|e| db_of(&self.url, e))?;
        let handoffs = tx
            .execute(
                "DELETE FROM queue_handoff h USING queue_jobs j
                 WHERE h.job = j.id AND h.taken
                   AND j.finished_at < now() - make_interval(secs => $1)",
                &[&seconds(older_than)],
            )
            .map_err(|e| db_of(&self.url, e))?;
        let jobs = tx
            .execute(
                "DELETE FROM queue_jobs j
                 WHERE j.state IN ('done', 'failed', 'abandoned')
                   AND j.finished_at < now() - make_interval(secs => $1)
                   AND NOT EXISTS (SELECT 1 FROM queue_handoff h WHERE h.job = j.id)",
                &[&seconds(older_than)],
            )
            .map_err(|e| db_of(&self.url, e))?;
        tx.execute(
            "DELETE FROM queue_runs r
             WHERE NOT EXISTS (SELECT 1 FROM queue_jobs j WHERE j.run = r.run AND j.kind = r.kind)",
            &[],
        )
        .map_err(|e| db_of(&self.url, e))?;
        tx.commit().map_err(|e| db_of(&self.url, e))?;
        Ok((jobs, handoffs))
    }

    /// Keeps `value` under `name` for the other roles (the latest harvest's snapshot, which the
    /// package sweep reads its packages from), replacing what was there.
    pub fn set_note(&mut self, name: &str, value: &str) -> Result<(), QueueError> {
        bounded("a note", value.as_bytes())?;
        self.client
            .execute(
                "INSERT INTO queue_notes (name, value) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value, at = now()",
                &[&name, &value],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// The value kept under `name`, if any.
    pub fn note(&mut self, name: &str) -> Result<Option<String>, QueueError> {
        let row = self
            .client
            .query_opt("SELECT value FROM queue_notes WHERE name = $1", &[&name])
            .map_err(|e| self.db(e))?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The latest runs (at most `per_kind` of each kind of job), newest first: the cluster's run
    /// history for the API replicas' `/health` (finished jobs are kept until pruned). Cheap at
    /// the registry's size: the runs are listed from `queue_runs`, a run's open and failed jobs
    /// counted through partial indexes, and an ended run's summary (its last finish, its
    /// failures) counted once and kept with it.
    pub fn runs(&mut self, per_kind: usize) -> Result<Vec<RunSummary>, QueueError> {
        let limit = i64::try_from(per_kind).unwrap_or(i64::MAX);
        let rows = self
            .client
            .query(
                "SELECT kind, run, started, ended, finished, failed FROM (
                     SELECT *, row_number() OVER (PARTITION BY kind ORDER BY started DESC) AS n
                     FROM queue_runs) r
                 WHERE n <= $1 ORDER BY kind, started DESC",
                &[&limit],
            )
            .map_err(|e| self.db(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let (kind, run): (String, String) = (r.get(0), r.get(1));
            let open = self.count_jobs(&run, &kind, OPEN_STATES)?;
            let (finished, failed) = if open > 0 {
                (None, self.count_jobs(&run, &kind, FAILED_STATES)?)
            } else if r.get::<_, bool>(3) {
                (r.get(4), u64::try_from(r.get::<_, i64>(5)).unwrap_or(0))
            } else {
                // Ended since it was last looked at: counted once, and kept. The run's row is
                // locked first, so the counting statement (a snapshot of its own) sees any job
                // an enqueue holding that row added; then a job added meanwhile keeps it open.
                let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
                tx.execute(
                    "SELECT 1 FROM queue_runs WHERE kind = $2 AND run = $1 FOR UPDATE",
                    &[&run, &kind],
                )
                .map_err(|e| db_of(&self.url, e))?;
                let ended = tx
                    .query_opt(
                        "UPDATE queue_runs SET ended = true,
                             finished = (SELECT max(finished_at) FROM queue_jobs
                                         WHERE run = $1 AND kind = $2),
                             failed = (SELECT count(*) FROM queue_jobs
                                       WHERE run = $1 AND kind = $2
                                         AND state IN ('failed', 'abandoned'))
                         WHERE kind = $2 AND run = $1
                           AND NOT EXISTS (SELECT 1 FROM queue_jobs WHERE run = $1 AND kind = $2
                                           AND state IN ('queued', 'claimed'))
                         RETURNING finished, failed",
                        &[&run, &kind],
                    )
                    .map_err(|e| db_of(&self.url, e))?;
                tx.commit().map_err(|e| db_of(&self.url, e))?;
                match ended {
                    Some(e) => (e.get(0), u64::try_from(e.get::<_, i64>(1)).unwrap_or(0)),
                    // Opened again since it was counted: listed as running (looked at again
                    // on the next read).
                    None => {
                        let open = self.count_jobs(&run, &kind, OPEN_STATES)?;
                        out.push(RunSummary {
                            kind,
                            run,
                            started: r.get(2),
                            finished: None,
                            open: open.max(1),
                            failed: 0,
                        });
                        continue;
                    }
                }
            };
            out.push(RunSummary {
                kind,
                run,
                started: r.get(2),
                finished,
                open,
                failed,
            });
        }
        Ok(out)
    }

    /// How many of run `run`'s jobs of `kind` are in `states` ([`OPEN_STATES`] or
    /// [`FAILED_STATES`]: each has a partial index by run).
    fn count_jobs(&mut self, run: &str, kind: &str, states: &str) -> Result<u64, QueueError> {
        let row = self
            .client
            .query_one(
                &format!(
                    "SELECT count(*) FROM queue_jobs WHERE run = $1 AND kind = $2 AND state IN {states}"
                ),
                &[&run, &kind],
            )
            .map_err(|e| self.db(e))?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// Whether run `run` has a job of `kind` waiting or claimed (cheap: the open jobs' index;
    /// ask it before [`Queue::run_outcome`], which counts all of the run's jobs).
    pub fn run_open(&mut self, run: &str, kind: &str) -> Result<bool, QueueError> {
        let row = self
            .client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM queue_jobs
                     WHERE kind = $2 AND state IN ('queued', 'claimed') AND run = $1)",
                &[&run, &kind],
            )
            .map_err(|e| self.db(e))?;
        Ok(row.get(0))
    }

    /// What became of run `run`'s jobs of `kind`: how many there are, are open, failed, have
    /// an entry handed on and not yet logged, when the first was enqueued and the last one
    /// finished.
    pub fn run_outcome(&mut self, run: &str, kind: &str) -> Result<RunOutcome, QueueError> {
        let row = self
            .client
            .query_one(
                "SELECT count(*),
                        count(*) FILTER (WHERE state IN ('queued', 'claimed')),
                        count(*) FILTER (WHERE state IN ('failed', 'abandoned')),
                        max(finished_at),
                        (SELECT count(*) FROM queue_handoff h JOIN queue_jobs k ON k.id = h.job
                         WHERE k.run = $1 AND k.kind = $2 AND NOT h.taken),
                        min(enqueued_at)
                 FROM queue_jobs WHERE run = $1 AND kind = $2",
                &[&run, &kind],
            )
            .map_err(|e| self.db(e))?;
        let count = |i: usize| u64::try_from(row.get::<_, i64>(i)).unwrap_or(0);
        Ok(RunOutcome {
            jobs: count(0),
            open: count(1),
            failed: count(2),
            finished: row.get(3),
            unlogged: count(4),
            started: row.get(5),
        })
    }

    /// The results of run `run`'s finished jobs of `kind`, in job order (the workers' report
    /// lines: what the run's report totals).
    pub fn run_results(&mut self, run: &str, kind: &str) -> Result<Vec<String>, QueueError> {
        Ok(self
            .client
            .query(
                "SELECT result FROM queue_jobs
                 WHERE run = $1 AND kind = $2 AND state = 'done' AND result IS NOT NULL
                 ORDER BY id",
                &[&run, &kind],
            )
            .map_err(|e| self.db(e))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// The queue as a whole: jobs by kind and state, lease expiries, hand-offs waiting, host
    /// places held.
    pub fn overview(&mut self) -> Result<Overview, QueueError> {
        let rows = self
            .client
            .query(
                "SELECT kind,
                        CASE WHEN state = 'claimed' AND lease_until < now() THEN 'lapsed'
                             ELSE state END,
                        count(*), sum(lapses + (state = 'abandoned')::int)
                 FROM queue_jobs GROUP BY 1, 2 ORDER BY 1, 2",
                &[],
            )
            .map_err(|e| self.db(e))?;
        let mut o = Overview::default();
        let mut expiries: std::collections::BTreeMap<String, u64> = Default::default();
        for r in rows {
            let kind: String = r.get(0);
            let n = u64::try_from(r.get::<_, i64>(2)).unwrap_or(0);
            let lapses = u64::try_from(r.get::<_, i64>(3)).unwrap_or(0);
            *expiries.entry(kind.clone()).or_default() += lapses;
            o.jobs.push((kind, r.get(1), n));
        }
        o.lease_expiries = expiries.into_iter().collect();
        let row = self
            .client
            .query_one(
                "SELECT (SELECT count(*) FROM queue_handoff WHERE NOT taken),
                        (SELECT count(*) FROM queue_host_slots WHERE until >= now())",
                &[],
            )
            .map_err(|e| self.db(e))?;
        o.handoffs_waiting = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
        o.host_places = u64::try_from(row.get::<_, i64>(1)).unwrap_or(0);
        Ok(o)
    }

    /// The keys of the jobs of `kind` still open (queued or claimed), in any run: a scheduler
    /// enqueues no second job for work still waiting.
    pub fn open_keys(
        &mut self,
        kind: &str,
    ) -> Result<std::collections::BTreeSet<String>, QueueError> {
        let rows = self
            .client
            .query(
                "SELECT DISTINCT key FROM queue_jobs
                 WHERE kind = $1 AND state IN ('queued', 'claimed')",
                &[&kind],
            )
            .map_err(|e| self.db(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// The jobs of `run` by state.
    pub fn counts(&mut self, run: &str) -> Result<Counts, QueueError> {
        let rows = self
            .client
            .query(
                "SELECT CASE WHEN state = 'claimed' AND lease_until < now() THEN 'lapsed'
                             ELSE state END, count(*)
                 FROM queue_jobs WHERE run = $1 GROUP BY 1",
                &[&run],
            )
            .map_err(|e| self.db(e))?;
        let mut c = Counts::default();
        for r in rows {
            let n = u64::try_from(r.get::<_, i64>(1)).unwrap_or(0);
            match r.get::<_, String>(0).as_str() {
                "queued" => c.queued = n,
                "claimed" => c.claimed = n,
                "lapsed" => c.lapsed = n,
                "done" => c.done = n,
                "failed" => c.failed = n,
                _ => c.abandoned = n,
            }
        }
        Ok(c)
    }

    /// Up to `max` hand-offs not yet taken, in the order of their runs and keys (so the order
    /// in which the consumer sees what was waiting does not depend on which worker finished
    /// first). They stay until [`Queue::taken`] marks them.
    pub fn handoffs(&mut self, max: usize) -> Result<Vec<Handoff>, QueueError> {
        let limit = i64::try_from(max.min(MAX_CLAIM)).unwrap_or(0);
        let rows = self
            .client
            .query(
                "SELECT h.seq, j.run, j.key, h.body FROM queue_handoff h
                 JOIN queue_jobs j ON j.id = h.job
                 WHERE NOT h.taken ORDER BY j.run, j.key LIMIT $1",
                &[&limit],
            )
            .map_err(|e| self.db(e))?;
        Ok(rows
            .iter()
            .map(|r| Handoff {
                seq: r.get(0),
                run: r.get(1),
                key: r.get(2),
                body: r.get(3),
            })
            .collect())
    }

    /// Marks hand-offs taken (the consumer committed what they carried).
    pub fn taken(&mut self, seqs: &[i64]) -> Result<(), QueueError> {
        self.client
            .execute(
                "UPDATE queue_handoff SET taken = true WHERE seq = ANY($1)",
                &[&seqs],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// A place under `host`'s `limit` for `lease` (`None` while `limit` places are held; places
    /// whose lease lapsed do not count and are removed). Holders across every connection are
    /// counted under one lock per host.
    pub fn acquire_host(
        &mut self,
        host: &str,
        limit: u32,
        lease: Duration,
    ) -> Result<Option<HostSlot>, QueueError> {
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&host],
        )
        .map_err(|e| db_of(&self.url, e))?;
        tx.execute(
            "DELETE FROM queue_host_slots WHERE host = $1 AND until < now()",
            &[&host],
        )
        .map_err(|e| db_of(&self.url, e))?;
        let held: i64 = tx
            .query_one(
                "SELECT count(*) FROM queue_host_slots WHERE host = $1",
                &[&host],
            )
            .map_err(|e| db_of(&self.url, e))?
            .get(0);
        if held >= i64::from(limit) {
            tx.commit().map_err(|e| db_of(&self.url, e))?;
            return Ok(None);
        }
        let id: i64 = tx
            .query_one(
                "INSERT INTO queue_host_slots (host, holder, until)
                 VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING id",
                &[&host, &self.holder, &seconds(lease)],
            )
            .map_err(|e| db_of(&self.url, e))?
            .get(0);
        tx.commit().map_err(|e| db_of(&self.url, e))?;
        Ok(Some(HostSlot {
            host: host.to_owned(),
            id,
        }))
    }

    /// Extends a host place's lease to `lease` from now; `false` when it had lapsed and was
    /// removed (the place is gone: take another before dialling again).
    pub fn renew_host(&mut self, slot: &HostSlot, lease: Duration) -> Result<bool, QueueError> {
        let n = self
            .client
            .execute(
                "UPDATE queue_host_slots SET until = now() + make_interval(secs => $1)
                 WHERE id = $2 AND holder = $3",
                &[&seconds(lease), &slot.id, &self.holder],
            )
            .map_err(|e| self.db(e))?;
        Ok(n == 1)
    }

    /// Gives a host place back.
    pub fn release_host(&mut self, slot: HostSlot) -> Result<(), QueueError> {
        self.client
            .execute("DELETE FROM queue_host_slots WHERE id = $1", &[&slot.id])
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// One request under the rate `name` (`per_second`, bursts of `burst`), shared by every
    /// connection: `None` when it may go now (a token was taken), else how long until one is
    /// there (nothing taken: ask again then).
    pub fn take_token(
        &mut self,
        name: &str,
        per_second: f64,
        burst: f64,
    ) -> Result<Option<Duration>, QueueError> {
        if !(per_second > 0.0 && burst >= 1.0 && per_second.is_finite() && burst.is_finite()) {
            return Err(QueueError::Refused(format!(
                "rate {name}: {per_second}/s with bursts of {burst} is not a rate"
            )));
        }
        let mut tx = self.client.transaction().map_err(|e| db_of(&self.url, e))?;
        tx.execute(
            "INSERT INTO queue_rates (name, tokens, at) VALUES ($1, $2, now())
             ON CONFLICT (name) DO NOTHING",
            &[&name, &burst],
        )
        .map_err(|e| db_of(&self.url, e))?;
        // The bucket refilled for the time since it was last touched, at most `burst`.
        let tokens: f64 = tx
            .query_one(
                "SELECT least($2, tokens
                     + greatest(0, extract(epoch FROM clock_timestamp() - at)::float8) * $3)
                 FROM queue_rates WHERE name = $1 FOR UPDATE",
                &[&name, &burst, &per_second],
            )
            .map_err(|e| db_of(&self.url, e))?
            .get(0);
        let (left, wait) = if tokens >= 1.0 {
            (tokens - 1.0, None)
        } else {
            // At most a day: a rate so slow its wait overflows is asked again then.
            let day = Duration::from_secs(86_400);
            let wait = Duration::try_from_secs_f64((1.0 - tokens) / per_second)
                .map_or(day, |w| w.min(day));
            (tokens, Some(wait))
        };
        tx.execute(
            // The clock after the row's lock was had: a caller that waited for it does not move
            // the bucket's time backwards.
            "UPDATE queue_rates SET tokens = $2, at = clock_timestamp() WHERE name = $1",
            &[&name, &left],
        )
        .map_err(|e| db_of(&self.url, e))?;
        tx.commit().map_err(|e| db_of(&self.url, e))?;
        Ok(wait)
    }
}

/// [`Queue::db`] for when `self` is borrowed by a transaction.
pub(crate) fn db_of(url: &str, e: postgres::Error) -> QueueError {
    use std::error::Error;
    QueueError::Postgres {
        url: url.to_owned(),
        reason: match e.source() {
            Some(s) => format!("{e}: {s}"),
            None => e.to_string(),
        },
    }
}
