//! Which log a command works on (`toolmark log init|append|proof|key|migrate`): a single-box
//! directory alone, or the stores a [`StorageSpec`] names, with the signing key in
//! `DIR/private/log.key` or a file of its own.

use std::path::{Path, PathBuf};

use crate::note::LogKey;
use crate::objects::Objects;
use crate::sequencer::{self, Log, LogError};
use crate::store::{HeadSpec, LogStores, ObjectsSpec, StorageSpec, StoreError};

/// Where a log is: a directory, stores, a key file, as a command names them.
#[derive(Debug, Clone, Default)]
pub struct LogPlace {
    /// The log directory (SQLite head store, files, key); not needed with a PostgreSQL head
    /// store and objects elsewhere.
    pub dir: Option<PathBuf>,
    /// The stores, when named; `None` is the directory alone. A `sqlite` head store and
    /// `file:` objects without a path still live in the directory.
    pub storage: Option<StorageSpec>,
    /// The signing key's file (default: the directory's [`KEY_FILE`](crate::KEY_FILE)).
    pub key: Option<PathBuf>,
}

impl LogPlace {
    /// The directory, which `what` needs.
    fn dir(&self, what: &str) -> Result<&Path, LogError> {
        self.dir
            .as_deref()
            .ok_or_else(|| LogError::Refused(what.to_owned()))
    }

    /// The signing key's file.
    ///
    /// # Errors
    ///
    /// [`LogError::Refused`] when neither a key file nor a directory is given.
    pub fn key_path(&self) -> Result<PathBuf, LogError> {
        match (&self.key, &self.dir) {
            (Some(k), _) => Ok(k.clone()),
            (None, Some(d)) => Ok(d.join(crate::KEY_FILE)),
            (None, None) => Err(LogError::Refused("no log: give DIR or --key".into())),
        }
    }

    /// The log's stores: the directory alone is the single box; a [`StorageSpec`] names others.
    ///
    /// # Errors
    ///
    /// [`LogError::Refused`] when the stores need the directory and none is given; the stores'
    /// own errors when they cannot be opened.
    pub fn stores(&self) -> Result<LogStores, LogError> {
        const NEEDED: &str = "DIR is needed (the SQLite head store or the log files live there)";
        let Some(spec) = &self.storage else {
            return Ok(LogStores::dir(self.dir(NEEDED)?)?);
        };
        let head = match &spec.head {
            HeadSpec::Sqlite => spec.head_store(self.dir(NEEDED)?)?,
            HeadSpec::Postgres(_) => spec.head_store(Path::new("."))?,
        };
        let objects = match &spec.objects {
            ObjectsSpec::DataDir | ObjectsSpec::File(None) => {
                Objects::dir(self.dir(NEEDED)?).map_err(StoreError::from)?
            }
            _ => spec.objects_root(Path::new("."))?.sub("log"),
        };
        Ok(LogStores { head, objects })
    }

    /// Open the log, with its recovery (the directory's own key unless another is given).
    ///
    /// # Errors
    ///
    /// As [`Log::open_with`], and [`LogError::Refused`] when no log is named.
    pub fn open(&self) -> Result<Log, LogError> {
        if self.storage.is_none() && self.key.is_none() {
            return Log::open(self.dir("no log: give DIR")?);
        }
        let key = sequencer::read_key(&self.key_path()?)?;
        Log::open_with(self.stores()?, key, sequencer::system_clock())
    }

    /// Create a log of `origin`: a new signing key and an empty checkpoint. Returns the log and
    /// where it was made, for messages (the directory; or the stores and the key file).
    ///
    /// # Errors
    ///
    /// As [`Log::init`] and [`Log::create`]; a key file that exists already is refused.
    pub fn create(&self, origin: &str) -> Result<(Log, String), LogError> {
        if let (Some(dir), None, None) = (&self.dir, &self.storage, &self.key) {
            return Ok((Log::init(dir, origin)?, dir.display().to_string()));
        }
        let key = LogKey::generate(origin)?;
        let path = self.key_path()?;
        let stores = self.stores()?;
        sequencer::write_private_key(&path, &key.to_skey())?;
        let place = format!(
            "{} + {} (signing key {})",
            stores.head.describe(),
            stores.objects.label(),
            path.display()
        );
        Ok((Log::create(stores, key, sequencer::system_clock())?, place))
    }

    /// The verifier key the log publishes (`DIR/vkey`, or `vkey` of its public objects).
    ///
    /// # Errors
    ///
    /// [`LogError::Refused`] when the directory holds no log or the log publishes no vkey.
    pub fn vkey(&self) -> Result<Vec<u8>, LogError> {
        match (&self.dir, &self.storage) {
            (Some(dir), None) => std::fs::read(dir.join("vkey")).map_err(|e| {
                LogError::Refused(format!("{}: not a log directory: {e}", dir.display()))
            }),
            _ => self
                .stores()?
                .public()
                .get("vkey")
                .map_err(StoreError::from)?
                .ok_or_else(|| LogError::Refused("the log publishes no vkey".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolmark-place-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_directory_alone_is_created_opened_and_read_as_the_single_box() {
        let dir = temp("dir");
        let place = LogPlace {
            dir: Some(dir.clone()),
            ..LogPlace::default()
        };
        let (log, at) = place.create("place.example/log").unwrap();
        assert_eq!(at, dir.display().to_string());
        let vkey = log.vkey();
        drop(log);
        assert_eq!(
            String::from_utf8(place.vkey().unwrap()).unwrap().trim(),
            vkey
        );
        assert_eq!(place.open().unwrap().vkey(), vkey);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_key_file_elsewhere_is_written_once_and_opens_the_log() {
        let dir = temp("key");
        let key = dir.join("elsewhere/log.key");
        let place = LogPlace {
            dir: Some(dir.join("log")),
            storage: Some(StorageSpec::default()),
            key: Some(key.clone()),
        };
        let (log, at) = place.create("place.example/log").unwrap();
        assert!(
            at.ends_with(&format!("(signing key {})", key.display())),
            "{at}"
        );
        let vkey = log.vkey();
        drop(log);
        assert_eq!(place.open().unwrap().vkey(), vkey);
        assert!(
            place.create("place.example/log").is_err(),
            "the key is never replaced"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_directory_and_no_key_is_refused_with_what_to_give() {
        let none = LogPlace::default();
        assert!(matches!(none.key_path(), Err(LogError::Refused(m)) if m.contains("give DIR")));
        assert!(matches!(none.open(), Err(LogError::Refused(m)) if m.contains("give DIR")));
        let stores = LogPlace {
            storage: Some(StorageSpec::default()),
            ..LogPlace::default()
        };
        assert!(
            matches!(stores.stores(), Err(LogError::Refused(m)) if m.contains("DIR is needed"))
        );
    }
}
