//! The tests' shared PostgreSQL and S3 bucket, one isolated piece per test.
//!
//! A test run starts one PostgreSQL cluster (`scripts/postgres`) and one SeaweedFS bucket
//! (`scripts/seaweedfs`) for all its test binaries (docs/operations.md, "Test services"). A test
//! takes its own piece of each, so that tests running at once never see each other's data:
//! [`postgres`] creates a fresh database, dropped with its [`Database`]; [`s3`] picks a fresh
//! key prefix of the shared bucket, whose [`Bucket::store`] reads and writes under that prefix
//! only.
//!
//! A missing service follows the tests' convention for every outside part: without its
//! variable a test is skipped (`Ok(None)`, with a note on stderr), except under CI (`CI` set),
//! where it is an error ([`ServiceError::Missing`]).

use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The connection URL of the test cluster (scripts/postgres prints it).
pub const POSTGRES_VARIABLE: &str = "TOOLMARK_TEST_POSTGRES";
/// The S3 endpoint of the test bucket's server (scripts/seaweedfs prints it).
pub const S3_VARIABLE: &str = "TOOLMARK_TEST_S3";
/// The test bucket's name (`scripts/seaweedfs env`).
pub const S3_BUCKET_VARIABLE: &str = "TOOLMARK_TEST_S3_BUCKET";
/// The access key id the test bucket accepts (`scripts/seaweedfs env`).
pub const S3_ACCESS_KEY_ID_VARIABLE: &str = "TOOLMARK_TEST_S3_ACCESS_KEY_ID";
/// The secret access key the test bucket accepts (`scripts/seaweedfs env`).
pub const S3_SECRET_ACCESS_KEY_VARIABLE: &str = "TOOLMARK_TEST_S3_SECRET_ACCESS_KEY";
/// The region requests are signed for (SeaweedFS accepts any; this is AWS's default).
pub const S3_REGION: &str = "us-east-1";

/// Why a test service could not be handed out.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A variable is not set that must be: any service's under CI, and the bucket's name and
    /// credentials whenever its endpoint is set.
    #[error("{variable} is not set ({how})")]
    Missing {
        /// The variable that is not set.
        variable: &'static str,
        /// The command that sets it.
        how: &'static str,
    },
    /// The test PostgreSQL refused, or could not be reached.
    #[error("test PostgreSQL at {url}: {source}")]
    Postgres {
        /// The URL connected to.
        url: String,
        /// The client's error.
        source: postgres::Error,
    },
    /// The S3 client could not be built from the variables.
    #[error("test bucket: {0}")]
    S3(#[from] object_store::Error),
}

/// The variable's value; `None` (a skipped test) when it is not set, an error under CI.
fn variable(variable: &'static str, how: &'static str) -> Result<Option<String>, ServiceError> {
    match std::env::var(variable) {
        Ok(value) => Ok(Some(value)),
        Err(_) if std::env::var_os("CI").is_some() => Err(ServiceError::Missing { variable, how }),
        Err(_) => {
            eprintln!("skipped: no {variable} ({how})");
            Ok(None)
        }
    }
}

/// A name no other test of this or an earlier run has taken: the process, a counter within it,
/// and the time (a pid can come back in a later run, a crashed run leaves its names behind).
fn unique_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "toolmark_{}_{}_{nanos:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `statement` on the cluster at `url`, on a thread of its own: the synchronous client
/// runs a runtime of its own, which cannot start inside an async test's.
fn execute(url: &str, statement: String) -> Result<(), ServiceError> {
    let owned = url.to_owned();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let mut client = postgres::Client::connect(&owned, postgres::NoTls)?;
                client.batch_execute(&statement)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .map_err(|source| ServiceError::Postgres {
        url: url.to_owned(),
        source,
    })
}

/// A database of the test cluster that is this test's alone; dropping it drops the database,
/// closing whatever connections to it are still open.
#[derive(Debug)]
pub struct Database {
    cluster: String,
    name: String,
    url: String,
}

