//! Witnesses: who cosigned the published checkpoint, and when.
//!
//! With a witness policy configured ([`AppState::witnesses`], set by `toolmark run` from its
//! witnesses and quorum), the published checkpoint carries the log's signature and the
//! witnesses' `cosignature/v1` lines. This module verifies those lines once per checkpoint
//! note ([`Cosigners`], cached by [`AppState::witnessed`]) and evaluates them against the
//! policy at the time asked (the heartbeat re-submits the unchanged tree, so the cosignatures'
//! times move and their age is "signed freshness"). It serves:
//!
//! - `GET /api/v1/witnesses`: the policy (quorum, witnesses with key and URL) and the current
//!   checkpoint's cosignatures;
//! - the `witnessing` member of `/health` and the witness gauges of `/metrics`, which also read
//!   the cosigner's own status file `DATA/witnessing.json` ([`read_status`]: written by the
//!   cosigner after each round; local, but read as untrusted input: bounded, strictly typed,
//!   any problem reported, never fatal);
//! - the `/check` answer's `log.cosignatures` and `log.cosignedAt` ([`answer_cosignatures`]).
//!
//! It never dials a witness (the cosigner in `toolmark run` does), never writes the checkpoint
//! or the status file, and never decides what is published: a checkpoint whose cosignatures
//! fail the policy is reported, not hidden.

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolmark_client::answer::LogCosignature;
use toolmark_log::cosignature::{Found, note_cosignatures};
use toolmark_log::policy::{WitnessPolicy, Witnessed};
use toolmark_log::reader::Signed;

use crate::{ApiError, AppState};

// The cosigner's status file: one type, written by the cosigner (`toolmark-cosign`) and read
// here; `WitnessingStatus` is its name on this side.
pub use toolmark_log::witnessing::{
    MAX_STATUS_BYTES, MAX_STATUS_TEXT, STATUS_FILE, STATUS_VERSION, Status as WitnessingStatus,
    WitnessStatus,
};

/// The routes of this module.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/witnesses", get(witnesses))
}

/// The policy witnesses' cosignatures on one checkpoint note, verified once.
#[derive(Debug)]
pub struct Cosigners {
    note: Vec<u8>,
    /// The checkpoint's tree size.
    pub size: u64,
    /// The verified cosignatures (indexed as the policy's witnesses), or why a line by a policy
    /// witness is malformed or does not verify (then none counts).
    pub found: Result<Vec<Found>, String>,
}

impl Cosigners {
    /// Verifies the cosignatures of `policy`'s witnesses on `at`'s note.
    pub fn verify(policy: &WitnessPolicy, at: &Signed) -> Cosigners {
        let keys: Vec<_> = policy.witnesses().iter().map(|w| w.key.clone()).collect();
        Cosigners {
            note: at.note.clone(),
            size: at.checkpoint.size,
            found: note_cosignatures(&at.note, &keys).map_err(|e| e.to_string()),
        }
    }

    /// Whether these are the cosignatures of `at`'s note.
    pub fn is_of(&self, at: &Signed) -> bool {
        self.note == at.note
    }

    /// The policy's view at `now` (no maximum age: every cosignature not dated in the future
    /// counts); `Err` when a line did not verify.
    pub fn at(&self, policy: &WitnessPolicy, now: u64) -> Result<Witnessed, String> {
        self.found
            .as_ref()
            .map(|f| policy.evaluate(f, now, None))
            .map_err(Clone::clone)
    }
}

