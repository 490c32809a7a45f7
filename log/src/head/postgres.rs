//! The cluster's head store: PostgreSQL 15, shared by every writer of the log.
//!
//! The head is one row (`tlog_head`, `id = 1`), changed by `UPDATE … WHERE size = $old AND
//! root = $old_root` inside a transaction that first locks the row (`FOR UPDATE`), checks the
//! rules of [`super::check_swap`], then records the checkpoint note, the subjects' newest
//! entries and the dedup keys (`tlog_logged`'s primary key makes a second logging of the same
//! observation fail the whole commit). The lease (`tlog_lease`) has an expiry; it only spares
//! writers from computing batches that would lose the compare-and-swap.
//!
//! Connections are plain TCP (`NoTls`): run it on loopback or a private network (TLS to the
//! database is not built yet). Every statement is bounded by [`STATEMENT_TIMEOUT`]. Every
//! session asks for `synchronous_commit = on` whatever the server's default: a compare-and-swap
//! MUST be durable when it returns (a server set to `off` would lose the last commits in a crash,
//! and the log would then find the bucket's checkpoint ahead of its head store and refuse to go
//! on).

use super::{DedupKey, HeadStore, check_swap};
use crate::merkle::Hash;
use crate::store::{Head, StoreError};
use postgres::{Client, NoTls, Statement};
use std::collections::HashMap;
use std::time::Duration;

/// The longest one statement may run (`statement_timeout`), and the longest a statement waits
/// for the head row's lock (`lock_timeout`): a stalled database costs a writer this much per
/// statement before it stops with an error.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest connecting to the database may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tlog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tlog_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    size BIGINT NOT NULL,
    root BYTEA NOT NULL,
    signed_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS tlog_checkpoints (
    size BIGINT PRIMARY KEY,
    root BYTEA NOT NULL,
    note BYTEA NOT NULL,
    signed_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS tlog_subjects (id TEXT PRIMARY KEY, last BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS tlog_logged (key BYTEA PRIMARY KEY, idx BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS tlog_applied (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    size BIGINT NOT NULL,
    root BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS tlog_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    expires TIMESTAMPTZ NOT NULL
);
";

/// An arbitrary constant: the advisory lock that serialises schema creation.
const SCHEMA_LOCK: i64 = 0x746c_6f67_7363_6865;

/// A PostgreSQL head store (one log per database).
pub struct PgHead {
    client: Client,
    url: String,
    /// The statements of every append, prepared once on this connection: a statement given as
    /// text is prepared again on every call, a round trip more each (the `postgres` crate does
    /// not cache them), and an append runs about a dozen in a row.
    prepared: HashMap<&'static str, Statement>,
}

fn db(e: postgres::Error) -> StoreError {
    use std::error::Error;
    StoreError::Postgres(match e.source() {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    })
}

/// The URL without its password, for messages; a connection string that is not a URL
/// (`host=… password=…`) is not shown at all.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{user}@{}", &url[..s + 3], &url[at + 1..])
        }
        // A password may also be given in the query.
        (Some(_), _) if url.contains("password") => match url.split_once('?') {
            Some((base, _)) => format!("{base}?…"),
            None => url.to_owned(),
        },
        (Some(_), _) => url.to_owned(),
        (None, _) => "(a PostgreSQL connection string)".to_owned(),
    }
}

