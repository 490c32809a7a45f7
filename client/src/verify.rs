//! Checking a `/check` answer offline, the way `docs/api.md` tells a client to.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use toolmark_log::entry::{Entry, EntryError};
use toolmark_log::note::Checkpoint;
use toolmark_log::policy::{PolicyError, WitnessPolicy, Witnessed};
use toolmark_log::proof::{decode_tlog_proof, verify_tlog_proof};
use toolmark_toolset::full::ToolIndex;
use toolmark_toolset::{Sri, hex};

use crate::answer::{ANSWER_TYPE, Answer, ComparedBy, Match};

/// What a client learns from an answer that verifies.
#[derive(Debug, Clone)]
pub struct VerifiedAnswer {
    /// The answer, read.
    pub answer: Answer,
    /// The log entry the answer rests on (canonical, decoded).
    pub entry: Entry,
    /// Its index in the log.
    pub index: u64,
    /// The checkpoint it is proved in (signature checked against the log's key).
    pub checkpoint: Checkpoint,
    /// With a witness policy ([`verify_answer_with`]): which of its witnesses cosigned that
    /// checkpoint and when (every cosignature that verified, fresh or not), whether they meet
    /// the quorum (always, once the answer verified) and the newest fresh cosignature time.
    /// `None` from [`verify_answer`], which requires no witness.
    pub witnessed: Option<Witnessed>,
}

/// What [`verify_answer_with`] requires of the cosignatures on the answer's checkpoint: the
/// policy's quorum of witnesses, each cosignature counted only if it is at most `max_age`
/// seconds older than `now` (and not dated more than
/// [`toolmark_log::policy::MAX_FUTURE_SECONDS`] after it). The client reads its own clock
/// and passes `now` (POSIX seconds) in.
#[derive(Debug, Clone, Copy)]
pub struct WitnessRequirement<'a> {
    /// The witnesses and the quorum (C2SP `tlog-policy`, or `WitnessPolicy::k_of`).
    pub policy: &'a WitnessPolicy,
    /// The verifier's time, POSIX seconds.
    pub now: u64,
    /// The oldest a counted cosignature may be, in seconds (`None`: any age).
    pub max_age: Option<u64>,
}

