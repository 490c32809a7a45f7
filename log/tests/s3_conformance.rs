//! The test bucket's server (SeaweedFS 4.48, `scripts/seaweedfs`) held to what the log needs
//! from any S3-compatible store, through the client the log uses (`object_store`'s
//! `AmazonS3`, configured as `toolmark_standins::services::Bucket::builder`):
//!
//! - `object_store`'s own conformance tests (its `integration` feature), each on a fresh
//!   prefix of the shared bucket (they delete everything in the store they are given);
//! - our races: 16 concurrent create-only writes of one key (`If-None-Match: *`), and 16
//!   concurrent compare-and-swap writes from one ETag (`If-Match`), 5 trials each, have exactly
//!   one winner, whose bytes the object then holds;
//! - the bucket is unversioned (SeaweedFS breaks conditional writes on versioned buckets), and
//!   checks request signatures.
//!
//! A server that stops honouring conditional writes fails this file, and so CI.
//!
//! SeaweedFS fails one assertion of `put_get_delete_list`: it lists in path-segment order, not
//! in the bytes' order S3 specifies, and a listing offset follows that order
//! (`listing_is_in_path_segment_order_and_an_offset_skips_its_own_subtree`); the
//! `put_get_delete_list` tests require exactly that failure. Not run, and why: `list_paginated`
//! needs the whole bucket (a `PrefixStore` is no `PaginatedListStore`), which it would empty
//! under the other tests; `tagging` (the log sets no tags); `signing` and `s3_encryption`,
//! which object_store keeps private to its own tests.
//!
//! Needs `eval "$(scripts/seaweedfs env)"` (scripts/test does it); without it the tests are
//! skipped, except under CI, where they fail.

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, Checksum, S3CopyIfNotExists};
use object_store::integration;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{Error, ObjectStore, ObjectStoreExt, PutMode, PutPayload, UpdateVersion};
use std::sync::Arc;
use tokio::sync::Barrier;
use toolmark_standins::services::{self, Bucket};

/// Writers in each race.
const WRITERS: usize = 16;
/// Races of each kind.
const TRIALS: usize = 5;

/// The test bucket with a prefix of this test's, or `None` (skipped).
fn bucket() -> Option<Bucket> {
    services::s3().unwrap()
}

/// The store the conformance tests run on: this test's prefix of the bucket.
fn store() -> Option<PrefixStore<AmazonS3>> {
    bucket().map(|b| b.store().unwrap())
}

/// The message of the one assertion of `put_get_delete_list` SeaweedFS fails: a listing
/// offset is a position in path-segment order
/// (`listing_is_in_path_segment_order_and_an_offset_skips_its_own_subtree`).
const LIST_OFFSET_ASSERTION: &str = "None - Path { raw: \"a\" }";

/// Runs `put_get_delete_list` on `store`, which must fail at [`LIST_OFFSET_ASSERTION`] and
/// nowhere else: everything it checks before (put, get, ranges, head, list, delimiters,
/// prefixes, odd names) passes; its bulk delete and empty-object checks after are not reached.
async fn put_get_delete_list_up_to_list_offsets(store: PrefixStore<AmazonS3>) {
    let run = tokio::spawn(async move { integration::put_get_delete_list(&store).await });
    let Err(failed) = run.await else {
        panic!("put_get_delete_list passed: SeaweedFS lists in byte order now (update the docs)")
    };
    let panic = failed.into_panic();
    let message = match (panic.downcast_ref::<String>(), panic.downcast_ref::<&str>()) {
        (Some(message), _) => message.as_str(),
        (None, Some(message)) => message,
        (None, None) => "",
    };
    assert!(message.contains(LIST_OFFSET_ASSERTION), "{message}");
}

#[tokio::test]
async fn put_get_delete_list() {
    let Some(store) = store() else { return };
    put_get_delete_list_up_to_list_offsets(store).await;
}

#[tokio::test]
async fn put_get_delete_list_with_unsigned_payload() {
    let Some(bucket) = bucket() else { return };
    let builder = bucket.builder().with_unsigned_payload(true);
    put_get_delete_list_up_to_list_offsets(bucket.store_from(builder).unwrap()).await;
}

#[tokio::test]
async fn put_get_delete_list_with_sha256_checksums() {
    let Some(bucket) = bucket() else { return };
    let builder = bucket.builder().with_checksum_algorithm(Checksum::SHA256);
    put_get_delete_list_up_to_list_offsets(bucket.store_from(builder).unwrap()).await;
}

