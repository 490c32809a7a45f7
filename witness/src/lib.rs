//! toolmark's own C2SP `tlog-witness` (v1.0.0, with `main`'s 422 for a same-size fork): it
//! cosigns the checkpoints of the logs it is told to trust, for any C2SP log, not only
//! toolmark's.
//!
//! * `POST <prefix>/add-checkpoint` ([`Witness::add_checkpoint`]): parses the body
//!   ([`toolmark_log::witness::AddCheckpoint`]), verifies the checkpoint with the trusted log
//!   keys of its origin ([`toolmark_log::note::verify_note`]), checks the consistency proof
//!   from the size it last cosigned ([`toolmark_log::merkle::verify_consistency`]) and answers
//!   with one `cosignature/v1` line ([`toolmark_log::cosignature::CosignerKey::cosign`]). The
//!   statuses are exactly the spec's table (see [`Witness::add_checkpoint`]).
//! * `GET <prefix>/<lowercase hex SHA-256(origin)>/checkpoint`: the latest cosigned checkpoint,
//!   with the log's signatures and the witness's cosignature, or 404.
//!
//! State is one SQLite file, `DIR/witness.sqlite` (WAL): the latest cosigned checkpoint per
//! origin, and the evidence (log-signed checkpoints forking one it cosigned). Reading the latest
//! size and storing the new checkpoint happen in one `BEGIN IMMEDIATE` transaction, so two
//! concurrent requests (or two processes on one directory) never both cosign conflicting trees.
//! The key is `DIR/witness.key` (mode 0600), created on first start.
//!
//! What it never does: sign as a log, fetch anything (it is push-only: no feeder, no tiles),
//! cosign a checkpoint of an origin it was not told to trust, cosign a tree that is not a
//! proven extension of the last one it cosigned for that origin, or forget an origin (its
//! state is never deleted: re-adding a log would let it sign a split view). The connection
//! layer (caps, timeouts, body budget, shutdown) is `toolmark-server`'s, not this crate's.

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use toolmark_log::cosignature::{CosignerKey, split_note};
use toolmark_log::merkle::{EMPTY_ROOT, verify_consistency};
use toolmark_log::note::{Checkpoint, ED25519_TYPE, VerifierKey, is_valid_name, verify_note};
use toolmark_log::policy::MAX_FUTURE_SECONDS;
use toolmark_log::witness::{AddCheckpoint, MAX_REQUEST_BYTES, SIZE_CONTENT_TYPE};
use toolmark_log::{FormatError, Hash};

/// The key file under the data directory.
pub const KEY_FILE: &str = "witness.key";

/// The state file under the data directory.
pub const DB_FILE: &str = "witness.sqlite";

/// The cosigner name used when none is given.
pub const DEFAULT_NAME: &str = "toolmark-witness";

/// The content type of every answer but a 409's.
pub const TEXT: &str = "text/plain; charset=utf-8";

/// Why the witness could not be opened or its state read.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    /// A file of the data directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The SQLite state.
    #[error("witness state: {0}")]
    Db(#[from] rusqlite::Error),
    /// The key file does not hold a cosigner key, or the name is not a key name.
    #[error("witness key: {0}")]
    Key(FormatError),
    /// The existing key was made for another name.
    #[error(
        "{path} holds the key of {found:?}, not {wanted:?} (keep the name, or move the key away)"
    )]
    KeyName {
        /// The key file.
        path: PathBuf,
        /// Its name.
        found: String,
        /// The name asked for.
        wanted: String,
    },
    /// A `--trust ORIGIN=VKEY` that cannot be used.
    #[error("trusted log {0}")]
    Trust(String),
    /// The file of trusted logs could not be read.
    #[error("reading {}", .path.display())]
    TrustFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of the file of trusted logs cannot be used.
    #[error("{}:{line}", .path.display())]
    TrustLine {
        /// The file.
        path: PathBuf,
        /// The line's number (from 1).
        line: usize,
        /// Why.
        source: Box<WitnessError>,
    },
}

