//! Witnessed checkpoints: gets the log's newest checkpoint cosigned by the configured witnesses
//! (C2SP `tlog-witness`, push model as in Tessera) and publishes it, with the cosignatures, only
//! when the witness policy is met.
//!
//! One [`Cosigner::round`]:
//!
//! 1. reads the newest checkpoint the log signed (`DIR/private/checkpoint`, written by the log
//!    whether or not it is published) and verifies it with the log's key;
//! 2. submits it to every witness at once (`old <size>` + the consistency proof from the size
//!    that witness last cosigned, computed from the log's own public tiles); a 409 teaches the
//!    witness's size and the submission is retried once; 400/403/404/422, other statuses,
//!    timeouts and refusals by the SSRF guard are named errors for that witness;
//! 3. verifies every returned line as a `cosignature/v1` by that witness's key over the
//!    checkpoint (a line that does not verify fails the witness);
//! 4. evaluates the policy on the fresh cosignatures; if it is met, publishes the note with the
//!    cosignatures as `public/checkpoint` ([`toolmark_log::store::publish_witnessed`]); if not,
//!    the previous checkpoint stays published;
//! 5. writes the status file (`toolmark-witnessing/1`), which the API reads for `/health` and
//!    `/metrics`, and which remembers each witness's size for the next round.
//!
//! The heartbeat calls a round on an unchanged tree: the witnesses cosign the same checkpoint
//! with a newer time, so the published cosignatures show the log is fresh ([`Cosigner::round`]
//! never skips a round because the size did not change).
//!
//! It never signs as the log, never writes entries, and never holds the log's writer lock: a
//! slow or dead witness delays publication, never a crawl's commit. Every witness is dialled
//! through `toolmark-outbound` (the SSRF guard, the timeout, the response cap).

#![deny(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolmark_log::cosignature::{Cosignature, add_signature_lines};
use toolmark_log::head::HeadStore;
use toolmark_log::note::open_checkpoint;
use toolmark_log::objects::Objects;
use toolmark_log::policy::{MAX_FUTURE_SECONDS, WitnessPolicy};
use toolmark_log::reader::{Reader, Signed};
use toolmark_log::store::{StorageSpec, StoreError};
use toolmark_log::witness::AddCheckpoint;
use toolmark_outbound::Outbound;
use toolmark_outbound::witness::{Submission, add_checkpoint};

mod options;
pub use options::{WitnessOptions, parse_witness_arg};

// The status file's one type, shared with the API that reads it.
pub use toolmark_log::witnessing::{
    MAX_STATUS_BYTES, STATUS_FILE, STATUS_VERSION, Status, WitnessStatus,
};

/// Most cosignature lines kept from one witness's answer (a witness may sign with several
/// keys; only lines by the configured key are kept).
pub const MAX_LINES_PER_ANSWER: usize = 16;

/// Most characters of one witness error kept in the status file.
pub const MAX_ERROR_CHARS: usize = 300;

/// What went wrong with one witness in a round.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WitnessError {
    /// The witness has no submission URL configured.
    #[error("no submission URL configured")]
    NoUrl,
    /// The witness says it cosigned a larger tree than ours: a fork, or our log rolled back.
    #[error(
        "the witness has cosigned size {theirs}, larger than our {ours}: split view or rollback"
    )]
    Ahead {
        /// The witness's size.
        theirs: u64,
        /// Ours.
        ours: u64,
    },
    /// 409 twice in a row.
    #[error("409 again after retrying from size {0}")]
    ConflictAgain(u64),
    /// 403: the witness does not accept our log's signature (unknown key).
    #[error("403 forbidden: the witness does not trust this log's key ({0})")]
    Forbidden(String),
    /// 404: the witness does not know our origin.
    #[error("404: the witness does not know this log's origin ({0})")]
    UnknownOrigin(String),
    /// 422: the witness found the checkpoint inconsistent with what it cosigned.
    #[error("422: the witness refused the checkpoint as inconsistent ({0})")]
    Inconsistent(String),
    /// 400: the witness could not read the request.
    #[error("400: the witness could not read the request ({0})")]
    BadRequest(String),
    /// Any other status.
    #[error("HTTP {status}: {detail}")]
    Status {
        /// The status.
        status: u16,
        /// The start of the body.
        detail: String,
    },
    /// The SSRF guard refused the URL.
    #[error("blocked: {0}")]
    Blocked(String),
    /// No usable answer.
    #[error("failed: {0}")]
    Failed(String),
    /// No answer within the timeout.
    #[error("timed out after {0} s")]
    TimedOut(u64),
    /// The answer had no valid cosignature by the witness's key, or one that does not verify.
    #[error("bad cosignature: {0}")]
    BadCosignature(String),
    /// A consistency proof for the witness could not be computed from our tiles.
    #[error("consistency proof from {old} to {new}: {reason}")]
    Proof {
        /// The witness's size.
        old: u64,
        /// Ours.
        new: u64,
        /// Why.
        reason: String,
    },
}

