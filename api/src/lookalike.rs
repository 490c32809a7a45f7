//! Look-alike names in answers (`packageLookalike`, `serverLookalike`): the popularity snapshot
//! read when the state opens (the newest `DATA/popularity/popularity-*.txt`, else the one
//! bundled in `toolmark-names`) and again on [`Names::reload`], and the listed server names
//! indexed again only when a server name has been added (`Index::server_names_mark`).
//!
//! Reads nothing outside the data directory and dials nothing: counts are refreshed by
//! `toolmark package popularity --refresh` (the crawler fetches them); `toolmark run`'s
//! `popularity` job reloads after writing, another process's refresh is picked up at restart.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use toolmark_client::answer::{PackageLookalike, ServerLookalike};
use toolmark_index::{DataDir, Index, IndexError};
use toolmark_names::packages::{LookalikeIndex, PackageKey};
use toolmark_names::servers::ServerNames;
use toolmark_names::snapshot::{MAX_SNAPSHOT_BYTES, Snapshot, SnapshotError};

/// Why a refreshed snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NamesError {
    /// The file could not be read, or is larger than the format allows.
    #[error("{path}: {reason}")]
    Io {
        /// The snapshot's path.
        path: String,
        /// Why.
        reason: String,
    },
    /// The file is not a `toolmark-popularity/1` snapshot.
    #[error("{path}: {source}")]
    Format {
        /// The snapshot's path.
        path: String,
        /// What is wrong.
        source: SnapshotError,
    },
}

/// [`Index::server_names_mark`]'s value when the server names were last indexed.
type NamesMark = (u64, u64);

/// The look-alike indexes of one service.
pub struct Names {
    /// The index and where its counts came from (the snapshot's path, or `bundled`).
    packages: RwLock<(Arc<LookalikeIndex>, String)>,
    servers: Mutex<Option<(NamesMark, Arc<ServerNames>)>>,
}

impl Names {
    /// The snapshot bundled with this build.
    pub fn bundled() -> Names {
        let snapshot = Snapshot::parse(toolmark_names::BUNDLED_SNAPSHOT)
            .expect("the bundled snapshot is tested to parse");
        Names::new(&snapshot, "bundled".into())
    }

    fn new(snapshot: &Snapshot, origin: String) -> Names {
        Names {
            packages: RwLock::new((Arc::new(LookalikeIndex::new(snapshot)), origin)),
            servers: Mutex::new(None),
        }
    }

    fn current(&self) -> (Arc<LookalikeIndex>, String) {
        let slot = self.packages.read().unwrap_or_else(|e| e.into_inner());
        (slot.0.clone(), slot.1.clone())
    }

    /// Read the snapshot in use again (after a refresh wrote a newer one); on an error the
    /// current one stays. Answers made meanwhile use one or the other, never a mix.
    pub fn reload(&self, data: &Path) -> Result<(), NamesError> {
        let (snapshot, origin) = read_snapshot(data)?;
        let index = Arc::new(LookalikeIndex::new(&snapshot));
        *self.packages.write().unwrap_or_else(|e| e.into_inner()) = (index, origin);
        Ok(())
    }

    /// Where the counts came from: the snapshot's path, or `bundled`.
    pub fn origin(&self) -> String {
        self.current().1
    }

    /// The newest refreshed snapshot in `data`, else the bundled one. A refreshed snapshot that
    /// cannot be read is an error (the service does not silently answer from older counts).
    pub fn load(data: &Path) -> Result<Names, NamesError> {
        let (snapshot, origin) = read_snapshot(data)?;
        Ok(Names::new(&snapshot, origin))
    }

    /// The snapshot's date.
    pub fn date(&self) -> String {
        self.current().0.date().to_owned()
    }

    /// The snapshot's sources.
    pub fn sources(&self) -> Vec<String> {
        self.current().0.sources().to_vec()
    }

    /// `packageLookalike` for `package` as asked (`None` when it is no package key or imitates
    /// nothing).
    pub fn package(&self, package: &str) -> Option<PackageLookalike> {
        let key = PackageKey::parse(package.trim()).ok()?;
        let found = self.current().0.check(&key)?;
        let weekly = found.weekly?;
        Some(PackageLookalike {
            how: found.how.to_owned(),
            of: found.of,
            own_weekly: found.own_weekly.unwrap_or(0),
            weekly: weekly.count,
            weekly_as_of: weekly.as_of,
        })
    }

    /// `serverLookalike` for `name` as asked: the server names the index knows (listed or
    /// delisted), indexed again only when a name has been added since
    /// ([`Index::server_names_mark`]: once per harvest that lists a new server, not per
    /// request; a request that finds the mark moved waits for that one indexing).
    pub fn server(&self, index: &Index, name: &str) -> Result<Option<ServerLookalike>, IndexError> {
        let mark = index.server_names_mark()?;
        let names = {
            let mut slot = self.servers.lock().unwrap_or_else(|e| e.into_inner());
            match &*slot {
                Some((seen, names)) if *seen == mark => names.clone(),
                _ => {
                    let known = index.known_server_names()?;
                    let names = Arc::new(ServerNames::new(known.iter().map(String::as_str)));
                    *slot = Some((mark, names.clone()));
                    names
                }
            }
        };
        Ok(names.check(name).map(|found| ServerLookalike {
            how: found.how.to_owned(),
            of: found.of,
        }))
    }
}

/// The snapshot the service answers from: the newest `DATA/popularity/popularity-*.txt`, else
/// the bundled one; with where it came from (its path, or `bundled`).
pub fn read_snapshot(data: &Path) -> Result<(Snapshot, String), NamesError> {
    let Some(path) = DataDir::new(data).latest_popularity() else {
        let snapshot = Snapshot::parse(toolmark_names::BUNDLED_SNAPSHOT)
            .expect("the bundled snapshot is tested to parse");
        return Ok((snapshot, "bundled".into()));
    };
    let shown = path.display().to_string();
    let text = read_bounded(&path).map_err(|e| NamesError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let snapshot = Snapshot::parse(&text).map_err(|source| NamesError::Format {
        path: shown.clone(),
        source,
    })?;
    Ok((snapshot, shown))
}

fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_SNAPSHOT_BYTES as u64 + 1)
        .read_to_string(&mut text)?;
    if text.len() > MAX_SNAPSHOT_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_SNAPSHOT_BYTES} bytes"
        )));
    }
    Ok(text)
}
