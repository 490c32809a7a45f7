//! Security events: one unsigned event document per change a subscriber must hear about,
//! derived from the `changes` rows (so [`Index::rebuild`](crate::Index::rebuild) reproduces
//! them: same order, same `seq`, same ids) and read back by a lossless cursor.
//!
//! # Which changes are events
//!
//! A change of kind `behaviour` (a package version behaved otherwise), `registry` (a package's
//! registry signals changed: provenance lost, publisher changed, …), `authorization` (a
//! remote's authorization servers changed), `scan` (the rule set newly flags a target) and
//! `cloaking` (a second client identity was listed other tools) — every one of them — and a
//! change of kind `tools`, `instructions`, of a kind of the surface (`prompts`, `resources`,
//! `resourceTemplates`, `appPages`, `card`) or `card-mismatch` only when its class is
//! `dangerous` ([`is_event`]): a surface change is dangerous when a rule of
//! `toolmark_toolset::surface::diff` of that class fired (a new script or outside origin on an
//! app page, a widened CSP, a block-tier pattern in a prompt's text, …), a card mismatch when a
//! tool's definition on the card is not the one served. Other kinds are not events.
//!
//! # The stored body
//!
//! `security_events.body` is the event without its issuer and signature (added when it is
//! served or delivered; the format is documented in `docs/api.md`, "Security events"): a
//! [`toolmark_observation::event::StoredEvent`], the one type of the body and its id that
//! `toolmark_client` signs and reads back:
//!
//! ```json
//! {"type": "toolmark.security-event/v1",
//!  "target": {"id": "<16 hex>", "name": "<server>", "endpoint": "<URL or npm:…/pypi:…>"},
//!  "observedAt": "<the change's new entry's time>",
//!  "kind": "behaviour|registry|authorization|tools|instructions|scan|prompts|resources|…",
//!  "evidence": {"change": <change id>, "oldEntry": n, "newEntry": n, "class": "…", …},
//!  "previous": "<the previous event's id for this target>" | null,
//!  "id": "sha256-<base64 of SHA-256 of RFC 8785 of the body without id>"}
//! ```
//!
//! `evidence` holds every column of the change row that is set, named in camelCase (`change`
//! for its id): the entries and digests it compares, the class, the counts, and the JSON
//! columns parsed (the diff and classification of a tool-set change, the authorization servers
//! before and after, the behaviour change, and whatever a newer kind adds), so a reader can
//! check it against the log and the stored documents. The issuer is not in the body: the index
//! cannot know the answer key's public name (it is the service's base URL), so the API adds
//! `issuer` when it signs, outside the id (the signature covers it).
//!
//! # Table (schema version 5)
//!
//! `security_events(seq, id, target_id, kind, observed_at, change_id, body)`: `seq` is the
//! cursor, assigned in change order; rows are only ever appended (a rebuild deletes them and
//! derives them again in the same order; migrating an older database derives the events of the
//! changes it holds, in the same order). Events are written in the transaction that writes
//! their changes, so a reader sees them in `seq` order with no gaps.
//!
//! It never signs (the API and `toolmark-webhooks` do, with the answer key, through
//! `toolmark_client::sign_event`) and never delivers (`toolmark-webhooks` does).

use rusqlite::types::ValueRef;
use rusqlite::{OptionalExtension, Row, Transaction, params, params_from_iter};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::index::{Index, IndexError};
use crate::rows::int;

/// The event document's `type`; the body is one type with its readers
/// ([`toolmark_observation::event`]).
pub use toolmark_observation::event::EVENT_TYPE;
use toolmark_observation::event::{EventBody, EventTarget, StoredEvent};

/// Most events one query returns (the API's `limit` is capped lower).
pub const MAX_EVENT_ROWS: u32 = 1_000;

/// Version 5: the security events (see the module documentation). Migrating an older database
/// creates the table and derives the events of the changes it holds ([`backfill`]).
pub(crate) const EVENT_TABLES: &str = "
CREATE TABLE IF NOT EXISTS security_events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    change_id INTEGER NOT NULL UNIQUE,
    body TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS security_events_target ON security_events (target_id, seq);
