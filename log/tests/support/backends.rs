//! The two kinds of stores every log test runs against: the single box (SQLite + a directory)
//! and the cluster (PostgreSQL + an S3 bucket: the shared test PostgreSQL and SeaweedFS that
//! scripts/test starts, each test in a database and a key prefix of its own).

use std::path::PathBuf;
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
}

/// The shared test services, if scripts/test started them: (PostgreSQL URL, S3 endpoint).
/// Under CI they must be there; elsewhere a test without them runs on the single box only.
fn services() -> Option<(String, String)> {
    let pg = std::env::var("TOOLMARK_TEST_POSTGRES").ok();
    let s3 = std::env::var("TOOLMARK_TEST_S3").ok();
    match (pg, s3) {
        (Some(pg), Some(s3)) => Some((pg, s3)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "TOOLMARK_TEST_POSTGRES and TOOLMARK_TEST_S3 (scripts/postgres, scripts/seaweedfs) \
                 are needed under CI"
            );
            eprintln!("cluster backend skipped: no TOOLMARK_TEST_POSTGRES/TOOLMARK_TEST_S3");
            None
        }
    }
}

/// The bucket the shared SeaweedFS serves to tests.
pub fn test_bucket() -> String {
    std::env::var("TOOLMARK_TEST_S3_BUCKET").unwrap_or_else(|_| "toolmark-test".into())
}

/// How the tests reach the shared SeaweedFS.
pub fn s3_options() -> S3Options {
    S3Options {
        endpoint: std::env::var("TOOLMARK_TEST_S3").ok(),
        region: Some("us-east-1".into()),
        access_key_id: std::env::var("TOOLMARK_TEST_S3_ACCESS_KEY_ID").ok(),
        secret_access_key: std::env::var("TOOLMARK_TEST_S3_SECRET_ACCESS_KEY").ok(),
        allow_http: true,
        virtual_hosted: false,
    }
}

/// A fresh database named after `tag` in the shared PostgreSQL; its URL.
pub fn fresh_database(base_url: &str, tag: &str) -> String {
    let name = format!(
        "t_{}_{}",
        tag.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id()
    )
    .to_lowercase();
    let mut admin = postgres::Client::connect(base_url, postgres::NoTls).expect("test postgres");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    // Same server, the new database: replace the path of the URL.
    let (head, _) = base_url.rsplit_once('/').expect("a URL with a database");
    format!("{head}/{name}")
}

/// The backends a test runs on: the single box always, the cluster when the services are up.
pub fn backends(tag: &str) -> Vec<Backend> {
    let mut out = vec![Backend {
        name: "dir",
        dir: super::tempdir(&format!("{tag}-dir")),
        postgres: None,
        s3: None,
    }];
    if let Some((pg, _)) = services() {
        out.push(Backend {
            name: "cluster",
            dir: super::tempdir(&format!("{tag}-cluster")),
            postgres: Some(fresh_database(&pg, tag)),
            s3: Some(format!(
                "s3://{}/{tag}-{}-{}",
                test_bucket(),
                std::process::id(),
                unique()
            )),
        });
    }
    out
}

fn unique() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
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
            Some(url) => Objects::s3(url, &s3_options()).unwrap(),
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

