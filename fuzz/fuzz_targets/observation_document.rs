//! Any bytes as a stored observation document: reading never panics, and a document that reads
//! and encodes has one canonical form: its encoding reads back and encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolmark_observation::Document;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = Document::decode(data) else {
        return;
    };
    // A hand-made document may hold a value too deep to canonicalise: refused, not a panic.
    let Ok(bytes) = doc.encode() else {
        return;
    };
    let again = Document::decode(&bytes).expect("a document's encoding reads");
    assert_eq!(
        again.encode().expect("and encodes"),
        bytes,
        "encoding is not canonical"
    );
});
