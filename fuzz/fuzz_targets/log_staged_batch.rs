//! Any bytes as a staged batch read back from the untrusted object store: decoding never
//! panics, a batch that decodes names only plain relative paths and re-encodes to exactly the
//! same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_log::store;

fuzz_target!(|data: &[u8]| {
    if let Some(files) = store::decode_batch(data) {
        for (path, _) in &files {
            assert!(
                !path.is_empty()
                    && path
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != ".."),
                "{path:?}"
            );
        }
        assert_eq!(store::encode_batch(&files), data);
    }
});
