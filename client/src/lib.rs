//! What a scanner or auditor depends on to use toolmark's `POST /api/v1/check` offline: the
//! answer's wire types ([`answer`], shared with the server, which serialises them) and
//! [`verify_answer`], which checks an answer's signature, its tlog-proof bundle against the
//! log's key, and that the proved entry is what the answer says ([`verify_answer_with`] also
//! requires a witness policy's cosignatures, fresh enough, on the proof's checkpoint); and the
//! signed security events
//! ([`event`]: [`SecurityEvent`], [`verify_event`], [`verify_chain`]).
//!
//! It never does I/O, opens a database, spawns a runtime or dials the network: the caller
//! fetches the answer, the issuer's key and the log's key however it likes, and hands them in.
//! Its dependencies say so: `toolmark-toolset` (RFC 8785, digests), `toolmark-log` without its
//! `store` feature (entries, proofs, notes; no SQLite), Ed25519, base64 and serde.
#![deny(missing_docs)]

pub mod answer;
pub mod event;
pub mod verify;

pub use answer::{ANSWER_TYPE, Answer, Match};
pub use event::{
    Chain, EVENT_TYPE, EventBody, EventError, EventTarget, SecurityEvent, StoredEvent, event_id,
    key_id, sign_event, signed_event, verify_chain, verify_event,
};
pub use toolmark_log::policy::{Cosigned, WitnessPolicy, Witnessed};
pub use verify::{
    CanonicalError, VerifiedAnswer, VerifyError, WitnessRequirement, canonical, check_witnesses,
    verify_answer, verify_answer_with,
};
