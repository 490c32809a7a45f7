//! Copying a single-box log into other stores (PostgreSQL and a bucket), as Tessera's migration
//! mode does: every public object is copied create-only, the copy is verified from the
//! destination alone against the source's signed head, and only then is the head committed in
//! the destination's head store and its checkpoint published. Until that commit the
//! destination has no head and serves no checkpoint, so two canonical copies of the log never
//! both accept appends: once it returns, the source must be retired (its writer lock is held
//! for the whole copy, so nobody appends to it meanwhile).
//!
//! It holds every entry's dedup key and each subject's newest index in memory (24 bytes an
//! entry, plus the subjects) and commits them in one transaction.

use crate::head::DedupKey;
use crate::note::LogKey;
use crate::sequencer::{Log, LogError, dedup_key};
use crate::store::{self, LogStores, StoreError};
use crate::tiles;
use crate::verify::{self, Source};

/// The most objects one migration lists under `tile/`.
pub const MAX_MIGRATED_OBJECTS: usize = 50_000_000;

/// What a migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The tree size migrated (the destination's head).
    pub size: u64,
    /// Entries verified and indexed (subjects, dedup keys).
    pub entries: u64,
    /// Objects written to the destination.
    pub copied: u64,
    /// Objects already there with the same bytes (a migration run again after a failure).
    pub present: u64,
}

/// The destination's public files, with the source's signed checkpoint in place of its own
/// (which does not exist yet).
struct Staged<'a> {
    note: &'a [u8],
    public: &'a crate::objects::Objects,
}

impl Source for Staged<'_> {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        if path == "checkpoint" {
            return Ok(Some(self.note.to_vec()));
        }
        self.public.get(path).map_err(|e| e.to_string())
    }

    fn concurrent(&self) -> Option<&(dyn Source + Sync)> {
        Some(self)
    }
}

/// Copy the single-box log in the directory `dir` (its stores, and its signing key in
/// [`KEY_FILE`](crate::KEY_FILE)) to `to`: `toolmark log migrate DIR`.
pub fn migrate_dir(dir: &std::path::Path, to: LogStores) -> Result<Migrated, LogError> {
    let from = LogStores::dir(dir)?;
    let key = crate::sequencer::read_key(&dir.join(crate::KEY_FILE))?;
    migrate(from, to, key)
}

/// Copy the log in `from` (opened with its recovery, under its writer lock) to `to`, whose head
/// store must hold no log. `key` is the log's signing key.
pub fn migrate(from: LogStores, mut to: LogStores, key: LogKey) -> Result<Migrated, LogError> {
    let clock = crate::sequencer::system_clock();
    let vkey = key.vkey();
    let origin = key.name().to_owned();
    let mut src = Log::open_with(from, key, clock)?;
    let head = src.head().clone();
    let publication = src.head_store().meta("publication")?;
    // A head, or another log's key, means a log is there. This log's key alone is a migration
    // that stopped before its commit: run it again.
    if to.head.head()?.is_some() || to.head.meta("vkey")?.is_some_and(|v| v != vkey) {
        return Err(LogError::Refused(format!(
            "{} already holds a log: migration writes only into an empty head store",
            to.head.describe()
        )));
    }
    let from_public = src.public().clone();
    let to_public = to.public();
    let mut paths = from_public
        .list("tile", MAX_MIGRATED_OBJECTS)
        .map_err(StoreError::from)?;
    paths.push("vkey".into());
    let (mut copied, mut present) = (0u64, 0u64);
    for p in &paths {
        let bytes = from_public
            .get(p)
            .map_err(StoreError::from)?
            .ok_or_else(|| LogError::Refused(format!("{p} vanished from the source")))?;
        match to_public
            .put_create(p, bytes.as_slice())
            .map_err(StoreError::from)?
        {
            crate::objects::Created::New => copied += 1,
            crate::objects::Created::Identical => present += 1,
        }
    }
    to_public.flush().map_err(StoreError::from)?;
    // The copy alone must give the signed root, every tile and every entry.
    let report = verify::fsck(
        &Staged {
            note: &head.note,
            public: &to_public,
        },
        &vkey,
    )
    .map_err(|e| LogError::Refused(format!("the copy does not verify: {e}")))?;
    if report.checkpoint.size != head.size || report.checkpoint.root != head.root {
        return Err(LogError::Refused("the copy verified another head".into()));
    }
    // Each subject's newest entry and every entry's dedup key, from the copy's bundles.
    let mut subjects: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut keys: Vec<(DedupKey, u64)> = Vec::with_capacity(head.size as usize);
    let mut b = 0u64;
    while b * 256 < head.size {
        let width = ((b + 1) * 256).min(head.size) - b * 256;
        let path = tiles::bundle_path(b, width as u16);
        let bytes = to_public
            .get(&path)
            .map_err(StoreError::from)?
            .ok_or_else(|| LogError::Refused(format!("{path} is missing from the copy")))?;
        for (i, raw) in tiles::decode_bundle(&bytes)?.into_iter().enumerate() {
            let index = b * 256 + i as u64;
            let e = crate::entry::Entry::decode(raw).map_err(|source| LogError::Entry {
                index: index as usize,
                source,
            })?;
            subjects.insert(e.subject.id().to_string(), index);
            keys.push((
                dedup_key(&e).map_err(|source| LogError::Entry {
                    index: index as usize,
                    source,
                })?,
                index,
            ));
        }
        b += 1;
    }
    // Two entries of an old log may be the same observation; the first keeps the key.
    keys.sort_by_key(|(k, i)| (*k, *i));
    keys.dedup_by_key(|(k, _)| *k);
    to.head.set_meta("origin", Some(&origin))?;
    to.head.set_meta("vkey", Some(&vkey))?;
    to.head.set_meta("publication", publication.as_deref())?;
    let subjects: Vec<(String, u64)> = subjects.into_iter().collect();
    to.head.commit(None, &head, &subjects, &keys)?;
    // The published checkpoint moves too, as it is (with its cosignatures: in witnessed
    // publication it may be older than the head, until witnesses cosign the newer one).
    let published = from_public
        .get_bounded("checkpoint", store::MAX_CHECKPOINT_BYTES)
        .map_err(StoreError::from)?
        .and_then(|n| {
            let c = crate::note::open_checkpoint(&n, &vkey).ok()?;
            Some((n, c))
        });
    let witnessed = publication.as_deref() == Some(store::WITNESSED);
    match published {
        Some((note, c)) if witnessed || (c.size == head.size && c.root == head.root) => {
            store::publish_forward(&to_public, &vkey, &note, c.size, c.root)?;
        }
        _ if witnessed => {}
        _ => {
            store::publish_forward(&to_public, &vkey, &head.note, head.size, head.root)?;
        }
    }
    to.head.set_applied(head.size, head.root)?;
    Ok(Migrated {
        size: head.size,
        entries: report.entries,
        copied,
        present,
    })
}
