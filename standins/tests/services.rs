//! The test services' isolation (`services`): each test's database and key prefix are its own,
//! and a dropped database is gone. Needs `TOOLMARK_TEST_POSTGRES` and `scripts/seaweedfs env`
//! (scripts/test sets them); without them the tests are skipped, except under CI.

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use toolmark_standins::services;

/// Whether a database named `name` exists on the cluster `url` is part of.
fn exists(url: &str, name: &str) -> bool {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .unwrap();
    row.get::<_, i64>(0) == 1
}

#[test]
fn each_database_is_fresh_and_its_own_and_is_dropped_with_it() {
    let Some(one) = services::postgres().unwrap() else {
        return;
    };
    let two = services::postgres().unwrap().unwrap();
    assert_ne!(one.name(), two.name());
    let mut client = postgres::Client::connect(one.url(), postgres::NoTls).unwrap();
    client
        .batch_execute("CREATE TABLE mine (id int); INSERT INTO mine VALUES (1)")
        .unwrap();
    let mut other = postgres::Client::connect(two.url(), postgres::NoTls).unwrap();
    let seen = other
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE tablename = 'mine'",
            &[],
        )
        .unwrap();
    assert_eq!(
        seen.get::<_, i64>(0),
        0,
        "a table of another test's database"
    );

    // Dropped even with a connection still open (a failed test's).
    let name = one.name().to_owned();
    assert!(exists(two.url(), &name));
    drop(one);
    assert!(!exists(two.url(), &name));
    drop(client);
}

#[tokio::test]
async fn a_database_can_be_made_and_dropped_inside_an_async_test() {
    let Some(database) = services::postgres().unwrap() else {
        return;
    };
    drop(database);
}

#[tokio::test]
async fn each_prefix_is_its_own() {
    let Some(one) = services::s3().unwrap() else {
        return;
    };
    let two = services::s3().unwrap().unwrap();
    assert_ne!(one.prefix, two.prefix);
    let (one, two) = (one.store().unwrap(), two.store().unwrap());
    let key = Path::from("same-key");
    one.put(&key, "one".into()).await.unwrap();
    assert!(matches!(
        two.get(&key).await.unwrap_err(),
        object_store::Error::NotFound { .. }
    ));
    two.put(&key, "two".into()).await.unwrap();
    let read = one.get(&key).await.unwrap().bytes().await.unwrap();
    assert_eq!(read, "one".as_bytes());
    use futures_util::TryStreamExt;
    let listed: Vec<_> = one.list(None).try_collect().await.unwrap();
    assert_eq!(listed.len(), 1);
}

/// Every variable `services` reads is set by its script and scripts/test, and documented.
#[test]
fn every_variable_is_set_by_the_scripts_and_documented() {
    let read = |path: &str| {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../").to_owned() + path)
            .unwrap()
    };
    let doc = read("docs/operations.md");
    let section = doc.split("## Test services").nth(1).unwrap();
    let (seaweedfs, test) = (read("scripts/seaweedfs"), read("scripts/test"));
    for variable in [
        services::S3_VARIABLE,
        services::S3_BUCKET_VARIABLE,
        services::S3_ACCESS_KEY_ID_VARIABLE,
        services::S3_SECRET_ACCESS_KEY_VARIABLE,
    ] {
        assert!(
            seaweedfs.contains(&format!("export {variable}=")),
            "{variable}"
        );
        assert!(section.contains(&format!("`{variable}`")), "{variable}");
    }
    let postgres = services::POSTGRES_VARIABLE;
    assert!(test.contains(&format!("{postgres}=$(scripts/postgres)")));
    assert!(test.contains("eval \"$s3_env\""));
    assert!(section.contains(&format!("`{postgres}`")));
}
