//! The two kinds of stores every log test runs against: the single box (SQLite + a directory)
//! and the cluster (PostgreSQL + an S3 bucket: the shared test PostgreSQL and SeaweedFS that
//! scripts/test starts, each test in a database and a key prefix of its own).

use std::path::PathBuf;
use std::sync::Arc;
use toolmark_log::head::postgres::PgHead;
use toolmark_log::head::{HeadStore, SqliteHead};
use toolmark_log::note::LogKey;
use toolmark_log::objects::{Objects, S3Options};
use toolmark_log::sequencer::{self, Clock};
use toolmark_log::store::LogStores;
use toolmark_log::{Log, LogError};

/// Where a test's log lives.
#[derive(Debug, Clone)]
pub struct Backend {
    /// `dir` or `cluster`, for messages.
    pub name: &'static str,
    /// A local scratch directory: the key file, and everything on the single box.
    pub dir: PathBuf,
    /// The cluster's head store URL (its own database).
    pub postgres: Option<String>,
    /// The cluster's objects: `s3://BUCKET/PREFIX` (its own prefix).
    pub s3: Option<String>,
    /// How to reach the bucket.
    pub s3_options: Option<S3Options>,
    /// The test's own database, dropped with the last clone of the backend.
    _db: Option<Arc<toolmark_standins::services::Database>>,
}

/// The backends a test runs on: the single box always, the cluster when the shared test
/// services are up (skipped with a note otherwise; required under CI: `standins::services`).
pub fn backends(tag: &str) -> Vec<Backend> {
    let mut out = vec![Backend {
        name: "dir",
        dir: super::tempdir(&format!("{tag}-dir")),
        postgres: None,
        s3: None,
        s3_options: None,
        _db: None,
    }];
    let db = toolmark_standins::services::postgres().expect("the test PostgreSQL");
    let bucket = toolmark_standins::services::s3().expect("the test bucket");
    if let (Some(db), Some(bucket)) = (db, bucket) {
        out.push(Backend {
            name: "cluster",
            dir: super::tempdir(&format!("{tag}-cluster")),
            postgres: Some(db.url().to_owned()),
            s3: Some(format!("s3://{}/{}", bucket.bucket, bucket.prefix)),
            s3_options: Some(S3Options::at(
                &bucket.endpoint,
                &bucket.access_key_id,
                &bucket.secret_access_key,
            )),
            _db: Some(Arc::new(db)),
        });
    }
    out
}

impl Backend {
    /// A new handle on the head store.
    pub fn head(&self) -> Box<dyn HeadStore> {
        match &self.postgres {
            Some(url) => Box::new(PgHead::connect(url).unwrap()),
            None => Box::new(SqliteHead::open(&self.dir).unwrap()),
        }
    }

    /// A read-only head store beside a running writer (what a cosigner opens).
    pub fn head_reader(&self) -> Box<dyn HeadStore> {
        match &self.postgres {
            Some(url) => Box::new(PgHead::connect(url).unwrap()),
            None => Box::new(SqliteHead::open_read_only(&self.dir).unwrap()),
        }
    }

    /// The log's objects (`public/`, `staging/`).
    pub fn objects(&self) -> Objects {
        match &self.s3 {
            Some(url) => Objects::s3(url, self.s3_options.as_ref().unwrap()).unwrap(),
            None => Objects::dir(&self.dir).unwrap(),
        }
    }

    /// The public files.
    pub fn public(&self) -> Objects {
        self.objects().sub("public")
    }

    /// Both stores, freshly opened.
    pub fn stores(&self) -> LogStores {
        LogStores {
            head: self.head(),
            objects: self.objects(),
        }
    }

    /// The key file.
    pub fn key_path(&self) -> PathBuf {
        self.dir.join(sequencer::KEY_FILE)
    }

    /// Create the log with `key`.
    pub fn init_with_key(&self, key: LogKey) -> Log {
        if self.postgres.is_none() {
            return Log::init_with_key(&self.dir, key).unwrap();
        }
        sequencer::write_private_key(&self.key_path(), &key.to_skey()).unwrap();
        Log::create(self.stores(), key, system_clock()).unwrap()
    }

    /// Create the log with a fresh key named `origin`.
    pub fn init(&self, origin: &str) -> Log {
        self.init_with_key(LogKey::generate(origin).unwrap())
    }

    /// Open the log (with its recovery).
    pub fn open(&self) -> Result<Log, LogError> {
        self.open_with_clock(system_clock())
    }

    /// Open the log with an injected clock.
    pub fn open_with_clock(&self, clock: Clock) -> Result<Log, LogError> {
        let key = sequencer::read_key(&self.key_path())?;
        Log::open_with(self.stores(), key, clock)
    }

    /// The published checkpoint's bytes.
    pub fn published(&self) -> Vec<u8> {
        self.public().get("checkpoint").unwrap().unwrap()
    }
}

fn system_clock() -> Clock {
    Box::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    })
}
