//! The security event's body (`toolmark.security-event/v1`): one type for the index that derives
//! and stores it and for the readers that sign, serve and deliver it (`toolmark_client`'s
//! `SecurityEvent` and `sign_event`, the API, webhooks).
//!
//! An event body is `{type, target{id,name,endpoint}, observedAt, kind, evidence, previous}`
//! ([`EventBody`]); its id is `sha256-` + base64 of SHA-256 over RFC 8785 of the body
//! ([`EventBody::id`]); the index stores the body with its id ([`StoredEvent`]); the API and
//! webhooks add `issuer` and the answer key's `signature`. `evidence` is every set column of
//! the change row the event reports, named in camelCase, so it stays a JSON object whose
//! members a newer kind of change may add to (the index's `events` module documents it).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolmark_toolset::Sri;
use toolmark_toolset::canon::{self, Numbers};

/// The `type` of a security event.
pub const EVENT_TYPE: &str = "toolmark.security-event/v1";

/// What an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventTarget {
    /// The target's id (16 lowercase hex digits, the log's subject id).
    pub id: String,
    /// The registry name of its server.
    pub name: String,
    /// Its endpoint: a remote's URL, or `npm:<name>` / `pypi:<name>`.
    pub endpoint: String,
}

/// The body of a security event: what its id is the digest of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventBody {
    /// Always [`EVENT_TYPE`].
    #[serde(rename = "type")]
    pub kind_of_document: String,
    /// What the event is about.
    pub target: EventTarget,
    /// When the change was observed (`YYYY-MM-DDTHH:MM:SSZ`).
    pub observed_at: String,
    /// The kind of change: `behaviour`, `registry`, `authorization`, `tools`, `instructions`,
    /// `scan`, a kind of the surface (`prompts`, `resources`, `resourceTemplates`, `appPages`,
    /// `card`), `card-mismatch` or `cloaking` (the index's `events` module says which are
    /// events).
    pub kind: String,
    /// The change's facts (entries, digests, class, and what changed), to check against the
    /// log: a JSON object.
    pub evidence: Value,
    /// The id of the previous event about the same target, `null` for its first.
    pub previous: Option<String>,
}

/// A body that has no RFC 8785 form (a number or a nesting `toolset`'s canonical writer
/// refuses).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the event body has no RFC 8785 form: {0}")]
pub struct EventBodyError(String);

impl EventBody {
    /// The body of an event of `kind` about `target`, observed at `observed_at`, after the
    /// event `previous` about the same target.
    pub fn new(
        target: EventTarget,
        observed_at: String,
        kind: String,
        evidence: serde_json::Map<String, Value>,
        previous: Option<String>,
    ) -> EventBody {
        EventBody {
            kind_of_document: EVENT_TYPE.to_owned(),
            target,
            observed_at,
            kind,
            evidence: Value::Object(evidence),
            previous,
        }
    }

    /// Its id: `sha256-` + base64 of SHA-256 over RFC 8785 of the body (numbers as
    /// ECMAScript writes them).
    ///
    /// # Errors
    ///
    /// [`EventBodyError`] for a body with no RFC 8785 form.
    pub fn id(&self) -> Result<String, EventBodyError> {
        let text = serde_json::to_string(self).map_err(|e| EventBodyError(e.to_string()))?;
        let parsed =
            toolmark_toolset::json::parse(&text).map_err(|e| EventBodyError(e.to_string()))?;
        let bytes = canon::to_vec(&parsed, Numbers::Ecmascript)
            .map_err(|e| EventBodyError(e.to_string()))?;
        Ok(Sri::of(&bytes).to_string())
    }
}

/// An event as the index stores it (`security_events.body`) and the API and webhooks sign it:
/// the body and its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// The body.
    #[serde(flatten)]
    pub body: EventBody,
    /// [`EventBody::id`] of the body.
    pub id: String,
}

impl StoredEvent {
    /// The body with its id.
    ///
    /// # Errors
    ///
    /// [`EventBodyError`] for a body with no RFC 8785 form.
    pub fn of(body: EventBody) -> Result<StoredEvent, EventBodyError> {
        let id = body.id()?;
        Ok(StoredEvent { body, id })
    }

    /// The stored text: compact JSON, members in code-point order.
    pub fn to_text(&self) -> String {
        // Through a `Value` (a map sorted by key): the same text the index has always stored.
        serde_json::to_value(self)
            .expect("an event serialises")
            .to_string()
    }

    /// Reads a stored text.
    ///
    /// # Errors
    ///
    /// Text that is not a stored event.
    pub fn parse(text: &str) -> Result<StoredEvent, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(previous: Option<&str>) -> EventBody {
        let mut evidence = serde_json::Map::new();
        evidence.insert("change".into(), json!(7));
        evidence.insert("class".into(), json!("dangerous"));
        EventBody::new(
            EventTarget {
                id: "0123456789abcdef".into(),
                name: "io.example/server".into(),
                endpoint: "npm:example".into(),
            },
            "2026-12-02T19:00:00Z".into(),
            "behaviour".into(),
            evidence,
            previous.map(str::to_owned),
        )
    }

    #[test]
    fn the_stored_text_reads_back_and_a_first_event_has_a_null_previous() {
        let e = StoredEvent::of(body(None)).unwrap();
        let text = e.to_text();
        assert!(text.contains(r#""previous":null"#), "{text}");
        assert!(
            text.starts_with(r#"{"evidence":"#),
            "members sorted: {text}"
        );
        assert_eq!(StoredEvent::parse(&text).unwrap(), e);
    }

    #[test]
    fn the_id_is_the_digest_of_the_body_alone() {
        let e = StoredEvent::of(body(Some("sha256-x"))).unwrap();
        assert!(e.id.starts_with("sha256-"));
        assert_ne!(e.id, StoredEvent::of(body(None)).unwrap().id);
        assert_eq!(e.body.id().unwrap(), e.id);
    }
}
