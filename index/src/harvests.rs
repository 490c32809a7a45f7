//! The registry's records as the last harvests left them, and the harvest bookkeeping a delta
//! starts from (tables `registry_records` and `registry_harvests`, schema version 3).
//!
//! Per registry (its base URL as the crawl was given it), the index keeps one [`RegistryItem`]
//! per server name: the `ServerResponse` item of the latest record, as JSON text, so a crawl can
//! rebuild every record and its targets without asking the registry again, and a
//! [`HarvestState`]: when the last complete harvest (full or delta) and the last complete full
//! harvest started, and the `updated_since` the next delta asks for.
//!
//! This module stores and reads; it does not decide what a harvest means (the ingest pipeline
//! merges deltas and chooses full or delta), parse items (the observation model does) or dial
//! anything. Like the rest of the index outside observations and changes, this is registry
//! metadata, not a fact of the log: [`Index::rebuild`](crate::Index::rebuild) leaves it alone,
//! and losing it only costs the next crawl a full harvest.

use rusqlite::{OptionalExtension, params};

use crate::index::{Index, IndexError};

/// One stored registry record: the latest version of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryItem {
    /// `server.name`.
    pub name: String,
    /// `server.version`.
    pub version: String,
    /// The `ServerResponse` item (`{"server": …, "_meta": …}`) as JSON text.
    pub item: String,
}

/// What kind of harvest completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarvestKind {
    /// The whole latest set (`version=latest`).
    Full,
    /// What changed since the previous complete harvest (`updated_since`), merged into the
    /// stored records.
    Delta,
}

impl HarvestKind {
    /// `full` or `delta`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            HarvestKind::Full => "full",
            HarvestKind::Delta => "delta",
        }
    }

    fn parse(s: &str) -> Option<HarvestKind> {
        match s {
            "full" => Some(HarvestKind::Full),
            "delta" => Some(HarvestKind::Delta),
            _ => None,
        }
    }
}

/// The harvest bookkeeping of one registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarvestState {
    /// When the last complete harvest (full or delta) started, RFC 3339 UTC.
    pub last_complete_at: String,
    /// Its kind.
    pub last_complete_kind: HarvestKind,
    /// The `updated_since` for the next delta: the last complete harvest's start less the
    /// crawler's clock-skew allowance.
    pub next_since: String,
    /// When the last complete full harvest started (`None`: none yet).
    pub last_full_at: Option<String>,
}

/// A harvest that read the registry to its last page, as [`Index::store_registry_items`]
/// records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedHarvest<'a> {
    /// Full or delta.
    pub kind: HarvestKind,
    /// When it started, RFC 3339 UTC.
    pub started_at: &'a str,
    /// The `updated_since` for the next delta.
    pub next_since: &'a str,
}

