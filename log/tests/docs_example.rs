//! The example log in docs/log-format.md is real: its published files are kept in
//! `tests/fixtures/example-log/`, they verify, and the document quotes them verbatim.

use std::path::Path;
use toolmark_log::tiles;
use toolmark_log::verify::{self, DirSource};

#[test]
fn documented_example_verifies_and_is_quoted_verbatim() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/example-log");
    let vkey = std::fs::read_to_string(dir.join("vkey")).unwrap();
    let report = verify::fsck(&DirSource(dir.clone()), vkey.trim()).unwrap();
    assert_eq!(report.entries, 3);
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/log-format.md"),
    )
    .unwrap();
    assert!(doc.contains(vkey.trim()), "the document names another key");
    let checkpoint = std::fs::read_to_string(dir.join("checkpoint")).unwrap();
    assert!(
        doc.contains(&checkpoint),
        "the document quotes another checkpoint"
    );
    let bundle = std::fs::read(dir.join("tile/entries/000.p/3")).unwrap();
    for entry in tiles::decode_bundle(&bundle).unwrap() {
        let text = std::str::from_utf8(entry).unwrap();
        assert!(doc.contains(text), "the document lacks entry {text}");
    }
}