/// The service's clock in POSIX seconds ([`AppState::clock`]).
pub fn now(state: &AppState) -> u64 {
    unix((state.clock)())
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// POSIX seconds as `YYYY-MM-DDTHH:MM:SSZ`; `None` beyond what a calendar date holds.
pub fn time_text(seconds: u64) -> Option<String> {
    let t = chrono::DateTime::from_timestamp(i64::try_from(seconds).ok()?, 0)?;
    Some(t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// What a page or route shows of the witnessing of one checkpoint.
#[derive(Debug)]
pub struct View {
    /// The quorum, described (`2 of 3 witnesses`, `group g`, `none`).
    pub quorum: String,
    /// The policy, if one is configured.
    pub policy: Option<Arc<WitnessPolicy>>,
    /// The checkpoint's tree size.
    pub size: u64,
    /// The cosignatures that verified, fresh or not, and whether they meet the quorum now
    /// (with no policy: none, and met); `Err` when a line by a policy witness did not verify.
    pub witnessed: Result<Witnessed, String>,
    /// The service's time the view was made at.
    pub now: u64,
}

impl View {
    /// The witnessing of `at` under the state's policy, now.
    pub fn of(state: &AppState, at: &Signed) -> View {
        let now = now(state);
        let policy = state.witnesses.clone();
        let witnessed = match (&policy, state.witnessed(at)) {
            (Some(p), Some(c)) => c.at(p, now),
            _ => Ok(Witnessed {
                cosigned: Vec::new(),
                satisfied: true,
                newest: None,
            }),
        };
        View {
            quorum: policy
                .as_ref()
                .map_or_else(|| "none".into(), |p| p.describe()),
            policy,
            size: at.checkpoint.size,
            witnessed,
            now,
        }
    }

    /// The newest fresh cosignature's time.
    pub fn newest(&self) -> Option<u64> {
        self.witnessed.as_ref().ok().and_then(|w| w.newest)
    }

    /// The cosignatures as JSON: `{witness, keyName, timestamp, fresh}`.
    pub fn cosignatures_json(&self) -> Vec<Value> {
        self.witnessed
            .as_ref()
            .map(|w| {
                w.cosigned
                    .iter()
                    .map(|c| {
                        json!({
                            "witness": c.witness,
                            "keyName": c.key_name,
                            "timestamp": time_text(c.timestamp),
                            "fresh": c.fresh,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// `log.cosignatures` and `log.cosignedAt` of a `/check` answer proved against `at`: the policy
/// witnesses' cosignatures that verified (by key name), and the newest not dated in the
/// service's future. Empty without a policy or cosignatures.
pub fn answer_cosignatures(state: &AppState, at: &Signed) -> (Vec<LogCosignature>, Option<String>) {
    if state.witnesses.is_none() {
        return (Vec::new(), None);
    }
    let view = View::of(state, at);
    let Ok(w) = &view.witnessed else {
        return (Vec::new(), None);
    };
    let list = w
        .cosigned
        .iter()
        .filter_map(|c| {
            Some(LogCosignature {
                timestamp: time_text(c.timestamp)?,
                witness: c.key_name.clone(),
            })
        })
        .collect();
    (list, w.newest.and_then(time_text))
}

async fn witnesses(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let body = tokio::task::spawn_blocking(move || -> Result<Value, ApiError> {
        let at = state.checkpoint().map_err(ApiError::internal)?;
        let view = View::of(&state, &at);
        let witnesses: Vec<Value> = view
            .policy
            .as_ref()
            .map(|p| {
                p.witnesses()
                    .iter()
                    .map(|w| json!({"name": w.name, "vkey": w.key.vkey(), "url": w.url}))
                    .collect()
            })
            .unwrap_or_default();
        Ok(json!({
            "quorum": view.quorum,
            "witnesses": witnesses,
            "treeSize": view.size,
            "cosignatures": view.cosignatures_json(),
            "cosignedAt": view.newest().and_then(time_text),
            "quorumMet": view.witnessed.as_ref().is_ok_and(|w| w.satisfied),
            "error": view.witnessed.as_ref().err(),
        }))
    })
    .await
    .map_err(ApiError::internal)??;
    let mut r = axum::Json(body).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(r)
}

/// Reads `DATA/witnessing.json` ([`toolmark_log::witnessing::read`]): `Ok(None)` when there is
/// none (no witness configured, or no round yet), `Err` naming the problem for a file too
/// large, unreadable or not of the expected shape; every text cut to [`MAX_STATUS_TEXT`]
/// characters, at most [`MAX_POLICY_ITEMS`](toolmark_log::policy::MAX_POLICY_ITEMS) witnesses,
/// times checked to be RFC 3339.
pub fn read_status(data: &Path) -> Result<Option<WitnessingStatus>, String> {
    toolmark_log::witnessing::read(&data.join(STATUS_FILE))
        .map(|s| s.map(WitnessingStatus::capped))
        .map_err(|e| e.to_string())
}

/// Parses a status file's bytes (see [`read_status`]).
pub fn parse_status(bytes: &[u8]) -> Result<WitnessingStatus, String> {
    toolmark_log::witnessing::parse(bytes)
        .map(WitnessingStatus::capped)
        .map_err(|e| e.to_string())
}

/// `/health`'s `witnessing` member (`null` when no policy is configured and no status file
/// exists): the policy, the published checkpoint's size, its cosigners and newest cosigned
/// time with its age, whether the quorum is met on it now, and the cosigner's last round (its
/// status file), with `behind` when the log has signed a larger tree than the one published.
pub fn health(state: &AppState, at: Option<&Signed>) -> Value {
    let status = read_status(&state.data);
    if state.witnesses.is_none() && matches!(status, Ok(None)) {
        return Value::Null;
    }
    let (round, round_error) = match status {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e)),
    };
    let view = at.map(|at| View::of(state, at));
    let published = at.map(|a| a.checkpoint.size);
    let signed = round.as_ref().map(|s| s.signed_size);
    let behind = match (signed, published) {
        (Some(s), Some(p)) => s > p,
        _ => false,
    };
    let newest = view.as_ref().and_then(View::newest);
    let now = now(state);
    json!({
        "policy": state.witnesses.as_ref().map(|p| p.describe()),
        "publishedSize": published,
        "quorumMet": view.as_ref().map(|v| v.witnessed.as_ref().is_ok_and(|w| w.satisfied)),
        "cosignedAt": newest.and_then(time_text),
        "cosignedAgeSeconds": newest.map(|t| now.saturating_sub(t)),
        "cosigners": view.as_ref().map(View::cosignatures_json).unwrap_or_default(),
        "cosignaturesError": view.as_ref().and_then(|v| v.witnessed.as_ref().err()),
        "signedSize": signed,
        "behind": behind,
        "error": round.as_ref().and_then(|s| s.error.clone()),
        "cosigner": round,
        "cosignerError": round_error,
    })
}

/// The witness gauges of `/metrics` (nothing when no policy is configured and no status file
/// exists).
pub fn metrics(state: &AppState, at: Option<&Signed>, out: &mut String) {
    use std::fmt::Write;
    let status = read_status(&state.data).ok().flatten();
    if state.witnesses.is_none() && status.is_none() {
        return;
    }
    let view = at.map(|at| View::of(state, at));
    if let Some(v) = &view {
        let _ = writeln!(
            out,
            "# HELP toolmark_checkpoint_cosigned_timestamp_seconds The newest witness cosignature on the published checkpoint (Unix seconds; absent when none)."
        );
        let _ = writeln!(
            out,
            "# TYPE toolmark_checkpoint_cosigned_timestamp_seconds gauge"
        );
        if let Some(t) = v.newest() {
            let _ = writeln!(out, "toolmark_checkpoint_cosigned_timestamp_seconds {t}");
        }
        let _ = writeln!(
            out,
            "# HELP toolmark_checkpoint_cosignatures Policy witnesses whose cosignature on the published checkpoint verifies."
        );
        let _ = writeln!(out, "# TYPE toolmark_checkpoint_cosignatures gauge");
        let n = v.witnessed.as_ref().map_or(0, |w| w.cosigned.len());
        let _ = writeln!(out, "toolmark_checkpoint_cosignatures {n}");
    }
    // Each witness's latest cosignature: the cosigner's round (which sees cosignatures of
    // checkpoints not published for want of a quorum) or the published checkpoint's.
    let mut last: Vec<(String, u64)> = Vec::new();
    let mut note = |name: &str, t: u64| match last.iter_mut().find(|(n, _)| n == name) {
        Some((_, old)) => *old = (*old).max(t),
        None => last.push((name.to_owned(), t)),
    };
    if let Some(Ok(w)) = view.as_ref().map(|v| &v.witnessed) {
        for c in &w.cosigned {
            note(&c.witness, c.timestamp);
        }
    }
    if let Some(s) = &status {
        for w in &s.witnesses {
            if let Some(t) = w
                .cosigned_at
                .as_deref()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .and_then(|t| u64::try_from(t.timestamp()).ok())
            {
                note(&w.name, t);
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP toolmark_witness_last_cosigned_timestamp_seconds When each witness last cosigned a checkpoint of this log (Unix seconds)."
    );
    let _ = writeln!(
        out,
        "# TYPE toolmark_witness_last_cosigned_timestamp_seconds gauge"
    );
    for (name, t) in &last {
        let _ = writeln!(
            out,
            "toolmark_witness_last_cosigned_timestamp_seconds{{witness=\"{}\"}} {t}",
            crate::ops::escape_label(name)
        );
    }
    if let Some(s) = &status {
        let published = at
            .map(|a| a.checkpoint.size)
            .or(s.published_size)
            .unwrap_or(0);
        let _ = writeln!(
            out,
            "# HELP toolmark_witnessing_behind Entries the log has signed beyond the published (witnessed) checkpoint."
        );
        let _ = writeln!(out, "# TYPE toolmark_witnessing_behind gauge");
        let _ = writeln!(
            out,
            "toolmark_witnessing_behind {}",
            s.signed_size.saturating_sub(published)
        );
        let _ = writeln!(
            out,
            "# HELP toolmark_witness_quorum_met 1 when the cosigner's latest round met the witness quorum."
        );
        let _ = writeln!(out, "# TYPE toolmark_witness_quorum_met gauge");
        let _ = writeln!(
            out,
            "toolmark_witness_quorum_met {}",
            u8::from(s.quorum_met)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_rfc3339_and_out_of_range_ones_as_none() {
        assert_eq!(time_text(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            time_text(1_796_238_000).as_deref(),
            Some("2026-12-02T19:00:00Z")
        );
        assert_eq!(time_text(u64::MAX / 2), None);
    }
}