impl Index {
    /// The harvest bookkeeping of `registry`, if a complete harvest was ever stored for it.
    pub fn harvest_state(&self, registry: &str) -> Result<Option<HarvestState>, IndexError> {
        let row = self
            .conn
            .query_row(
                "SELECT last_complete_at, last_complete_mode, next_since, last_full_at
                 FROM registry_harvests WHERE registry = ?1",
                [registry],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                    ))
                },
            )
            .optional()?;
        row.map(|(last_complete_at, mode, next_since, last_full_at)| {
            let last_complete_kind = HarvestKind::parse(&mode).ok_or_else(|| {
                IndexError::Inconsistent(format!("registry_harvests mode {mode:?}"))
            })?;
            Ok(HarvestState {
                last_complete_at,
                last_complete_kind,
                next_since,
                last_full_at,
            })
        })
        .transpose()
    }

    /// Every stored record of `registry`, sorted by name.
    pub fn registry_items(&self, registry: &str) -> Result<Vec<RegistryItem>, IndexError> {
        let mut st = self.conn.prepare_cached(
            "SELECT name, version, item FROM registry_records WHERE registry = ?1 ORDER BY name",
        )?;
        let rows = st.query_map([registry], |r| {
            Ok(RegistryItem {
                name: r.get(0)?,
                version: r.get(1)?,
                item: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Replace the stored records of `registry` with `items` (one per name) and, when
    /// `completed` is given, record that harvest: it becomes the last complete one (its
    /// `next_since` the next delta's), and the last full one when it is [`HarvestKind::Full`].
    /// One transaction: a crash leaves the previous records and bookkeeping whole.
    pub fn store_registry_items(
        &mut self,
        registry: &str,
        items: &[RegistryItem],
        completed: Option<CompletedHarvest<'_>>,
    ) -> Result<(), IndexError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM registry_records WHERE registry = ?1",
            [registry],
        )?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO registry_records (registry, name, version, item)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for item in items {
                insert
                    .execute(params![registry, item.name, item.version, item.item])
                    .map_err(|e| match e {
                        rusqlite::Error::SqliteFailure(f, _)
                            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                        {
                            IndexError::Invalid(format!(
                                "registry record {:?} given twice",
                                item.name
                            ))
                        }
                        e => IndexError::Sql(e),
                    })?;
            }
        }
        if let Some(done) = completed {
            let full = (done.kind == HarvestKind::Full).then_some(done.started_at);
            tx.execute(
                "INSERT INTO registry_harvests
                     (registry, last_complete_at, last_complete_mode, next_since, last_full_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (registry) DO UPDATE SET
                     last_complete_at = excluded.last_complete_at,
                     last_complete_mode = excluded.last_complete_mode,
                     next_since = excluded.next_since,
                     last_full_at = coalesce(excluded.last_full_at, last_full_at)",
                params![
                    registry,
                    done.started_at,
                    done.kind.as_str(),
                    done.next_since,
                    full
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> (std::path::PathBuf, Index) {
        let d = std::env::temp_dir().join(format!(
            "toolmark-index-harvests-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let index = Index::open(&d.join("index.sqlite")).unwrap();
        (d, index)
    }

    fn item(name: &str, version: &str) -> RegistryItem {
        RegistryItem {
            name: name.into(),
            version: version.into(),
            item: format!(r#"{{"server":{{"name":"{name}","version":"{version}"}}}}"#),
        }
    }

    #[test]
    fn a_delta_keeps_the_last_full_time_and_a_full_moves_it() {
        let (dir, mut index) = scratch("state");
        let r = "http://registry.example";
        assert_eq!(index.harvest_state(r).unwrap(), None);
        let full = CompletedHarvest {
            kind: HarvestKind::Full,
            started_at: "2026-12-01T03:00:00.000Z",
            next_since: "2026-12-01T02:55:00.000Z",
        };
        index
            .store_registry_items(r, &[item("a/b", "1"), item("a/c", "1")], Some(full))
            .unwrap();
        let delta = CompletedHarvest {
            kind: HarvestKind::Delta,
            started_at: "2026-12-02T03:00:00.000Z",
            next_since: "2026-12-02T02:55:00.000Z",
        };
        index
            .store_registry_items(r, &[item("a/b", "2")], Some(delta))
            .unwrap();
        assert_eq!(
            index.harvest_state(r).unwrap(),
            Some(HarvestState {
                last_complete_at: "2026-12-02T03:00:00.000Z".into(),
                last_complete_kind: HarvestKind::Delta,
                next_since: "2026-12-02T02:55:00.000Z".into(),
                last_full_at: Some("2026-12-01T03:00:00.000Z".into()),
            })
        );
        assert_eq!(index.registry_items(r).unwrap(), [item("a/b", "2")]);
        // Another registry's records and bookkeeping are its own.
        assert!(index.registry_items("http://other").unwrap().is_empty());
        assert_eq!(index.harvest_state("http://other").unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn records_without_a_completed_harvest_leave_the_bookkeeping_alone() {
        let (dir, mut index) = scratch("nocomplete");
        let r = "http://registry.example";
        index
            .store_registry_items(r, &[item("a/b", "1")], None)
            .unwrap();
        assert_eq!(index.harvest_state(r).unwrap(), None);
        assert_eq!(index.registry_items(r).unwrap().len(), 1);
        let twice = index.store_registry_items(r, &[item("a/b", "1"), item("a/b", "2")], None);
        assert!(matches!(twice, Err(IndexError::Invalid(_))), "{twice:?}");
        // The refused write changed nothing.
        assert_eq!(index.registry_items(r).unwrap(), [item("a/b", "1")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