#[tokio::test]
async fn put_get_delete_list_with_crc64nvme_checksums() {
    let Some(bucket) = bucket() else { return };
    let builder = bucket
        .builder()
        .with_checksum_algorithm(Checksum::CRC64NVME);
    put_get_delete_list_up_to_list_offsets(bucket.store_from(builder).unwrap()).await;
}

#[tokio::test]
async fn put_opts_create_and_update() {
    let Some(store) = store() else { return };
    integration::put_opts(&store, true).await;
}

#[tokio::test]
async fn get_opts() {
    let Some(store) = store() else { return };
    integration::get_opts(&store).await;
}

#[tokio::test]
async fn get_nonexistent_object() {
    let Some(store) = store() else { return };
    let err = integration::get_nonexistent_object(&store, None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn put_get_attributes() {
    let Some(store) = store() else { return };
    integration::put_get_attributes(&store).await;
}

#[tokio::test]
async fn list_uses_directories_correctly() {
    let Some(store) = store() else { return };
    integration::list_uses_directories_correctly(&store).await;
}

#[tokio::test]
async fn list_with_delimiter() {
    let Some(store) = store() else { return };
    integration::list_with_delimiter(&store).await;
}

#[tokio::test]
async fn list_with_offset_exclusivity() {
    let Some(store) = store() else { return };
    integration::list_with_offset_exclusivity(&store).await;
}

#[tokio::test]
async fn rename_and_copy() {
    let Some(store) = store() else { return };
    integration::rename_and_copy(&store).await;
}

/// The store with `copy_if_not_exists` as a copy with `If-None-Match: *` (off in
/// [`Bucket::builder`]: the log never copies).
fn copy_if_not_exists_store() -> Option<PrefixStore<AmazonS3>> {
    let bucket = bucket()?;
    let header = S3CopyIfNotExists::Header("If-None-Match".into(), "*".into());
    let builder = bucket.builder().with_copy_if_not_exists(header);
    Some(bucket.store_from(builder).unwrap())
}

#[tokio::test]
async fn copy_if_not_exists() {
    let Some(store) = copy_if_not_exists_store() else {
        return;
    };
    integration::copy_if_not_exists(&store).await;
}

#[tokio::test]
async fn copy_rename_nonexistent_object() {
    let Some(store) = copy_if_not_exists_store() else {
        return;
    };
    integration::copy_rename_nonexistent_object(&store).await;
}

#[tokio::test]
async fn stream_get() {
    let Some(store) = store() else { return };
    integration::stream_get(&store).await;
}

#[tokio::test]
async fn multipart() {
    let Some(store) = store() else { return };
    integration::multipart(&store, &store).await;
}

#[tokio::test]
async fn multipart_with_opts() {
    let Some(store) = store() else { return };
    integration::multipart_with_opts(&store, &store).await;
}

#[tokio::test]
async fn multipart_put_part_out_of_order() {
    let Some(store) = store() else { return };
    integration::multipart_put_part_out_of_order(&store, &store).await;
}

#[tokio::test]
async fn multipart_out_of_order() {
    let Some(store) = store() else { return };
    integration::multipart_out_of_order(&store).await;
}

#[tokio::test]
async fn multipart_race_condition_last_writer_wins() {
    let Some(store) = store() else { return };
    integration::multipart_race_condition(&store, true).await;
}

#[tokio::test]
async fn response_extensions() {
    let Some(bucket) = bucket() else { return };
    let store = bucket
        .store_from(
            bucket
                .builder()
                .with_http_connector(integration::MarkerHttpConnector::default()),
        )
        .unwrap();
    integration::response_extensions(&store, true).await;
}

/// Runs `WRITERS` writes of `key` at once (released together by a barrier): writer `i` puts
/// `i` with `mode`. Returns each writer's result, by writer.
async fn race(
    store: &Arc<PrefixStore<AmazonS3>>,
    key: &Path,
    mode: PutMode,
) -> Vec<object_store::Result<object_store::PutResult>> {
    let barrier = Arc::new(Barrier::new(WRITERS));
    let writers: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (store, key, mode, barrier) =
                (store.clone(), key.clone(), mode.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let payload = PutPayload::from(i.to_string());
                store.put_opts(&key, payload, mode.into()).await
            })
        })
        .collect();
    let mut results = Vec::with_capacity(WRITERS);
    for writer in writers {
        results.push(writer.await.unwrap());
    }
    results
}

