//! The blob store on every object store it runs on: a directory and an S3-compatible bucket (the
//! shared SeaweedFS of scripts/test, each test in a key prefix of its own).

mod support;

use support::blob_stores;
use toolmark_index::blobs::MAX_BLOB_BYTES;
use toolmark_index::{BlobError, Blobs};
use toolmark_toolset::Sri;

const DOC: &[u8] = br#"{"tools":[{"name":"read_file"}]}"#;

#[test]
fn a_put_blob_reads_back_under_its_content_address() {
    for (name, objects) in blob_stores("round-trip") {
        let blobs = Blobs::new(objects).unwrap();
        let sri = blobs.put(DOC).unwrap();
        assert_eq!(sri, Sri::of(DOC), "{name}");
        assert_eq!(blobs.get(&sri).unwrap().as_deref(), Some(DOC), "{name}");
        let hex = sri.hex();
        let key = format!("sha256/{}/{hex}", &hex[..2]);
        assert_eq!(
            blobs.objects().get(&key).unwrap().as_deref(),
            Some(DOC),
            "{name}: the object's key is sha256/<2 hex>/<64 hex>"
        );
        assert!(blobs.contains(&sri).unwrap(), "{name}");
        assert_eq!(blobs.size(&sri).unwrap(), Some(DOC.len() as u64), "{name}");
        let absent = Sri::of(b"never stored");
        assert_eq!(blobs.get(&absent).unwrap(), None, "{name}");
        assert!(!blobs.contains(&absent).unwrap(), "{name}");
    }
}

#[test]
fn deferred_puts_are_readable_and_one_sync_makes_them_durable() {
    for (name, objects) in blob_stores("deferred") {
        let blobs = Blobs::new(objects).unwrap();
        let docs: Vec<Vec<u8>> = (0..5).map(|i| format!("{{\"n\":{i}}}").into()).collect();
        let sris: Vec<Sri> = docs
            .iter()
            .map(|d| blobs.put_deferred(d).unwrap())
            .collect();
        blobs.sync().unwrap();
        for (d, s) in docs.iter().zip(&sris) {
            assert_eq!(blobs.get(s).unwrap().as_ref(), Some(d), "{name}");
        }
    }
}

/// Blobs are written create-only: putting bytes already stored leaves the stored object as it
/// was (not written again: its size, modification time and ETag are unchanged).
#[test]
fn an_identical_put_leaves_the_stored_copy_untouched() {
    for (name, objects) in blob_stores("identical") {
        let blobs = Blobs::new(objects).unwrap();
        let sri = blobs.put(DOC).unwrap();
        let key = Blobs::key_of(&sri);
        let before = blobs.objects().stat(&key).unwrap().unwrap();
        // A bucket dates objects to the second: a rewrite would show in a later second.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        assert_eq!(blobs.put(DOC).unwrap(), sri, "{name}");
        assert_eq!(blobs.put_deferred(DOC).unwrap(), sri, "{name}");
        let after = blobs.objects().stat(&key).unwrap().unwrap();
        assert_eq!(before, after, "{name}: the object was not written again");
    }
}

/// A stored copy whose bytes are not its name's (flipped, truncated, emptied) is `Corrupt`, never
/// data; putting the right bytes replaces it.
#[test]
fn a_corrupted_copy_is_detected_and_a_put_repairs_it() {
    for (name, objects) in blob_stores("corrupt") {
        let blobs = Blobs::new(objects).unwrap();
        let sri = blobs.put(DOC).unwrap();
        let key = Blobs::key_of(&sri);
        let mut flipped = DOC.to_vec();
        flipped[DOC.len() / 2] ^= 0x01;
        for bad in [
            &flipped[..],
            &DOC[..DOC.len() - 1],
            b"",
            b"{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}",
        ] {
            blobs.objects().put(&key, bad).unwrap();
            match blobs.get(&sri) {
                Err(BlobError::Corrupt {
                    sri: s,
                    location,
                    found,
                }) => {
                    assert_eq!(s, sri, "{name}");
                    assert_eq!(found, Sri::of(bad), "{name}");
                    assert!(location.ends_with(&key), "{name}: {location}");
                }
                other => panic!("{name}: {} bytes stored: {other:?}", bad.len()),
            }
        }
        assert_eq!(blobs.put(DOC).unwrap(), sri, "{name}");
        assert_eq!(blobs.get(&sri).unwrap().as_deref(), Some(DOC), "{name}");
    }
}

/// A blob larger than `MAX_BLOB_BYTES` is refused before anything is written.
#[test]
fn a_put_over_the_limit_is_refused() {
    // Zeroed pages are not touched: this costs no memory until read.
    let big = vec![0u8; MAX_BLOB_BYTES as usize + 1];
    for (name, objects) in blob_stores("over-put") {
        let blobs = Blobs::new(objects).unwrap();
        assert!(
            matches!(blobs.put(&big), Err(BlobError::TooLarge(n)) if n == MAX_BLOB_BYTES + 1),
            "{name}"
        );
        assert!(
            matches!(blobs.put_deferred(&big), Err(BlobError::TooLarge(_))),
            "{name}"
        );
        assert!(
            !blobs.contains(&Sri::of(&big)).unwrap(),
            "{name}: nothing written"
        );
    }
}

/// A stored object larger than `MAX_BLOB_BYTES` is refused by its size, without reading it. (On a
/// directory, where a sparse file costs nothing; a bucket refuses by the same size check of the
/// `GET`'s headers, `toolmark_log::objects`.)
#[test]
fn a_stored_object_over_the_limit_is_refused_unread() {
    let (_, objects) = blob_stores("over-get").remove(0);
    let blobs = Blobs::new(objects).unwrap();
    let sri = Sri::of(b"anything");
    let path = blobs.path_of(&sri).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(&path)
        .unwrap()
        .set_len(MAX_BLOB_BYTES + 1)
        .unwrap();
    assert!(matches!(
        blobs.get(&sri),
        Err(BlobError::TooLarge(n)) if n == MAX_BLOB_BYTES + 1
    ));
}