/// Why a round could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum CosignError {
    /// The log's files could not be read or do not verify.
    #[error("log: {0}")]
    Log(String),
    /// The status file could not be written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// What one round did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The size submitted.
    pub size: u64,
    /// Whether the policy was met (and the checkpoint published).
    pub published: bool,
    /// Per witness: its name and either the timestamp it cosigned at or its error.
    pub witnesses: Vec<(String, Result<u64, WitnessError>)>,
    /// The status written.
    pub status: Status,
}

/// The clock rounds are dated by (Unix seconds).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    })
}

/// Submits the log's checkpoints to its witnesses (see the crate documentation).
pub struct Cosigner {
    /// Where the log's SQLite head store lives (the default stores).
    log_dir: PathBuf,
    /// Which stores hold the log.
    storage: StorageSpec,
    /// The log's public files.
    public: Objects,
    /// A read-only head store, opened on first use and again after an error (used on blocking
    /// threads only: PostgreSQL's client blocks).
    head: Arc<std::sync::Mutex<Option<Box<dyn HeadStore>>>>,
    status_path: PathBuf,
    policy: WitnessPolicy,
    client: Outbound,
    timeout: Duration,
    clock: Clock,
    /// One round at a time (the heartbeat and the batch watcher may both ask).
    running: tokio::sync::Mutex<()>,
}

