//! Any bytes: decoding an entry bundle never panics, and a bundle that decodes has 1..=256
//! entries and re-encodes to exactly the same bytes. The other way round, the input cut at its
//! 0x00 bytes into at most 256 entries encodes to a bundle that decodes to those entries (or, if
//! one part is longer than an entry may be, is refused).
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_log::tiles;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = tiles::decode_bundle(data) {
        assert!(
            (1..=256).contains(&entries.len()),
            "{} entries",
            entries.len()
        );
        assert_eq!(
            tiles::encode_bundle(&entries).expect("decoded bundle encodes"),
            data
        );
    }
    let parts: Vec<&[u8]> = data.split(|&b| b == 0).take(256).collect();
    if parts.iter().any(|p| p.len() > tiles::MAX_ENTRY_BYTES) {
        assert!(tiles::encode_bundle(&parts).is_err(), "an oversized entry was encoded");
        return;
    }
    let bundle = tiles::encode_bundle(&parts).expect("1..=256 short entries encode");
    assert_eq!(
        tiles::decode_bundle(&bundle).expect("encoded bundle decodes"),
        parts
    );
});