/// Why an answer does not verify: the first check that failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The answer key given is not 64 hex digits.
    #[error("the answer key is not 64 hex digits")]
    AnswerKeyHex,
    /// The answer key is not an Ed25519 public key.
    #[error("answer key: {0}")]
    AnswerKey(String),
    /// The answer is not a JSON object.
    #[error("the answer is not an object")]
    NotAnObject,
    /// The answer has no `signature`.
    #[error("no signature")]
    NoSignature,
    /// `signature.value` is not base64url.
    #[error("signature.value is not base64url")]
    SignatureEncoding,
    /// `signature.value` is not an Ed25519 signature.
    #[error("signature: {0}")]
    SignatureBytes(String),
    /// The answer cannot be written as RFC 8785.
    #[error("the answer has no RFC 8785 form: {0}")]
    Canonical(#[from] CanonicalError),
    /// The signature does not verify with the answer key.
    #[error("the signature does not verify")]
    BadSignature,
    /// The (signed) answer is not a `toolmark.check/v1` answer.
    #[error("the answer is not a {ANSWER_TYPE} answer: {0}")]
    NotAnAnswer(String),
    /// The answer carries no proof (only `same` and `previously-observed` answers do).
    #[error("the answer carries no proof")]
    NoProof,
    /// `proof.tlogProof` is not a tlog-proof bundle.
    #[error("proof bundle: {0}")]
    Bundle(toolmark_log::FormatError),
    /// The bundle's `extra` is not `proof.entry`.
    #[error("the bundle's entry is not the answer's entry")]
    BundleEntry,
    /// The inclusion proof or the checkpoint's signature does not verify with the log's key.
    #[error("inclusion proof: {0}")]
    Inclusion(toolmark_log::FormatError),
    /// `proof.entryIndex` is not the bundle's index.
    #[error("proof.entryIndex is not the bundle's index")]
    EntryIndex,
    /// The proved entry is not a canonical log entry.
    #[error("entry: {0}")]
    Entry(#[from] EntryError),
    /// The proved entry is about another target than the answer's.
    #[error("the entry is about another target")]
    OtherTarget,
    /// The proved entry is not a successful observation.
    #[error("the entry is not a successful observation (status {0})")]
    NotOk(String),
    /// A `same` answer's `observed` digest is not the entry's.
    #[error("observed.{0} is not the entry's")]
    Observed(&'static str),
    /// A `same` answer's `observed.unchangedSince` is later than the proved observation (the
    /// run of equal sets it names must begin at or before the entry).
    #[error("observed.unchangedSince is later than the proved observation")]
    UnchangedSince,
    /// The entry does not carry the digest the client compared.
    #[error("the entry does not carry the digest that was compared")]
    NotCompared,
    /// An answer about one tool: `proof.toolDigests` is missing, or its index digest is not
    /// the proved entry's `toolIndex` (or the entry has none).
    #[error("proof.toolDigests do not give the entry's toolIndex")]
    ToolIndex,
    /// An answer about one tool: the tool's digest (`query.toolDigest`) is not among
    /// `proof.toolDigests`.
    #[error("the tool's digest is not among the entry's tool digests")]
    ToolNotListed,
    /// A cosignature line by one of the policy's witnesses on the proof's checkpoint is
    /// malformed or does not verify (a forged or altered cosignature rejects the answer, as
    /// signed-note says of a known key's bad signature).
    #[error("witness cosignature: {0}")]
    Cosignature(PolicyError),
    /// The checkpoint's cosignatures do not meet the policy's quorum, whatever their age.
    #[error(
        "the checkpoint is not witnessed as the policy requires ({quorum}): cosigned by {}",
        names_or_none(cosigned)
    )]
    NotWitnessed {
        /// The policy's quorum, described (`2 of 3 witnesses`, `group g`).
        quorum: String,
        /// The witnesses whose cosignature verified (policy names).
        cosigned: Vec<String>,
    },
    /// The quorum would be met but too few of the cosignatures are recent enough.
    #[error(
        "the checkpoint's cosignatures are too old for the policy ({quorum}) with a maximum age \
         of {max_age} s: newest cosignature at {newest} (POSIX seconds), now {now}"
    )]
    CosignaturesTooOld {
        /// The policy's quorum, described.
        quorum: String,
        /// The maximum age required, in seconds.
        max_age: u64,
        /// The newest cosignature's time (POSIX seconds).
        newest: u64,
        /// The verifier's time.
        now: u64,
    },
}

fn names_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "no witness of the policy".into()
    } else {
        names.join(", ")
    }
}

/// A JSON value with no RFC 8785 form (a number beyond what the answer types hold).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CanonicalError(String);

/// RFC 8785 bytes of `value` (answers hold only strings, integers, booleans and null): what the
/// answer key signs, for the answer without its `signature`. The answer types declare their
/// members in RFC 8785's order, so serde_json's text usually is canonical already
/// (`toolmark_toolset::canon::is_canonical` checks it in one pass) and is used as it is;
/// otherwise it is parsed and written canonically.
pub fn canonical(value: &impl serde::Serialize) -> Result<Vec<u8>, CanonicalError> {
    let text = serde_json::to_string(value).map_err(|e| CanonicalError(e.to_string()))?;
    if toolmark_toolset::canon::is_canonical(&text) {
        return Ok(text.into_bytes());
    }
    let parsed = toolmark_toolset::json::parse(&text).map_err(|e| CanonicalError(e.to_string()))?;
    toolmark_toolset::canon::to_vec(&parsed, toolmark_toolset::canon::Numbers::Ecmascript)
        .map_err(|e| CanonicalError(e.to_string()))
}