impl Database {
    /// The URL to connect to this database with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // FORCE: a failed test can leave connections open. An error here cannot fail the
        // test; the cluster is thrown away at the end of the run anyway (scripts/postgres stop).
        if let Err(e) = execute(
            &self.cluster,
            format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name),
        ) {
            eprintln!("could not drop test database {}: {e}", self.name);
        }
    }
}

/// A fresh, empty database of the test cluster (`TOOLMARK_TEST_POSTGRES`); `Ok(None)` when the
/// variable is not set outside CI (the test is then skipped).
pub fn postgres() -> Result<Option<Database>, ServiceError> {
    let Some(cluster) = variable(
        POSTGRES_VARIABLE,
        "export TOOLMARK_TEST_POSTGRES=$(scripts/postgres)",
    )?
    else {
        return Ok(None);
    };
    let name = unique_name();
    execute(&cluster, format!("CREATE DATABASE \"{name}\""))?;
    // The cluster's URL names its maintenance database last: swap in ours.
    let url = match cluster.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => format!("{cluster}/{name}"),
    };
    Ok(Some(Database { cluster, name, url }))
}

/// The test bucket, and a key prefix in it that is this test's alone.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The S3 endpoint (`http://127.0.0.1:8333`).
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
    /// The access key id requests are signed with.
    pub access_key_id: String,
    /// The secret access key requests are signed with.
    pub secret_access_key: String,
    /// This test's prefix: nothing else in the run writes under it.
    pub prefix: Path,
}

impl Bucket {
    /// A builder for the whole bucket as the log would use it: path-style requests over plain
    /// HTTP to the loopback endpoint, SigV4 with the test credentials, and conditional writes
    /// with `If-None-Match`/`If-Match` (`PutMode::Create`/`Update`). Mind that the whole bucket
    /// is shared by every test: [`Bucket::store`] is the isolated one.
    pub fn builder(&self) -> AmazonS3Builder {
        AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_region(S3_REGION)
            .with_bucket_name(&self.bucket)
            .with_access_key_id(&self.access_key_id)
            .with_secret_access_key(&self.secret_access_key)
            .with_conditional_put(S3ConditionalPut::ETagMatch)
    }

    /// The bucket seen through this test's prefix: keys are relative to it, and listing or
    /// deleting everything touches nothing of other tests.
    pub fn store(&self) -> Result<PrefixStore<AmazonS3>, ServiceError> {
        self.store_from(self.builder())
    }

    /// Like [`Bucket::store`], from a builder of the caller's (for example
    /// [`Bucket::builder`] with an option changed).
    pub fn store_from(
        &self,
        builder: AmazonS3Builder,
    ) -> Result<PrefixStore<AmazonS3>, ServiceError> {
        Ok(PrefixStore::new(builder.build()?, self.prefix.clone()))
    }
}

/// The test bucket (`TOOLMARK_TEST_S3` and the variables `scripts/seaweedfs env` prints) with a
/// fresh prefix; `Ok(None)` when `TOOLMARK_TEST_S3` is not set outside CI (the test is then
/// skipped).
pub fn s3() -> Result<Option<Bucket>, ServiceError> {
    const HOW: &str = "eval \"$(scripts/seaweedfs env)\"";
    let Some(endpoint) = variable(S3_VARIABLE, HOW)? else {
        return Ok(None);
    };
    // With the endpoint set, the rest must be too, CI or not.
    let required = |name: &'static str| {
        std::env::var(name).map_err(|_| ServiceError::Missing {
            variable: name,
            how: HOW,
        })
    };
    Ok(Some(Bucket {
        endpoint,
        bucket: required(S3_BUCKET_VARIABLE)?,
        access_key_id: required(S3_ACCESS_KEY_ID_VARIABLE)?,
        secret_access_key: required(S3_SECRET_ACCESS_KEY_VARIABLE)?,
        prefix: Path::from(unique_name()),
    }))
}
