//! Checking a `/check` answer offline, the way `docs/api.md` tells a client to.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use toolmark_log::entry::{Entry, EntryError};
use toolmark_log::note::Checkpoint;
use toolmark_log::proof::{decode_tlog_proof, verify_tlog_proof};
use toolmark_toolset::{Sri, hex};

use crate::answer::{ANSWER_TYPE, Answer, Match};

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
}

/// A JSON value with no RFC 8785 form (a number beyond what the answer types hold).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CanonicalError(String);

/// RFC 8785 bytes of `value` (answers hold only strings, integers, booleans and null): what the
/// answer key signs, for the answer without its `signature`.
pub fn canonical(value: &impl serde::Serialize) -> Result<Vec<u8>, CanonicalError> {
    let text = serde_json::to_string(value).map_err(|e| CanonicalError(e.to_string()))?;
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
/// is not later than it; and, when the client passes the
/// digest it `compared` (MTL/1 or full), that a `same` or `previously-observed` entry carries
/// it.
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
    if let Some(d) = compared {
        let carries = entry.full.as_ref() == Some(d) || entry.mtl1_digest() == Some(d);
        if read.verdict.is_proved() && !carries {
            return Err(VerifyError::NotCompared);
        }
    }
    Ok(VerifiedAnswer {
        index: bundle.index,
        answer: read,
        entry,
        checkpoint,
    })
}