/// Check a `/check` answer offline: the Ed25519 signature (by the answer key, given as the 64
/// hex digits `/api/v1/issuer` publishes as `publicKeyHex`) over RFC 8785 of the answer
/// without `signature`, as received; that it is a `toolmark.check/v1` answer; the tlog-proof
/// bundle against the log's verifier key `log_vkey`; that the bundle's entry is the answer's
/// entry, canonical, a successful observation (`status` `ok`) of the answer's target; for
/// `same`, that its digests are the answer's `observed` ones and that `observed.unchangedSince`
/// is not later than it; for an answer about one tool (`comparedBy` `tool`), that
/// `proof.toolDigests` give the entry's `toolIndex` and hold `query.toolDigest`; and, when the
/// client passes the digest it `compared` (MTL/1, full, a kind's or the tool's), that a `same`
/// or `previously-observed` entry carries it.
///
/// # Errors
///
/// The first check that failed ([`VerifyError`]). Answers without a proof (`different`,
/// `not-listed`, …) are [`VerifyError::NoProof`] once their signature has verified.
pub fn verify_answer(
    answer: &Value,
    answer_key_hex: &str,
    log_vkey: &str,
    compared: Option<&Sri>,
) -> Result<VerifiedAnswer, VerifyError> {
    verify(answer, answer_key_hex, log_vkey, compared, None)
}

/// [`verify_answer`], and then the witness cosignatures on the checkpoint inside the answer's
/// tlog-proof bundle (not the answer's `log` members, which only restate them): every line by
/// one of the policy's witnesses must verify (`cosignature/v1` over the checkpoint text at its
/// timestamp), and the fresh ones must meet the quorum. [`VerifiedAnswer::witnessed`] says
/// which witnesses signed when.
///
/// # Errors
///
/// Those of [`verify_answer`]; then [`VerifyError::Cosignature`] for a forged or malformed
/// cosignature by a policy witness, [`VerifyError::CosignaturesTooOld`] when the quorum is met
/// only by counting cosignatures older than `max_age`, [`VerifyError::NotWitnessed`] when it
/// is not met at all.
pub fn verify_answer_with(
    answer: &Value,
    answer_key_hex: &str,
    log_vkey: &str,
    compared: Option<&Sri>,
    witnesses: &WitnessRequirement<'_>,
) -> Result<VerifiedAnswer, VerifyError> {
    verify(answer, answer_key_hex, log_vkey, compared, Some(witnesses))
}

/// Checks the cosignatures of `note` (the proof's checkpoint, its log signature already
/// verified) against the requirement.
pub fn check_witnesses(
    note: &[u8],
    req: &WitnessRequirement<'_>,
) -> Result<Witnessed, VerifyError> {
    let w = req
        .policy
        .check(note, req.now, req.max_age)
        .map_err(VerifyError::Cosignature)?;
    if w.satisfied {
        return Ok(w);
    }
    let quorum = req.policy.describe();
    // Only on the refusal path: would the quorum be met at any age?
    let ageless = req
        .policy
        .check(note, req.now, None)
        .map_err(VerifyError::Cosignature)?;
    match (req.max_age, ageless.satisfied) {
        (Some(max_age), true) => Err(VerifyError::CosignaturesTooOld {
            quorum,
            max_age,
            newest: w.cosigned.iter().map(|c| c.timestamp).max().unwrap_or(0),
            now: req.now,
        }),
        _ => Err(VerifyError::NotWitnessed {
            quorum,
            cosigned: w.cosigned.iter().map(|c| c.witness.clone()).collect(),
        }),
    }
}

