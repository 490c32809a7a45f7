//! Security events (`toolmark.security-event/v1`): the wire type, and checking an event and a
//! chain of events offline with the answer key `/api/v1/issuer` publishes.
//!
//! An event document is `{type, issuer, target{id,name,endpoint}, observedAt, kind, evidence,
//! previous, id, signature}`. Its `id` is `sha256-` + base64 of SHA-256 over RFC 8785 of the
//! document without `id`, `issuer` and `signature` (the issuer is the service's public name,
//! added when the event is served; it is signed but not part of the id, so ids do not change
//! with the service's address). `previous` is the id of the previous event about the same
//! target (`null` for its first). The `signature` is the answer key's Ed25519 signature over
//! RFC 8785 of the document without `signature`, as answers are signed.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolmark_toolset::{Sri, hex};

use crate::answer::Signature;
use crate::verify::{CanonicalError, canonical};

// The body (and its id) is one type with the index that derives and stores it.
pub use toolmark_observation::event::{EVENT_TYPE, EventBody, EventTarget, StoredEvent};

/// A signed security event, as `/api/v1/security-events` and webhooks deliver it: the stored
/// event ([`StoredEvent`]: the body and its id) with `issuer` and `signature`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityEvent {
    /// The body: type, target, time, kind, evidence and previous event.
    #[serde(flatten)]
    pub body: EventBody,
    /// The URL of the issuer's key (`{base}/api/v1/issuer`).
    pub issuer: String,
    /// `sha256-…` of RFC 8785 of the document without `id`, `issuer` and `signature`.
    pub id: String,
    /// The answer key's signature (absent only while it is being signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
}

/// Why an event or a chain does not verify.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The answer key given is not 64 hex digits.
    #[error("the answer key is not 64 hex digits")]
    AnswerKeyHex,
    /// The answer key is not an Ed25519 public key.
    #[error("answer key: {0}")]
    AnswerKey(String),
    /// The event is not a JSON object.
    #[error("the event is not an object")]
    NotAnObject,
    /// The event has no `signature`.
    #[error("no signature")]
    NoSignature,
    /// `signature.value` is not a base64url Ed25519 signature.
    #[error("signature.value is not a base64url Ed25519 signature")]
    SignatureEncoding,
    /// The event cannot be written as RFC 8785.
    #[error("the event has no RFC 8785 form: {0}")]
    Canonical(#[from] CanonicalError),
    /// The signature does not verify with the answer key.
    #[error("the signature does not verify")]
    BadSignature,
    /// The (signed) document is not a security event.
    #[error("not a {EVENT_TYPE} document: {0}")]
    NotAnEvent(String),
    /// The `id` is not the digest of the event's body.
    #[error("the id {claimed} is not the event's digest {computed}")]
    Id {
        /// The id the event carries.
        claimed: String,
        /// The id recomputed from its body.
        computed: String,
    },
    /// The event's `previous` is not the id of the previous event about its target.
    #[error(
        "event {id}: previous is {found:?}, the chain's last event for its target is {expected:?}"
    )]
    Previous {
        /// The event.
        id: String,
        /// Its `previous`.
        found: Option<String>,
        /// The last event about the same target in the chain (or where it resumed).
        expected: Option<String>,
    },
}

/// The id an event document should carry: `sha256-` + base64 of SHA-256 over RFC 8785 of the
/// document without `id`, `issuer` and `signature`.
///
/// # Errors
///
/// [`EventError::NotAnObject`], or [`EventError::Canonical`] for a value with no RFC 8785 form.
pub fn event_id(doc: &Value) -> Result<String, EventError> {
    let mut body = doc.as_object().ok_or(EventError::NotAnObject)?.clone();
    for member in ["id", "issuer", "signature"] {
        body.remove(member);
    }
    Ok(Sri::of(&canonical(&body)?).to_string())
}

/// Check one event offline: the Ed25519 signature (by the answer key, the 64 hex digits
/// `/api/v1/issuer` publishes as `publicKeyHex`) over RFC 8785 of the document without
/// `signature`; that it is a [`EVENT_TYPE`] document; that its `id` is its digest
/// ([`event_id`]).
///
/// # Errors
///
/// The first check that failed ([`EventError`]).
pub fn verify_event(doc: &Value, answer_key_hex: &str) -> Result<SecurityEvent, EventError> {
    let key: [u8; 32] = hex::decode(answer_key_hex).map_err(|_| EventError::AnswerKeyHex)?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key)
        .map_err(|e| EventError::AnswerKey(e.to_string()))?;
    let mut unsigned = doc.as_object().ok_or(EventError::NotAnObject)?.clone();
    let signature = unsigned
        .remove("signature")
        .ok_or(EventError::NoSignature)?;
    let sig = signature["value"]
        .as_str()
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .and_then(|v| ed25519_dalek::Signature::from_slice(&v).ok())
        .ok_or(EventError::SignatureEncoding)?;
    let bytes = canonical(&unsigned)?;
    key.verify_strict(&bytes, &sig)
        .map_err(|_| EventError::BadSignature)?;
    let event: SecurityEvent =
        serde_json::from_value(doc.clone()).map_err(|e| EventError::NotAnEvent(e.to_string()))?;
    if event.body.kind_of_document != EVENT_TYPE {
        return Err(EventError::NotAnEvent(format!(
            "type {:?}",
            event.body.kind_of_document
        )));
    }
    let computed = event_id(doc)?;
    if computed != event.id {
        return Err(EventError::Id {
            claimed: event.id,
            computed,
        });
    }
    Ok(event)
}