/// One trusted log key: checkpoints with this origin line are cosigned when this Ed25519 (type
/// 0x01) key signed them. The key name need not be the origin (signed-note only recommends it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// The checkpoint origin line.
    pub origin: String,
    /// The log's verifier key.
    pub vkey: String,
}

impl Trust {
    /// Parses `ORIGIN=VKEY` (split at the first `=`, so an origin here cannot contain one), checking
    /// the origin is a key name and the vkey an Ed25519 verifier key.
    ///
    /// # Errors
    ///
    /// [`WitnessError::Trust`] naming what is wrong.
    pub fn parse(arg: &str) -> Result<Trust, WitnessError> {
        let (origin, vkey) = arg
            .split_once('=')
            .ok_or_else(|| WitnessError::Trust(format!("{arg:?}: expected ORIGIN=VKEY")))?;
        Trust::new(origin.trim(), vkey.trim())
    }

    /// A checked trusted key.
    ///
    /// # Errors
    ///
    /// [`WitnessError::Trust`].
    pub fn new(origin: &str, vkey: &str) -> Result<Trust, WitnessError> {
        if !is_valid_name(origin) {
            return Err(WitnessError::Trust(format!(
                "origin {origin:?}: must be non-empty, without whitespace or '+'"
            )));
        }
        let key =
            VerifierKey::parse(vkey).map_err(|e| WitnessError::Trust(format!("{origin}: {e}")))?;
        if key.key_type != ED25519_TYPE {
            return Err(WitnessError::Trust(format!(
                "{origin}: key type {:#04x} is not Ed25519 (0x01)",
                key.key_type
            )));
        }
        Ok(Trust {
            origin: origin.to_owned(),
            vkey: vkey.to_owned(),
        })
    }
}

/// The trusted logs: each of `args` (`ORIGIN=VKEY`), then each line of `file` (one
/// `ORIGIN=VKEY` per line; blank lines and `#` comments skipped).
///
/// # Errors
///
/// [`WitnessError::Trust`] for an argument, [`WitnessError::TrustLine`] naming the file's line,
/// [`WitnessError::TrustFile`] when the file cannot be read.
pub fn trusted(args: &[String], file: Option<&Path>) -> Result<Vec<Trust>, WitnessError> {
    let mut out = args
        .iter()
        .map(|t| Trust::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|source| WitnessError::TrustFile {
            path: path.to_owned(),
            source,
        })?;
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            out.push(Trust::parse(line).map_err(|e| WitnessError::TrustLine {
                path: path.to_owned(),
                line: n + 1,
                source: Box::new(e),
            })?);
        }
    }
    Ok(out)
}

/// An answer of the witness: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The content type: [`TEXT`], or [`SIZE_CONTENT_TYPE`] for a 409.
    pub content_type: &'static str,
    /// The body: cosignature lines, the size line, or a one-line reason.
    pub body: Vec<u8>,
}

impl Reply {
    fn text(status: StatusCode, why: impl Into<String>) -> Reply {
        let mut body = why.into().into_bytes();
        body.push(b'\n');
        Reply {
            status,
            content_type: TEXT,
            body,
        }
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let mut r = (self.status, self.body).into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(self.content_type),
        );
        r
    }
}

/// A log-signed checkpoint of a size the witness had cosigned with another root: the log
/// signed two trees of one size, a split view. Kept once per (origin, size, root).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// When it was received (POSIX seconds).
    pub time: u64,
    /// The checkpoint's origin.
    pub origin: String,
    /// The `old` of the request.
    pub old: u64,
    /// The size the witness had cosigned (equal to `old`: otherwise the answer was a 409).
    pub latest_size: u64,
    /// The checkpoint's size.
    pub size: u64,
    /// Why it failed.
    pub reason: String,
    /// The forked checkpoint: its text and the trusted log's signature lines, verified.
    pub body: String,
}

/// The witness: its key, the trusted logs, and its state.
pub struct Witness {
    key: CosignerKey,
    trusted: BTreeMap<String, Vec<String>>,
    db: Mutex<Connection>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("key", &self.key)
            .field("trusted", &self.trusted)
            .finish_non_exhaustive()
    }
}