fn verify(
    answer: &Value,
    answer_key_hex: &str,
    log_vkey: &str,
    compared: Option<&Sri>,
    witnesses: Option<&WitnessRequirement<'_>>,
) -> Result<VerifiedAnswer, VerifyError> {
    let key: [u8; 32] = hex::decode(answer_key_hex).map_err(|_| VerifyError::AnswerKeyHex)?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key)
        .map_err(|e| VerifyError::AnswerKey(e.to_string()))?;
    let mut unsigned = answer.as_object().ok_or(VerifyError::NotAnObject)?.clone();
    let signature = unsigned
        .remove("signature")
        .ok_or(VerifyError::NoSignature)?;
    let sig = signature["value"]
        .as_str()
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .ok_or(VerifyError::SignatureEncoding)?;
    let sig = ed25519_dalek::Signature::from_slice(&sig)
        .map_err(|e| VerifyError::SignatureBytes(e.to_string()))?;
    let bytes = canonical(&unsigned)?;
    key.verify_strict(&bytes, &sig)
        .map_err(|_| VerifyError::BadSignature)?;

    let read: Answer = serde_json::from_value(answer.clone())
        .map_err(|e| VerifyError::NotAnAnswer(e.to_string()))?;
    if read.kind != ANSWER_TYPE {
        return Err(VerifyError::NotAnAnswer(format!("type {:?}", read.kind)));
    }
    let proof = read.proof.as_ref().ok_or(VerifyError::NoProof)?;
    let entry_bytes = proof.entry.as_bytes();
    let bundle = decode_tlog_proof(&proof.tlog_proof).map_err(VerifyError::Bundle)?;
    if bundle.extra.as_deref() != Some(entry_bytes) {
        return Err(VerifyError::BundleEntry);
    }
    let checkpoint =
        verify_tlog_proof(&bundle, entry_bytes, log_vkey).map_err(VerifyError::Inclusion)?;
    if proof.entry_index != bundle.index {
        return Err(VerifyError::EntryIndex);
    }
    let entry = Entry::decode(entry_bytes)?;
    if read.target.as_ref().map(|t| &t.id) != Some(&entry.subject.id()) {
        return Err(VerifyError::OtherTarget);
    }
    if !entry.status.is_ok() {
        return Err(VerifyError::NotOk(entry.status.to_string()));
    }
    if read.verdict == Match::Same {
        let observed = read.observed.as_ref();
        if observed.and_then(|o| o.full_digest) != entry.full {
            return Err(VerifyError::Observed("fullDigest"));
        }
        if observed.and_then(|o| o.tool_set_digest).as_ref() != entry.mtl1_digest() {
            return Err(VerifyError::Observed("toolSetDigest"));
        }
        // Both times are `YYYY-MM-DDTHH:MM:SSZ`, so their text orders them.
        if observed
            .and_then(|o| o.unchanged_since.as_deref())
            .is_some_and(|since| since > entry.observed_at.as_str())
        {
            return Err(VerifyError::UnchangedSince);
        }
    }
    if read.query.compared_by == ComparedBy::Tool && read.verdict.is_proved() {
        // The list is the proved entry's: it gives the entry's `toolIndex`, and the tool is in it.
        let list = proof
            .tool_digests
            .as_deref()
            .ok_or(VerifyError::ToolIndex)?;
        if entry.tool_index.as_ref() != Some(&ToolIndex::digest_of(list)) {
            return Err(VerifyError::ToolIndex);
        }
        let tool = read.query.tool_digest.ok_or(VerifyError::ToolNotListed)?;
        if !list.contains(&tool) {
            return Err(VerifyError::ToolNotListed);
        }
    }
    if let Some(d) = compared {
        let carries = match read.query.compared_by.kind() {
            // The tool's digest, in the entry's tool index (checked above).
            None if read.query.compared_by == ComparedBy::Tool => {
                read.query.tool_digest.as_ref() == Some(d)
            }
            None => entry.full.as_ref() == Some(d) || entry.mtl1_digest() == Some(d),
            // The kind the answer names, read completely with this digest.
            Some(kind) => entry.surface.iter().flatten().any(|(k, e)| {
                *k == kind
                    && matches!(e, toolmark_log::entry::KindEntry::Read { digest, .. } if digest == d)
            }),
        };
        if read.verdict.is_proved() && !carries {
            return Err(VerifyError::NotCompared);
        }
    }
    let witnessed = match witnesses {
        Some(req) => Some(check_witnesses(&bundle.checkpoint, req)?),
        None => None,
    };
    Ok(VerifiedAnswer {
        index: bundle.index,
        answer: read,
        entry,
        checkpoint,
        witnessed,
    })
}