";

/// Whether a change of `kind` and `class` is a security event.
pub fn is_event(kind: &str, class: &str) -> bool {
    match kind {
        "behaviour" | "registry" | "authorization" | "scan" | "cloaking" => true,
        "tools" | "instructions" | "prompts" | "resources" | "resourceTemplates" | "appPages"
        | "card" | "card-mismatch" => class == "dangerous",
        _ => false,
    }
}

/// One stored security event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityEventRow {
    /// Its cursor position: events are numbered from 1 in the order they were derived.
    pub seq: u64,
    /// `sha256-…` of RFC 8785 of the body without `id`.
    pub id: String,
    /// The target it is about.
    pub target_id: String,
    /// The kind of change.
    pub kind: String,
    /// When the change was observed.
    pub observed_at: String,
    /// The change it reports.
    pub change_id: i64,
    /// The unsigned event document (JSON text, with `id`, without `issuer` and `signature`).
    pub body: String,
}

const EVENT_COLS: &str = "seq, id, target_id, kind, observed_at, change_id, body";

fn event_row(r: &Row<'_>) -> rusqlite::Result<SecurityEventRow> {
    let seq: i64 = r.get(0)?;
    Ok(SecurityEventRow {
        seq: u64::try_from(seq).unwrap_or(0),
        id: r.get(1)?,
        target_id: r.get(2)?,
        kind: r.get(3)?,
        observed_at: r.get(4)?,
        change_id: r.get(5)?,
        body: r.get(6)?,
    })
}

/// The change columns that hold JSON (read as JSON into the evidence; every other text column
/// stays text). A column a later kind adds is text until it is named here.
const JSON_COLUMNS: &[&str] = &[
    "classification",
    "old_auth",
    "new_auth",
    "old_behaviour",
    "new_behaviour",
    "old_registry",
    "new_registry",
];

/// Most signals an event's evidence lists (the change itself lists them all, up to
/// `toolset::classify::MAX_SIGNALS`).
pub const MAX_EVIDENCE_SIGNALS: usize = 50;