/// The witness's key in `dir` (`witness.key`), created (mode 0600) if there is none.
///
/// # Errors
///
/// [`WitnessError::KeyName`] if the existing key has another name; [`WitnessError::Key`] for a
/// file that holds no cosigner key or an invalid name; [`WitnessError::Io`].
pub fn load_or_create_key(dir: &Path, name: &str) -> Result<CosignerKey, WitnessError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| WitnessError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = dir.join(KEY_FILE);
    let read = |text: &str| -> Result<CosignerKey, WitnessError> {
        let key = CosignerKey::from_skey(text).map_err(WitnessError::Key)?;
        if key.name() != name {
            return Err(WitnessError::KeyName {
                path: path.clone(),
                found: key.name().to_owned(),
                wanted: name.to_owned(),
            });
        }
        Ok(key)
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => return read(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&path)(e)),
    }
    // Written whole to a private temporary file, then linked into place: a crash never leaves
    // a half-written key, and of two processes starting at once the second reads the first's.
    let key = CosignerKey::generate(name).map_err(WitnessError::Key)?;
    let tmp = dir.join(format!("{KEY_FILE}.{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io(&tmp))?;
    f.write_all(format!("{}\n", key.to_skey()).as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(io(&tmp))?;
    drop(f);
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read(&std::fs::read_to_string(&path).map_err(io(&path))?)
        }
        Err(e) => Err(io(&path)(e)),
    }
}