fn rfc3339(secs: u64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp(secs as i64, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn cap(s: &str) -> String {
    s.chars().take(MAX_ERROR_CHARS).collect()
}

impl Cosigner {
    /// A cosigner for the single-box log in `log_dir`, writing its status to `status_path`,
    /// submitting with `client`: [`Outbound`] or anything that converts into it (the
    /// crawler's `ClientConfig`).
    ///
    /// # Errors
    ///
    /// [`CosignError::Log`] when the log's public directory cannot be opened.
    pub fn new(
        log_dir: &Path,
        status_path: &Path,
        policy: WitnessPolicy,
        client: impl Into<Outbound>,
        timeout: Duration,
        clock: Clock,
    ) -> Result<Cosigner, CosignError> {
        let public =
            Objects::dir(&log_dir.join("public")).map_err(|e| CosignError::Log(e.to_string()))?;
        Ok(Cosigner {
            log_dir: log_dir.to_owned(),
            storage: StorageSpec::default(),
            public,
            head: Arc::new(std::sync::Mutex::new(None)),
            status_path: status_path.to_owned(),
            policy,
            client: client.into(),
            timeout,
            clock,
            running: tokio::sync::Mutex::new(()),
        })
    }

    /// The same cosigner for a log kept in the stores `storage` names, whose public files are
    /// `public` (SQLite, if it is the head store, still lives in `log_dir`).
    pub fn with_storage(mut self, storage: StorageSpec, public: Objects) -> Cosigner {
        self.storage = storage;
        self.public = public;
        self
    }

    /// Runs `f` on a blocking thread with the read-only head store (opened on first use, and
    /// again after any error).
    async fn head_op<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn HeadStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, CosignError> {
        let slot = self.head.clone();
        let storage = self.storage.clone();
        let dir = self.log_dir.clone();
        tokio::task::spawn_blocking(move || {
            let mut held = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let head = match held.as_mut() {
                Some(h) => h,
                None => held.insert(storage.head_reader(&dir)?),
            };
            let r = f(head.as_mut());
            if r.is_err() {
                *held = None;
            }
            r
        })
        .await
        .map_err(|e| CosignError::Log(e.to_string()))?
        .map_err(|e| CosignError::Log(e.to_string()))
    }

    /// The newest checkpoint the log signed whose files are published (what a round submits).
    pub async fn signed(&self) -> Result<Option<Vec<u8>>, CosignError> {
        self.head_op(toolmark_log::store::signed_checkpoint).await
    }

    /// The policy.
    pub fn policy(&self) -> &WitnessPolicy {
        &self.policy
    }

    /// The status file as last written (`None` if absent or unreadable).
    pub fn status(&self) -> Option<Status> {
        read_status(&self.status_path)
    }

    /// One round (see the crate documentation). Rounds never overlap.
    ///
    /// # Errors
    ///
    /// [`CosignError`] when the log cannot be read or the status cannot be written; a witness
    /// that fails, or a policy that is not met, is reported in the [`Round`], not as an error.
    pub async fn round(&self) -> Result<Round, CosignError> {
        let _one = self.running.lock().await;
        let log_err = |e: &dyn std::fmt::Display| CosignError::Log(e.to_string());
        let vkey = self
            .head_op(|h| h.meta("vkey"))
            .await?
            .ok_or_else(|| log_err(&"the head store records no log key"))?;
        let reader = Reader::new(self.public.clone(), vkey.trim());
        let note = match self.signed().await? {
            Some(n) => n,
            None => reader.checkpoint().map_err(|e| log_err(&e))?.note,
        };
        let checkpoint = open_checkpoint(&note, vkey.trim()).map_err(|e| log_err(&e))?;
        let signed = Signed {
            note: note.clone(),
            checkpoint: checkpoint.clone(),
        };
        let text = checkpoint.to_text();
        let previous = self.status().unwrap_or_default();
        let submissions = self.policy.witnesses().iter().map(|w| {
            let known = previous
                .witnesses
                .iter()
                .find(|s| s.vkey == w.key.vkey())
                .and_then(|s| s.size);
            self.submit(w, known, &signed, &reader, &text)
        });
        let results = futures_util::future::join_all(submissions).await;
        let now = (self.clock)();
        let mut signed_by = vec![false; results.len()];
        let mut lines = Vec::new();
        let mut statuses = Vec::new();
        let mut report = Vec::new();
        for (i, (w, (size, result))) in self.policy.witnesses().iter().zip(results).enumerate() {
            let old = previous.witnesses.iter().find(|s| s.vkey == w.key.vkey());
            let mut st = WitnessStatus {
                name: w.name.clone(),
                vkey: w.key.vkey(),
                url: w.url.clone(),
                size,
                cosigned_at: old.and_then(|o| o.cosigned_at.clone()),
                error: None,
                error_at: None,
            };
            match &result {
                Ok(cosigs) => {
                    let newest = cosigs.iter().map(|c| c.timestamp).max().unwrap_or(0);
                    // A cosignature dated too far ahead does not count (as for any verifier).
                    if newest <= now.saturating_add(MAX_FUTURE_SECONDS) {
                        signed_by[i] = true;
                        lines.extend(cosigs.iter().map(Cosignature::to_line));
                    }
                    st.cosigned_at = Some(rfc3339(newest));
                    report.push((w.name.clone(), Ok(newest)));
                }
                Err(e) => {
                    tracing::warn!(witness = %w.name, error = %e, "witness did not cosign");
                    st.error = Some(cap(&e.to_string()));
                    st.error_at = Some(rfc3339(now));
                    report.push((w.name.clone(), Err(e.clone())));
                }
            }
            statuses.push(st);
        }
        let met = self.policy.satisfied_by(&signed_by);
        let mut error = None;
        let mut published = false;
        if met {
            let cosigned = add_signature_lines(&note, &lines);
            let public = self.public.clone();
            match self
                .head_op(move |h| toolmark_log::store::publish_witnessed(h, &public, &cosigned))
                .await
            {
                Ok(_) => published = true,
                Err(CosignError::Log(e)) => error = Some(cap(&e)),
                Err(e) => error = Some(cap(&e.to_string())),
            }
        } else {
            let failing: Vec<String> = report
                .iter()
                .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
                .collect();
            error = Some(cap(&format!(
                "quorum not met ({}); the previous checkpoint stays published; {}",
                self.policy.describe(),
                failing.join("; ")
            )));
        }
        let published_size = reader.checkpoint().ok().map(|c| c.checkpoint.size);
        let status = Status {
            v: STATUS_VERSION.into(),
            policy: self.policy.describe(),
            quorum_met: met,
            signed_size: checkpoint.size,
            published_size,
            round_at: rfc3339(now),
            error,
            witnesses: statuses,
        };
        write_status(&self.status_path, &status)?;
        Ok(Round {
            size: checkpoint.size,
            published,
            witnesses: report,
            status,
        })
    }

    /// One witness: submit, learn its size on a 409 and retry once, verify the answer. Returns
    /// the size the witness is known to have afterwards, and its verified cosignatures.
    async fn submit(
        &self,
        w: &toolmark_log::policy::Witness,
        known: Option<u64>,
        signed: &Signed,
        reader: &Reader,
        text: &str,
    ) -> (Option<u64>, Result<Vec<Cosignature>, WitnessError>) {
        let Some(url) = w.url.as_deref() else {
            return (known, Err(WitnessError::NoUrl));
        };
        let size = signed.checkpoint.size;
        let mut old = known.unwrap_or(0);
        for attempt in 0..2 {
            if old > size {
                return (
                    Some(old),
                    Err(WitnessError::Ahead {
                        theirs: old,
                        ours: size,
                    }),
                );
            }
            let proof = if old == 0 || old == size {
                Vec::new()
            } else {
                match reader.consistency_proof(old, size, signed) {
                    Ok(p) => p,
                    Err(e) => {
                        return (
                            Some(old),
                            Err(WitnessError::Proof {
                                old,
                                new: size,
                                reason: e.to_string(),
                            }),
                        );
                    }
                }
            };
            let body = AddCheckpoint {
                old,
                proof,
                note: signed.note.clone(),
            }
            .encode();
            let answer = add_checkpoint(&self.client, url, body, self.timeout).await;
            let detail = |d: &str| d.trim().to_owned();
            return match answer {
                Submission::Conflict(theirs) if attempt == 0 => {
                    old = theirs;
                    continue;
                }
                Submission::Conflict(theirs) => {
                    (Some(theirs), Err(WitnessError::ConflictAgain(theirs)))
                }
                Submission::Cosigned(bytes) => match verify_answer(w, &bytes, text) {
                    Ok(c) => (Some(size), Ok(c)),
                    Err(e) => (Some(old), Err(e)),
                },
                Submission::Refused { status, detail: d } => (
                    Some(old),
                    Err(match status {
                        400 => WitnessError::BadRequest(detail(&d)),
                        403 => WitnessError::Forbidden(detail(&d)),
                        404 => WitnessError::UnknownOrigin(detail(&d)),
                        422 => WitnessError::Inconsistent(detail(&d)),
                        _ => WitnessError::Status {
                            status,
                            detail: detail(&d),
                        },
                    }),
                ),
                Submission::Blocked(e) => (known, Err(WitnessError::Blocked(e))),
                Submission::Failed(e) => (known, Err(WitnessError::Failed(e))),
                Submission::TimedOut => {
                    (known, Err(WitnessError::TimedOut(self.timeout.as_secs())))
                }
            };
        }
        unreachable!("the loop returns on its second attempt")
    }
}

/// The cosignatures in a witness's 200 answer that are by its configured key, each verified
/// over `text`. Lines by other keys are ignored (a witness may also sign with a newer key); a
/// line by the configured key that does not verify, or an answer without one, fails.
fn verify_answer(
    w: &toolmark_log::policy::Witness,
    body: &[u8],
    text: &str,
) -> Result<Vec<Cosignature>, WitnessError> {
    let bad = |why: String| WitnessError::BadCosignature(why);
    let s = std::str::from_utf8(body).map_err(|_| bad("the answer is not UTF-8".into()))?;
    let mut out = Vec::new();
    for line in s
        .lines()
        .filter(|l| !l.is_empty())
        .take(MAX_LINES_PER_ANSWER)
    {
        let Some(rest) = line.strip_prefix("\u{2014} ") else {
            return Err(bad("a line of the answer is not a signature line".into()));
        };
        if rest.split(' ').next() != Some(w.key.name()) {
            continue;
        }
        let Ok(c) = Cosignature::parse_line(line) else {
            continue;
        };
        if c.id != w.key.id() {
            continue;
        }
        w.key.verify(&c, text).map_err(|e| bad(e.to_string()))?;
        out.push(c);
    }
    if out.is_empty() {
        return Err(bad(format!(
            "no cosignature by {} in the answer",
            w.key.vkey()
        )));
    }
    Ok(out)
}

/// Reads a status file (`None` if absent, too large or not a status:
/// [`toolmark_log::witnessing::read`]).
pub fn read_status(path: &Path) -> Option<Status> {
    toolmark_log::witnessing::read(path).ok().flatten()
}

fn write_status(path: &Path, status: &Status) -> Result<(), CosignError> {
    let bytes = serde_json::to_vec_pretty(status).expect("a status serialises");
    toolmark_log::store::write_atomic(path, &bytes, true).map_err(|e| CosignError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// How often [`watch`] looks for a newly signed checkpoint (one read of the head store).
pub const WATCH_POLL: Duration = Duration::from_secs(2);

/// Runs rounds until `stop`: one whenever the log signs a new checkpoint (the newest signed
/// checkpoint file changes; checked every `poll`), at most one per `min_interval`. The
/// heartbeat calls [`Cosigner::round`] itself.
pub async fn watch(
    cosigner: Arc<Cosigner>,
    poll: Duration,
    min_interval: Duration,
    stop: tokio_util::sync::CancellationToken,
) {
    let mut seen: Option<Vec<u8>> = None;
    loop {
        let current = cosigner.signed().await.ok().flatten();
        if current.is_some() && current != seen {
            match cosigner.round().await {
                Ok(r) => tracing::info!(size = r.size, published = r.published, "witness round"),
                Err(e) => tracing::warn!(error = %e, "witness round failed"),
            }
            seen = current;
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(min_interval) => {}
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(poll) => {}
        }
    }
}