/// A tool-set change's classification as evidence: its class, and per signal only the rule,
/// its class, the tool (or a surface change's item) and the path — not the old and new values, which a server chooses and
/// `/api/v1/changes/{change}` shows — at most [`MAX_EVIDENCE_SIGNALS`], with the count left out.
fn compact_classification(v: Value) -> Value {
    if v.get("matches").is_some() {
        return compact_scan(v);
    }
    let signals = v["signals"].as_array().cloned().unwrap_or_default();
    let truncated = v["signalsTruncated"].as_u64().unwrap_or(0);
    let kept: Vec<Value> = signals
        .iter()
        .take(MAX_EVIDENCE_SIGNALS)
        .map(|s| {
            let mut out = Map::new();
            for k in ["rule", "class", "tool", "item", "path"] {
                if let Some(x) = s.get(k) {
                    out.insert(k.to_owned(), x.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    let left_out = truncated + (signals.len() - kept.len()) as u64;
    serde_json::json!({
        "class": v["class"],
        "signals": kept,
        "signalsLeftOut": left_out,
    })
}

/// A `scan` change's facts ([`crate::scans::BecameFlagged`]) as evidence: the rule set, the
/// counts, the classes and the first [`MAX_EVIDENCE_SIGNALS`] matches (where each is: code,
/// class, tier, tool, field and span — no text), with the count left out.
fn compact_scan(v: Value) -> Value {
    let matches = v["matches"].as_array().cloned().unwrap_or_default();
    let truncated = v["truncated"].as_u64().unwrap_or(0);
    let kept: Vec<Value> = matches.iter().take(MAX_EVIDENCE_SIGNALS).cloned().collect();
    let left_out = truncated + (matches.len() - kept.len()) as u64;
    serde_json::json!({
        "rules": v["rules"],
        "rulesDigest": v["rulesDigest"],
        "block": v["block"],
        "advise": v["advise"],
        "classes": v["classes"],
        "matches": kept,
        "matchesLeftOut": left_out,
    })
}

/// Change columns that go into the event's top level or `target`, not into `evidence`.
const NOT_EVIDENCE: &[&str] = &["target_id", "server", "endpoint", "observed_at", "kind"];

/// `snake_case` → `camelCase`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Derive the events of the changes entry `index` made (in change-id order) that have none
/// yet. Called once per indexed entry, inside the transaction that wrote its changes.
pub(crate) fn derive(tx: &Transaction, index: u64) -> Result<(), IndexError> {
    let changes: Vec<i64> = tx
        .prepare_cached(
            "SELECT c.id FROM changes c WHERE c.new_entry = ?1
                 AND NOT EXISTS (SELECT 1 FROM security_events e WHERE e.change_id = c.id)
             ORDER BY c.id",
        )?
        .query_map([int(index)?], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for change in changes {
        derive_one(tx, change)?;
    }
    Ok(())
}

/// Derive the events of every change that has none, in change-id order: run once when an
/// older database is migrated to version 5, so the changes it already holds get the events a
/// rebuild would give them (same order, same ids: events follow change ids either way).
pub(crate) fn backfill(tx: &Transaction) -> Result<(), IndexError> {
    let changes: Vec<i64> = tx
        .prepare(
            "SELECT c.id FROM changes c
             WHERE NOT EXISTS (SELECT 1 FROM security_events e WHERE e.change_id = c.id)
             ORDER BY c.id",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for change in changes {
        derive_one(tx, change)?;
    }
    Ok(())
}

fn derive_one(tx: &Transaction, change: i64) -> Result<(), IndexError> {
    // Every column, so a kind that adds columns has them in its evidence without this code
    // knowing them.
    let mut st = tx.prepare_cached("SELECT * FROM changes WHERE id = ?1")?;
    let names: Vec<String> = st.column_names().map(str::to_owned).collect();
    let mut row = Map::new();
    let mut evidence = Map::new();
    st.query_row([change], |r| {
        for (i, name) in names.iter().enumerate() {
            let value = match r.get_ref(i)? {
                ValueRef::Null => continue,
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(f) => Value::from(f),
                ValueRef::Text(t) => {
                    let t = String::from_utf8_lossy(t).into_owned();
                    if t.is_empty() || name == "diff" {
                        // The diff (word diffs, schema paths: as large as the server made
                        // them) stays behind `/api/v1/changes/{change}`; the digests and the
                        // classification's signals say what changed.
                        continue;
                    }
                    if JSON_COLUMNS.contains(&name.as_str()) {
                        let v = serde_json::from_str::<Value>(&t).map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(
                                i,
                                rusqlite::types::Type::Text,
                                Box::new(e),
                            )
                        })?;
                        if name == "classification" {
                            compact_classification(v)
                        } else {
                            v
                        }
                    } else {
                        Value::String(t)
                    }
                }
                ValueRef::Blob(_) => continue,
            };
            if NOT_EVIDENCE.contains(&name.as_str()) {
                row.insert(name.clone(), value);
            } else if name == "id" {
                evidence.insert("change".into(), value);
            } else {
                evidence.insert(camel(name), value);
            }
        }
        Ok(())
    })?;
    let text = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let (target_id, kind, observed_at) = (text("target_id"), text("kind"), text("observed_at"));
    let class = evidence.get("class").and_then(Value::as_str).unwrap_or("");
    if !is_event(&kind, class) {
        return Ok(());
    }
    let previous: Option<String> = tx
        .prepare_cached(
            "SELECT id FROM security_events WHERE target_id = ?1 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row([&target_id], |r| r.get(0))
        .optional()?;
    let body = EventBody::new(
        EventTarget {
            id: target_id.clone(),
            name: text("server"),
            endpoint: text("endpoint"),
        },
        observed_at.clone(),
        kind.clone(),
        evidence,
        previous,
    );
    let event =
        StoredEvent::of(body).map_err(|e| IndexError::Inconsistent(format!("event body: {e}")))?;
    tx.prepare_cached(
        "INSERT INTO security_events (id, target_id, kind, observed_at, change_id, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        event.id,
        target_id,
        kind,
        observed_at,
        change,
        event.to_text()
    ])?;
    Ok(())
}

/// What [`Index::security_events`] selects.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventQuery<'a> {
    /// Only events with a `seq` above this one, oldest first (reading forwards, the cursor).
    pub after: Option<u64>,
    /// Only events with a `seq` below this one (with no `after`: newest first, a feed's page).
    pub before: Option<u64>,
    /// Only events of these targets (ids); an empty list selects nothing.
    pub targets: Option<&'a [String]>,
    /// At most this many (capped at [`MAX_EVENT_ROWS`]).
    pub limit: u32,
}

impl Index {
    /// The events `q` selects: `seq` ascending above `q.after` when it is given, else
    /// descending (newest first); below `q.before` when given; at most `q.limit`.
    pub fn security_events(&self, q: &EventQuery<'_>) -> Result<Vec<SecurityEventRow>, IndexError> {
        use rusqlite::types::Value as Sql;
        let mut sql = format!("SELECT {EVENT_COLS} FROM security_events WHERE 1");
        let mut args: Vec<Sql> = Vec::new();
        let seq = |n: u64| Sql::Integer(i64::try_from(n).unwrap_or(i64::MAX));
        if let Some(a) = q.after {
            sql.push_str(" AND seq > ?");
            args.push(seq(a));
        }
        if let Some(b) = q.before {
            sql.push_str(" AND seq < ?");
            args.push(seq(b));
        }
        if let Some(targets) = q.targets {
            crate::queries::only_targets(&mut sql, &mut args, targets);
        }
        sql.push_str(if q.after.is_some() {
            " ORDER BY seq ASC LIMIT ?"
        } else {
            " ORDER BY seq DESC LIMIT ?"
        });
        args.push(Sql::Integer(i64::from(q.limit.min(MAX_EVENT_ROWS))));
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map(params_from_iter(&args), event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One event by its id (`sha256-…`).
    pub fn security_event(&self, id: &str) -> Result<Option<SecurityEventRow>, IndexError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {EVENT_COLS} FROM security_events WHERE id = ?1"),
                [id],
                event_row,
            )
            .optional()?)
    }

    /// The highest `seq` there is (0 when there are no events).
    pub fn last_security_event_seq(&self) -> Result<u64, IndexError> {
        let seq: Option<i64> =
            self.conn
                .query_row("SELECT MAX(seq) FROM security_events", [], |r| r.get(0))?;
        Ok(seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dangerous_tool_changes_and_signal_changes_are_events() {
        assert!(is_event("tools", "dangerous"));
        assert!(!is_event("tools", "unsure"));
        assert!(!is_event("tools", "benign"));
        for kind in ["behaviour", "registry", "authorization"] {
            assert!(is_event(kind, "benign"), "{kind}");
        }
        assert!(!is_event("lookalike", "dangerous"));
    }

    #[test]
    fn column_names_become_camel_case() {
        assert_eq!(camel("old_behaviour"), "oldBehaviour");
        assert_eq!(camel("new_entry"), "newEntry");
        assert_eq!(camel("class"), "class");
    }

    #[test]
    fn evidence_lists_at_most_fifty_signals_without_their_values_and_counts_the_rest() {
        let signals: Vec<Value> = (0..70)
            .map(|i| {
                serde_json::json!({"rule": "description-changed", "class": "unsure",
                    "tool": format!("t{i}"), "path": "$['description']",
                    "old": "x".repeat(500), "new": "y".repeat(500), "detail": "d"})
            })
            .collect();
        let v = compact_classification(serde_json::json!({
            "class": "unsure", "tools": [], "signals": signals, "signalsTruncated": 5
        }));
        let kept = v["signals"].as_array().unwrap();
        assert_eq!(kept.len(), MAX_EVIDENCE_SIGNALS);
        assert_eq!(v["signalsLeftOut"], 25);
        assert_eq!(kept[0]["tool"], "t0");
        assert!(
            kept.iter()
                .all(|s| s.get("old").is_none() && s.get("detail").is_none())
        );
        assert_eq!(v["class"], "unsure");
    }

    /// The body as `derive_one` wrote it before it had a type (a `json!` object, `id` added
    /// after hashing RFC 8785 of the rest): the id and the stored text.
    fn untyped(
        target: [&str; 3],
        at: &str,
        kind: &str,
        evidence: &Value,
        previous: Option<&str>,
    ) -> (String, String) {
        let mut body = serde_json::json!({
            "type": EVENT_TYPE,
            "target": {"id": target[0], "name": target[1], "endpoint": target[2]},
            "observedAt": at,
            "kind": kind,
            "evidence": evidence,
            "previous": previous,
        });
        let text = serde_json::to_string(&body).unwrap();
        let parsed = toolmark_toolset::json::parse(&text).unwrap();
        let bytes =
            toolmark_toolset::canon::to_vec(&parsed, toolmark_toolset::canon::Numbers::Ecmascript)
                .unwrap();
        let id = toolmark_toolset::Sri::of(&bytes).to_string();
        body["id"] = Value::String(id.clone());
        (id, body.to_string())
    }

    #[test]
    fn every_kind_of_event_keeps_the_id_and_stored_text_it_had_as_untyped_json() {
        let evidence = |v: Value| v.as_object().unwrap().clone();
        let base = serde_json::json!({"change": 12, "oldEntry": 3, "newEntry": 41,
            "oldFull": "sha256-AAAA", "newFull": "sha256-BBBB", "added": 0, "removed": 0,
            "modified": 1});
        let with = |extra: Value| {
            let mut m = evidence(base.clone());
            m.extend(evidence(extra));
            m
        };
        let kinds = [
            (
                "tools",
                with(
                    serde_json::json!({"class": "dangerous", "oldMtl1": "sha256-m1",
                "classification": {"class": "dangerous", "signals": [{"rule": "description-changed",
                "class": "dangerous", "tool": "t\u{e9}", "path": "$['description']"}],
                "signalsLeftOut": 0}}),
                ),
            ),
            (
                "authorization",
                with(serde_json::json!({"class": "dangerous",
                "oldAuth": ["https://a.example"], "newAuth": ["https://b.example", "https://c.example"]})),
            ),
            (
                "behaviour",
                with(serde_json::json!({"class": "dangerous",
                "oldBehaviour": {"version": "0.1.0"},
                "newBehaviour": {"version": "0.2.0", "change": {"class": "dangerous",
                    "findings_added": ["startup READS_SECRETS"], "findings_removed": [],
                    "acts_added": ["startup decoy .ssh/id_rsa"], "acts_removed": []}}})),
            ),
            (
                "registry",
                with(serde_json::json!({"class": "dangerous",
                "oldRegistry": {"version": "1.0.0"},
                "newRegistry": {"version": "1.0.1", "comparison": {"flags": ["provenance-lost"],
                    "big": 4_294_967_296_u64, "none": null, "yes": true}}})),
            ),
        ];
        let target = [
            "0123456789abcdef",
            "io.example/server \u{2603}",
            "npm:@acme/pkg",
        ];
        for (kind, evidence) in kinds {
            for previous in [None, Some("sha256-previousEventId=")] {
                let (id, text) = untyped(
                    target,
                    "2026-12-02T19:00:00Z",
                    kind,
                    &Value::Object(evidence.clone()),
                    previous,
                );
                let typed = StoredEvent::of(EventBody::new(
                    EventTarget {
                        id: target[0].into(),
                        name: target[1].into(),
                        endpoint: target[2].into(),
                    },
                    "2026-12-02T19:00:00Z".into(),
                    kind.into(),
                    evidence.clone(),
                    previous.map(str::to_owned),
                ))
                .unwrap();
                assert_eq!(typed.id, id, "{kind}");
                assert_eq!(typed.to_text(), text, "{kind}");
            }
        }
    }
}