/// Lowercase hex SHA-256 of an origin: its directory in the monitoring URL.
pub fn origin_hash(origin: &str) -> String {
    Sha256::digest(origin.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    origin TEXT PRIMARY KEY,
    origin_sha256 TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    root BLOB NOT NULL,
    note BLOB NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
    id INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    origin TEXT NOT NULL,
    old INTEGER NOT NULL,
    latest_size INTEGER NOT NULL,
    size INTEGER NOT NULL,
    root BLOB NOT NULL,
    reason TEXT NOT NULL,
    body BLOB NOT NULL,
    UNIQUE (origin, size, root)
);
";

/// A refusal on the way to a cosignature: the reply, and whether to keep the request as
/// evidence.
struct Refused(Reply, Option<String>);

fn refuse(status: StatusCode, why: impl Into<String>) -> Refused {
    Refused(Reply::text(status, why), None)
}

impl Witness {
    /// Opens (creating if need be) the witness in `dir`: its key (named `name`) and its state.
    ///
    /// # Errors
    ///
    /// Those of [`load_or_create_key`]; [`WitnessError::Db`] if the state cannot be opened.
    pub fn open(dir: &Path, name: &str, trusted: &[Trust]) -> Result<Witness, WitnessError> {
        let key = load_or_create_key(dir, name)?;
        let conn = Connection::open(dir.join(DB_FILE))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in trusted {
            let keys = map.entry(t.origin.clone()).or_default();
            if !keys.contains(&t.vkey) {
                keys.push(t.vkey.clone());
            }
        }
        Ok(Witness {
            key,
            trusted: map,
            db: Mutex::new(conn),
        })
    }

    /// The witness's verifier key (`<name>+<id>+<base64(0x04 ‖ key)>`), to give to logs and
    /// verifiers.
    pub fn vkey(&self) -> String {
        self.key.witness_key().vkey()
    }

    /// The trusted origins and their keys.
    pub fn trusted(&self) -> &BTreeMap<String, Vec<String>> {
        &self.trusted
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves no half transaction behind (rusqlite rolls back
        // a dropped transaction), so the connection is still usable.
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Handles one `add-checkpoint` body received at `now` (POSIX seconds), as the spec's table
    /// says:
    ///
    /// | condition | status |
    /// |---|---|
    /// | body over [`MAX_REQUEST_BYTES`] | 413 |
    /// | malformed body, note or checkpoint | 400 |
    /// | origin not trusted | 404 |
    /// | no signature by a trusted key of the origin, or one that fails | 403 |
    /// | `old` > checkpoint size | 400 |
    /// | `old` ≠ the size last cosigned | 409, `text/x.tlog.size`, `<size>\n` |
    /// | size 0 with a root other than the empty tree's | 422 |
    /// | a proof with `old` 0, a proof that fails | 422 |
    /// | `old` = size with another root (a fork: kept as evidence) | 422 |
    /// | otherwise | 200, one `cosignature/v1` line, state updated |
    ///
    /// The cosignature's timestamp is `now`, or the origin's previous one if that is later.
    ///
    /// A same-size fork (`old` = size with another root) is 422 as on the spec's `main` and in
    /// aics-witness (v1.0.0 said 409); a state error is 500.
    pub fn add_checkpoint(&self, body: &[u8], now: u64) -> Reply {
        match self.try_add(body, now) {
            Ok(reply) => reply,
            Err(Refused(reply, _)) => reply,
        }
    }

    fn try_add(&self, body: &[u8], now: u64) -> Result<Reply, Refused> {
        if body.len() > MAX_REQUEST_BYTES {
            return Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body over {MAX_REQUEST_BYTES} bytes"),
            ));
        }
        let req = AddCheckpoint::parse(body)
            .map_err(|e| refuse(StatusCode::BAD_REQUEST, e.to_string()))?;
        let (text, lines) =
            split_note(&req.note).map_err(|e| refuse(StatusCode::BAD_REQUEST, e.to_string()))?;
        let cp = Checkpoint::parse_text(text)
            .map_err(|e| refuse(StatusCode::BAD_REQUEST, e.to_string()))?;
        let Some(keys) = self.trusted.get(&cp.origin) else {
            return Err(refuse(
                StatusCode::NOT_FOUND,
                format!("unknown origin {:?}", cp.origin),
            ));
        };
        let log_lines = log_signatures(text, &lines, keys)?;
        if req.old > cp.size {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                format!(
                    "old {} is larger than the checkpoint's size {}",
                    req.old, cp.size
                ),
            ));
        }
        let size = i64::try_from(cp.size)
            .map_err(|_| refuse(StatusCode::BAD_REQUEST, "tree size above 2^63-1"))?;
        let internal = |e: rusqlite::Error| {
            tracing::error!("witness state: {e}");
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "witness state unavailable",
            )
        };
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(internal)?;
        let latest: Option<(i64, Vec<u8>, i64)> = tx
            .query_row(
                "SELECT size, root, updated FROM checkpoints WHERE origin = ?1",
                [&cp.origin],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(internal)?;
        let (latest_size, latest_root, last_time) = match latest {
            Some((s, root, t)) => (
                u64::try_from(s).unwrap_or(0),
                <[u8; 32]>::try_from(root.as_slice())
                    .map(Hash)
                    .unwrap_or(EMPTY_ROOT),
                u64::try_from(t).unwrap_or(0),
            ),
            None => (0, EMPTY_ROOT, 0),
        };
        if req.old != latest_size {
            return Err(Refused(
                Reply {
                    status: StatusCode::CONFLICT,
                    content_type: SIZE_CONTENT_TYPE,
                    body: format!("{latest_size}\n").into_bytes(),
                },
                None,
            ));
        }
        if cp.size == 0 && cp.root != EMPTY_ROOT {
            return Err(refuse(
                StatusCode::UNPROCESSABLE_ENTITY,
                "a checkpoint of size 0 must have the empty tree's root",
            ));
        }
        let inconsistent = if req.old == 0 {
            (!req.proof.is_empty()).then(|| {
                refuse(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "old is 0: the consistency proof must be empty",
                )
            })
        } else if req.old == cp.size && cp.root != latest_root {
            Some(Refused(
                Reply::text(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!("size {} was cosigned with another root: a fork", cp.size),
                ),
                Some("same size, different root".to_owned()),
            ))
        } else if verify_consistency(&req.proof, cp.size, &cp.root, req.old, &latest_root).is_err()
        {
            // Not evidence: the proof is not signed, so anyone can pair a log's real
            // checkpoint with a bad proof. Only two log-signed roots of one size prove a fork.
            Some(refuse(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the consistency proof from {} to {} does not verify",
                    req.old, cp.size
                ),
            ))
        } else {
            None
        };
        if let Some(refused) = inconsistent {
            if let Some(reason) = &refused.1 {
                tracing::warn!(
                    "{}: inconsistent checkpoint of size {} after {latest_size} ({reason}); kept as evidence",
                    cp.origin,
                    cp.size
                );
                // Once per (origin, size, root): a fork is kept once however often it is sent.
                tx.execute(
                    "INSERT OR IGNORE INTO evidence
                         (time, origin, old, latest_size, size, root, reason, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        i64::try_from(now).unwrap_or(i64::MAX),
                        cp.origin,
                        i64::try_from(req.old).unwrap_or(i64::MAX),
                        i64::try_from(latest_size).unwrap_or(i64::MAX),
                        size,
                        cp.root.0.as_slice(),
                        reason,
                        stored_note(text, &log_lines, None)
                    ],
                )
                .map_err(internal)?;
                tx.commit().map_err(internal)?;
            }
            return Err(refused);
        }
        // Never earlier than this origin's previous cosignature: a clock stepped back must not
        // date a larger tree before a smaller one. A previous time far ahead of the clock (a
        // clock that ran ahead) would date every later cosignature in the future, where
        // verifiers do not count it: say so; `clear_timestamps` lets the fixed clock date them.
        if last_time > now.saturating_add(MAX_FUTURE_SECONDS) {
            tracing::warn!(
                "{}: the last cosignature is dated {last_time}, {} s ahead of the clock; once the clock is right, `toolmark witness --clear-timestamps` lets it date cosignatures again",
                cp.origin,
                last_time - now
            );
        }
        let timestamp = now.max(last_time).max(1);
        let cosignature = self
            .key
            .cosign(text, timestamp)
            .map_err(|e| refuse(StatusCode::BAD_REQUEST, e.to_string()))?;
        let line = cosignature.to_line();
        // The stored note (what monitoring serves): the text, the trusted log's signature lines
        // that verify (never a line nobody checked), and ours.
        let note = stored_note(text, &log_lines, Some(&line));
        tx.execute(
            "INSERT INTO checkpoints (origin, origin_sha256, size, root, note, updated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (origin) DO UPDATE SET size = ?3, root = ?4, note = ?5, updated = ?6",
            params![
                cp.origin,
                origin_hash(&cp.origin),
                size,
                cp.root.0.as_slice(),
                note,
                i64::try_from(timestamp).unwrap_or(i64::MAX)
            ],
        )
        .map_err(internal)?;
        tx.commit().map_err(internal)?;
        Ok(Reply {
            status: StatusCode::OK,
            content_type: TEXT,
            body: line.into_bytes(),
        })
    }

    /// The latest cosigned checkpoint of the origin whose lowercase hex SHA-256 is `hash`.
    ///
    /// # Errors
    ///
    /// [`WitnessError::Db`].
    pub fn latest(&self, hash: &str) -> Result<Option<Vec<u8>>, WitnessError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT note FROM checkpoints WHERE origin_sha256 = ?1",
                [hash],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Forgets the time of every origin's last cosignature (its size and root stay), so that
    /// the next cosignatures are dated by the clock even if an earlier one was dated later:
    /// for after a clock that ran ahead is fixed. Returns how many origins it touched.
    ///
    /// # Errors
    ///
    /// [`WitnessError::Db`].
    pub fn clear_timestamps(&self) -> Result<usize, WitnessError> {
        Ok(self
            .conn()
            .execute("UPDATE checkpoints SET updated = 0", [])?)
    }

    /// Every evidence row, oldest first.
    ///
    /// # Errors
    ///
    /// [`WitnessError::Db`].
    pub fn evidence(&self) -> Result<Vec<Evidence>, WitnessError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT time, origin, old, latest_size, size, reason, body FROM evidence ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            let n = |i: usize| r.get::<_, i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
            Ok(Evidence {
                time: n(0)?,
                origin: r.get(1)?,
                old: n(2)?,
                latest_size: n(3)?,
                size: n(4)?,
                reason: r.get(5)?,
                body: String::from_utf8_lossy(&r.get::<_, Vec<u8>>(6)?).into_owned(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The signature lines of `lines` by the trusted log keys `keys`, each verified over `text`:
/// what the witness stores and serves (never a line nobody checked). 403 when there is none,
/// or when a line naming a trusted key does not verify, whichever key it names (as signed-note
/// says a verifier should reject); 400 for a line `signed_note` cannot read.
fn log_signatures<'a>(
    text: &str,
    lines: &[&'a str],
    keys: &[String],
) -> Result<Vec<&'a str>, Refused> {
    let mut verified = Vec::new();
    for &line in lines {
        let one = format!("{text}\n{line}\n");
        for vkey in keys {
            match verify_note(one.as_bytes(), vkey) {
                Ok(_) => {
                    verified.push(line);
                    break;
                }
                Err(FormatError::NotSigned(_)) => {}
                Err(e @ FormatError::BadSignature { .. }) => {
                    return Err(refuse(StatusCode::FORBIDDEN, e.to_string()));
                }
                Err(e) => return Err(refuse(StatusCode::BAD_REQUEST, e.to_string())),
            }
        }
    }
    if verified.is_empty() {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            "no signature by a trusted key of this origin",
        ));
    }
    Ok(verified)
}