impl PgHead {
    /// Connect to `url` (`postgres://user:password@host:port/db`) and create the tables if
    /// they are missing.
    pub fn connect(url: &str) -> Result<PgHead, StoreError> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Postgres(format!("{}: {e}", redact(url))))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.options(&format!(
            // `client_min_messages`: the schema's `IF NOT EXISTS` notices are not worth a log
            // line in every process that connects.
            "-c statement_timeout={} -c lock_timeout={} -c synchronous_commit=on \
             -c client_min_messages=warning",
            STATEMENT_TIMEOUT.as_millis(),
            STATEMENT_TIMEOUT.as_millis()
        ));
        let client = config
            .connect(NoTls)
            .map_err(|e| StoreError::Postgres(format!("{}: {e}", redact(url))))?;
        let mut me = PgHead {
            client,
            url: redact(url),
            prepared: HashMap::new(),
        };
        let mut tx = me.client.transaction().map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .map_err(db)?;
        tx.batch_execute(SCHEMA).map_err(db)?;
        // The dedup keys' format (`super::META_KEY_FORMAT`): checked once, then marked.
        let format: Option<String> = tx
            .query_opt(
                "SELECT value FROM tlog_meta WHERE key = $1",
                &[&super::META_KEY_FORMAT],
            )
            .map_err(db)?
            .map(|r| r.get(0));
        if format.as_deref() != Some(super::KEY_FORMAT) {
            let other = tx
                .query_opt(
                    "SELECT 1 FROM tlog_logged WHERE octet_length(key) <> 24 LIMIT 1",
                    &[],
                )
                .map_err(db)?;
            if other.is_some() {
                return Err(super::old_key_format(&redact(url)));
            }
            tx.execute(
                "INSERT INTO tlog_meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&super::META_KEY_FORMAT, &super::KEY_FORMAT],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)?;
        Ok(me)
    }

    /// `sql` prepared on this connection, once (see `prepared`).
    fn statement(&mut self, sql: &'static str) -> Result<Statement, StoreError> {
        if let Some(st) = self.prepared.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(sql).map_err(db)?;
        self.prepared.insert(sql, st.clone());
        Ok(st)
    }

    fn head_at(&mut self, size: Option<u64>) -> Result<Option<Head>, StoreError> {
        let row = match size {
            None => {
                let st = self.statement(
                    "SELECT c.size, c.root, c.note, c.signed_at FROM tlog_head h
                     JOIN tlog_checkpoints c ON c.size = h.size WHERE h.id = 1",
                )?;
                self.client.query_opt(&st, &[])
            }
            Some(s) => self.client.query_opt(
                "SELECT size, root, note, signed_at FROM tlog_checkpoints WHERE size = $1",
                &[&(s as i64)],
            ),
        }
        .map_err(db)?;
        Ok(row.map(|r| {
            let root: Vec<u8> = r.get(1);
            Head {
                size: r.get::<_, i64>(0) as u64,
                root: Hash(root.try_into().unwrap_or([0; 32])),
                note: r.get(2),
                signed_at: r.get::<_, i64>(3) as u64,
            }
        }))
    }
}

impl HeadStore for PgHead {
    fn head(&mut self) -> Result<Option<Head>, StoreError> {
        self.head_at(None)
    }

    fn checkpoint_at(&mut self, size: u64) -> Result<Option<Head>, StoreError> {
        self.head_at(Some(size))
    }