/// A chain of events being checked in order: each event verifies ([`verify_event`]) and its
/// `previous` is the id of the last event about the same target seen so far (`null` for a
/// target not seen yet, unless the chain resumed with that target's last id).
#[derive(Debug, Clone, Default)]
pub struct Chain {
    heads: BTreeMap<String, String>,
}

impl Chain {
    /// A chain that starts at the first event (every target's first event has no `previous`).
    pub fn new() -> Chain {
        Chain::default()
    }

    /// A chain that resumes where a reader stopped: the last event id it saw per target id.
    pub fn resume(heads: BTreeMap<String, String>) -> Chain {
        Chain { heads }
    }

    /// The last event id seen per target id (what to persist to resume).
    pub fn heads(&self) -> &BTreeMap<String, String> {
        &self.heads
    }

    /// Check the next event and extend the chain with it.
    ///
    /// # Errors
    ///
    /// What [`verify_event`] refuses, or [`EventError::Previous`] when the event does not link
    /// to the chain's last event about its target; the chain is unchanged then.
    pub fn push(&mut self, doc: &Value, answer_key_hex: &str) -> Result<SecurityEvent, EventError> {
        let event = verify_event(doc, answer_key_hex)?;
        let expected = self.heads.get(&event.body.target.id);
        if event.body.previous.as_ref() != expected {
            return Err(EventError::Previous {
                id: event.id,
                found: event.body.previous,
                expected: expected.cloned(),
            });
        }
        self.heads
            .insert(event.body.target.id.clone(), event.id.clone());
        Ok(event)
    }
}

/// Check a whole sequence of events from the first one on ([`Chain::new`], then
/// [`Chain::push`] for each, in order): ids recomputed, signatures, and every `previous` link.
///
/// # Errors
///
/// The first event that does not verify or does not link.
pub fn verify_chain(
    events: &[Value],
    answer_key_hex: &str,
) -> Result<Vec<SecurityEvent>, EventError> {
    let mut chain = Chain::new();
    events
        .iter()
        .map(|doc| chain.push(doc, answer_key_hex))
        .collect()
}

/// The first 16 hex digits of SHA-256 of the answer key's public key: the `keyId` answers and
/// events carry.
pub fn key_id(key: &ed25519_dalek::VerifyingKey) -> String {
    use sha2::Digest as _;
    let d = sha2::Sha256::digest(key.to_bytes());
    hex::encode(&d[..8])
}

/// The signed event: the stored event (the index's text of a [`StoredEvent`], with its `id`)
/// with `issuer` (the URL of the issuer's key, `{base}/api/v1/issuer`) added and the answer
/// key's `signature` over RFC 8785 of the rest. The one definition of the signed bytes, shared
/// by the API and webhook delivery and checked by [`verify_event`]; Ed25519 is deterministic,
/// so one stored event gives one document.
///
/// # Errors
///
/// [`EventError::NotAnEvent`] when `stored` is not a stored event, [`EventError::Canonical`]
/// when it has no RFC 8785 form.
pub fn signed_event(
    stored: &str,
    issuer: &str,
    key: &ed25519_dalek::SigningKey,
) -> Result<SecurityEvent, EventError> {
    use ed25519_dalek::Signer as _;
    let StoredEvent { body, id } = StoredEvent::parse(stored)
        .map_err(|e| EventError::NotAnEvent(format!("stored body: {e}")))?;
    let mut event = SecurityEvent {
        body,
        issuer: issuer.to_owned(),
        id,
        signature: None,
    };
    let bytes = canonical(&event)?;
    let signature = key.sign(&bytes);
    let public = key.verifying_key();
    event.signature = Some(Signature {
        alg: "Ed25519".into(),
        key_id: key_id(&public),
        public_key_hex: hex::encode(&public.to_bytes()),
        value: URL_SAFE_NO_PAD.encode(signature.to_bytes()),
    });
    Ok(event)
}

/// [`signed_event`] as a JSON document.
///
/// # Errors
///
/// What [`signed_event`] refuses.
pub fn sign_event(
    stored: &str,
    issuer: &str,
    key: &ed25519_dalek::SigningKey,
) -> Result<Value, EventError> {
    let event = signed_event(stored, issuer, key)?;
    serde_json::to_value(event).map_err(|e| EventError::NotAnEvent(e.to_string()))
}