/// A note of `text`, the signature lines `lines` and, if given, the witness's `ours`.
fn stored_note(text: &str, lines: &[&str], ours: Option<&str>) -> Vec<u8> {
    let mut note = format!("{text}\n");
    for l in lines.iter().copied().chain(ours) {
        note.push_str(l.trim_end_matches('\n'));
        note.push('\n');
    }
    note.into_bytes()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The witness's routes under `prefix` (`""` or `/path`, no trailing slash): `POST
/// <prefix>/add-checkpoint` and `GET <prefix>/<hex SHA-256(origin)>/checkpoint`; 405 for
/// another method, 404 elsewhere, every error a plain-text line.
pub fn router(witness: Arc<Witness>, prefix: &str) -> Router {
    let inner = Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/{origin}/checkpoint", get(monitor))
        .method_not_allowed_fallback(|| async {
            Reply::text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        })
        .fallback(|| async { Reply::text(StatusCode::NOT_FOUND, "not found") })
        .with_state(witness);
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        inner
    } else {
        Router::new()
            .nest(prefix, inner)
            .fallback(|| async { Reply::text(StatusCode::NOT_FOUND, "not found") })
    }
}

async fn add_checkpoint(State(w): State<Arc<Witness>>, headers: HeaderMap, body: Body) -> Reply {
    let too_large = || {
        Reply::text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over {MAX_REQUEST_BYTES} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REQUEST_BYTES as u64) {
        return too_large();
    }
    let bytes = match axum::body::to_bytes(body, MAX_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(e) => {
            let limit = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            return if limit {
                too_large()
            } else {
                Reply::text(StatusCode::BAD_REQUEST, format!("reading the body: {e}"))
            };
        }
    };
    match tokio::task::spawn_blocking(move || w.add_checkpoint(&bytes, now())).await {
        Ok(reply) => reply,
        Err(_) => Reply::text(StatusCode::INTERNAL_SERVER_ERROR, "witness failed"),
    }
}

async fn monitor(State(w): State<Arc<Witness>>, UrlPath(hash): UrlPath<String>) -> Reply {
    let none = || {
        Reply::text(
            StatusCode::NOT_FOUND,
            "no checkpoint cosigned for this origin",
        )
    };
    if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return none();
    }
    match tokio::task::spawn_blocking(move || w.latest(&hash)).await {
        Ok(Ok(Some(note))) => Reply {
            status: StatusCode::OK,
            content_type: TEXT,
            body: note,
        },
        Ok(Ok(None)) => none(),
        Ok(Err(e)) => {
            tracing::error!("{e}");
            Reply::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "witness state unavailable",
            )
        }
        Err(_) => Reply::text(StatusCode::INTERNAL_SERVER_ERROR, "witness failed"),
    }
}