    fn commit(
        &mut self,
        expected: Option<(u64, Hash)>,
        new: &Head,
        subjects: &[(String, u64)],
        keys: &[(DedupKey, u64)],
    ) -> Result<(), StoreError> {
        let lock =
            self.statement("SELECT size, root, signed_at FROM tlog_head WHERE id = 1 FOR UPDATE")?;
        let insert_head = self.statement(
            "INSERT INTO tlog_head (id, size, root, signed_at) VALUES (1, $1, $2, $3)
             ON CONFLICT (id) DO NOTHING",
        )?;
        let update_head = self.statement(
            "UPDATE tlog_head SET size = $1, root = $2, signed_at = $3
             WHERE id = 1 AND size = $4 AND root = $5",
        )?;
        let insert_checkpoint = self.statement(
            "INSERT INTO tlog_checkpoints (size, root, note, signed_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (size) DO UPDATE SET note = excluded.note, signed_at = excluded.signed_at
             WHERE tlog_checkpoints.root = excluded.root",
        )?;
        let upsert_subjects = self.statement(
            "INSERT INTO tlog_subjects (id, last) SELECT * FROM UNNEST($1::text[], $2::int8[])
             ON CONFLICT (id) DO UPDATE SET last = excluded.last",
        )?;
        let insert_keys = self.statement(
            "INSERT INTO tlog_logged (key, idx) SELECT * FROM UNNEST($1::bytea[], $2::int8[])",
        )?;
        let mut tx = self.client.transaction().map_err(db)?;
        let current = tx.query_opt(&lock, &[]).map_err(db)?.map(|r| {
            (
                r.get::<_, i64>(0) as u64,
                r.get::<_, Vec<u8>>(1),
                r.get::<_, i64>(2) as u64,
            )
        });
        check_swap(
            current.as_ref().map(|c| (c.0, c.1.as_slice(), c.2)),
            expected,
            new,
        )?;
        let size = new.size as i64;
        let at = new.signed_at as i64;
        let root = new.root.0.as_slice();
        let n = match &current {
            // Two writers initialising at once: the primary key lets one row in.
            None => tx.execute(&insert_head, &[&size, &root, &at]),
            Some((os, or, _)) => tx.execute(&update_head, &[&size, &root, &at, &(*os as i64), or]),
        }
        .map_err(db)?;
        if n != 1 {
            return Err(StoreError::Conflict {
                expected: expected.map(|e| e.0),
                found: None,
            });
        }
        // One row: a row of this size with another root would be a fork (the check above
        // refuses it for the current head; this refuses it for any other).
        if tx
            .execute(&insert_checkpoint, &[&size, &root, &new.note, &at])
            .map_err(db)?
            != 1
        {
            return Err(StoreError::Fatal(format!(
                "the head store holds another root at size {}",
                new.size
            )));
        }
        if !subjects.is_empty() {
            let ids: Vec<&str> = subjects.iter().map(|(s, _)| s.as_str()).collect();
            let lasts: Vec<i64> = subjects.iter().map(|(_, l)| *l as i64).collect();
            tx.execute(&upsert_subjects, &[&ids, &lasts]).map_err(db)?;
        }
        if !keys.is_empty() {
            let ks: Vec<&[u8]> = keys.iter().map(|(k, _)| k.as_slice()).collect();
            let idx: Vec<i64> = keys.iter().map(|(_, i)| *i as i64).collect();
            tx.execute(&insert_keys, &[&ks, &idx]).map_err(|e| {
                if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) {
                    StoreError::Conflict {
                        expected: expected.map(|e| e.0),
                        found: None,
                    }
                } else {
                    db(e)
                }
            })?;
        }
        tx.commit().map_err(db)
    }

    fn subjects_last(&mut self, ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let st = self.statement("SELECT id, last FROM tlog_subjects WHERE id = ANY($1)")?;
        let rows = self.client.query(&st, &[&ids]).map_err(db)?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
            .collect())
    }

    fn logged(&mut self, keys: &[DedupKey]) -> Result<Vec<(DedupKey, u64)>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let ks: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let st = self.statement("SELECT key, idx FROM tlog_logged WHERE key = ANY($1)")?;
        let rows = self.client.query(&st, &[&ks]).map_err(db)?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let k: Vec<u8> = r.get(0);
                Some((k.try_into().ok()?, r.get::<_, i64>(1) as u64))
            })
            .collect())
    }

    fn applied(&mut self) -> Result<Option<(u64, Hash)>, StoreError> {
        let st = self.statement("SELECT size, root FROM tlog_applied WHERE id = 1")?;
        let row = self.client.query_opt(&st, &[]).map_err(db)?;
        Ok(row.map(|r| {
            let root: Vec<u8> = r.get(1);
            (
                r.get::<_, i64>(0) as u64,
                Hash(root.try_into().unwrap_or([0; 32])),
            )
        }))
    }

    fn set_applied(&mut self, size: u64, root: Hash) -> Result<(), StoreError> {
        // Only forward: a slower writer finishing an older head must not move it back.
        let st = self.statement(
            "INSERT INTO tlog_applied (id, size, root) VALUES (1, $1, $2)
             ON CONFLICT (id) DO UPDATE SET size = excluded.size, root = excluded.root
             WHERE tlog_applied.size < excluded.size",
        )?;
        self.client
            .execute(&st, &[&(size as i64), &root.0.as_slice()])
            .map_err(db)?;
        Ok(())
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .client
            .query_opt("SELECT value FROM tlog_meta WHERE key = $1", &[&key])
            .map_err(db)?
            .map(|r| r.get(0)))
    }

    fn set_meta(&mut self, key: &str, value: Option<&str>) -> Result<(), StoreError> {
        match value {
            Some(v) => self.client.execute(
                "INSERT INTO tlog_meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &v],
            ),
            None => self
                .client
                .execute("DELETE FROM tlog_meta WHERE key = $1", &[&key]),
        }
        .map_err(db)?;
        Ok(())
    }

    fn try_lease(&mut self, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        let ms = ttl.as_millis() as i64;
        let st = self.statement(
            "INSERT INTO tlog_lease (id, holder, expires)
             VALUES (1, $1, now() + $2::bigint * interval '1 millisecond')
             ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
             WHERE tlog_lease.holder = excluded.holder OR tlog_lease.expires < now()",
        )?;
        let n = self.client.execute(&st, &[&holder, &ms]).map_err(db)?;
        Ok(n == 1)
    }

    fn release_lease(&mut self, holder: &str) -> Result<(), StoreError> {
        let st = self.statement("DELETE FROM tlog_lease WHERE holder = $1")?;
        self.client.execute(&st, &[&holder]).map_err(db)?;
        Ok(())
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn urls_lose_their_password_in_messages() {
        assert_eq!(
            redact("postgres://tm:secret@db.example:5432/log"),
            "postgres://tm@db.example:5432/log"
        );
        assert_eq!(
            redact("postgres://127.0.0.1/log"),
            "postgres://127.0.0.1/log"
        );
        assert!(!redact("host=db.example user=tm password=secret").contains("secret"));
        assert_eq!(
            redact("postgres://db.example/log?user=tm&password=secret"),
            "postgres://db.example/log?…"
        );
    }
}
