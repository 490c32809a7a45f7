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

/// The counts an answer of [`Names::ask`] was weighed with.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// The snapshot's date.
    pub date: String,
    /// Where it came from: its path, or `bundled`.
    pub from: String,
    /// Its sources.
    pub sources: Vec<String>,
}

/// `toolmark package lookalike NAME`'s answer; members in alphabetical order, as printed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Asked {
    /// The name asked about, trimmed.
    pub asked: String,
    /// For a package: the counts weighed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// For a package: its key (`npm:…`, `pypi:…` in PEP 503 form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// For a server name: how many names the index knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_names: Option<usize>,
    /// The popular package it imitates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package_lookalike: Option<PackageLookalike>,
    /// The known server name it imitates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_lookalike: Option<ServerLookalike>,
}

impl Asked {
    /// Whether the name imitates a popular package or a known server name.
    pub fn imitates(&self) -> bool {
        self.package_lookalike.is_some() || self.server_lookalike.is_some()
    }
}

/// Why [`Names::ask`] could not answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// `npm:`/`pypi:` followed by no valid package name.
    #[error("{0:?}")]
    Package(String, #[source] toolmark_names::packages::KeyError),
    /// A server name, and no data directory whose index knows names.
    #[error("a server name is compared with the names an index knows: give --data DIR")]
    NoIndex,
    /// The index could not be opened.
    #[error("{}: the index", .0.display())]
    Index(std::path::PathBuf, #[source] IndexError),
    /// The index could not be read.
    #[error(transparent)]
    Read(#[from] IndexError),
}

impl Names {
    /// Does `name` (`npm:…`, `pypi:…`, or a registry server name, compared with the names
    /// the index of the data directory `data` knows) imitate something?
    ///
    /// # Errors
    ///
    /// [`AskError`]: a package name that is not one, a server name without `data`, an index
    /// that cannot be read.
    pub fn ask(&self, name: &str, data: Option<&Path>) -> Result<Asked, AskError> {
        let asked = name.trim();
        let mut out = Asked {
            asked: asked.to_owned(),
            counts: None,
            key: None,
            known_names: None,
            package_lookalike: None,
            server_lookalike: None,
        };
        if asked.starts_with("npm:") || asked.starts_with("pypi:") {
            let key =
                PackageKey::parse(asked).map_err(|e| AskError::Package(asked.to_owned(), e))?;
            out.key = Some(key.key());
            out.counts = Some(Counts {
                date: self.date(),
                from: self.origin(),
                sources: self.sources(),
            });
            out.package_lookalike = self.package(asked);
            return Ok(out);
        }
        let data = data.ok_or(AskError::NoIndex)?;
        let index = Index::open_read_only(&DataDir::new(data).index_path())
            .map_err(|e| AskError::Index(data.to_owned(), e))?;
        out.server_lookalike = self.server(&index, asked)?;
        out.known_names = Some(index.known_server_names()?.len());
        Ok(out)
    }
}

/// What `toolmark package popularity` prints of the snapshot in use (`data`'s newest, else the
/// bundled one): its date, where it came from, its sources and how many packages it counts.
pub fn snapshot_summary(data: &Path) -> Result<serde_json::Value, NamesError> {
    let (snapshot, from) = read_snapshot(data)?;
    Ok(
        serde_json::json!({"date": snapshot.date, "from": from, "sources": snapshot.sources,
                          "packages": snapshot.counts.len()}),
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_directory_without_a_refreshed_snapshot_is_summarised_from_the_bundled_one() {
        let empty =
            std::env::temp_dir().join(format!("toolmark-no-snapshot-{}", std::process::id()));
        let summary = snapshot_summary(&empty).unwrap();
        assert_eq!(summary["from"], "bundled");
        assert!(summary["packages"].as_u64().unwrap() > 0);
    }

    #[test]
    fn a_package_is_asked_with_its_key_and_counts_and_a_server_name_needs_an_index() {
        let names = Names::bundled();
        let a = names.ask(" npm:Left_Pad ", None).unwrap();
        assert_eq!(a.asked, "npm:Left_Pad");
        assert_eq!(a.counts.as_ref().unwrap().from, "bundled");
        let v = serde_json::to_value(&a).unwrap();
        assert!(v.get("knownNames").is_none() && v.get("serverLookalike").is_none());
        assert!(matches!(
            names.ask("npm:", None),
            Err(AskError::Package(..))
        ));
        assert!(matches!(
            names.ask("io.github.acme/weather", None),
            Err(AskError::NoIndex)
        ));
    }
}
