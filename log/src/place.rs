//! Which log a command works on (`toolmark log init|append|proof|key|migrate`): a single-box
//! directory alone, or the stores a [`StorageSpec`] names, with the signing key in
//! `DIR/private/log.key` or a file of its own; and entries appended from JSON lines
//! ([`append_lines`], `toolmark log append`).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::entry::{Entry, EntryLineError};
use crate::note::LogKey;
use crate::objects::Objects;
use crate::sequencer::{self, Appended, Log, LogError};
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

/// Why [`append_lines`] stopped (what was appended before stays appended).
#[derive(Debug, thiserror::Error)]
pub enum AppendLinesError {
    /// The input could not be read.
    #[error("reading {name}")]
    Read {
        /// The input's name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not an entry ([`Entry::from_line`]).
    #[error("{name} line {line}")]
    Line {
        /// The input's name.
        name: String,
        /// The line's number (from 1).
        line: usize,
        /// Why.
        source: EntryLineError,
    },
    /// The log refused a batch.
    #[error(transparent)]
    Log(#[from] LogError),
}

/// Append the entries `input` holds, one JSON line each (blank lines skipped), `batch` at a
/// time: each batch one append, handed to `appended` as soon as it is committed. `name` names
/// the input in errors (`stdin line 3`).
///
/// # Errors
///
/// [`AppendLinesError`] at the first line that cannot be read or is no entry, or the first
/// batch the log refuses.
pub fn append_lines(
    log: &mut Log,
    input: impl BufRead,
    name: &str,
    batch: usize,
    mut appended: impl FnMut(Appended),
) -> Result<(), AppendLinesError> {
    let mut entries = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|source| AppendLinesError::Read {
            name: name.to_owned(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = Entry::from_line(&line).map_err(|source| AppendLinesError::Line {
            name: name.to_owned(),
            line: n + 1,
            source,
        })?;
        entries.push(entry);
        if entries.len() == batch {
            appended(log.append(std::mem::take(&mut entries))?);
        }
    }
    if !entries.is_empty() {
        appended(log.append(entries)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolmark-place-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A fresh directory, and the single-box log in it.
    fn single_box(tag: &str) -> (PathBuf, LogPlace) {
        let dir = temp(tag);
        let place = LogPlace {
            dir: Some(dir.clone()),
            ..LogPlace::default()
        };
        (dir, place)
    }

    #[test]
    fn a_directory_alone_is_created_opened_and_read_as_the_single_box() {
        let (dir, place) = single_box("dir");
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
    fn lines_are_appended_a_batch_at_a_time_and_a_bad_line_is_named() {
        let (dir, place) = single_box("lines");
        let mut log = place.create("place.example/log").unwrap().0;
        let line = |i: usize| {
            let subject = format!(r#"{{"server":"s{i}","target":"https://a.example/{i}"}}"#);
            format!(
                r#"{{"subject":{subject},"observedAt":"2026-01-01T00:00:0{i}Z","status":"ok"}}"#
            )
        };
        let input = format!("{}\n\n{}\n{}\n", line(1), line(2), line(3));
        let mut batches = Vec::new();
        append_lines(&mut log, input.as_bytes(), "stdin", 2, |a| {
            batches.push(a.indices)
        })
        .unwrap();
        assert_eq!(batches, [vec![0, 1], vec![2]]);
        let bad = format!("{}\nnot json\n", line(4));
        let e = append_lines(&mut log, bad.as_bytes(), "stdin", 2, drop).unwrap_err();
        assert_eq!(e.to_string(), "stdin line 2");
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