/// The one writer whose write succeeded; every other must have failed as `lost` says. Checks
/// that the object now holds the winner's bytes.
async fn one_winner(
    store: &PrefixStore<AmazonS3>,
    key: &Path,
    results: &[object_store::Result<object_store::PutResult>],
    lost: fn(&Error) -> bool,
) -> usize {
    let winners: Vec<usize> = (0..results.len()).filter(|&i| results[i].is_ok()).collect();
    assert_eq!(winners.len(), 1, "winners {winners:?} of {results:?}");
    for result in results {
        if let Err(e) = result {
            assert!(lost(e), "a losing writer failed otherwise: {e}");
        }
    }
    let winner = winners[0];
    let stored = store.get(key).await.unwrap().bytes().await.unwrap();
    assert_eq!(
        stored,
        winner.to_string().as_bytes(),
        "not the winner's bytes"
    );
    winner
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_create_only_writes_of_one_key_have_exactly_one_winner() {
    let Some(store) = store() else { return };
    let store = Arc::new(store);
    for trial in 0..TRIALS {
        let key = Path::from(format!("create-race/{trial}"));
        let results = race(&store, &key, PutMode::Create).await;
        one_winner(&store, &key, &results, |e| {
            matches!(e, Error::AlreadyExists { .. })
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_if_match_writes_from_one_etag_have_exactly_one_winner() {
    let Some(store) = store() else { return };
    let store = Arc::new(store);
    for trial in 0..TRIALS {
        let key = Path::from(format!("update-race/{trial}"));
        let first = store.put(&key, "start".into()).await.unwrap();
        let from = PutMode::Update(UpdateVersion::from(first));
        let results = race(&store, &key, from).await;
        let winner = one_winner(&store, &key, &results, |e| {
            matches!(e, Error::Precondition { .. })
        })
        .await;
        // The winner's ETag is now the current one: a write from it succeeds.
        let won = results[winner].as_ref().unwrap().clone();
        store
            .put_opts(&key, "next".into(), PutMode::Update(won.into()).into())
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn the_bucket_is_unversioned() {
    let Some(store) = store() else { return };
    let key = Path::from("versioning");
    let first = store.put(&key, "one".into()).await.unwrap();
    let second = store.put(&key, "two".into()).await.unwrap();
    // A versioned bucket answers every write with x-amz-version-id.
    assert_eq!((first.version, second.version), (None, None));
    assert_ne!(first.e_tag, second.e_tag);
}

/// SeaweedFS keeps keys as a directory tree: it lists in path-segment order ("a/x" before "a.b",
/// where S3 orders by the bytes of the whole key), and a listing offset ("start-after") is a
/// position in that order that also skips the keys under it ("a" skips "a/x"). The log must
/// not rely on list order or offsets across a `/` (docs/operations.md, "Test services"). This
/// test fails when a SeaweedFS version changes either.
#[tokio::test]
async fn listing_is_in_path_segment_order_and_an_offset_skips_its_own_subtree() {
    let Some(store) = store() else { return };
    for key in ["a", "a/x", "a.b", "a0", "ab/c", "b"] {
        store.put(&Path::from(key), "v".into()).await.unwrap();
    }
    let listed = |offset: Option<&str>| {
        let stream = match offset {
            None => store.list(None),
            Some(offset) => store.list_with_offset(None, &Path::from(offset)),
        };
        async move {
            let paths: Vec<Path> = stream.map_ok(|m| m.location).try_collect().await.unwrap();
            paths.iter().map(|p| p.to_string()).collect::<Vec<_>>()
        }
    };
    // In byte order: a, a.b, a/x, a0, ab/c, b.
    assert_eq!(listed(None).await, ["a", "a/x", "a.b", "a0", "ab/c", "b"]);
    // In byte order "a/x" and "ab/c" follow their offsets; here they are skipped.
    assert_eq!(listed(Some("a")).await, ["a.b", "a0", "ab/c", "b"]);
    assert_eq!(listed(Some("ab")).await, ["b"]);
    // "a.b" is before "a/x" in byte order; here it follows it.
    assert_eq!(listed(Some("a/x")).await, ["a.b", "a0", "ab/c", "b"]);
}

/// The bucket checks SigV4 signatures, so the tests exercise the log's request signing: a
/// request signed with the wrong secret is refused.
#[tokio::test]
async fn a_request_signed_with_a_wrong_secret_is_refused() {
    let Some(bucket) = bucket() else { return };
    let builder = bucket.builder().with_secret_access_key("not-the-secret");
    let store = bucket.store_from(builder).unwrap();
    let err = store
        .put(&Path::from("signed"), "x".into())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::PermissionDenied { .. }), "{err}");
}
